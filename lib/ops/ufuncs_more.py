"""More of NumPy's real ufuncs: base-2 and base-10 logarithms, logaddexp, inverse hyperbolic
functions, hypot, cbrt, sinc, fmax / fmin, nan_to_num, angle conversions,
heaviside, fmod, copysign, and the non-differentiable rounding and classification ufuncs.

Elementwise: the engine handles broadcasting. Each op also has a sample, so the source
transformer's registry test instantiates its rules. Conventions at kinks and ties are in
docs/numerics.md ("More NumPy functions").
"""

import numpy as np

from ..core import dnp
from ..core.registry import LINEAR, NOT_DIFFERENTIABLE, defop, elementwise_op
from ..core.rulekit import div_no_nan
from .elementwise import round as _round

__all__ = [
    "log2", "log10", "exp2", "logaddexp", "logaddexp2", "arcsinh", "arccosh", "arctanh", "hypot",
    "fabs", "cbrt", "sinc", "fmax", "fmin", "float_power", "nan_to_num", "deg2rad", "radians",
    "rad2deg", "degrees", "heaviside", "fmod", "copysign", "trunc", "rint", "fix", "isinf",
    "isposinf", "isneginf", "signbit", "iscomplex", "isreal", "nextafter", "spacing", "real",
    "imag", "conj", "conjugate", "around",
]

def _sample(name, *ranges):
    """A sample drawing one (2, 3) array per input, each uniform in its (low, high) range."""
    def sample(rng):
        return tuple(rng.uniform(lo, hi, (2, 3)) for lo, hi in ranges), {}
    sample.__name__ = sample.__qualname__ = f"_sample_{name}"
    return (sample,)


# -- logarithms and exponentials -----------------------------------------------------------

def log2_vjp(g, ans, x):
    return g / (x * 0.6931471805599453)


def log2_jvp(dx, ans, x):
    return dx / (x * 0.6931471805599453)


LOG2 = elementwise_op("Log2", np.log2, vjp=log2_vjp, jvp=log2_jvp, domain={"x": "positive"},
                      samples=_sample("log2", (0.2, 3)))


def log10_vjp(g, ans, x):
    return g / (x * 2.302585092994046)


def log10_jvp(dx, ans, x):
    return dx / (x * 2.302585092994046)


LOG10 = elementwise_op("Log10", np.log10, vjp=log10_vjp, jvp=log10_jvp, domain={"x": "positive"},
                       samples=_sample("log10", (0.2, 3)))


def exp2_vjp(g, ans, x):
    return g * (ans * 0.6931471805599453)


def exp2_jvp(dx, ans, x):
    return dx * (ans * 0.6931471805599453)


EXP2 = elementwise_op("Exp2", np.exp2, vjp=exp2_vjp, jvp=exp2_jvp, samples=_sample("exp2", (-2, 2)))


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
                           samples=_sample("logaddexp", (-3, 3), (-3, 3)))


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
                            samples=_sample("logaddexp2", (-3, 3), (-3, 3)))


# -- inverse hyperbolic functions --------------------------------------------------------------

def asinh_vjp(g, ans, x):
    return g / dnp.sqrt(x * x + 1)


def asinh_jvp(dx, ans, x):
    return dx / dnp.sqrt(x * x + 1)


ASINH = elementwise_op("Asinh", np.arcsinh, vjp=asinh_vjp, jvp=asinh_jvp, samples=_sample("arcsinh", (-3, 3)))


def acosh_vjp(g, ans, x):
    return g / dnp.sqrt(x * x - 1)


def acosh_jvp(dx, ans, x):
    return dx / dnp.sqrt(x * x - 1)


# arccosh is defined on x >= 1 only: no elementwise domain keyword says so, so it is sampled
# from its samples (x in [1.2, 4]) and declared unary (no broadcasting to handle).
ACOSH = defop("Acosh", np.arccosh, vjp=acosh_vjp, jvp=acosh_jvp, samples=_sample("arccosh", (1.2, 4)))


def atanh_vjp(g, ans, x):
    return g / (1 - x * x)


