"""Normalization layers: BatchNormalization (over the batch) and LayerNormalization (per sample)."""

import numpy as np

from ...core import dnp
from .base import Layer


class BatchNormalization(Layer):
    """Normalise over the batch (training=True, updating the moving statistics) or with the
    moving statistics (training=False): `(x - mean) / sqrt(var + epsilon) * gamma + beta`."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", moving_mean_initializer="zeros",
                 moving_variance_initializer="ones", name=None, dtype="float32", **kwargs):
        super().__init__(name=name, dtype=dtype, **kwargs)
        self.axis, self.momentum, self.epsilon = axis, momentum, epsilon
        self.center, self.scale = center, scale
        self.initializers = (gamma_initializer, beta_initializer, moving_mean_initializer,
                             moving_variance_initializer)

    def build(self, input_shape):
        shape = (input_shape[self.axis],)
        gamma, beta, mean, variance = self.initializers
        self.gamma = self.add_weight(shape=shape, initializer=gamma, name="gamma") if self.scale else None
        self.beta = self.add_weight(shape=shape, initializer=beta, name="beta") if self.center else None
        self.moving_mean = self.add_weight(shape=shape, initializer=mean, trainable=False, name="moving_mean")
        self.moving_variance = self.add_weight(shape=shape, initializer=variance, trainable=False,
                                               name="moving_variance")

    def call(self, inputs, training=False):
        ndim = len(inputs.shape)
        axis = self.axis % ndim
        reduce_axes = tuple(i for i in range(ndim) if i != axis)
        shape = [1] * ndim
        shape[axis] = inputs.shape[axis]
        if training and self.trainable:
            mean = dnp.mean(inputs, axis=reduce_axes, keepdims=True)
            variance = dnp.mean(dnp.square(inputs - mean), axis=reduce_axes, keepdims=True)
            m = np.float32(self.momentum)
            self.moving_mean.assign(self.moving_mean.numpy() * m + np.reshape(mean.numpy(), -1) * (1 - m))
            self.moving_variance.assign(self.moving_variance.numpy() * m
                                        + np.reshape(variance.numpy(), -1) * (1 - m))
        else:
            mean = dnp.reshape(self.moving_mean, shape)
            variance = dnp.reshape(self.moving_variance, shape)
        y = (inputs - mean) / dnp.sqrt(variance + self.epsilon)
        if self.scale:
            y = y * dnp.reshape(self.gamma, shape)
        if self.center:
            y = y + dnp.reshape(self.beta, shape)
        return y


class LayerNormalization(Layer):
    """Normalise each sample over `axis` (the last by default): `(x - mean) / sqrt(var + eps) * gamma + beta`."""

    def __init__(self, axis=-1, epsilon=0.001, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", name=None, dtype="float32", **kwargs):
        super().__init__(name=name, dtype=dtype, **kwargs)
        self.axis = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
        self.epsilon, self.center, self.scale = epsilon, center, scale
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer

    def build(self, input_shape):
        shape = tuple(input_shape[a] for a in self.axis)
        self.gamma = self.add_weight(shape=shape, initializer=self.gamma_initializer, name="gamma") \
            if self.scale else None
        self.beta = self.add_weight(shape=shape, initializer=self.beta_initializer, name="beta") \
            if self.center else None

    def call(self, inputs):
        ndim = len(inputs.shape)
        axes = tuple(sorted(a % ndim for a in self.axis))
        shape = [inputs.shape[i] if i in axes else 1 for i in range(ndim)]
        mean = dnp.mean(inputs, axis=axes, keepdims=True)
        variance = dnp.mean(dnp.square(inputs - mean), axis=axes, keepdims=True)
        y = (inputs - mean) / dnp.sqrt(variance + self.epsilon)
        if self.scale:
            y = y * dnp.reshape(self.gamma, shape)
        if self.center:
            y = y + dnp.reshape(self.beta, shape)
        return y
