"""Scans: np.cumsum as TF's Cumsum (with `exclusive` and `reverse`). Linear; its VJP is the
cumsum the other way."""

import numpy as np

from ..core import dnp
from ..core.registry import LINEAR, Traced, defop
from ..core.rulekit import negative_axis, reshape_like
from .reductions import refuse_out, normal_sample, with_dtype

__all__ = ["cumsum"]


# -- cumsum: TF's Cumsum with exclusive / reverse; the VJP is the cumsum the other way -------

def _cumsum(x, *, axis=None, exclusive=False, reverse=False):
    x = np.asarray(x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    if reverse:
        x = np.flip(x, axis)
    out = np.cumsum(x, axis=axis)
    if exclusive:  # shift by one: out[i] = sum of x[:i]
        pad_shape = list(np.shape(out))
        pad_shape[axis] = 1
        out = np.delete(np.concatenate([np.zeros(pad_shape, out.dtype), out], axis=axis), -1, axis=axis)
    return np.flip(out, axis) if reverse else out


def cumsum_vjp(g, ans, x, *, axis=None, exclusive=False, reverse=False):
    # a negative axis still names x's axis when g carries leading batch axes
    return reshape_like(dnp.cumsum(g, axis=-1 if axis is None else negative_axis(axis, np.ndim(x)),
                                   exclusive=exclusive, reverse=not reverse), x)


CUMSUM = defop("Cumsum", _cumsum, vjp=cumsum_vjp, jvp=LINEAR, batch_vjp=True, samples=(
    normal_sample((3, 4), axis=1), normal_sample((2, 3, 4), axis=-1, reverse=True), normal_sample((2, 3)),
    normal_sample((5,), axis=0, exclusive=True), normal_sample((2, 3, 4), axis=0, exclusive=True, reverse=True),
    normal_sample(()), normal_sample((1,), axis=-1, exclusive=True)), complex=True)


def cumsum(a, axis=None, dtype=None, out=None, *, exclusive=False, reverse=False):
    """np.cumsum (axis=None flattens), plus TF's `exclusive` and `reverse` options."""
    refuse_out("cumsum", out)
    if dtype is not None and not isinstance(a, Traced):  # plain values: NumPy's own dtype= semantics
        return np.cumsum(a, axis=axis, dtype=dtype)
    return CUMSUM(with_dtype("cumsum", a, dtype), axis=None if axis is None else int(axis), exclusive=bool(exclusive),
                  reverse=bool(reverse))


dnp.export(globals())
