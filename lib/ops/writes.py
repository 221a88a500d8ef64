"""Functional spellings of NumPy's in-place writes: `put_along_axis(arr, indices,
values, axis)` returns a new array (as `jax.numpy.put_along_axis(..., inplace=False)`),
differentiable w.r.t. `arr` (its cotangent is zero where values were written) and `values`
(the cotangent read back at the written positions; of repeated positions, the last write is
the one that stays, as in NumPy's assignment, and only it gets a gradient).

NumPy's own `np.put_along_axis` writes into its argument and returns None: called on a tensor
or dual number it is refused with the functional spelling as the fix (a traced value is
immutable), never routed to the functional version, whose result the caller would drop.
"""

import numpy as np

from ..core import dnp
from ..core.registry import defop
from ..core.rulekit import put_winners, unbroadcast, zeros_like

__all__ = ["put_along_axis"]


def _put_along_axis(arr, indices, values, *, axis):
    out = np.array(arr, copy=True)
    np.put_along_axis(out, indices, values, axis)
    return out


def put_arr_vjp(g, ans, arr, indices, values, *, axis):
    return dnp.put_along_axis(g, indices, 0.0, axis)


def put_values_vjp(g, ans, arr, indices, values, *, axis):
    return unbroadcast(dnp.take_along_axis(g, indices, axis) * put_winners(indices, axis, ans),
                       np.shape(values))


def put_arr_jvp(darr, ans, arr, indices, values, *, axis):
    return dnp.put_along_axis(darr, indices, 0.0, axis)


def put_values_jvp(dvalues, ans, arr, indices, values, *, axis):
    return dnp.put_along_axis(zeros_like(ans), indices, dvalues, axis)


def _sample_rows(rng):
    x = rng.standard_normal((3, 4))
    return (x, np.argsort(x, axis=1)[:, :2], rng.standard_normal((3, 2))), {"axis": 1}


def _sample_repeats_broadcast(rng):  # repeated positions (the last write stays), values broadcast
    return (rng.standard_normal((3, 4)), np.array([[0, 1, 2, 0], [0, 0, 1, 2]]), rng.standard_normal((2, 1))), {"axis": 0}


def _sample_flat(rng):
    return (rng.standard_normal((2, 3)), np.array([5, 0, -1, 2]), rng.standard_normal(4)), {"axis": None}


def _sample_scalar_values(rng):
    return (rng.standard_normal((2, 3, 2)), np.array([[[1, 0]], [[2, 2]]]), np.float64(rng.standard_normal())), \
        {"axis": 1}


PUT_ALONG_AXIS = defop("PutAlongAxis", _put_along_axis, vjp=(put_arr_vjp, None, put_values_vjp),
                       jvp=(put_arr_jvp, None, put_values_jvp), nondiff_argnums=(1,),
                       samples=(_sample_rows, _sample_repeats_broadcast, _sample_flat, _sample_scalar_values), complex=True)


def put_along_axis(arr, indices, values, axis, inplace=False):
    """`arr` with `values` put at `indices` along `axis`, as a new array (NumPy writes in place)."""
    if inplace:
        raise TypeError("[PutAlongAxis] dualtape's put_along_axis returns a new array (inplace=False): "
                        "write `arr = put_along_axis(arr, indices, values, axis)`; for NumPy's in-place "
                        "write on plain arrays call np.put_along_axis.")
    return PUT_ALONG_AXIS(arr, indices, values, axis=axis)


def _refuse_numpy_put_along_axis(arr, indices, values, axis):
    raise TypeError("[PutAlongAxis] np.put_along_axis writes into its argument in place, which a traced "
                    "value (a tensor or dual number, or a plain array receiving one) cannot record. "
                    "Use the functional spelling, which returns a new array: "
                    "`arr = dualtape.numpy_api.put_along_axis(arr, indices, values, axis)` (dnp.put_along_axis).")


_refuse_numpy_put_along_axis.refusal = "writes in place: refused; `dnp.put_along_axis` returns a new array"

dnp.export(globals(), {np.put_along_axis: _refuse_numpy_put_along_axis})
