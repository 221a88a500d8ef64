"""Exponentials, logarithms, powers and roots: exp, log (natural, base 2, base 10, of 1 + x),
expm1, exp2, logaddexp / logaddexp2, sqrt, cbrt, square, reciprocal, float_power.

Elementwise: the engine handles broadcasting. Rules reuse `ans` where the derivative is a
function of the result (exp, exp2, sqrt, cbrt, reciprocal) instead of recomputing it. The ops
beyond TF's own have a sample each, so the source transformer's registry test instantiates
their rules.
"""

import numpy as np

from ..core import dnp
from ..core.registry import elementwise_op
from .elementwise import uniform_samples

__all__ = [
    "exp", "log", "log1p", "expm1", "sqrt", "square", "reciprocal", "log2", "log10", "exp2",
    "logaddexp", "logaddexp2", "cbrt", "float_power",
]


# -- exponentials and powers -------------------------------------------------------------

def exp_vjp(g, ans, x):
    return g * ans


def exp_jvp(dx, ans, x):
    return dx * ans


EXP = elementwise_op("Exp", np.exp, vjp=exp_vjp, jvp=exp_jvp, complex=True)


def log_vjp(g, ans, x):
    return g / x


def log_jvp(dx, ans, x):
    return dx / x


LOG = elementwise_op("Log", np.log, vjp=log_vjp, jvp=log_jvp, domain={"x": "positive"}, complex=True)


def log1p_vjp(g, ans, x):
    return g / (1 + x)


def log1p_jvp(dx, ans, x):
    return dx / (1 + x)


LOG1P = elementwise_op("Log1p", np.log1p, vjp=log1p_vjp, jvp=log1p_jvp, domain={"x": "positive"}, complex=True)


def expm1_vjp(g, ans, x):
    return g * (ans + 1)


def expm1_jvp(dx, ans, x):
    return dx * (ans + 1)


EXPM1 = elementwise_op("Expm1", np.expm1, vjp=expm1_vjp, jvp=expm1_jvp, complex=True)


def sqrt_vjp(g, ans, x):
    return g * (0.5 / ans)


def sqrt_jvp(dx, ans, x):
    return dx * (0.5 / ans)


SQRT = elementwise_op("Sqrt", np.sqrt, vjp=sqrt_vjp, jvp=sqrt_jvp, domain={"x": "positive"}, complex=True)


def square_vjp(g, ans, x):
    return g * (2 * x)


def square_jvp(dx, ans, x):
    return dx * (2 * x)


SQUARE = elementwise_op("Square", np.square, vjp=square_vjp, jvp=square_jvp, complex=True)


def reciprocal_vjp(g, ans, x):
    return g * (-ans * ans)


def reciprocal_jvp(dx, ans, x):
    return dx * (-ans * ans)


RECIPROCAL = elementwise_op("Reciprocal", np.reciprocal, vjp=reciprocal_vjp, jvp=reciprocal_jvp,
                          domain={"x": "nonzero"}, complex=True)


# -- logarithms and exponentials -----------------------------------------------------------

def log2_vjp(g, ans, x):
    return g / (x * 0.6931471805599453)


def log2_jvp(dx, ans, x):
    return dx / (x * 0.6931471805599453)


LOG2 = elementwise_op("Log2", np.log2, vjp=log2_vjp, jvp=log2_jvp, domain={"x": "positive"},
                      samples=uniform_samples("log2", (0.2, 3)), complex=True)


def log10_vjp(g, ans, x):
    return g / (x * 2.302585092994046)


def log10_jvp(dx, ans, x):
    return dx / (x * 2.302585092994046)


LOG10 = elementwise_op("Log10", np.log10, vjp=log10_vjp, jvp=log10_jvp, domain={"x": "positive"},
                       samples=uniform_samples("log10", (0.2, 3)), complex=True)


def exp2_vjp(g, ans, x):
    return g * (ans * 0.6931471805599453)


def exp2_jvp(dx, ans, x):
    return dx * (ans * 0.6931471805599453)


EXP2 = elementwise_op("Exp2", np.exp2, vjp=exp2_vjp, jvp=exp2_jvp, samples=uniform_samples("exp2", (-2, 2)), complex=True)


def logaddexp_vjp_x(g, ans, x, y):
    return g * dnp.exp(x - ans)


def logaddexp_vjp_y(g, ans, x, y):
    return g * dnp.exp(y - ans)


def logaddexp_jvp_x(dx, ans, x, y):
    return dx * dnp.exp(x - ans)


def logaddexp_jvp_y(dy, ans, x, y):
    return dy * dnp.exp(y - ans)


LOGADDEXP = elementwise_op("LogAddExp", np.logaddexp, vjp=(logaddexp_vjp_x, logaddexp_vjp_y),
                           jvp=(logaddexp_jvp_x, logaddexp_jvp_y),
                           samples=uniform_samples("logaddexp", (-3, 3), (-3, 3)))


def logaddexp2_vjp_x(g, ans, x, y):
    return g * dnp.exp2(x - ans)


def logaddexp2_vjp_y(g, ans, x, y):
    return g * dnp.exp2(y - ans)


def logaddexp2_jvp_x(dx, ans, x, y):
    return dx * dnp.exp2(x - ans)


def logaddexp2_jvp_y(dy, ans, x, y):
    return dy * dnp.exp2(y - ans)


LOGADDEXP2 = elementwise_op("LogAddExp2", np.logaddexp2, vjp=(logaddexp2_vjp_x, logaddexp2_vjp_y),
                            jvp=(logaddexp2_jvp_x, logaddexp2_jvp_y),
                            samples=uniform_samples("logaddexp2", (-3, 3), (-3, 3)))


# -- roots ---------------------------------------------------------------------------------

def cbrt_vjp(g, ans, x):
    return g / (3 * ans * ans)


def cbrt_jvp(dx, ans, x):
    return dx / (3 * ans * ans)


CBRT = elementwise_op("Cbrt", np.cbrt, vjp=cbrt_vjp, jvp=cbrt_jvp, domain={"x": "nonzero"},
                      samples=uniform_samples("cbrt", (0.2, 3)))


# -- the dnp functions: NumPy's names and signatures ---------------------------------------
exp, log, log1p, expm1, sqrt, square, reciprocal = EXP, LOG, LOG1P, EXPM1, SQRT, SQUARE, RECIPROCAL
log2, log10, exp2, logaddexp, logaddexp2, cbrt = LOG2, LOG10, EXP2, LOGADDEXP, LOGADDEXP2, CBRT


def float_power(x1, x2, out=None, **kwargs):
    """np.float_power: the power computed in float64 (NumPy's result dtype), Cast then Pow.
    Composed, not one op: the registry's ops keep their inputs' float dtype."""
    if out is not None or kwargs:
        raise TypeError("[float_power] out= and ufunc keywords are not supported on differentiable values.")
    return dnp.power(dnp.cast(x1, np.float64), dnp.cast(x2, np.float64))


dnp.export(globals())
