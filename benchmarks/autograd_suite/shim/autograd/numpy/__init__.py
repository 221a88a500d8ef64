"""autograd.numpy on dualtape: NumPy itself. A NumPy function called on a traced value is
recorded by dualtape through NumPy's `__array_function__` / `__array_ufunc__` protocols.

The one function NumPy cannot dispatch is `np.array` of a list holding traced values (NumPy
converts each element with `__array__`, which a traced value refuses); autograd.numpy's own
`array` builds such an array from its elements, and so does this one (with np.stack).
"""

import numpy as _np
from numpy import *  # noqa: F401,F403

from dualtape.core.traced import Traced as _Traced

del fft, linalg, random  # (numpy's, from the star import: `from . import` would keep them)
from . import fft, linalg, random  # noqa: E402,F401


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


def make_diagonal(D, offset=0, axis1=0, axis2=1):
    """autograd.numpy's own complement of np.diagonal (NumPy has none): D's last axis on the
    diagonal of a new last pair of axes, written with NumPy functions dualtape records."""
    if not (offset == 0 and axis1 == -1 and axis2 == -2):
        raise NotImplementedError("Currently make_diagonal only supports offset=0, axis1=-1, axis2=-2")
    return _np.expand_dims(D, -1) * _np.eye(_np.shape(D)[-1])


def __getattr__(name):
    return getattr(_np, name)
