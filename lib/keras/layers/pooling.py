"""Pooling layers: MaxPooling2D, AveragePooling2D over NHWC images, their 1-D forms over
(batch, steps, channels), and the global forms."""

from ...core import dnp
from .base import Layer
from .convolution import pair
from ...surface import nn

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

    def check(self, inputs):
        if len(inputs.shape) != 4:
            raise ValueError(f"[{self.name}] expects 4-D inputs (batch, height, width, channels), got shape "
                             f"{tuple(inputs.shape)}.")
        return dict(ksize=self.pool_size, strides=self.strides, padding=self.padding.upper())

class MaxPooling2D(Pooling2D):
    """The maximum of each window (`tf.nn.max_pool2d`: the gradient goes to the first maximum)."""

    def call(self, inputs):
        return nn.max_pool2d(inputs, **self.check(inputs))

class AveragePooling2D(Pooling2D):
    """The mean of each window (`tf.nn.avg_pool2d`: with 'same' padding, padded pixels are not counted)."""

    def call(self, inputs):
        return nn.avg_pool2d(inputs, **self.check(inputs))

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


class Pooling1D(Pooling2D):
    """A 1-D pooling: the 2-D one over an image of height 1."""

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, name=None, **kwargs):
        single = [v if v is None or isinstance(v, int) else tuple(v)[0] for v in (pool_size, strides)]
        super().__init__((1, single[0]), None if single[1] is None else (1, single[1]), padding, data_format, name,
                         **kwargs)

    def call(self, inputs):
        if len(inputs.shape) != 3:
            raise ValueError(f"[{self.name}] expects 3-D inputs (batch, steps, channels), got shape "
                             f"{tuple(inputs.shape)}.")
        return dnp.squeeze(self.pool(dnp.expand_dims(inputs, 1)), 1)


class MaxPooling1D(Pooling1D):
    def pool(self, images):
        return nn.max_pool2d(images, **self.check(images))


class AveragePooling1D(Pooling1D):
    def pool(self, images):
        return nn.avg_pool2d(images, **self.check(images))


class GlobalAveragePooling1D(Layer):
    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.keepdims = keepdims

    def call(self, inputs):
        return dnp.mean(inputs, axis=1, keepdims=self.keepdims)


class GlobalMaxPooling1D(Layer):
    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.keepdims = keepdims

    def call(self, inputs):
        return dnp.max(inputs, axis=1, keepdims=self.keepdims)
