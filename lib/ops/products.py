"""Products of NumPy: kron and cross (bilinear: one rule per input, each the
product with the other input), vdot, and matrix_power (np.linalg.matrix_power too).
Multi-array products (np.linalg.multi_dot) chain `matmul`."""

import numpy as np

from ..core import dnp
from ..core.registry import defop
from ..core.rulekit import kron_vjp, matrix_power_vjp, matrix_power_jvp, unbroadcast

__all__ = ["kron", "cross", "vdot", "matrix_power", "linalg_multi_dot"]


def _normal(rng, *shapes):
    return tuple(rng.standard_normal(s) for s in shapes)


def kron_vjp_a(g, ans, a, b):
    return kron_vjp(g, a, b, 0)


def kron_vjp_b(g, ans, a, b):
    return kron_vjp(g, a, b, 1)


def kron_jvp_a(da, ans, a, b):
    return dnp.kron(da, b)


def kron_jvp_b(db, ans, a, b):
    return dnp.kron(a, db)


def _sample_kron(rng):
    return _normal(rng, (2, 3), (3, 2)), {}


def _sample_kron_ranks(rng):
    return _normal(rng, 2, (2, 3)), {}


KRON = defop("Kron", np.kron, vjp=(kron_vjp_a, kron_vjp_b), jvp=(kron_jvp_a, kron_jvp_b),
             samples=(_sample_kron, _sample_kron_ranks), complex=True)
kron = KRON



def _cross(a, b, *, axisa=-1, axisb=-1, axisc=-1, axis=None):
    return np.cross(a, b, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)


# a x b is bilinear: d(a x b) = da x b + a x db, and <g, da x b> = <b x g, da>. Each cross product
# reads its operands' vector axes where they are (axis=, when given, stands for all three)

def cross_vjp_a(g, ans, a, b, *, axisa=-1, axisb=-1, axisc=-1, axis=None):
    return unbroadcast(dnp.cross(b, g, axisa=axisb, axisb=axisc, axisc=axisa, axis=axis), np.shape(a))


def cross_vjp_b(g, ans, a, b, *, axisa=-1, axisb=-1, axisc=-1, axis=None):
    return unbroadcast(dnp.cross(g, a, axisa=axisc, axisb=axisa, axisc=axisb, axis=axis), np.shape(b))


def cross_jvp_a(da, ans, a, b, *, axisa=-1, axisb=-1, axisc=-1, axis=None):
    return dnp.cross(da, b, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)


def cross_jvp_b(db, ans, a, b, *, axisa=-1, axisb=-1, axisc=-1, axis=None):
    return dnp.cross(a, db, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)


def _sample_cross(rng):
    return _normal(rng, (4, 3), (4, 3)), {}


def _sample_cross_axis(rng):
    return _normal(rng, (3, 2), (3, 1)), {"axis": 0}


def _sample_cross_three_axes(rng):
    return _normal(rng, (3, 2), (2, 3)), {"axisa": 0, "axisb": 1, "axisc": 0}


CROSS = defop("Cross", _cross, vjp=(cross_vjp_a, cross_vjp_b), jvp=(cross_jvp_a, cross_jvp_b),
              samples=(_sample_cross, _sample_cross_axis, _sample_cross_three_axes), complex=True)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    vector_a, vector_b = (axisa, axisb) if axis is None else (axis, axis)
    if np.shape(a)[vector_a] != 3 or np.shape(b)[vector_b] != 3:
        raise ValueError(f"[Cross] differentiable np.cross needs 3-vectors along axisa={vector_a} of a and "
                         f"axisb={vector_b} of b, got shapes {np.shape(a)} and {np.shape(b)}.")
    return CROSS(a, b, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)


def _vdot(a, b):
    return np.vdot(a, b)


def vdot_vjp_a(g, ans, a, b):
    return dnp.reshape(g * dnp.ravel(b), np.shape(a))


def vdot_vjp_b(g, ans, a, b):
    return dnp.reshape(g * dnp.ravel(a), np.shape(b))


def vdot_jvp_a(da, ans, a, b):
    return dnp.vdot(da, b)


def vdot_jvp_b(db, ans, a, b):
    return dnp.vdot(a, db)


def _sample_vdot(rng):
    return _normal(rng, (2, 3), (3, 2)), {}


VDOT = defop("Vdot", _vdot, vjp=(vdot_vjp_a, vdot_vjp_b), jvp=(vdot_jvp_a, vdot_jvp_b), samples=(_sample_vdot,))
vdot = VDOT


def _matrix_power(a, *, n):
    return np.linalg.matrix_power(a, n)


def matrix_power_vjp_rule(g, ans, a, *, n):
    return matrix_power_vjp(g, a, n)


def matrix_power_jvp_rule(da, ans, a, *, n):
    return matrix_power_jvp(da, a, n)


def _sample_matrix_power(rng):
    return (rng.standard_normal((3, 3)),), {"n": 3}


def _sample_matrix_power_stack(rng):
    return (rng.standard_normal((2, 2, 2)),), {"n": 2}


def _sample_matrix_power_inverse(rng):
    return (np.eye(3) * 2 + 0.3 * rng.standard_normal((3, 3)),), {"n": -2}


MATRIX_POWER = defop("MatrixPower", _matrix_power, vjp=matrix_power_vjp_rule, jvp=matrix_power_jvp_rule,
                     samples=(_sample_matrix_power, _sample_matrix_power_stack, _sample_matrix_power_inverse), complex=True)


def matrix_power(a, n):
    if int(n) != n:
        raise TypeError(f"[MatrixPower] exponent must be an integer, got {n!r}.")
    return MATRIX_POWER(a, n=int(n))


def linalg_multi_dot(arrays, *, out=None):
    """np.linalg.multi_dot: `matmul` chained left to right (a 1-d first / last array is a row /
    column vector, as in NumPy)."""
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("[multi_dot] expecting at least two arrays.")
    result = arrays[0]
    for a in arrays[1:]:
        result = dnp.matmul(result, a)  # (dnp.: a composition, not one MatMul to the transformer)
    return result


dnp.export(globals(), {np.linalg.matrix_power: matrix_power, np.linalg.multi_dot: linalg_multi_dot})
