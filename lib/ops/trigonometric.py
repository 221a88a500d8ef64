"""Trigonometric and hyperbolic functions and their inverses, arctan2 and hypot, sinc, and
the angle conversions deg2rad / rad2deg.

Elementwise: the engine handles broadcasting. Rules reuse `ans` where the derivative is a
function of the result (tan, tanh, hypot). The ops beyond TF's own have a sample each, so the
source transformer's registry test instantiates their rules. Conventions at kinks are in
docs/numerics.md ("More NumPy functions").
"""

import numpy as np

from ..core import dnp
from ..core.registry import LINEAR, defop, elementwise_op
from ..core.rulekit import div_no_nan
from .elementwise import complex_samples, uniform_samples

__all__ = [
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "hypot", "sinc", "deg2rad", "radians", "rad2deg", "degrees",
]


# -- trigonometric and hyperbolic --------------------------------------------------------

def sin_vjp(g, ans, x):
    return g * dnp.cos(x)


def sin_jvp(dx, ans, x):
    return dx * dnp.cos(x)


SIN = elementwise_op("Sin", np.sin, vjp=sin_vjp, jvp=sin_jvp, complex=True)


def cos_vjp(g, ans, x):
    return g * -dnp.sin(x)


def cos_jvp(dx, ans, x):
    return dx * -dnp.sin(x)


COS = elementwise_op("Cos", np.cos, vjp=cos_vjp, jvp=cos_jvp, complex=True)


def tan_vjp(g, ans, x):
    return g * (1 + ans * ans)


def tan_jvp(dx, ans, x):
    return dx * (1 + ans * ans)


TAN = elementwise_op("Tan", np.tan, vjp=tan_vjp, jvp=tan_jvp, domain={"x": "unit"}, complex=True)


def asin_vjp(g, ans, x):
    return g / dnp.sqrt(1 - x * x)


def asin_jvp(dx, ans, x):
    return dx / dnp.sqrt(1 - x * x)


ASIN = elementwise_op("Asin", np.arcsin, vjp=asin_vjp, jvp=asin_jvp, domain={"x": "unit"}, complex=True)


def acos_vjp(g, ans, x):
    return g / -dnp.sqrt(1 - x * x)


def acos_jvp(dx, ans, x):
    return dx / -dnp.sqrt(1 - x * x)


ACOS = elementwise_op("Acos", np.arccos, vjp=acos_vjp, jvp=acos_jvp, domain={"x": "unit"}, complex=True)


def atan_vjp(g, ans, x):
    return g / (1 + x * x)


def atan_jvp(dx, ans, x):
    return dx / (1 + x * x)


ATAN = elementwise_op("Atan", np.arctan, vjp=atan_vjp, jvp=atan_jvp,
                     complex=complex_samples("arctan", radius=0.9))


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


SINH = elementwise_op("Sinh", np.sinh, vjp=sinh_vjp, jvp=sinh_jvp, complex=True)


def cosh_vjp(g, ans, x):
    return g * dnp.sinh(x)


def cosh_jvp(dx, ans, x):
    return dx * dnp.sinh(x)


COSH = elementwise_op("Cosh", np.cosh, vjp=cosh_vjp, jvp=cosh_jvp, complex=True)


def tanh_vjp(g, ans, x):
    return g * (1 - ans * ans)  # d tanh = 1 - tanh^2: reuse ans


def tanh_jvp(dx, ans, x):
    return dx * (1 - ans * ans)


TANH = elementwise_op("Tanh", np.tanh, vjp=tanh_vjp, jvp=tanh_jvp, complex=True)


# -- inverse hyperbolic functions --------------------------------------------------------------

def asinh_vjp(g, ans, x):
    return g / dnp.sqrt(x * x + 1)


def asinh_jvp(dx, ans, x):
    return dx / dnp.sqrt(x * x + 1)


ASINH = elementwise_op("Asinh", np.arcsinh, vjp=asinh_vjp, jvp=asinh_jvp, samples=uniform_samples("arcsinh", (-3, 3)),
                      complex=complex_samples("arcsinh", radius=0.9))