def atanh_jvp(dx, ans, x):
    return dx / (1 - x * x)


ATANH = elementwise_op("Atanh", np.arctanh, vjp=atanh_vjp, jvp=atanh_jvp, domain={"x": "unit"},
                       samples=_sample("arctanh", (-0.9, 0.9)))


# -- magnitudes and roots ---------------------------------------------------------------------

def hypot_vjp_x(g, ans, x, y):
    return g * (x / ans)


def hypot_vjp_y(g, ans, x, y):
    return g * (y / ans)


def hypot_jvp_x(dx, ans, x, y):
    return dx * (x / ans)


def hypot_jvp_y(dy, ans, x, y):
    return dy * (y / ans)


HYPOT = elementwise_op("Hypot", np.hypot, vjp=(hypot_vjp_x, hypot_vjp_y), jvp=(hypot_jvp_x, hypot_jvp_y),
                       domain={"x": "nonzero", "y": "nonzero"}, samples=_sample("hypot", (0.2, 3), (-3, -0.2)))


def fabs_vjp(g, ans, x):
    return g * dnp.sign(x)


def fabs_jvp(dx, ans, x):
    return dx * dnp.sign(x)


FABS = elementwise_op("Fabs", np.fabs, vjp=fabs_vjp, jvp=fabs_jvp, domain={"x": "nonzero"},
                      samples=_sample("fabs", (0.2, 3)))


def cbrt_vjp(g, ans, x):
    return g / (3 * ans * ans)


def cbrt_jvp(dx, ans, x):
    return dx / (3 * ans * ans)


CBRT = elementwise_op("Cbrt", np.cbrt, vjp=cbrt_vjp, jvp=cbrt_jvp, domain={"x": "nonzero"},
                      samples=_sample("cbrt", (0.2, 3)))


def sinc_vjp(g, ans, x):
    return g * div_no_nan(dnp.cos(np.pi * x) - ans, x)  # sinc is even: 0 at x = 0


def sinc_jvp(dx, ans, x):
    return dx * div_no_nan(dnp.cos(np.pi * x) - ans, x)


SINC = elementwise_op("Sinc", np.sinc, vjp=sinc_vjp, jvp=sinc_jvp, domain={"x": "nonzero"},
                      samples=_sample("sinc", (0.2, 3)))


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
                      domain={"x": "no_ties"}, samples=_sample("fmax", (-3, 3), (-3, 3)))


def fmin_vjp_x(g, ans, x, y):
    return g * dnp.logical_or(x <= y, dnp.isnan(y))


def fmin_vjp_y(g, ans, x, y):
    return g * dnp.logical_or(x > y, dnp.isnan(x))


def fmin_jvp_x(dx, ans, x, y):
    return dx * dnp.logical_or(x <= y, dnp.isnan(y))


def fmin_jvp_y(dy, ans, x, y):
    return dy * dnp.logical_or(x > y, dnp.isnan(x))


FMIN = elementwise_op("Fmin", np.fmin, vjp=(fmin_vjp_x, fmin_vjp_y), jvp=(fmin_jvp_x, fmin_jvp_y),
                      domain={"x": "no_ties"}, samples=_sample("fmin", (-3, 3), (-3, 3)))


# -- nan_to_num, angles, heaviside, fmod, copysign ----------------------------------

def _nan_to_num(x, *, nan=0.0, posinf=None, neginf=None):
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def nan_to_num_vjp(g, ans, x, *, nan=0.0, posinf=None, neginf=None):
    return dnp.where(dnp.isfinite(x), g, dnp.zeros_like(g))  # replaced entries are constants


def nan_to_num_jvp(dx, ans, x, *, nan=0.0, posinf=None, neginf=None):
    return dnp.where(dnp.isfinite(x), dx, dnp.zeros_like(dx))


NAN_TO_NUM = elementwise_op("NanToNum", _nan_to_num, vjp=nan_to_num_vjp, jvp=nan_to_num_jvp,
                            samples=_sample("nan_to_num", (-3, 3)))


