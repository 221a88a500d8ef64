"""Shape and assembly functions of NumPy: the stacks (hstack, vstack, dstack,
column_stack, row_stack), append, atleast_1d/2d/3d, roll, flipud / fliplr, rot90, rollaxis,
diff, gradient, take_along_axis (triangles and diagonals: `diagonals`; kron, cross: `products`).

All are linear. Each is one
primitive whose static arguments are NumPy's own (so the source transformer binds a call
such as np.roll(x, 2, axis=0) directly); the rules' pieces are in `rulekit.numpy_functions`.
hsplit / vsplit / dsplit slice with `getitem`, as `split` does.
"""

import numpy as np

from ..core import dnp
from ..core.registry import LINEAR, defop
from ..core.rulekit import (along_axis_index, append_piece, rollaxis_inverse, stack_piece, undiff, ungradient,
                            unindex_like)
from .joining import array_split

__all__ = ["hstack", "vstack", "row_stack", "dstack", "column_stack", "append", "atleast_1d",
           "atleast_2d", "atleast_3d", "hsplit", "vsplit", "dsplit", "roll", "flipud", "fliplr",
           "rot90", "rollaxis", "diff", "gradient", "take_along_axis"]


def _normal(rng, *shapes):
    return tuple(rng.standard_normal(s) for s in shapes)


# -- the stacks: variadic, the sequence written out ------------------------------------------

def _hstack(*arrays):
    return np.hstack(arrays)


def _vstack(*arrays):
    return np.vstack(arrays)


def _dstack(*arrays):
    return np.dstack(arrays)


def _column_stack(*arrays):
    return np.column_stack(arrays)


def hstack_vjp(g, ans, *arrays, argnum):
    return stack_piece(g, arrays, argnum, "hstack")


def vstack_vjp(g, ans, *arrays, argnum):
    return stack_piece(g, arrays, argnum, "vstack")


def dstack_vjp(g, ans, *arrays, argnum):
    return stack_piece(g, arrays, argnum, "dstack")


def column_stack_vjp(g, ans, *arrays, argnum):
    return stack_piece(g, arrays, argnum, "column_stack")


def _sample_vectors(rng):
    return _normal(rng, 3, 2), {}


def _sample_matrices(rng):
    return _normal(rng, (2, 3), (2, 1), (2, 2)), {}


def _sample_rows(rng):
    return _normal(rng, (1, 3), (2, 3)), {}


def _sample_cubes(rng):
    return _normal(rng, (2, 3, 1), (2, 3, 2)), {}


def _sample_same_vectors(rng):
    return _normal(rng, 3, 3), {}


HSTACK = defop("HStack", _hstack, vjp=hstack_vjp, jvp=LINEAR, variadic=True,
               samples=(_sample_vectors, _sample_matrices), complex=True)
VSTACK = defop("VStack", _vstack, vjp=vstack_vjp, jvp=LINEAR, variadic=True,
               samples=(_sample_same_vectors, _sample_rows), complex=True)
DSTACK = defop("DStack", _dstack, vjp=dstack_vjp, jvp=LINEAR, variadic=True,
               samples=(_sample_same_vectors, _sample_cubes), complex=True)
COLUMN_STACK = defop("ColumnStack", _column_stack, vjp=column_stack_vjp, jvp=LINEAR, variadic=True,
                     samples=(_sample_same_vectors, _sample_matrices), complex=True)


def _sequence(api, tup):
    tup = tuple(tup)
    if not tup:
        raise ValueError(f"[{api}] need at least one array to concatenate.")
    return tup


def hstack(tup, *, dtype=None, casting="same_kind"):
    return HSTACK(*_sequence("hstack", tup))


def vstack(tup, *, dtype=None, casting="same_kind"):
    return VSTACK(*_sequence("vstack", tup))


row_stack = vstack


def dstack(tup):
    return DSTACK(*_sequence("dstack", tup))


def column_stack(tup):
    return COLUMN_STACK(*_sequence("column_stack", tup))


hstack.sequence_wrapper = vstack.sequence_wrapper = dstack.sequence_wrapper = True
column_stack.sequence_wrapper = True  # the transformer binds the list's elements as inputs


# -- append, atleast_nd -----------------------------------------------------------------------

def _append(arr, values, *, axis=None):
    return np.append(arr, values, axis=axis)


def append_vjp_arr(g, ans, arr, values, *, axis=None):
    return append_piece(g, arr, values, 0, axis)


def append_vjp_values(g, ans, arr, values, *, axis=None):
    return append_piece(g, arr, values, 1, axis)


