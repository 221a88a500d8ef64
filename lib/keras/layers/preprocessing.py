"""Preprocessing layers: Normalization (standardize with statistics from `adapt`) and Rescaling."""

import numpy as np

from ...core import dnp
from ...reverse.tensor import Tensor
from ...surface.tf_ops import cast
from ..losses import EPSILON
from .base import Layer


class Normalization(Layer):
    """`(x - mean) / max(sqrt(variance), 1e-7)` per position of `axis` (the last by default;
    None: one mean over everything). The statistics come from `adapt(data)` or `mean=`/`variance=`."""

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        self.axis = () if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
        if (mean is None) != (variance is None):
            raise ValueError(f"[{self.name}] pass both `mean` and `variance`, or neither (and call adapt()).")
        self.input_mean, self.input_variance, self.invert = mean, variance, invert

    def build(self, input_shape):
        ndim = len(input_shape)
        self.keep_axes = tuple(sorted(a % ndim for a in self.axis))
        self.broadcast_shape = [input_shape[d] if d in self.keep_axes else 1 for d in range(ndim)]
        shape = tuple(input_shape[d] for d in self.keep_axes)
        if self.input_mean is None:
            self.mean = self.add_weight(shape=shape, initializer="zeros", trainable=False, name="mean")
            self.variance = self.add_weight(shape=shape, initializer="ones", trainable=False, name="variance")
            # Keras keeps a `count` weight that adapt() leaves at 0 (it counts in the summary)
            self.count = self.add_weight(shape=(), initializer="zeros", dtype="int64", trainable=False, name="count")

    def adapt(self, data, batch_size=None, steps=None):
        """Set mean and variance (the population variance) from `data`: an array, or an iterable of batches."""
        if isinstance(data, (np.ndarray, Tensor, list)):
            values = np.asarray(data.numpy() if isinstance(data, Tensor) else data, np.float64)
        else:
            values = np.concatenate([np.asarray(b.numpy() if isinstance(b, Tensor) else b, np.float64) for b in data])
        if values.ndim == 1:
            values = values[:, None]
        if not self.built:
            self.build(values.shape)
            self.built = True
        if self.input_mean is not None:
            raise ValueError(f"[{self.name}] this layer was given `mean` and `variance`; it cannot adapt().")
        reduce_axes = tuple(d for d in range(values.ndim) if d not in self.keep_axes)
        self.mean.assign(np.mean(values, axis=reduce_axes).astype(np.float32))
        self.variance.assign(np.var(values, axis=reduce_axes).astype(np.float32))

    def statistics(self, dtype):
        if self.input_mean is not None:
            mean = np.broadcast_to(np.asarray(self.input_mean, dtype), self.broadcast_shape)
            variance = np.broadcast_to(np.asarray(self.input_variance, dtype), self.broadcast_shape)
            return mean, variance
        return dnp.reshape(self.mean, self.broadcast_shape), dnp.reshape(self.variance, self.broadcast_shape)

    def call(self, inputs):
        mean, variance = self.statistics(inputs.dtype.as_numpy_dtype)
        scale = dnp.maximum(dnp.sqrt(variance), EPSILON)
        return mean + inputs * scale if self.invert else (inputs - mean) / scale


class Rescaling(Layer):
    """`inputs * scale + offset` (e.g. `Rescaling(1. / 255)` for pixels), in float32."""

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset

    def call(self, inputs):
        x = inputs if inputs.dtype.is_floating else cast(inputs, self.dtype)
        return x * np.asarray(self.scale, self.dtype) + np.asarray(self.offset, self.dtype)
