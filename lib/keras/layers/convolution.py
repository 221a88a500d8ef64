"""Conv2D over NHWC images and Conv1D over (batch, steps, channels), channels last, as Keras'
layers, on `tf.nn.conv2d` (a registry op: its derivatives are exact at every order, in every
mode); a 1-D convolution is a 2-D one over an image of height 1."""

import numpy as np

from .. import activations, initializers
from ...core import dnp
from ...surface import nn
from .base import Layer


def pair(value, name, layer):
    pair_ = (value, value) if isinstance(value, (int, np.integer)) else tuple(value)
    if len(pair_) != 2 or any(int(v) <= 0 for v in pair_):
        raise ValueError(f"[{layer}] `{name}` must be a positive int or a pair of them, got {value!r}.")
    return tuple(int(v) for v in pair_)


class Conv2D(Layer):
    """`activation(conv2d(inputs, kernel) + bias)` with a kernel of shape (kh, kw, in, filters)."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", name=None, dtype="float32",
                 **kwargs):
        super().__init__(name=name, dtype=dtype, **kwargs)
        layer = self.name
        if data_format not in (None, "channels_last"):
            raise ValueError(f"[{layer}] only data_format='channels_last' (NHWC) is supported, got "
                             f"{data_format!r}; transpose the images with tf.transpose(x, (0, 2, 3, 1)).")
        if padding not in ("valid", "same"):
            raise ValueError(f"[{layer}] `padding` must be 'valid' or 'same', got {padding!r}.")
        if groups != 1:
            raise ValueError(f"[{layer}] grouped convolutions (groups={groups}) are not supported.")
        self.filters = int(filters)
        self.kernel_size = pair(kernel_size, "kernel_size", layer)
        self.strides = pair(strides, "strides", layer)
        self.dilation_rate = pair(dilation_rate, "dilation_rate", layer)
        if self.dilation_rate != (1, 1) and self.strides != (1, 1):
            raise ValueError(f"[{layer}] strides > 1 together with dilation_rate > 1 is not allowed (as in Keras).")
        self.padding = padding
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)

    def build(self, input_shape):
        if len(input_shape) != 4:
            raise ValueError(f"[{self.name}] Conv2D expects 4-D inputs (batch, height, width, channels), got "
                             f"shape {input_shape}.")
        self.kernel = self.add_weight(shape=self.kernel_size + (input_shape[-1], self.filters),
                                      initializer=self.kernel_initializer, name="kernel")
        self.bias = (self.add_weight(shape=(self.filters,), initializer=self.bias_initializer, name="bias")
                     if self.use_bias else None)

    def call(self, inputs):
        if len(inputs.shape) != 4 or inputs.shape[-1] != self.kernel.shape[2]:
            raise ValueError(f"[{self.name}] expected inputs (batch, height, width, {self.kernel.shape[2]}), got "
                             f"shape {tuple(inputs.shape)}.")
        y = nn.conv2d(inputs, self.kernel, strides=self.strides, padding=self.padding.upper(),
                      dilations=self.dilation_rate)
        if self.use_bias:
            y = y + self.bias
        return self.activation(y)


class Conv1D(Conv2D):
    """`activation(conv1d(inputs, kernel) + bias)` with a kernel of shape (k, in, filters);
    padding 'valid', 'same' or 'causal' (zeros before the sequence only)."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", name=None, dtype="float32", **kwargs):
        self.causal = padding == "causal"
        single = [v if isinstance(v, (int, np.integer)) else tuple(v)[0]
                  for v in (kernel_size, strides, dilation_rate)]
        super().__init__(filters, (1, single[0]), (1, single[1]), "valid" if self.causal else padding, data_format,
                         (1, single[2]), groups, activation, use_bias, kernel_initializer, bias_initializer, name,
                         dtype, **kwargs)

    def build(self, input_shape):
        if len(input_shape) != 3:
            raise ValueError(f"[{self.name}] Conv1D expects 3-D inputs (batch, steps, channels), got shape "
                             f"{input_shape}.")
        self.kernel = self.add_weight(shape=(self.kernel_size[1], input_shape[-1], self.filters),
                                      initializer=self.kernel_initializer, name="kernel")
        self.bias = (self.add_weight(shape=(self.filters,), initializer=self.bias_initializer, name="bias")
                     if self.use_bias else None)

    def call(self, inputs):
        if len(inputs.shape) != 3 or inputs.shape[-1] != self.kernel.shape[1]:
            raise ValueError(f"[{self.name}] expected inputs (batch, steps, {self.kernel.shape[1]}), got shape "
                             f"{tuple(inputs.shape)}.")
        if self.causal:
            reach = self.dilation_rate[1] * (self.kernel_size[1] - 1)
            inputs = dnp.pad(inputs, ((0, 0), (reach, 0), (0, 0)))
        y = nn.conv2d(dnp.expand_dims(inputs, 1), dnp.expand_dims(self.kernel, 0), strides=self.strides,
                      padding=self.padding.upper(), dilations=self.dilation_rate)
        y = dnp.squeeze(y, 1)
        if self.use_bias:
            y = y + self.bias
        return self.activation(y)
