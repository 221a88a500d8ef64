"""scipy.special's Bessel functions as registry ops (imported only when SciPy is installed).

Derivatives by the recurrences: I0' = I1, J0' = -J1, Y0' = -Y1, and for an order v (not
differentiable) Iv' = (I(v-1) + I(v+1)) / 2, Jv' = (J(v-1) - J(v+1)) / 2; the scaled ive and
i0e / i1e subtract sign(x) times the value (their kink at 0 is kept out of the samples).
"""

import numpy as np
import scipy.special as sc

from ..core import dnp
from ..core.registry import elementwise_op
from ..core.rulekit import no_derivative, unbroadcast
from .scipy_special import order_op, order_sample

__all__ = ["special_i0", "special_i1", "i0e", "i1e", "iv", "ive", "jv", "yn", "j0", "j1", "y0", "y1"]


def i0_vjp(g, ans, x):
    return g * dnp.special_i1(x)


def i0_jvp(dx, ans, x):
    return dx * dnp.special_i1(x)


def i1_vjp(g, ans, x):
    return g * 0.5 * (dnp.special_i0(x) + dnp.iv(2, x))


def i1_jvp(dx, ans, x):
    return dx * 0.5 * (dnp.special_i0(x) + dnp.iv(2, x))


def i0e_vjp(g, ans, x):
    return g * (dnp.i1e(x) - dnp.sign(x) * ans)


def i0e_jvp(dx, ans, x):
    return dx * (dnp.i1e(x) - dnp.sign(x) * ans)


def i1e_vjp(g, ans, x):
    return g * (0.5 * (dnp.i0e(x) + dnp.ive(2, x)) - dnp.sign(x) * ans)


def i1e_jvp(dx, ans, x):
    return dx * (0.5 * (dnp.i0e(x) + dnp.ive(2, x)) - dnp.sign(x) * ans)


def j0_vjp(g, ans, x):
    return -g * dnp.j1(x)


def j0_jvp(dx, ans, x):
    return -dx * dnp.j1(x)


def j1_vjp(g, ans, x):
    return g * 0.5 * (dnp.j0(x) - dnp.jv(2, x))


def j1_jvp(dx, ans, x):
    return dx * 0.5 * (dnp.j0(x) - dnp.jv(2, x))


def y0_vjp(g, ans, x):
    return -g * dnp.y1(x)


def y0_jvp(dx, ans, x):
    return -dx * dnp.y1(x)


def y1_vjp(g, ans, x):
    return g * 0.5 * (dnp.y0(x) - dnp.yn(2, x))


def y1_jvp(dx, ans, x):
    return dx * 0.5 * (dnp.y0(x) - dnp.yn(2, x))


I0 = elementwise_op("BesselI0", sc.i0, i0_vjp, i0_jvp)
I1 = elementwise_op("BesselI1", sc.i1, i1_vjp, i1_jvp)
I0E = elementwise_op("BesselI0e", sc.i0e, i0e_vjp, i0e_jvp, domain={"x": "nonzero"})
I1E = elementwise_op("BesselI1e", sc.i1e, i1e_vjp, i1e_jvp, domain={"x": "nonzero"})
J0 = elementwise_op("BesselJ0", sc.j0, j0_vjp, j0_jvp)
J1 = elementwise_op("BesselJ1", sc.j1, j1_vjp, j1_jvp)
Y0 = elementwise_op("BesselY0", sc.y0, y0_vjp, y0_jvp, domain={"x": "positive"})
Y1 = elementwise_op("BesselY1", sc.y1, y1_vjp, y1_jvp, domain={"x": "positive"})


def iv_vjp(g, ans, v, x):
    return unbroadcast(g * 0.5 * (dnp.iv(v - 1, x) + dnp.iv(v + 1, x)), np.shape(x))


def iv_jvp(dx, ans, v, x):
    return dx * 0.5 * (dnp.iv(v - 1, x) + dnp.iv(v + 1, x))


def ive_vjp(g, ans, v, x):
    return unbroadcast(g * (0.5 * (dnp.ive(v - 1, x) + dnp.ive(v + 1, x)) - dnp.sign(x) * ans), np.shape(x))


def ive_jvp(dx, ans, v, x):
    return dx * (0.5 * (dnp.ive(v - 1, x) + dnp.ive(v + 1, x)) - dnp.sign(x) * ans)


def jv_vjp(g, ans, v, x):
    return unbroadcast(g * 0.5 * (dnp.jv(v - 1, x) - dnp.jv(v + 1, x)), np.shape(x))


def jv_jvp(dx, ans, v, x):
    return dx * 0.5 * (dnp.jv(v - 1, x) - dnp.jv(v + 1, x))


def yn_vjp(g, ans, n, x):
    return unbroadcast(g * 0.5 * (dnp.yn(n - 1, x) - dnp.yn(n + 1, x)), np.shape(x))


def yn_jvp(dx, ans, n, x):
    return dx * 0.5 * (dnp.yn(n - 1, x) - dnp.yn(n + 1, x))


def iv_vjp_v(g, ans, v, x):
    return no_derivative("BesselIv", "the order v", g)


def iv_jvp_v(dv, ans, v, x):
    return no_derivative("BesselIv", "the order v", dv)


def ive_vjp_v(g, ans, v, x):
    return no_derivative("BesselIve", "the order v", g)


def ive_jvp_v(dv, ans, v, x):
    return no_derivative("BesselIve", "the order v", dv)


def jv_vjp_v(g, ans, v, x):
    return no_derivative("BesselJv", "the order v", g)


def jv_jvp_v(dv, ans, v, x):
    return no_derivative("BesselJv", "the order v", dv)


# a real order v has a derivative dualtape does not compute (refused); yn's integer order none
IV = order_op("BesselIv", sc.iv, iv_vjp, iv_jvp, (order_sample(2, -2.0, 2.0), order_sample(1, 0.2, 2.0)),
              (iv_vjp_v, iv_jvp_v))
IVE = order_op("BesselIve", sc.ive, ive_vjp, ive_jvp, (order_sample(2, 0.2, 2.0), order_sample(1, 0.2, 2.0)),
               (ive_vjp_v, ive_jvp_v))
JV = order_op("BesselJv", sc.jv, jv_vjp, jv_jvp, (order_sample(3, -3.0, 3.0), order_sample(1, 0.2, 3.0)),
              (jv_vjp_v, jv_jvp_v))
YN = order_op("BesselYn", sc.yn, yn_vjp, yn_jvp, (order_sample(2, 0.5, 3.0),))

special_i0, special_i1, i0e, i1e = I0, I1, I0E, I1E
iv, ive, jv, yn, j0, j1, y0, y1 = IV, IVE, JV, YN, J0, J1, Y0, Y1

SCIPY_BESSEL = {sc.i0: special_i0, sc.i1: special_i1, sc.i0e: i0e, sc.i1e: i1e, sc.iv: iv,
                sc.ive: ive, sc.jv: jv, sc.yn: yn, sc.j0: j0, sc.j1: j1, sc.y0: y0, sc.y1: y1}

dnp.export(globals(), SCIPY_BESSEL)
