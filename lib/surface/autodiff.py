"""`dualtape.autodiff`: the names of `tf.autodiff` (ForwardAccumulator, GradientTape)."""

from ..forward.accumulator import ForwardAccumulator
from ..reverse.tape import GradientTape

__all__ = ["ForwardAccumulator", "GradientTape"]
