"""Linear algebra primitives: matmul and friends."""

import numpy as np

from .. import numpy_api as dnp
from ..registry import defop
from ..rulekit import matmul_vjp_left, matmul_vjp_right

__all__ = ["matmul"]


def matmul_vjp_x(g, ans, x, y):
    return matmul_vjp_left(g, x, y)


def matmul_vjp_y(g, ans, x, y):
    return matmul_vjp_right(g, x, y)


def matmul_jvp_x(dx, ans, x, y):
    return dnp.matmul(dx, y)


def matmul_jvp_y(dy, ans, x, y):
    return dnp.matmul(x, dy)


def _sample_mm(rng):
    return (rng.standard_normal((3, 4)), rng.standard_normal((4, 2))), {}


def _sample_mv(rng):
    return (rng.standard_normal((3, 4)), rng.standard_normal(4)), {}


def _sample_vm(rng):
    return (rng.standard_normal(4), rng.standard_normal((4, 2))), {}


def _sample_batched(rng):
    return (rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))), {}


MATMUL = defop("MatMul", np.matmul, vjp=(matmul_vjp_x, matmul_vjp_y),
               jvp=(matmul_jvp_x, matmul_jvp_y),
               samples=(_sample_mm, _sample_mv, _sample_vm, _sample_batched))

matmul = MATMUL