def _sample_append(rng):
    return _normal(rng, (2, 3), (2, 2)), {"axis": 1}


def _sample_append_flat(rng):
    return _normal(rng, (2, 2), 3), {}


APPEND = defop("Append", _append, vjp=(append_vjp_arr, append_vjp_values), jvp=LINEAR,
               samples=(_sample_append, _sample_append_flat), complex=True)


def append(arr, values, axis=None):
    return APPEND(arr, values, axis=axis)


def reshape_back_vjp(g, ans, x):
    return dnp.reshape(g, np.shape(x))


def _sample_scalar(rng):
    return (rng.standard_normal(()),), {}


def _sample_vector(rng):
    return (rng.standard_normal(4),), {}


def _sample_matrix(rng):
    return (rng.standard_normal((2, 3)),), {}


_AT_LEAST = (_sample_scalar, _sample_vector, _sample_matrix)
ATLEAST_1D = defop("AtLeast1d", np.atleast_1d, vjp=reshape_back_vjp, jvp=LINEAR, samples=_AT_LEAST, complex=True)
ATLEAST_2D = defop("AtLeast2d", np.atleast_2d, vjp=reshape_back_vjp, jvp=LINEAR, samples=_AT_LEAST, complex=True)
ATLEAST_3D = defop("AtLeast3d", np.atleast_3d, vjp=reshape_back_vjp, jvp=LINEAR, samples=_AT_LEAST, complex=True)


def atleast_1d(ary, *arys):  # `ary` named: the transformer binds it as the op's input
    return ATLEAST_1D(ary) if not arys else tuple(ATLEAST_1D(a) for a in (ary,) + arys)


def atleast_2d(ary, *arys):  # `ary` named: the transformer binds it as the op's input
    return ATLEAST_2D(ary) if not arys else tuple(ATLEAST_2D(a) for a in (ary,) + arys)


def atleast_3d(ary, *arys):  # `ary` named: the transformer binds it as the op's input
    return ATLEAST_3D(ary) if not arys else tuple(ATLEAST_3D(a) for a in (ary,) + arys)


def hsplit(ary, indices_or_sections):
    return array_split(ary, indices_or_sections, axis=1 if np.ndim(ary) > 1 else 0)


def vsplit(ary, indices_or_sections):
    return array_split(ary, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    return array_split(ary, indices_or_sections, axis=2)


# -- roll, flips, rot90, rollaxis --------------------------------------------------------------

def _roll(a, *, shift, axis=None):
    return np.roll(a, shift, axis)


def roll_vjp(g, ans, a, *, shift, axis=None):
    return dnp.roll(g, np.negative(shift), axis)


def _sample_roll(rng):
    return (rng.standard_normal((3, 4)),), {"shift": 2}


def _sample_roll_axes(rng):
    return (rng.standard_normal((3, 4)),), {"shift": (1, -3), "axis": (0, 1)}


ROLL = defop("Roll", _roll, vjp=roll_vjp, jvp=LINEAR, samples=(_sample_roll, _sample_roll_axes), complex=True)


def roll(a, shift, axis=None):
    return ROLL(a, shift=shift, axis=axis)


def flipud_vjp(g, ans, m):
    return dnp.flipud(g)


def fliplr_vjp(g, ans, m):
    return dnp.fliplr(g)


FLIPUD = defop("FlipUd", np.flipud, vjp=flipud_vjp, jvp=LINEAR, samples=(_sample_vector, _sample_matrix), complex=True)
FLIPLR = defop("FlipLr", np.fliplr, vjp=fliplr_vjp, jvp=LINEAR, samples=(_sample_matrix,), complex=True)
flipud, fliplr = FLIPUD, FLIPLR


def _rot90(m, *, k=1, axes=(0, 1)):
    return np.rot90(m, k, axes)


def rot90_vjp(g, ans, m, *, k=1, axes=(0, 1)):
    return dnp.rot90(g, -k, axes)


def _sample_rot90(rng):
    return (rng.standard_normal((2, 3, 2)),), {"k": 3, "axes": (2, 1)}


ROT90 = defop("Rot90", _rot90, vjp=rot90_vjp, jvp=LINEAR, samples=(_sample_matrix, _sample_rot90), complex=True)


def rot90(m, k=1, axes=(0, 1)):
    return ROT90(m, k=k, axes=axes)


def _rollaxis(a, *, axis, start=0):
    return np.rollaxis(a, axis, start)


def rollaxis_vjp(g, ans, a, *, axis, start=0):
    return dnp.transpose(g, rollaxis_inverse(np.ndim(a), axis, start))


def _sample_rollaxis(rng):
    return (rng.standard_normal((2, 3, 4)),), {"axis": 2, "start": 0}


def _sample_rollaxis_back(rng):
    return (rng.standard_normal((2, 3, 4)),), {"axis": 0, "start": 3}


ROLLAXIS = defop("RollAxis", _rollaxis, vjp=rollaxis_vjp, jvp=LINEAR,
                 samples=(_sample_rollaxis, _sample_rollaxis_back), complex=True)


def rollaxis(a, axis, start=0):
    return ROLLAXIS(a, axis=axis, start=start)


# -- diff, take_along_axis ---------------------------------------------------------------------

def _diff(a, *, n=1, axis=-1):
    return np.diff(a, n, axis)


def diff_vjp(g, ans, a, *, n=1, axis=-1):
    return undiff(g, n, axis)


def _sample_diff(rng):
    return (rng.standard_normal((3, 5)),), {"n": 2}


def _sample_diff_axis(rng):
    return (rng.standard_normal((4, 2)),), {"axis": 0}


DIFF = defop("Diff", _diff, vjp=diff_vjp, jvp=LINEAR, samples=(_sample_diff, _sample_diff_axis), complex=True)


def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):  # noqa: A002
    if prepend is not np._NoValue or append is not np._NoValue:
        raise TypeError("[Diff] prepend= and append= are not supported on differentiable values; "
                        "concatenate them first.")
    return DIFF(a, n=n, axis=axis)


