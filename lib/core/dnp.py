"""`dnp`: the differentiable NumPy-like namespace.

`dnp.sin(x)` is NumPy's `np.sin(x)` on plain arrays and a recorded (or dual) op on
tensors and dual numbers. Rules call `dnp`, so an outer tape records the backward pass.
This module sits at the bottom, below the ops: it defines the base shape helpers, and each
module of `dualtape.ops` calls `export` as it is declared, publishing its names here under
NumPy's and adding NumPy's own functions to `NUMPY_DISPATCH` (for `__array_ufunc__` /
`__array_function__`). Only `dualtape/__init__.py` imports the op modules (through
`dualtape.ops`), so the namespace is full before any op is called.
"""

import numpy as np

from .traced import Traced


def result_dtype(x):
    """The NumPy dtype of a plain, traced or Python value."""
    if x.__class__ is _ndarray:
        return x.dtype
    while isinstance(x, Traced):
        x = x._value if hasattr(x, "_value") else x.primal
    dtype = getattr(x, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) else np.asarray(x).dtype


_ndarray = np.ndarray


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


# NumPy function -> dnp function, for tensors and duals passed to NumPy itself.
NUMPY_DISPATCH = {np.ones_like: ones_like, np.zeros_like: zeros_like, np.shape: shape, np.ndim: ndim,
                  np.size: size}
# (class name, method name) -> dnp function, for methods of other libraries' objects the source
# transformer maps by name (scipy.stats.norm.logpdf: ("norm_gen", "logpdf")); see opmap.lookup.
METHOD_DISPATCH = {}


def export(namespace, numpy_functions=None):
    """Publish an op module's `__all__` here, and route NumPy's function of each name to it.

    `namespace` is the op module's `globals()`; `numpy_functions` maps further NumPy
    functions (np.linalg's) to the module's. Each module of `dualtape.ops` calls this last.
    """
    for name in namespace["__all__"]:
        fn = globals()[name] = namespace[name]
        np_fn = getattr(np, name, None)
        if np_fn is not None and callable(np_fn):
            NUMPY_DISPATCH[np_fn] = fn
    NUMPY_DISPATCH.update(numpy_functions or {})
