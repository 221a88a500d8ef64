"""Floating-point functions: magnitudes and signs (fabs, copysign, heaviside), NaN-aware
maxima (fmax / fmin), fmod, nan_to_num, real / imag / conj, and the non-differentiable rounding
and classification ufuncs (trunc, rint, fix, isinf, signbit, nextafter, spacing, ...).

Elementwise: the engine handles broadcasting. Each differentiable op has a sample, so the
source transformer's registry test instantiates its rules. Conventions at kinks and ties are
in docs/numerics.md ("More NumPy functions").
"""

import numpy as np

from ..core import dnp
from ..core.registry import LINEAR, NOT_DIFFERENTIABLE, elementwise_op
from ..core.rulekit import (angle_cotangent, angle_tangent, conj_part, imag_cotangent,
                            real_cotangent)
from .elementwise import round as _round
from .elementwise import complex_samples, uniform_samples

__all__ = [
    "fabs", "copysign", "heaviside", "fmax", "fmin", "fmod", "nan_to_num", "real", "imag", "conj",
    "conjugate", "trunc", "rint", "fix", "isinf", "isposinf", "isneginf", "signbit", "iscomplex",
    "isreal", "nextafter", "spacing", "around", "angle",
]


# -- magnitudes and signs ----------------------------------------------------------------------

def fabs_vjp(g, ans, x):
    return g * dnp.sign(x)


def fabs_jvp(dx, ans, x):
    return dx * dnp.sign(x)


FABS = elementwise_op("Fabs", np.fabs, vjp=fabs_vjp, jvp=fabs_jvp, domain={"x": "nonzero"},
                      samples=uniform_samples("fabs", (0.2, 3)))


def copysign_vjp_x(g, ans, x, y):
    return g * (dnp.sign(x) * dnp.sign(ans))


def copysign_jvp_x(dx, ans, x, y):
    return dx * (dnp.sign(x) * dnp.sign(ans))


COPYSIGN = elementwise_op("Copysign", np.copysign, vjp=(copysign_vjp_x, None), jvp=(copysign_jvp_x, None),
                          domain={"x": "nonzero", "y": "nonzero"},
                          samples=uniform_samples("copysign", (0.2, 3), (-3, -0.2)))


def heaviside_vjp_h(g, ans, x, h):
    return g * (x == 0)  # the step itself has derivative 0 (at x = 0 it is not differentiable)


def heaviside_jvp_h(dh, ans, x, h):
    return dh * (x == 0)


def _sample_heaviside(rng):
    x = rng.standard_normal((3, 4))
    x[0, :2] = 0.0
    return (x, rng.uniform(0, 1, (3, 4))), {}


HEAVISIDE = elementwise_op("Heaviside", np.heaviside, vjp=(None, heaviside_vjp_h), jvp=(None, heaviside_jvp_h),
                           domain={"x": "nonzero"}, samples=(_sample_heaviside,))


# -- fmax / fmin: as maximum / minimum, and a NaN loses ------------------------------------------

def fmax_vjp_x(g, ans, x, y):
    return g * dnp.logical_or(x >= y, dnp.isnan(y))  # a tie sends the whole gradient to x, as maximum


def fmax_vjp_y(g, ans, x, y):
    return g * dnp.logical_or(x < y, dnp.isnan(x))


def fmax_jvp_x(dx, ans, x, y):
    return dx * dnp.logical_or(x >= y, dnp.isnan(y))


def fmax_jvp_y(dy, ans, x, y):
    return dy * dnp.logical_or(x < y, dnp.isnan(x))


FMAX = elementwise_op("Fmax", np.fmax, vjp=(fmax_vjp_x, fmax_vjp_y), jvp=(fmax_jvp_x, fmax_jvp_y),
                      domain={"x": "no_ties"}, samples=uniform_samples("fmax", (-3, 3), (-3, 3)))


def fmin_vjp_x(g, ans, x, y):
    return g * dnp.logical_or(x <= y, dnp.isnan(y))


def fmin_vjp_y(g, ans, x, y):
    return g * dnp.logical_or(x > y, dnp.isnan(x))


def fmin_jvp_x(dx, ans, x, y):
    return dx * dnp.logical_or(x <= y, dnp.isnan(y))


def fmin_jvp_y(dy, ans, x, y):
    return dy * dnp.logical_or(x > y, dnp.isnan(x))


FMIN = elementwise_op("Fmin", np.fmin, vjp=(fmin_vjp_x, fmin_vjp_y), jvp=(fmin_jvp_x, fmin_jvp_y),
                      domain={"x": "no_ties"}, samples=uniform_samples("fmin", (-3, 3), (-3, 3)))


# -- fmod, nan_to_num ----------------------------------------------------------------------

