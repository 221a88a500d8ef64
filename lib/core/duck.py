"""Duck arrays: arrays of other libraries (a `dask.array`) that speak NumPy's protocols.

NumPy functions called on them dispatch through `__array_function__` / `__array_ufunc__`
(NEP 18 / NEP 13), so the ops' NumPy implementations and the rules run on them unchanged and
stay lazy. dualtape never imports such a library: it only has to avoid `np.asarray` on them,
which would compute (and gather) a whole dask array on one machine.
"""

import numpy as np

from .errors import RefusalError
from .traced import Traced


def is_duck_array(x):
    """True for an array that is not NumPy's but implements NumPy's dispatch protocols."""
    return (not isinstance(x, (np.ndarray, np.generic, Traced)) and hasattr(x, "__array_function__")
            and hasattr(x, "shape") and hasattr(x, "dtype"))


def refuse_compute(api, x, fix):
    """The error for an operation that would compute a lazy duck array to get a NumPy value."""
    return RefusalError(
        f"[{api}] would compute the lazy {type(x).__module__}.{type(x).__name__} of shape "
        f"{tuple(x.shape)} and dtype {x.dtype} into a NumPy array, which dualtape never does "
        f"silently. {fix}")


def as_array(x, dtype=None):
    """`np.asarray(x, dtype)`, except that a duck array stays one (converted lazily)."""
    if is_duck_array(x):
        return x if dtype is None or x.dtype == dtype else x.astype(dtype)
    return np.asarray(x, dtype=dtype)
