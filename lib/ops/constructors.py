"""Constructors (eye, zeros, ones, full, linspace, arange) and the `Cast` primitive.

Constructors are not differentiable: they return plain ndarrays, accepting tensors for
their sizes and bounds. `cast` is a primitive: its VJP casts the cotangent back to the
input's dtype, and no gradient flows into integer inputs (as in TF).
"""

import numpy as np

from ..core import dnp
from ..core.registry import Traced, defop
from ..core.rulekit import cast_back, cast_tangent

__all__ = ["cast", "eye", "zeros", "ones", "full", "linspace", "arange"]


def _cast(x, *, dtype=None):
    return np.array(x, dtype=dtype, copy=True)  # dtype None: keep x's dtype (a copy)


def cast_vjp(g, ans, x, *, dtype=None):
    return cast_back(g, x)


def cast_jvp(dx, ans, x, *, dtype=None):
    return cast_tangent(dx, dtype)


# The registry-wide tests run each sample in float32 and float64 and require the output to
# keep the input's dtype, so the samples cast to the input's own dtype; real float64 <->
# float32 casts are tested in tests/test_ops_linalg_shape.py.
def _sample_cast_keep(rng):
    return (rng.standard_normal((2, 3)),), {}


def _sample_cast_keep_scalar(rng):
    return (rng.standard_normal(()),), {"dtype": None}


CAST = defop("Cast", _cast, vjp=cast_vjp, jvp=cast_jvp, batch_vjp=True,
             samples=(_sample_cast_keep, _sample_cast_keep_scalar), complex=True)


def _np_dtype(dtype):
    """A NumPy dtype from a NumPy, Python or dualtape dtype (tf.float32 has as_numpy_dtype)."""
    return None if dtype is None else np.dtype(getattr(dtype, "as_numpy_dtype", dtype))


def cast(x, dtype, name=None):
    """x converted to `dtype`; differentiable between floating dtypes.

    >>> dnp.cast(np.array([1.5, 2.0]), np.int32)
    array([1, 2], dtype=int32)
    """
    return CAST(x, dtype=_np_dtype(dtype))


def _plain(value):
    return np.asarray(value) if not isinstance(value, (int, float, complex, tuple, list)) else value


def _size(value):
    return int(np.asarray(value).reshape(()))


def _shape(shape):
    if np.ndim(shape) == 0:
        return (_size(shape),)
    return tuple(_size(n) for n in shape)


def eye(N, M=None, k=0, dtype=float, order="C", *, like=None):  # noqa: N803  (NumPy's names)
    return np.eye(_size(N), None if M is None else _size(M), _size(k), dtype=_np_dtype(dtype))


def zeros(shape, dtype=float, order="C", *, like=None):
    return np.zeros(_shape(shape), dtype=_np_dtype(dtype), order=order)


def ones(shape, dtype=None, order="C", *, like=None):
    return np.ones(_shape(shape), dtype=_np_dtype(dtype), order=order)


def full(shape, fill_value, dtype=None, order="C", *, like=None):
    return np.full(_shape(shape), _plain(fill_value), dtype=_np_dtype(dtype), order=order)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    if isinstance(start, Traced) or isinstance(stop, Traced):
        if dtype is None or _np_dtype(dtype).kind in "fc":
            return _traced_linspace(start, stop, _size(num), endpoint, retstep, axis)
    return np.linspace(_plain(start), _plain(stop), _size(num), endpoint=endpoint, retstep=retstep,
                       dtype=_np_dtype(dtype), axis=axis)


def _traced_linspace(start, stop, num, endpoint, retstep, axis):
    """linspace with a traced bound: start * (1 - t) + stop * t for fixed fractions t, so
    the derivative flows into both bounds and the ends are exactly start and stop."""
    div = (num - 1) if endpoint else num
    fractions = np.arange(num, dtype=np.float64) / div if div > 0 else np.zeros(num)
    ndim = max(dnp.ndim(start), dnp.ndim(stop))
    fractions = fractions.reshape((num,) + (1,) * ndim)
    out = start * (1.0 - fractions) + stop * fractions
    if axis != 0:
        out = dnp.moveaxis(out, 0, axis)
    if retstep:
        return out, ((stop - start) / div if div > 0 else (stop - start) * np.nan)
    return out


def arange(*args, dtype=None, like=None, **kwargs):
    args = [_plain(a) for a in args]
    kwargs = {k: _plain(v) for k, v in kwargs.items()}
    return np.arange(*args, dtype=_np_dtype(dtype), **kwargs)

dnp.export(globals())