def acosh_vjp(g, ans, x):
    # 1 / sqrt(x^2 - 1), split so that it holds for complex x too: sqrt(x - 1) sqrt(x + 1) has
    # arccosh's branch cut (the reals left of 1), where sqrt(x * x - 1) would add a cut on the
    # imaginary axis; on reals it also avoids x * x - 1's cancellation near 1
    return g / (dnp.sqrt(x - 1) * dnp.sqrt(x + 1))


def acosh_jvp(dx, ans, x):
    return dx / (dnp.sqrt(x - 1) * dnp.sqrt(x + 1))


# arccosh is defined on x >= 1 only: no elementwise domain keyword says so, so it is sampled
# from its samples (x in [1.2, 4]) and declared unary (no broadcasting to handle). Complex
# samples keep away from its branch cut, the real axis left of 1 (|Im z| >= 0.2).
ACOSH = defop("Acosh", np.arccosh, vjp=acosh_vjp, jvp=acosh_jvp, samples=uniform_samples("arccosh", (1.2, 4)),
              complex=complex_samples("arccosh", imag_low=0.2) + uniform_samples("arccosh", (1.2, 4)))


def atanh_vjp(g, ans, x):
    return g / (1 - x * x)


def atanh_jvp(dx, ans, x):
    return dx / (1 - x * x)


ATANH = elementwise_op("Atanh", np.arctanh, vjp=atanh_vjp, jvp=atanh_jvp, domain={"x": "unit"},
                       samples=uniform_samples("arctanh", (-0.9, 0.9)), complex=True)


# -- hypot, sinc, angles --------------------------------------------------------------------

def hypot_vjp_x(g, ans, x, y):
    return g * (x / ans)


def hypot_vjp_y(g, ans, x, y):
    return g * (y / ans)


def hypot_jvp_x(dx, ans, x, y):
    return dx * (x / ans)


def hypot_jvp_y(dy, ans, x, y):
    return dy * (y / ans)


HYPOT = elementwise_op("Hypot", np.hypot, vjp=(hypot_vjp_x, hypot_vjp_y), jvp=(hypot_jvp_x, hypot_jvp_y),
                       domain={"x": "nonzero", "y": "nonzero"}, samples=uniform_samples("hypot", (0.2, 3), (-3, -0.2)))


def sinc_vjp(g, ans, x):
    return g * div_no_nan(dnp.cos(np.pi * x) - ans, x)  # sinc is even: 0 at x = 0


def sinc_jvp(dx, ans, x):
    return dx * div_no_nan(dnp.cos(np.pi * x) - ans, x)


SINC = elementwise_op("Sinc", np.sinc, vjp=sinc_vjp, jvp=sinc_jvp, domain={"x": "nonzero"}, complex=True,
                      samples=uniform_samples("sinc", (0.2, 3)))


def deg2rad_vjp(g, ans, x):
    return g * 0.017453292519943295


DEG2RAD = elementwise_op("Deg2Rad", np.deg2rad, vjp=deg2rad_vjp, jvp=LINEAR, samples=uniform_samples("deg2rad", (-180, 180)))


def rad2deg_vjp(g, ans, x):
    return g * 57.29577951308232


RAD2DEG = elementwise_op("Rad2Deg", np.rad2deg, vjp=rad2deg_vjp, jvp=LINEAR, samples=uniform_samples("rad2deg", (-3, 3)))


# -- the dnp functions: NumPy's names and signatures ---------------------------------------
sin, cos, tan, arcsin, arccos, arctan, arctan2 = SIN, COS, TAN, ASIN, ACOS, ATAN, ATAN2
sinh, cosh, tanh, arcsinh, arccosh, arctanh = SINH, COSH, TANH, ASINH, ACOSH, ATANH
hypot, sinc = HYPOT, SINC
deg2rad = radians = DEG2RAD
rad2deg = degrees = RAD2DEG

dnp.export(globals())
