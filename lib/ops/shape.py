"""Shape primitives: reshape, transpose, broadcasting, axes, padding and tiling.

All are linear, so their JVP is the op itself applied to the tangent (`LINEAR`); their
VJPs reshape, slice or sum the cotangent back. Static arguments (`shape`, `axis`, `reps`,
`pad_width`) are normalized to tuples of non-negative ints by the public functions, so
records and rules see one spelling. Ops NumPy has no primitive for (ravel, flip, repeat,
moveaxis) are public functions built from these and `getitem`; joining and splitting are in
`joining`.
"""

import math

import numpy as np

from ..core import dnp
from ..core.registry import LINEAR, Traced, defop
from ..core.rulekit import (axis_index, negative_axis, reshape_like, shape_of, unbroadcast,
                            tile_reps, unpad, untile, untranspose)

__all__ = ["reshape", "broadcast_to", "swapaxes", "transpose", "expand_dims", "squeeze", "pad", "tile",
           "repeat", "ravel", "flip", "moveaxis"]


def _reshape(x, *, shape):
    if x.__class__ is _ndarray:  # the method np.reshape calls, without its wrapper
        return x.reshape(shape)
    return np.reshape(x, shape)


_ndarray = np.ndarray


def reshape_vjp(g, ans, x, *, shape):
    return reshape_like(g, x)


def _sample_reshape(rng):
    return (rng.standard_normal((2, 6)),), {"shape": (3, 4)}


RESHAPE = defop("Reshape", _reshape, vjp=reshape_vjp, jvp=LINEAR, batch_vjp=True,
                samples=(_sample_reshape,), complex=True)


def _broadcast_to(x, *, shape):
    return np.broadcast_to(x, shape)


def broadcast_to_vjp(g, ans, x, *, shape):
    return unbroadcast(g, np.shape(x))


def _sample_broadcast(rng):
    return (rng.standard_normal((3, 1)),), {"shape": (2, 3, 4)}


BROADCAST_TO = defop("BroadcastTo", _broadcast_to, vjp=broadcast_to_vjp, jvp=LINEAR, batch_vjp=True,
                     samples=(_sample_broadcast,), complex=True)


def _transpose(x, *, axes=None):
    if x.__class__ is _ndarray:
        return x.transpose(axes)
    return np.transpose(x, axes)


def transpose_vjp(g, ans, x, *, axes=None):
    return untranspose(g, axes)


def _sample_transpose(rng):
    return (rng.standard_normal((2, 3, 4)),), {"axes": (1, 2, 0)}


def _sample_transpose_default(rng):
    return (rng.standard_normal((2, 3)),), {}


TRANSPOSE = defop("Transpose", _transpose, vjp=transpose_vjp, jvp=LINEAR, batch_vjp=True,
                  samples=(_sample_transpose, _sample_transpose_default), complex=True)


def _swapaxes(x, *, axis1, axis2):
    if x.__class__ is _ndarray:
        return x.swapaxes(axis1, axis2)
    return np.swapaxes(x, axis1, axis2)


def swapaxes_vjp(g, ans, x, *, axis1, axis2):
    return dnp.swapaxes(g, negative_axis(axis1, np.ndim(x)), negative_axis(axis2, np.ndim(x)))


def _sample_swapaxes(rng):
    return (rng.standard_normal((2, 3, 4)),), {"axis1": 0, "axis2": -1}


SWAPAXES = defop("Swapaxes", _swapaxes, vjp=swapaxes_vjp, jvp=LINEAR, batch_vjp=True,
                 samples=(_sample_swapaxes,), complex=True)


def _expand_dims(x, *, axis):
    return np.expand_dims(x, axis)


def reshape_back_vjp(g, ans, x, *, axis):
    return reshape_like(g, x)


def _sample_expand_dims(rng):
    return (rng.standard_normal((2, 3)),), {"axis": (0, 3)}


def _sample_expand_dims_scalar(rng):
    return (rng.standard_normal(()),), {"axis": (0,)}


EXPAND_DIMS = defop("ExpandDims", _expand_dims, vjp=reshape_back_vjp, jvp=LINEAR, batch_vjp=True,
                    samples=(_sample_expand_dims, _sample_expand_dims_scalar), complex=True)


def _squeeze(x, *, axis):
    return np.squeeze(x, axis)


def _sample_squeeze(rng):
    return (rng.standard_normal((1, 3, 1, 2)),), {"axis": (0, 2)}


def _sample_squeeze_to_scalar(rng):
    return (rng.standard_normal((1, 1)),), {"axis": (0, 1)}


SQUEEZE = defop("Squeeze", _squeeze, vjp=reshape_back_vjp, jvp=LINEAR, batch_vjp=True,
                samples=(_sample_squeeze, _sample_squeeze_to_scalar), complex=True)


def _pad(x, *, pad_width, constant_values=0):
    return np.pad(x, pad_width, mode="constant", constant_values=constant_values)


def pad_vjp(g, ans, x, *, pad_width, constant_values=0):
    return unpad(g, ((0, 0),) * (np.ndim(g) - np.ndim(x)) + pad_width)  # batch axes: no pad


def pad_jvp(dx, ans, x, *, pad_width, constant_values=0):
    return dnp.pad(dx, pad_width)  # the padding is a constant: its tangent is zero


def _sample_pad(rng):
    return (rng.standard_normal((2, 3)),), {"pad_width": ((1, 0), (2, 1)), "constant_values": 1.5}


def _sample_pad_4d(rng):
    return (rng.standard_normal((2, 1, 2, 1)),), {"pad_width": ((0, 0), (1, 1), (0, 0), (1, 1))}


PAD = defop("PadV2", _pad, vjp=pad_vjp, jvp=pad_jvp, batch_vjp=True,
            samples=(_sample_pad, _sample_pad_4d), complex=True)


