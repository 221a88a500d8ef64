"""Recurrent layers over (batch, timesteps, features): SimpleRNN, LSTM and GRU (Keras 3's
equations and weight layouts), unrolled step by step on the tape.

Each keeps Keras' three weights: `kernel` (features, gates * units), `recurrent_kernel`
(units, gates * units) and `bias`; the gates are ordered as Keras orders them (LSTM: input,
forget, cell, output; GRU: update, reset, candidate, with the reset gate applied after the
recurrent matmul, `reset_after=True`).
"""

import numpy as np

from .. import activations, initializers
from ...core import dnp
from .base import Layer


class Recurrent(Layer):
    """The shared loop: `step(x_t, states) -> (output, states)` over the time axis."""

    gates = 1

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 dropout=0.0, recurrent_dropout=0.0, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, name=None, dtype="float32", **kwargs):
        super().__init__(name=name, dtype=dtype, **kwargs)
        if dropout or recurrent_dropout or stateful:
            raise ValueError(f"[{self.name}] dropout, recurrent_dropout and stateful are not supported by "
                             "dualtape.keras' recurrent layers; add a Dropout layer before or after instead.")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.return_sequences, self.return_state, self.go_backwards = return_sequences, return_state, go_backwards
        self.arguments = dict(activation=activation, recurrent_activation=recurrent_activation, use_bias=use_bias,
                              kernel_initializer=kernel_initializer, recurrent_initializer=recurrent_initializer,
                              bias_initializer=bias_initializer, return_sequences=return_sequences,
                              return_state=return_state, go_backwards=go_backwards, dtype=dtype)

    def reversed_copy(self, name):
        """A new, unbuilt layer like this one reading the sequence the other way (Bidirectional's)."""
        arguments = dict(self.arguments, go_backwards=not self.go_backwards, name=name)
        return type(self)(self.units, **arguments)

    def build(self, input_shape):
        if len(input_shape) != 3:
            raise ValueError(f"[{self.name}] expects 3-D inputs (batch, timesteps, features), got shape "
                             f"{input_shape}.")
        width = self.gates * self.units
        self.kernel = self.add_weight(shape=(input_shape[-1], width), initializer=self.kernel_initializer,
                                      name="kernel")
        self.recurrent_kernel = self.add_weight(shape=(self.units, width), initializer=self.recurrent_initializer,
                                                name="recurrent_kernel")
        self.bias = self.add_weight(shape=self.bias_shape(), initializer=self.initial_bias, name="bias") \
            if self.use_bias else None

    def bias_shape(self):
        return (self.gates * self.units,)

    def initial_bias(self, shape, dtype=None):
        return self.bias_initializer(shape, dtype)

    def call(self, inputs, initial_state=None):
        if len(inputs.shape) != 3 or inputs.shape[-1] != self.kernel.shape[0]:
            raise ValueError(f"[{self.name}] expected inputs (batch, timesteps, {self.kernel.shape[0]}), got shape "
                             f"{tuple(inputs.shape)}.")
        batch, steps = inputs.shape[0], inputs.shape[1]
        states = list(initial_state) if initial_state is not None else [
            np.zeros((batch, self.units), inputs.dtype.as_numpy_dtype) for _ in range(self.state_count)]
        outputs = []
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        for t in order:
            output, states = self.step(inputs[:, t, :], states)
            outputs.append(output)
        result = dnp.stack(outputs, axis=1) if self.return_sequences else outputs[-1]
        return [result] + list(states) if self.return_state else result


class SimpleRNN(Recurrent):
    """h_t = activation(x_t @ kernel + h_(t-1) @ recurrent_kernel + bias)."""

    state_count = 1

    def step(self, x, states):
        h = dnp.matmul(x, self.kernel) + dnp.matmul(states[0], self.recurrent_kernel)
        if self.use_bias:
            h = h + self.bias
        h = self.activation(h)
        return h, [h]


