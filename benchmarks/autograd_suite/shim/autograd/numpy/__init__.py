"""autograd.numpy on dualtape: NumPy itself. A NumPy function called on a traced value is
recorded by dualtape through NumPy's `__array_function__` / `__array_ufunc__` protocols.

The one function NumPy cannot dispatch is `np.array` of a list holding traced values (NumPy
converts each element with `__array__`, which a traced value refuses); autograd.numpy's own
`array` builds such an array from its elements, and so does this one (with np.stack).
"""

import numpy as _np
from numpy import *  # noqa: F401,F403

from dualtape.core.traced import Traced as _Traced

from . import fft, linalg, random  # noqa: F401


def _holds_traced(obj):
    if isinstance(obj, _Traced):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_holds_traced(item) for item in obj)
    return False


def _stack_elements(obj):
    if isinstance(obj, (list, tuple)):
        return _np.stack([_stack_elements(item) for item in obj])
    return obj + _np.zeros(())  # a number or a traced value, as a 0-d value


def array(obj, *args, **kwargs):
    if _holds_traced(obj):
        out = _stack_elements(obj) if isinstance(obj, (list, tuple)) else obj
        dtype = kwargs.get("dtype", args[0] if args else None)
        return out if dtype is None else out.astype(dtype)
    return _np.array(obj, *args, **kwargs)


def __getattr__(name):
    return getattr(_np, name)
