"""`dualtape.autodiff`: the names of `tf.autodiff` (ForwardAccumulator, GradientTape)."""

from .accumulator import ForwardAccumulator
from .tape import GradientTape

__all__ = ["ForwardAccumulator", "GradientTape"]
