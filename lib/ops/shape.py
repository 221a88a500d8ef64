"""Shape primitives: reshape, transpose, broadcasting, axes. All linear: JVP = the op itself."""

import numpy as np

from .. import numpy_api as dnp
from ..registry import LINEAR, defop
from ..rulekit import inverse_permutation, unbroadcast

__all__ = ["reshape", "broadcast_to", "swapaxes", "transpose"]


def _reshape(x, *, shape):
    return np.reshape(x, shape)


def reshape_vjp(g, ans, x, *, shape):
    return dnp.reshape(g, np.shape(x))


def _sample_reshape(rng):
    return (rng.standard_normal((2, 6)),), {"shape": (3, 4)}


RESHAPE = defop("Reshape", _reshape, vjp=reshape_vjp, jvp=LINEAR, samples=(_sample_reshape,))


def _broadcast_to(x, *, shape):
    return np.broadcast_to(x, shape)


def broadcast_to_vjp(g, ans, x, *, shape):
    return unbroadcast(g, np.shape(x))


def _sample_broadcast(rng):
    return (rng.standard_normal((3, 1)),), {"shape": (2, 3, 4)}


BROADCAST_TO = defop("BroadcastTo", _broadcast_to, vjp=broadcast_to_vjp, jvp=LINEAR,
                     samples=(_sample_broadcast,))


def _transpose(x, *, axes=None):
    return np.transpose(x, axes)


def transpose_vjp(g, ans, x, *, axes=None):
    return dnp.transpose(g, inverse_permutation(axes))


def _sample_transpose(rng):
    return (rng.standard_normal((2, 3, 4)),), {"axes": (1, 2, 0)}


def _sample_transpose_default(rng):
    return (rng.standard_normal((2, 3)),), {}


TRANSPOSE = defop("Transpose", _transpose, vjp=transpose_vjp, jvp=LINEAR,
                  samples=(_sample_transpose, _sample_transpose_default))


def _swapaxes(x, *, axis1, axis2):
    return np.swapaxes(x, axis1, axis2)


def swapaxes_vjp(g, ans, x, *, axis1, axis2):
    return dnp.swapaxes(g, axis1, axis2)


def _sample_swapaxes(rng):
    return (rng.standard_normal((2, 3, 4)),), {"axis1": 0, "axis2": -1}


SWAPAXES = defop("Swapaxes", _swapaxes, vjp=swapaxes_vjp, jvp=LINEAR, samples=(_sample_swapaxes,))


def _shape_arg(shape):
    if isinstance(shape, (int, np.integer)) or hasattr(shape, "__index__") and not hasattr(shape, "__len__"):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def reshape(x, shape, order="C"):
    if order != "C":
        raise TypeError("[reshape] only order='C' is supported for differentiable values.")
    shape = _shape_arg(shape)
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1]))
        shape = tuple(int(np.size(x)) // max(known, 1) if s == -1 else s for s in shape)
    if int(np.prod(shape)) != int(np.size(x)):
        raise ValueError(f"[Reshape] cannot reshape a tensor of shape {tuple(np.shape(x))} "
                         f"({int(np.size(x))} elements) into shape {shape}. The element counts "
                         "must match.")
    return RESHAPE(x, shape=shape)


def broadcast_to(x, shape):
    return BROADCAST_TO(x, shape=_shape_arg(shape))


def transpose(x, axes=None):
    return TRANSPOSE(x, axes=None if axes is None else tuple(int(a) for a in axes))


def swapaxes(x, axis1, axis2):
    return SWAPAXES(x, axis1=int(axis1), axis2=int(axis2))