def _gradient(f, *, axis, edge_order=1, spacing=1.0):
    return np.gradient(f, spacing, axis=axis, edge_order=edge_order)


def gradient_vjp(g, ans, f, *, axis, edge_order=1, spacing=1.0):
    return ungradient(g, axis, edge_order, spacing)


def _sample_gradient(rng):
    return (rng.standard_normal((5, 3)),), {"axis": 0}


def _sample_gradient_edges(rng):
    return (rng.standard_normal((2, 6)),), {"axis": 1, "edge_order": 2, "spacing": 0.5}


GRADIENT = defop("Gradient", _gradient, vjp=gradient_vjp, jvp=LINEAR,
                 samples=(_sample_gradient, _sample_gradient_edges))


def gradient(f, *varargs, axis=None, edge_order=1):
    """np.gradient with uniform spacings (one number, or one per axis): one Gradient op per axis,
    a tuple of them for several axes, as NumPy."""
    ndim = np.ndim(f)
    axes = tuple(range(ndim)) if axis is None else (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    spacings = varargs if len(varargs) > 1 else varargs * len(axes) if varargs else (1.0,) * len(axes)
    if len(spacings) != len(axes) or any(np.ndim(h) for h in spacings):
        raise TypeError(f"[Gradient] differentiable np.gradient takes one spacing for every axis or one per axis, "
                        f"as numbers (uniform grids), got {len(varargs)} for axes {axes} of shape {np.shape(f)}. "
                        "Fix: pass the spacings as numbers; for coordinates, difference them with np.diff.")
    outs = tuple(GRADIENT(f, axis=int(a) % ndim, edge_order=edge_order, spacing=float(h))
                 for a, h in zip(axes, spacings))
    return outs[0] if len(outs) == 1 else outs


def _take_along_axis(arr, indices, *, axis):
    return np.take_along_axis(arr, indices, axis)


def take_along_axis_vjp(g, ans, arr, indices, *, axis):
    return unindex_like(g, arr, along_axis_index(indices, axis, np.shape(arr)))


def take_along_axis_jvp(darr, ans, arr, indices, *, axis):
    return dnp.take_along_axis(darr, indices, axis)


def _sample_take_along(rng):
    x = rng.standard_normal((3, 4))
    return (x, np.argsort(x, axis=1)[:, :2]), {"axis": 1}


def _sample_take_along_repeats(rng):
    return (rng.standard_normal(4), np.array([0, 3, 3, 1, 0])), {"axis": None}


def _sample_take_along_broadcast(rng):  # one row of indices, broadcast over the array's rows
    return (rng.standard_normal((3, 4)), np.array([[1, 2, 0, 1]])), {"axis": 1}


TAKE_ALONG_AXIS = defop("TakeAlongAxis", _take_along_axis, vjp=(take_along_axis_vjp, None),
                        jvp=(take_along_axis_jvp, None),
                        samples=(_sample_take_along, _sample_take_along_repeats, _sample_take_along_broadcast), complex=True)


def take_along_axis(arr, indices, axis=-1):
    return TAKE_ALONG_AXIS(arr, indices, axis=axis)


dnp.export(globals())
