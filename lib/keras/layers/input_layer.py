"""`keras.Input` and `InputLayer`: the symbolic entry points of functional models."""

import numpy as np

from .. import graph
from .base import Layer


class InputLayer(Layer):
    """Holds the placeholder `output` of shape (None,) + shape; calling it passes inputs through."""

    def __init__(self, shape=None, batch_size=None, dtype="float32", name=None, input_shape=None, **kwargs):
        shape = input_shape if shape is None else shape
        if shape is None:
            raise ValueError("[InputLayer] pass `shape=`, the shape of one sample, e.g. shape=(784,).")
        super().__init__(name=name, dtype=dtype if np.dtype(dtype).kind == "f" else "float32", **kwargs)
        self.input_dtype = np.dtype(dtype)
        self.built = True
        self.output = graph.KerasTensor((batch_size,) + tuple(shape), self.input_dtype, None, 0, self.name)
        self.output.input_layer = self

    def call(self, inputs):
        return inputs


def Input(shape=None, batch_size=None, dtype="float32", name=None, batch_shape=None):  # noqa: N802 (Keras' name)
    """A placeholder for one input of a functional model: `keras.Input(shape=(784,))`."""
    if batch_shape is not None:
        shape, batch_size = tuple(batch_shape[1:]), batch_shape[0]
    if isinstance(shape, int):
        shape = (shape,)
    return InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, name=name).output