def deg2rad_vjp(g, ans, x):
    return g * 0.017453292519943295


DEG2RAD = elementwise_op("Deg2Rad", np.deg2rad, vjp=deg2rad_vjp, jvp=LINEAR, samples=_sample("deg2rad", (-180, 180)))


def rad2deg_vjp(g, ans, x):
    return g * 57.29577951308232


RAD2DEG = elementwise_op("Rad2Deg", np.rad2deg, vjp=rad2deg_vjp, jvp=LINEAR, samples=_sample("rad2deg", (-3, 3)))


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


def copysign_vjp_x(g, ans, x, y):
    return g * (dnp.sign(x) * dnp.sign(ans))


def copysign_jvp_x(dx, ans, x, y):
    return dx * (dnp.sign(x) * dnp.sign(ans))


COPYSIGN = elementwise_op("Copysign", np.copysign, vjp=(copysign_vjp_x, None), jvp=(copysign_jvp_x, None),
                          domain={"x": "nonzero", "y": "nonzero"},
                          samples=_sample("copysign", (0.2, 3), (-3, -0.2)))


def real_vjp(g, ans, x):
    return g


def _real(x):
    return np.real(x)


def _conj(x):
    return np.conj(x)


REAL = elementwise_op("Real", _real, vjp=real_vjp, jvp=LINEAR, samples=_sample("real", (-3, 3)))
CONJ = elementwise_op("Conj", _conj, vjp=real_vjp, jvp=LINEAR, samples=_sample("conj", (-3, 3)))


def _nondiff(name, impl):
    return elementwise_op(name, impl, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE)


def _imag(x):
    return np.imag(x)


IMAG = _nondiff("Imag", _imag)  # zero on real data: no derivative to carry
TRUNC, RINT, FIX = _nondiff("Trunc", np.trunc), _nondiff("Rint", np.rint), _nondiff("Fix", np.fix)
ISINF, SIGNBIT = _nondiff("IsInf", np.isinf), _nondiff("Signbit", np.signbit)
ISPOSINF, ISNEGINF = _nondiff("IsPosInf", np.isposinf), _nondiff("IsNegInf", np.isneginf)
ISCOMPLEX, ISREAL = _nondiff("IsComplex", np.iscomplex), _nondiff("IsReal", np.isreal)
NEXTAFTER, SPACING = _nondiff("NextAfter", np.nextafter), _nondiff("Spacing", np.spacing)


# -- the dnp functions: NumPy's names and signatures ---------------------------------------
log2, log10, exp2, logaddexp, logaddexp2 = LOG2, LOG10, EXP2, LOGADDEXP, LOGADDEXP2
arcsinh, arccosh, arctanh, hypot, fabs, cbrt, sinc = ASINH, ACOSH, ATANH, HYPOT, FABS, CBRT, SINC
fmax, fmin, heaviside, fmod, copysign = FMAX, FMIN, HEAVISIDE, FMOD, COPYSIGN
deg2rad = radians = DEG2RAD
rad2deg = degrees = RAD2DEG
trunc, rint, fix, isinf, isposinf, isneginf, signbit = TRUNC, RINT, FIX, ISINF, ISPOSINF, ISNEGINF, SIGNBIT
iscomplex, isreal, nextafter, spacing, imag = ISCOMPLEX, ISREAL, NEXTAFTER, SPACING, IMAG
real, conj = REAL, CONJ
conjugate = CONJ


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    return NAN_TO_NUM(x, nan=nan, posinf=posinf, neginf=neginf)


def float_power(x1, x2, out=None, **kwargs):
    """np.float_power: the power computed in float64 (NumPy's result dtype), Cast then Pow.
    Composed, not one op: the registry's ops keep their inputs' float dtype."""
    if out is not None or kwargs:
        raise TypeError("[float_power] out= and ufunc keywords are not supported on differentiable values.")
    return dnp.power(dnp.cast(x1, np.float64), dnp.cast(x2, np.float64))


around = _round  # np.around is np.round's other name: no derivative (as Round)


dnp.export(globals())
