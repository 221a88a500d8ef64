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


def primal_of(x):
    """The plain value under any nesting of tensors and dual numbers. A vmap's batched value
    stays batched (its plain values, one per example): a rule computing indices from it
    computes them per example (batching/), never from the whole batch as one array."""
    while isinstance(x, Traced):
        if getattr(x, "batch_size", None) is not None:
            inner = primal_of(x._value)
            return x if inner is x._value else x.__class__(inner, x.level, x.batch_size)
        x = x._value if hasattr(x, "_value") else x.primal
    return x


def values_of(x):
    """The plain values under `x`, a vmap's examples stacked (batch axis first): for checks that
    hold for every example alike (a zero anywhere, a value out of a domain), never for values."""
    while isinstance(x, Traced):
        x = x._value if hasattr(x, "_value") else x.primal
    return x


def ones_for(x, dtype):
    """Ones shaped like `x` (a seed): lazy ones when `x` holds a duck array, so the backward
    pass stays in its library (a NumPy seed, broadcast by sum's VJP, would be embedded whole
    into every dask graph)."""
    value = primal_of(x)
    if is_duck_array(value):
        return np.ones_like(value, dtype=dtype)
    return np.ones(np.shape(value) if not isinstance(x, Traced) else tuple(x.shape), dtype=dtype)


def lazy_scalar(value, args):
    """`value` (a vjp's dy, grad's 1.0), as a lazy scalar of the first duck array among `args`
    when it is a plain scalar: sum's adjoint broadcasts it to the data's shape, and a NumPy one
    would enter every dask graph as a whole array (sent to each worker)."""
    if not isinstance(value, Traced) and not is_duck_array(value) and np.ndim(value) == 0:
        for arg in args:
            if is_duck_array(arg):
                dtype = arg.dtype if arg.dtype.kind == "f" else np.float64
                return np.ones_like(arg, shape=(), dtype=dtype) * value
    return value


def lazy_seed(kwargs, seed, args):
    """`kwargs`, plus grad's seed parameter `seed` as a lazy 1.0 when an argument is a duck array."""
    if seed is None or seed in kwargs or not any(is_duck_array(arg) for arg in args):
        return kwargs
    return {**kwargs, seed: lazy_scalar(1.0, args)}
