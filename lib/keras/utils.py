"""`keras.utils`: `to_categorical`, `set_random_seed` and `Progbar`."""

import random as python_random

import numpy as np

from .progbar import Progbar  # noqa: F401  (keras.utils.Progbar)
from ..reverse.tensor import Tensor
from ..surface import random


def to_categorical(x, num_classes=None):
    """One-hot rows for integer labels (a trailing axis of size 1 is dropped), float64 as Keras'
    NumPy path returns them."""
    x = np.array(x.numpy() if isinstance(x, Tensor) else x)
    if x.dtype.kind == "f" and not np.all(x == np.round(x)):
        raise ValueError(f"[to_categorical] labels must be integers, got values such as {x.ravel()[:3]}.")
    x = x.astype("int64")
    shape = x.shape[:-1] if x.ndim > 1 and x.shape[-1] == 1 else x.shape
    x = x.reshape(-1)
    num_classes = int(np.max(x)) + 1 if not num_classes else int(num_classes)
    if x.size and (x.min() < 0 or x.max() >= num_classes):
        raise ValueError(f"[to_categorical] labels must lie in [0, {num_classes}), got values from {x.min()} "
                         f"to {x.max()}.")
    categorical = np.zeros((x.shape[0], num_classes))
    categorical[np.arange(x.shape[0]), x] = 1
    return categorical.reshape(shape + (num_classes,))


def set_random_seed(seed):
    """Seed Python's, NumPy's and dualtape's generators (weights, dropout, shuffling)."""
    python_random.seed(seed)
    np.random.seed(seed)
    random.set_seed(seed)


__all__ = ["Progbar", "set_random_seed", "to_categorical"]


def __dir__():
    return sorted(__all__)