def fmod_vjp_y(g, ans, x, y):
    return g * -dnp.trunc(x / y)


def fmod_vjp_x(g, ans, x, y):
    return g


def fmod_jvp_x(dx, ans, x, y):
    return dx


def fmod_jvp_y(dy, ans, x, y):
    return dy * -dnp.trunc(x / y)


def _sample_fmod(rng):
    return (rng.uniform(-3, 3, (2, 3)) // 0.5 * 0.5 + 0.25, np.full((2, 3), 0.5)), {}


FMOD = elementwise_op("Fmod", np.fmod, vjp=(fmod_vjp_x, fmod_vjp_y), jvp=(fmod_jvp_x, fmod_jvp_y),
                      domain={"x": "away_from_multiples_of_y", "y": "nonzero"}, samples=(_sample_fmod,))


def _nan_to_num(x, *, nan=0.0, posinf=None, neginf=None):
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def nan_to_num_vjp(g, ans, x, *, nan=0.0, posinf=None, neginf=None):
    return dnp.where(dnp.isfinite(x), g, dnp.zeros_like(g))  # replaced entries are constants


def nan_to_num_jvp(dx, ans, x, *, nan=0.0, posinf=None, neginf=None):
    return dnp.where(dnp.isfinite(x), dx, dnp.zeros_like(dx))


NAN_TO_NUM = elementwise_op("NanToNum", _nan_to_num, vjp=nan_to_num_vjp, jvp=nan_to_num_jvp,
                            samples=uniform_samples("nan_to_num", (-3, 3)))


# -- real and imaginary parts, rounding and classification -----------------------------------

def real_vjp(g, ans, x):
    return real_cotangent(g, x)  # Re(g), in x's dtype (g on reals)


def conj_vjp(g, ans, x):
    return conj_part(g)  # Re(c conj(dz)) = Re(conj(c) dz)


def imag_vjp(g, ans, x):
    return imag_cotangent(g, x)  # -i Re(g); zero on reals, where imag(x) = 0


def angle_vjp(g, ans, x):
    return angle_cotangent(g, x)  # -i Re(g) / z; zero on reals


def angle_jvp(dx, ans, x):
    return angle_tangent(dx, x)  # Im(dz / z); zero on reals


def _angle(x, deg=False):
    return np.angle(x, deg=deg)


def _real(x):
    return np.real(x)


def _conj(x):
    return np.conj(x)


REAL = elementwise_op("Real", _real, vjp=real_vjp, jvp=LINEAR, samples=uniform_samples("real", (-3, 3)),
                     complex=True)
CONJ = elementwise_op("Conj", _conj, vjp=conj_vjp, jvp=LINEAR, samples=uniform_samples("conj", (-3, 3)),
                     complex=True)
ANGLE = elementwise_op("Angle", _angle, vjp=angle_vjp, jvp=angle_jvp, domain={"x": "nonzero"},
                      complex=complex_samples("angle", real_low=0.1))


def _nondiff(name, impl):
    return elementwise_op(name, impl, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE)


def _imag(x):
    return np.imag(x)


IMAG = elementwise_op("Imag", _imag, vjp=imag_vjp, jvp=LINEAR, complex=True)
TRUNC, RINT, FIX = _nondiff("Trunc", np.trunc), _nondiff("Rint", np.rint), _nondiff("Fix", np.fix)
ISINF, SIGNBIT = _nondiff("IsInf", np.isinf), _nondiff("Signbit", np.signbit)
ISPOSINF, ISNEGINF = _nondiff("IsPosInf", np.isposinf), _nondiff("IsNegInf", np.isneginf)
ISCOMPLEX = elementwise_op("IsComplex", np.iscomplex, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE, complex=True)
ISREAL = elementwise_op("IsReal", np.isreal, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE, complex=True)
NEXTAFTER, SPACING = _nondiff("NextAfter", np.nextafter), _nondiff("Spacing", np.spacing)


# -- the dnp functions: NumPy's names and signatures ---------------------------------------
fabs, copysign, heaviside, fmax, fmin, fmod = FABS, COPYSIGN, HEAVISIDE, FMAX, FMIN, FMOD
trunc, rint, fix, isinf, isposinf, isneginf, signbit = TRUNC, RINT, FIX, ISINF, ISPOSINF, ISNEGINF, SIGNBIT
iscomplex, isreal, nextafter, spacing, imag = ISCOMPLEX, ISREAL, NEXTAFTER, SPACING, IMAG
real, conj, angle = REAL, CONJ, ANGLE
conjugate = CONJ


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    return NAN_TO_NUM(x, nan=nan, posinf=posinf, neginf=neginf)


around = _round  # np.around is np.round's other name: no derivative (as Round)


dnp.export(globals())