def _tile(x, *, reps):
    return np.tile(x, reps)


def tile_vjp(g, ans, x, *, reps):
    return untile(g, reps, np.shape(x))


def _sample_tile(rng):
    return (rng.standard_normal((2, 3)),), {"reps": (2, 3)}


def _sample_tile_3d(rng):
    return (rng.standard_normal((1, 2, 2)),), {"reps": (3, 1, 2)}


def _sample_tile_int(rng):
    return (rng.standard_normal((3,)),), {"reps": 2}


def _sample_tile_promotes(rng):
    return (rng.standard_normal((3,)),), {"reps": (2, 1)}


TILE = defop("Tile", _tile, vjp=tile_vjp, jvp=LINEAR, batch_vjp=True,
             samples=(_sample_tile, _sample_tile_3d, _sample_tile_int, _sample_tile_promotes), complex=True)


# -- public functions, with NumPy's signatures ---------------------------------------------


def _shape_arg(shape):
    if shape.__class__ is tuple and all(s.__class__ is int for s in shape):
        return shape
    if isinstance(shape, (int, np.integer)) or hasattr(shape, "__index__") and not hasattr(shape, "__len__"):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def reshape(x, shape, order="C"):
    if order != "C":
        raise TypeError("[reshape] only order='C' is supported for differentiable values.")
    shape = _shape_arg(shape)
    size = math.prod(shape_of(x))
    if -1 in shape:
        known = math.prod([s for s in shape if s != -1])
        shape = tuple(size // max(known, 1) if s == -1 else s for s in shape)
    if math.prod(shape) != size:
        raise ValueError(f"[Reshape] cannot reshape a tensor of shape {tuple(np.shape(x))} "
                         f"({size} elements) into shape {shape}. The element counts "
                         "must match.")
    return RESHAPE(x, shape=shape)


def broadcast_to(x, shape):
    return BROADCAST_TO(x, shape=_shape_arg(shape))


def transpose(x, axes=None):
    return TRANSPOSE(x, axes=None if axes is None else tuple(int(a) for a in axes))


def swapaxes(x, axis1, axis2):
    if axis1.__class__ is not int or axis2.__class__ is not int:
        axis1, axis2 = int(axis1), int(axis2)
    return SWAPAXES(x, axis1=axis1, axis2=axis2)


def checked_axes(axis, ndim, api):
    """`axis` (an int or a sequence of ints) as a tuple of non-negative ints, checked."""
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    result = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(f"[{api}] axis {a} is out of bounds for an array of "
                                          f"dimension {ndim}. Use an axis in [-{ndim}, {ndim}).")
        result.append(a % ndim)
    if len(set(result)) != len(result):
        raise ValueError(f"[{api}] repeated axis in {axis!r}. Give each axis once.")
    return tuple(result)


def expand_dims(a, axis):
    count = len(axis) if isinstance(axis, (tuple, list)) else 1
    return EXPAND_DIMS(a, axis=checked_axes(axis, np.ndim(a) + count, "expand_dims"))


def squeeze(a, axis=None):
    shape = np.shape(a)
    if axis is None:
        return SQUEEZE(a, axis=tuple(i for i, n in enumerate(shape) if n == 1))
    axes = checked_axes(axis, len(shape), "squeeze")
    if any(shape[i] != 1 for i in axes):
        raise ValueError(f"[Squeeze] cannot select an axis to squeeze out which has size not "
                         f"equal to one: axes {axes} of shape {tuple(shape)}. Squeeze only size-1 axes.")
    return SQUEEZE(a, axis=axes)


def pad(array, pad_width, mode="constant", **kwargs):
    ndim = np.ndim(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (ndim, 2))
    widths = tuple((int(before), int(after)) for before, after in widths)
    constant = kwargs.pop("constant_values", 0)
    if mode != "constant" or kwargs or np.size(constant) != 1:
        if any(isinstance(v, Traced) for v in (array, constant)):
            raise TypeError(f"[PadV2] only mode='constant' with a scalar constant_values is "
                            f"differentiable, got mode={mode!r}. Pad with concatenate instead.")
        if mode == "constant":
            kwargs["constant_values"] = constant
        return np.pad(array, widths, mode=mode, **kwargs)
    return PAD(array, pad_width=widths, constant_values=np.asarray(constant).reshape(()).item())


def tile(A, reps):  # noqa: N803  (NumPy's name)
    shape = tuple(np.shape(A))
    reps = tile_reps(reps, len(shape))
    if len(shape) < len(reps):
        A = reshape(A, (1,) * (len(reps) - len(shape)) + shape)
    return TILE(A, reps=reps)


def repeat(a, repeats, axis=None):
    if axis is None:
        a, axis = ravel(a), 0
    axis = checked_axes(axis, np.ndim(a), "repeat")[0]
    index = np.repeat(np.arange(np.shape(a)[axis]), np.asarray(repeats))
    return dnp.getitem(a, axis_index(np.ndim(a), axis, index))


def ravel(a, order="C"):
    return reshape(a, (-1,), order)


def flip(m, axis=None):
    ndim = np.ndim(m)
    axes = range(ndim) if axis is None else checked_axes(axis, ndim, "flip")
    return dnp.getitem(m, tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(ndim)))


def moveaxis(a, source, destination):
    ndim = np.ndim(a)
    source = checked_axes(source, ndim, "moveaxis")
    destination = checked_axes(destination, ndim, "moveaxis")
    if len(source) != len(destination):
        raise ValueError("[moveaxis] `source` and `destination` arguments must have the same "
                         "number of elements.")
    order = [i for i in range(ndim) if i not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return transpose(a, order)

dnp.export(globals())
