"""The core layers: Dense, Activation, Dropout, Flatten, Reshape, Embedding, Lambda and the
activation layers (ReLU, LeakyReLU, Softmax)."""

import numpy as np

from .. import activations, initializers
from ...core import dnp
from ...surface import random
from ...surface.tf_ops import cast, gather, to_tensor
from .base import Layer


class Dense(Layer):
    """`activation(inputs @ kernel + bias)`; kernel glorot-uniform and bias zero by default."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", name=None, dtype="float32", **kwargs):
        super().__init__(name=name, dtype=dtype, **kwargs)
        if int(units) <= 0:
            raise ValueError(f"[Dense] `units` must be a positive integer, got {units!r}.")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)

    def build(self, input_shape):
        if input_shape[-1] is None:
            raise ValueError(f"[{self.name}] the last dimension of Dense's input must be known, got shape "
                             f"{input_shape}.")
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer=self.kernel_initializer,
                                      name="kernel")
        self.bias = (self.add_weight(shape=(self.units,), initializer=self.bias_initializer, name="bias")
                     if self.use_bias else None)

    def call(self, inputs):
        if inputs.shape[-1] != self.kernel.shape[0]:
            raise ValueError(f"[{self.name}] expected inputs with last dimension {self.kernel.shape[0]} (the "
                             f"layer was built for it), got shape {tuple(inputs.shape)}.")
        y = dnp.matmul(inputs, self.kernel)
        if self.use_bias:
            y = y + self.bias
        return self.activation(y)


class Activation(Layer):
    """Apply an activation function (a name such as 'relu', or a callable)."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)


class ReLU(Layer):
    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        self.max_value, self.negative_slope, self.threshold = max_value, negative_slope, threshold

    def call(self, inputs):
        return activations.relu(inputs, self.negative_slope, self.max_value, self.threshold)


class LeakyReLU(Layer):
    def __init__(self, negative_slope=0.3, **kwargs):
        super().__init__(**kwargs)
        self.negative_slope = negative_slope

    def call(self, inputs):
        return activations.leaky_relu(inputs, self.negative_slope)


class Softmax(Layer):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return activations.softmax(inputs, self.axis)


class Dropout(Layer):
    """During training, zero each value with probability `rate` and scale the rest by 1/(1 - rate)."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate <= 1:
            raise ValueError(f"[Dropout] `rate` must be a float in [0, 1], got {rate!r}.")
        self.rate, self.noise_shape, self.seed = float(rate), noise_shape, seed
        self.generator = None if seed is None else np.random.default_rng(seed)

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        shape = tuple(inputs.shape) if self.noise_shape is None else tuple(
            d if d is not None else s for d, s in zip(self.noise_shape, inputs.shape))
        keep = (self.generator or random.generator()).uniform(size=shape) >= self.rate
        scale = np.float32(0.0 if self.rate == 1 else 1.0 / (1.0 - self.rate))
        return inputs * cast(keep * scale, inputs.dtype)


class Flatten(Layer):
    """Reshape to (batch, everything else)."""

    def call(self, inputs):
        return dnp.reshape(inputs, (inputs.shape[0], int(np.prod(inputs.shape[1:]))))


class Reshape(Layer):
    """Reshape each sample to `target_shape` (one entry may be -1)."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(s) for s in target_shape)

    def call(self, inputs):
        size = int(np.prod(inputs.shape[1:]))
        known = int(np.prod([s for s in self.target_shape if s != -1]))
        if (-1 not in self.target_shape and known != size) or (-1 in self.target_shape and size % max(known, 1)):
            raise ValueError(f"[{self.name}] cannot reshape samples of shape {tuple(inputs.shape[1:])} "
                             f"({size} values) to {self.target_shape}.")
        return dnp.reshape(inputs, (inputs.shape[0],) + self.target_shape)


class Embedding(Layer):
    """Rows of an `(input_dim, output_dim)` table, looked up by integer ids."""

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", mask_zero=False, **kwargs):
        super().__init__(**kwargs)
        if mask_zero:
            raise ValueError("[Embedding] mask_zero=True is not supported by dualtape.keras (no masking); "
                             "pass sample weights that zero the padded positions instead.")
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = initializers.get(
            "random_uniform" if embeddings_initializer == "uniform" else embeddings_initializer)

    def build(self, input_shape=None):
        self.embeddings = self.add_weight(shape=(self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer, name="embeddings")

    def call(self, inputs):
        ids = to_tensor(inputs)
        if np.dtype(ids.dtype.as_numpy_dtype).kind not in "iu":
            ids = cast(ids, "int32")
        values = ids.numpy()
        if values.size and (values.min() < 0 or values.max() >= self.input_dim):
            raise ValueError(f"[{self.name}] ids must lie in [0, {self.input_dim}) (input_dim), got values from "
                             f"{values.min()} to {values.max()}.")
        return gather(self.embeddings, ids)


class Lambda(Layer):
    """Wrap a function of tensors as a layer (no weights)."""

    def __init__(self, function, **kwargs):
        super().__init__(**kwargs)
        self.function = function

    def call(self, inputs):
        return self.function(inputs)


class Identity(Layer):
    def call(self, inputs):
        return inputs
