"""`dnp`: the differentiable NumPy-like namespace.

`dnp.sin(x)` is NumPy's `np.sin(x)` on plain arrays and a recorded (or dual) op on
tensors and dual numbers. Rules call `dnp`, so an outer tape records the backward pass.
Every public name of the op modules is re-exported here under NumPy's name, and
`NUMPY_DISPATCH` maps NumPy's own functions to them for `__array_ufunc__` /
`__array_function__`.
"""

import numpy as np

from .registry import Traced


def result_dtype(x):
    """The NumPy dtype of a plain, traced or Python value."""
    while isinstance(x, Traced):
        x = x._value if hasattr(x, "_value") else x.primal
    dtype = getattr(x, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) else np.asarray(x).dtype


def shape(x):
    if isinstance(x, Traced):
        return tuple(x.shape)
    return np.shape(x)


def ndim(x):
    return len(shape(x))


def size(x):
    return int(np.prod(shape(x)))


def ones_like(x, dtype=None):
    """Ones shaped like `x`: a constant, never recorded."""
    return np.ones(np.shape(x), dtype=dtype or result_dtype(x))


def zeros_like(x, dtype=None):
    """Zeros shaped like `x`: a constant, never recorded."""
    return np.zeros(np.shape(x), dtype=dtype or result_dtype(x))


from .ops import activations as _activations  # noqa: E402
from .ops import constructors as _constructors  # noqa: E402
from .ops import elementwise as _elementwise  # noqa: E402
from .ops import indexing as _indexing  # noqa: E402
from .ops import linalg as _linalg  # noqa: E402
from .ops import nn as _nn  # noqa: E402
from .ops import reductions as _reductions  # noqa: E402
from .ops import shape as _shape  # noqa: E402
from .ops import transcendental as _transcendental  # noqa: E402

_MODULES = (_elementwise, _transcendental, _activations, _reductions, _nn, _shape, _indexing, _linalg, _constructors)
for _module in _MODULES:
    for _name in _module.__all__:
        globals()[_name] = getattr(_module, _name)

# NumPy function -> dnp function, for tensors and duals passed to NumPy itself.
NUMPY_DISPATCH = {}
for _module in _MODULES:
    for _name in _module.__all__:
        _np_fn = getattr(np, _name, None)
        if _np_fn is not None and callable(_np_fn):
            NUMPY_DISPATCH[_np_fn] = globals()[_name]
NUMPY_DISPATCH.update(_linalg.NUMPY_LINALG)
NUMPY_DISPATCH[np.linalg.norm] = globals()["norm"]
NUMPY_DISPATCH[np.ones_like] = ones_like
NUMPY_DISPATCH[np.zeros_like] = zeros_like
NUMPY_DISPATCH[np.shape] = shape
NUMPY_DISPATCH[np.ndim] = ndim
NUMPY_DISPATCH[np.size] = size
