"""Elementwise transcendental functions: exponentials, logarithms, powers, trigonometry.

Elementwise: the engine handles broadcasting. Rules reuse `ans` where the derivative is a
function of the result (exp, tanh, sqrt, reciprocal) instead of recomputing it.
"""

import numpy as np

from ..core import dnp
from ..core.registry import elementwise_op

__all__ = [
    "exp", "log", "log1p", "expm1", "sqrt", "square", "reciprocal", "sin", "cos", "tan",
    "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
]


# -- exponentials and powers -------------------------------------------------------------

def exp_vjp(g, ans, x):
    return g * ans


def exp_jvp(dx, ans, x):
    return dx * ans


EXP = elementwise_op("Exp", np.exp, vjp=exp_vjp, jvp=exp_jvp)


def log_vjp(g, ans, x):
    return g / x


def log_jvp(dx, ans, x):
    return dx / x


LOG = elementwise_op("Log", np.log, vjp=log_vjp, jvp=log_jvp, domain={"x": "positive"})


def log1p_vjp(g, ans, x):
    return g / (1 + x)


def log1p_jvp(dx, ans, x):
    return dx / (1 + x)


LOG1P = elementwise_op("Log1p", np.log1p, vjp=log1p_vjp, jvp=log1p_jvp, domain={"x": "positive"})


def expm1_vjp(g, ans, x):
    return g * (ans + 1)


def expm1_jvp(dx, ans, x):
    return dx * (ans + 1)


EXPM1 = elementwise_op("Expm1", np.expm1, vjp=expm1_vjp, jvp=expm1_jvp)


def sqrt_vjp(g, ans, x):
    return g * (0.5 / ans)


def sqrt_jvp(dx, ans, x):
    return dx * (0.5 / ans)


SQRT = elementwise_op("Sqrt", np.sqrt, vjp=sqrt_vjp, jvp=sqrt_jvp, domain={"x": "positive"})


def square_vjp(g, ans, x):
    return g * (2 * x)


def square_jvp(dx, ans, x):
    return dx * (2 * x)


SQUARE = elementwise_op("Square", np.square, vjp=square_vjp, jvp=square_jvp)


def reciprocal_vjp(g, ans, x):
    return g * (-ans * ans)


def reciprocal_jvp(dx, ans, x):
    return dx * (-ans * ans)


RECIPROCAL = elementwise_op("Reciprocal", np.reciprocal, vjp=reciprocal_vjp, jvp=reciprocal_jvp,
                          domain={"x": "nonzero"})


# -- trigonometric and hyperbolic --------------------------------------------------------

def sin_vjp(g, ans, x):
    return g * dnp.cos(x)


def sin_jvp(dx, ans, x):
    return dx * dnp.cos(x)


SIN = elementwise_op("Sin", np.sin, vjp=sin_vjp, jvp=sin_jvp)


def cos_vjp(g, ans, x):
    return g * -dnp.sin(x)


def cos_jvp(dx, ans, x):
    return dx * -dnp.sin(x)


COS = elementwise_op("Cos", np.cos, vjp=cos_vjp, jvp=cos_jvp)


def tan_vjp(g, ans, x):
    return g * (1 + ans * ans)


def tan_jvp(dx, ans, x):
    return dx * (1 + ans * ans)


TAN = elementwise_op("Tan", np.tan, vjp=tan_vjp, jvp=tan_jvp, domain={"x": "unit"})


def asin_vjp(g, ans, x):
    return g / dnp.sqrt(1 - x * x)


def asin_jvp(dx, ans, x):
    return dx / dnp.sqrt(1 - x * x)


ASIN = elementwise_op("Asin", np.arcsin, vjp=asin_vjp, jvp=asin_jvp, domain={"x": "unit"})


def acos_vjp(g, ans, x):
    return g / -dnp.sqrt(1 - x * x)


def acos_jvp(dx, ans, x):
    return dx / -dnp.sqrt(1 - x * x)


ACOS = elementwise_op("Acos", np.arccos, vjp=acos_vjp, jvp=acos_jvp, domain={"x": "unit"})


def atan_vjp(g, ans, x):
    return g / (1 + x * x)


def atan_jvp(dx, ans, x):
    return dx / (1 + x * x)


ATAN = elementwise_op("Atan", np.arctan, vjp=atan_vjp, jvp=atan_jvp)


def atan2_vjp_y(g, ans, y, x):
    return g * (x / (x * x + y * y))


def atan2_vjp_x(g, ans, y, x):
    return g * (-y / (x * x + y * y))


def atan2_jvp_y(dy, ans, y, x):
    return dy * (x / (x * x + y * y))


def atan2_jvp_x(dx, ans, y, x):
    return dx * (-y / (x * x + y * y))


ATAN2 = elementwise_op("Atan2", np.arctan2, vjp=(atan2_vjp_y, atan2_vjp_x),
                     jvp=(atan2_jvp_y, atan2_jvp_x), domain={"x": "nonzero", "y": "nonzero"})


def sinh_vjp(g, ans, x):
    return g * dnp.cosh(x)


def sinh_jvp(dx, ans, x):
    return dx * dnp.cosh(x)


SINH = elementwise_op("Sinh", np.sinh, vjp=sinh_vjp, jvp=sinh_jvp)


def cosh_vjp(g, ans, x):
    return g * dnp.sinh(x)


def cosh_jvp(dx, ans, x):
    return dx * dnp.sinh(x)


COSH = elementwise_op("Cosh", np.cosh, vjp=cosh_vjp, jvp=cosh_jvp)


def tanh_vjp(g, ans, x):
    return g * (1 - ans * ans)  # d tanh = 1 - tanh^2: reuse ans


def tanh_jvp(dx, ans, x):
    return dx * (1 - ans * ans)


TANH = elementwise_op("Tanh", np.tanh, vjp=tanh_vjp, jvp=tanh_jvp)


# -- the dnp functions: NumPy's names and signatures ---------------------------------------
exp, log, log1p, expm1, sqrt, square, reciprocal = EXP, LOG, LOG1P, EXPM1, SQRT, SQUARE, RECIPROCAL
sin, cos, tan, arcsin, arccos, arctan, arctan2 = SIN, COS, TAN, ASIN, ACOS, ATAN, ATAN2
sinh, cosh, tanh = SINH, COSH, TANH

dnp.export(globals())