class LSTM(Recurrent):
    """Long short-term memory; `unit_forget_bias` starts the forget gate's bias at 1, as Keras."""

    gates, state_count = 4, 2

    def __init__(self, units, unit_forget_bias=True, **kwargs):
        super().__init__(units, **kwargs)
        self.unit_forget_bias = unit_forget_bias
        self.arguments["unit_forget_bias"] = unit_forget_bias

    def initial_bias(self, shape, dtype=None):
        if not self.unit_forget_bias:
            return self.bias_initializer(shape, dtype)
        units = self.units
        return np.concatenate([self.bias_initializer((units,), dtype), np.ones((units,), dtype),
                               self.bias_initializer((2 * units,), dtype)])

    def step(self, x, states):
        h, c = states
        z = dnp.matmul(x, self.kernel) + dnp.matmul(h, self.recurrent_kernel)
        if self.use_bias:
            z = z + self.bias
        u = self.units
        i = self.recurrent_activation(z[:, :u])
        f = self.recurrent_activation(z[:, u:2 * u])
        c = f * c + i * self.activation(z[:, 2 * u:3 * u])
        o = self.recurrent_activation(z[:, 3 * u:])
        h = o * self.activation(c)
        return h, [h, c]


class GRU(Recurrent):
    """Gated recurrent unit, Keras 3's default form (reset_after=True, a bias of shape (2, 3 * units))."""

    gates, state_count = 3, 1

    def __init__(self, units, reset_after=True, **kwargs):
        super().__init__(units, **kwargs)
        if not reset_after:
            raise ValueError(f"[{self.name}] only reset_after=True (Keras' default) is supported.")

    def bias_shape(self):
        return (2, 3 * self.units)

    def step(self, x, states):
        h = states[0]
        matrix_x = dnp.matmul(x, self.kernel)
        matrix_inner = dnp.matmul(h, self.recurrent_kernel)
        if self.use_bias:
            matrix_x = matrix_x + self.bias[0]
            matrix_inner = matrix_inner + self.bias[1]
        u = self.units
        z = self.recurrent_activation(matrix_x[:, :u] + matrix_inner[:, :u])
        r = self.recurrent_activation(matrix_x[:, u:2 * u] + matrix_inner[:, u:2 * u])
        candidate = self.activation(matrix_x[:, 2 * u:] + r * matrix_inner[:, 2 * u:])
        h = z * h + (1 - z) * candidate
        return h, [h]


class Bidirectional(Layer):
    """Run a recurrent layer forwards and a copy of it backwards, and merge their outputs
    ('concat' by default; 'sum', 'mul', 'ave', or None for the pair). Weights: the forward
    layer's, then the backward one's."""

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(layer, Recurrent):
            raise ValueError(f"[{self.name}] Bidirectional wraps a SimpleRNN, LSTM or GRU layer, got "
                             f"{type(layer).__name__}.")
        if merge_mode not in ("concat", "sum", "mul", "ave", None):
            raise ValueError(f"[{self.name}] `merge_mode` must be 'concat', 'sum', 'mul', 'ave' or None, got "
                             f"{merge_mode!r}.")
        if layer.return_state or weights is not None:
            raise ValueError(f"[{self.name}] return_state=True and weights= are not supported by dualtape.keras' "
                             "Bidirectional.")
        backward = backward_layer or layer.reversed_copy("backward_" + layer.name)
        layer.rename("forward_" + layer.name)
        self.forward_layer, self.backward_layer = layer, backward
        self.merge_mode = merge_mode

    def call(self, inputs):
        forward, backward = self.forward_layer(inputs), self.backward_layer(inputs)
        if self.backward_layer.return_sequences:
            backward = backward[:, ::-1]  # the backward layer's steps in the forward order
        if self.merge_mode == "concat":
            return dnp.concatenate([forward, backward], axis=-1)
        if self.merge_mode == "sum":
            return forward + backward
        if self.merge_mode == "mul":
            return forward * backward
        if self.merge_mode == "ave":
            return (forward + backward) / 2.0
        return [forward, backward]
