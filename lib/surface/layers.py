"""A small `layers` module (as `tf.keras.layers`): Dense and BatchNormalization.

Layers create their variables on the first call, when the input's last dimension is
known, and name them as Keras does: `dense/kernel:0`, `dense_1/kernel:0`, ...
"""

import collections
import functools

import numpy as np

from ..core import dnp
from . import nn as _nn
from . import random
from .module import Module, snake_case
from ..reverse.tensor import Tensor, convert_to_tensor
from .variables import Variable

_name_counts = collections.Counter()


def clear_session():
    """Reset automatic layer names (the next Dense is 'dense' again), as Keras does."""
    _name_counts.clear()


def _unique_name(base):
    count = _name_counts[base]
    _name_counts[base] += 1
    return base if count == 0 else f"{base}_{count}"


class Layer(Module):
    """A callable module that builds its variables from the first input's shape."""

    def __init__(self, name=None, dtype="float32"):
        super().__init__(name or _unique_name(snake_case(type(self).__name__)))
        self._weights = []
        self.built = False
        self.dtype = np.dtype(dtype)

    def add_weight(self, name, shape, initializer, trainable=True):
        value = initializer(tuple(shape), self.dtype)
        var = Variable(value, trainable=trainable, name=f"{self.name}/{name}")
        self._weights.append(var)
        return var

    @property
    def variables(self):
        return tuple(self._weights)

    @property
    def trainable_variables(self):
        return tuple(v for v in self._weights if v.trainable)

    @property
    def non_trainable_variables(self):
        return tuple(v for v in self._weights if not v.trainable)

    trainable_weights = trainable_variables
    weights = variables

    def build(self, input_shape):
        self.built = True

    def __init_subclass__(cls, **kwargs):
        """A subclass's `build` marks the layer built, whether called by hand or by `__call__`."""
        super().__init_subclass__(**kwargs)
        if "build" in cls.__dict__:
            original = cls.__dict__["build"]

            @functools.wraps(original)
            def build(self, input_shape):
                original(self, input_shape)
                self.built = True

            cls.build = build

    def __call__(self, inputs, *args, **kwargs):
        if not isinstance(inputs, Tensor):
            inputs = convert_to_tensor(inputs, dtype=self.dtype if not hasattr(inputs, "dtype") else None)
        if not self.built:
            self.build(tuple(inputs.shape))
            self.built = True
        return self.call(inputs, *args, **kwargs)


def glorot_uniform(shape, dtype):
    fan_in, fan_out = (shape[-2], shape[-1]) if len(shape) >= 2 else (shape[0], shape[0])
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return random.generator().uniform(-limit, limit, shape).astype(dtype)


def zeros(shape, dtype):
    return np.zeros(shape, dtype)


def ones(shape, dtype):
    return np.ones(shape, dtype)


_INITIALIZERS = {"glorot_uniform": glorot_uniform, "zeros": zeros, "ones": ones}


def _activation(activation):
    if activation is None or activation == "linear":
        return None
    if callable(activation):
        return activation
    fn = getattr(_nn, activation, None)
    if fn is None:
        raise ValueError(f"[layers] unknown activation {activation!r}; use a name such as "
                         "'relu', 'tanh', 'sigmoid', 'elu', 'softmax', or a callable.")
    return fn


def _initializer(init):
    if callable(init):
        return init
    if init not in _INITIALIZERS:
        raise ValueError(f"[layers] unknown initializer {init!r}; use one of {sorted(_INITIALIZERS)} "
                         "or a callable (shape, dtype) -> array.")
    return _INITIALIZERS[init]


class Dense(Layer):
    """`activation(inputs @ kernel + bias)`, kernel glorot-uniform and bias zero initialised."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", name=None, dtype="float32"):
        super().__init__(name, dtype)
        self.units = int(units)
        self.activation = _activation(activation)
        self.use_bias = use_bias
        self._kernel_init = _initializer(kernel_initializer)
        self._bias_init = _initializer(bias_initializer)

    def build(self, input_shape):
        self.kernel = self.add_weight("kernel", (input_shape[-1], self.units), self._kernel_init)
        self.bias = self.add_weight("bias", (self.units,), self._bias_init) if self.use_bias else None

    def call(self, inputs):
        y = dnp.matmul(inputs, self.kernel)
        if self.use_bias:
            y = y + self.bias
        return self.activation(y) if self.activation is not None else y


class BatchNormalization(Layer):
    """Normalise over the batch (training=True) or with moving statistics (training=False)."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True, name=None,
                 dtype="float32"):
        super().__init__(name, dtype)
        self.axis, self.momentum, self.epsilon = axis, momentum, epsilon
        self.center, self.scale = center, scale

    def build(self, input_shape):
        shape = (input_shape[self.axis],)
        self.gamma = self.add_weight("gamma", shape, ones) if self.scale else None
        self.beta = self.add_weight("beta", shape, zeros) if self.center else None
        self.moving_mean = self.add_weight("moving_mean", shape, zeros, trainable=False)
        self.moving_variance = self.add_weight("moving_variance", shape, ones, trainable=False)

    def call(self, inputs, training=False):
        ndim = len(inputs.shape)
        axis = self.axis % ndim
        reduce_axes = tuple(i for i in range(ndim) if i != axis)
        shape = [1] * ndim
        shape[axis] = inputs.shape[axis]
        if training:
            mean = dnp.mean(inputs, axis=reduce_axes, keepdims=True)
            variance = dnp.mean(dnp.square(inputs - mean), axis=reduce_axes, keepdims=True)
            m = self.momentum
            self.moving_mean.assign(self.moving_mean._value * m + np.reshape(mean._value, -1) * (1 - m))
            self.moving_variance.assign(self.moving_variance._value * m
                                        + np.reshape(variance._value, -1) * (1 - m))
        else:
            mean = dnp.reshape(self.moving_mean, shape)
            variance = dnp.reshape(self.moving_variance, shape)
        y = (inputs - mean) / dnp.sqrt(variance + self.epsilon)
        if self.scale:
            y = y * dnp.reshape(self.gamma, shape)
        if self.center:
            y = y + dnp.reshape(self.beta, shape)
        return y
