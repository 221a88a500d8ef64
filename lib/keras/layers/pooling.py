"""Pooling layers over NHWC images: MaxPooling2D, AveragePooling2D and their global forms."""

import numpy as np

from ...core import dnp
from .base import Layer
from .convolution import pair, windows


class Pooling2D(Layer):
    """The shared arguments: `pool_size`, `strides` (default: the pool size), `padding`."""

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"[{self.name}] only data_format='channels_last' (NHWC) is supported, got "
                             f"{data_format!r}.")
        if padding not in ("valid", "same"):
            raise ValueError(f"[{self.name}] `padding` must be 'valid' or 'same', got {padding!r}.")
        self.pool_size = pair(pool_size, "pool_size", self.name)
        self.strides = self.pool_size if strides is None else pair(strides, "strides", self.name)
        self.padding = padding

    def windows_of(self, inputs, fill):
        if len(inputs.shape) != 4:
            raise ValueError(f"[{self.name}] expects 4-D inputs (batch, height, width, channels), got shape "
                             f"{tuple(inputs.shape)}.")
        ph, pw = self.pool_size
        return windows(inputs, ((ph, pw), [(i, j) for i in range(ph) for j in range(pw)]), self.strides,
                       self.padding, fill)


class MaxPooling2D(Pooling2D):
    """The maximum of each window; its gradient goes to the first maximum, as TF's MaxPool."""

    def call(self, inputs):
        patches = self.windows_of(inputs, -np.inf)
        first = np.argmax(patches.numpy(), axis=3)[:, :, :, None, :]
        return dnp.squeeze(dnp.take_along_axis(patches, first, axis=3), 3)


class AveragePooling2D(Pooling2D):
    """The mean of each window; with 'same' padding the padded pixels are not counted (as TF)."""

    def call(self, inputs):
        patches = self.windows_of(inputs, 0.0)
        ones = np.ones((1,) + tuple(inputs.shape[1:3]) + (1,), np.float32)
        counts = self.windows_of(ones, 0.0).sum(axis=3) if self.padding == "same" else None
        total = dnp.sum(patches, axis=3)
        if counts is None:
            return total / np.float32(self.pool_size[0] * self.pool_size[1])
        return total / np.asarray(counts, inputs.dtype.as_numpy_dtype)


class GlobalAveragePooling2D(Layer):
    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.keepdims = keepdims

    def call(self, inputs):
        return dnp.mean(inputs, axis=(1, 2), keepdims=self.keepdims)


class GlobalMaxPooling2D(Layer):
    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.keepdims = keepdims

    def call(self, inputs):
        return dnp.max(inputs, axis=(1, 2), keepdims=self.keepdims)
