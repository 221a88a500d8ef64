"""Reductions: sum, mean and friends. Static `axis` / `keepdims` are keyword-only metadata.

VJPs broadcast the reduced cotangent back with `unreduce`; `axis` is normalized to a
tuple of ints by the dnp functions, so rules and records see one spelling.
"""

import numpy as np

from .. import numpy_api as dnp
from ..registry import LINEAR, defop
from ..rulekit import reduced_size, unreduce

__all__ = ["sum", "mean"]


def _axis(axis):
    if axis is None or isinstance(axis, int):
        return axis
    if isinstance(axis, (tuple, list)):
        return tuple(int(a) for a in axis)
    return int(axis)


def _sum(x, *, axis=None, keepdims=False):
    return np.sum(x, axis=axis, keepdims=keepdims)


def sum_vjp(g, ans, x, *, axis=None, keepdims=False):
    return unreduce(g, np.shape(x), axis, keepdims)


def _sample_reduce(rng):
    return (rng.standard_normal((3, 4)),), {"axis": 1, "keepdims": False}


def _sample_reduce_keep(rng):
    return (rng.standard_normal((2, 3, 4)),), {"axis": (0, 2), "keepdims": True}


def _sample_reduce_all(rng):
    return (rng.standard_normal((3, 2)),), {}


REDUCE_SAMPLES = (_sample_reduce, _sample_reduce_keep, _sample_reduce_all)

SUM = defop("Sum", _sum, vjp=sum_vjp, jvp=LINEAR, samples=REDUCE_SAMPLES)


def _mean(x, *, axis=None, keepdims=False):
    return np.mean(x, axis=axis, keepdims=keepdims)


def mean_vjp(g, ans, x, *, axis=None, keepdims=False):
    return unreduce(g, np.shape(x), axis, keepdims) / reduced_size(np.shape(x), axis)


MEAN = defop("Mean", _mean, vjp=mean_vjp, jvp=LINEAR, samples=REDUCE_SAMPLES)


def sum(x, axis=None, dtype=None, out=None, keepdims=False):  # noqa: A001
    _no_out("sum", out, dtype)
    return SUM(x, axis=_axis(axis), keepdims=bool(keepdims))


def mean(x, axis=None, dtype=None, out=None, keepdims=False):
    _no_out("mean", out, dtype)
    return MEAN(x, axis=_axis(axis), keepdims=bool(keepdims))


def _no_out(name, out, dtype=None):
    if out is not None:
        raise TypeError(f"[{name}] out= is not supported on differentiable values: results are "
                        "immutable. Assign the returned value instead.")
    if dtype is not None:
        raise TypeError(f"[{name}] dtype= is not supported on differentiable values. "
                        "Cast the input with dnp.cast / dualtape.cast first.")
