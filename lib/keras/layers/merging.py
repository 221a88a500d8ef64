"""Layers that merge a list of inputs: Add, Subtract, Multiply, Average, Concatenate."""

import functools

from ...core import dnp
from .base import Layer


class Merge(Layer):
    """A layer called on a list of tensors of one shape."""

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise ValueError(f"[{self.name}] expects a list of at least 2 tensors, got {type(inputs).__name__}.")
        return self.merge(list(inputs))


class Add(Merge):
    def merge(self, inputs):
        return functools.reduce(lambda a, b: a + b, inputs)


class Subtract(Merge):
    def merge(self, inputs):
        if len(inputs) != 2:
            raise ValueError(f"[{self.name}] Subtract takes exactly 2 inputs, got {len(inputs)}.")
        return inputs[0] - inputs[1]


class Multiply(Merge):
    def merge(self, inputs):
        return functools.reduce(lambda a, b: a * b, inputs)


class Average(Merge):
    def merge(self, inputs):
        return functools.reduce(lambda a, b: a + b, inputs) / float(len(inputs))


class Concatenate(Merge):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def merge(self, inputs):
        return dnp.concatenate(inputs, axis=self.axis)
