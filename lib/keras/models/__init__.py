"""`keras.Model` and `keras.Sequential`, and the machinery of training them.

- `model`: `Model` (subclassed or functional), summary and weight saving
- `sequential`: `Sequential`
- `trainer`: compile, fit, evaluate, predict, train_step / test_step
- `compiled`: what compile makes of `loss=` and `metrics=`
- `data`: batches from arrays or from an iterable (a `tf.data.Dataset`)
- `summary`: the table `model.summary()` prints
"""

from .model import Model
from .sequential import Sequential


__all__ = ["Model", "Sequential"]


def __dir__():
    return sorted(__all__)
