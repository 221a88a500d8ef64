"""sin and cos of a float64 as branch-free numba code, so that the fused loops that call them
vectorize (imported only with numba).

numba compiles `np.sin(x[i])` in a loop to a call of libm's scalar `sin` per element, which
LLVM cannot vectorize. `vsin` and `vcos` are the fdlibm algorithm written without branches
(the loop vectorizer turns the quadrant's choice into selects): the argument reduced by pi/2
in three Cody-Waite steps with 33-bit parts of pi/2 (fdlibm's __ieee754_rem_pio2 for
|x| < 2**20 pi/2, every step always taken, which loses no accuracy), then FreeBSD's
__kernel_sin and __kernel_cos polynomials on the reduced pair. Within 1 ulp of the correctly
rounded value, as libm (tests/test_jit_vecmath.py compares them with math.sin and math.cos,
near multiples of pi/2 too); -0.0 keeps its sign.

`vsincos` gives both from one reduction (a forward loop that saves cos beside sin: jit/saved_twins.py).

The reduction holds for |x| < LIMIT only: a kernel that calls them checks every argument
(`abs(a) < LIMIT`, false for inf and nan too) and, where one fails, computes its loop again
with np.sin and np.cos (jit/fusion.py).
"""

import numpy as np
from numba import njit

LIMIT = 1647099.0  # 2**20 * pi/2, rounded down: where fdlibm's medium-size reduction holds

_INVPIO2 = 6.36619772367581382433e-01
_PIO2_1 = 1.57079632673412561417e+00  # the first 33 bits of pi/2
_PIO2_1T = 6.07710050650619224932e-11  # pi/2 - _PIO2_1
_PIO2_2 = 6.07710050630396597660e-11  # the next 33 bits
_PIO2_2T = 2.02226624879595063154e-21
_PIO2_3 = 2.02226624871116645580e-21  # the next 33 bits
_PIO2_3T = 8.47842766036889956997e-32
_ROUND = 6755399441055744.0  # 1.5 * 2**52: (v + _ROUND) - _ROUND rounds v to an integer

_S1, _S2, _S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04
_S4, _S5, _S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10
_C1, _C2, _C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05
_C4, _C5, _C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11


@njit
def _reduce(x):
    """(y0, y1, n): x - n pi/2 = y0 + y1, |y0| <= pi/4 about (fdlibm's medium case, all steps)."""
    fn = (x * _INVPIO2 + _ROUND) - _ROUND
    r = x - fn * _PIO2_1
    w = fn * _PIO2_1T
    t = r
    w = fn * _PIO2_2
    r = t - w
    w = fn * _PIO2_2T - ((t - r) - w)
    t = r
    w = fn * _PIO2_3
    r = t - w
    w = fn * _PIO2_3T - ((t - r) - w)
    y0 = r - w
    y1 = (r - y0) - w
    return y0, y1, np.int64(fn)


@njit
def _kernel_sin(x, y):
    z = x * x
    w = z * z
    r = _S2 + z * (_S3 + z * _S4) + z * w * (_S5 + z * _S6)
    v = z * x
    return x - ((z * (0.5 * y - v * r) - y) - v * _S1)


@njit
def _kernel_cos(x, y):
    z = x * x
    w = z * z
    r = z * (_C1 + z * (_C2 + z * _C3)) + w * w * (_C4 + z * (_C5 + z * _C6))
    hz = 0.5 * z
    w = 1.0 - hz
    return w + (((1.0 - w) - hz) + (z * r - x * y))


@njit
def vsincos(x):
    """(sin(x), cos(x)) for |x| < LIMIT, one reduction for both: the values of vsin and vcos."""
    y0, y1, n = _reduce(x)
    s = _kernel_sin(y0, y1)
    c = _kernel_cos(y0, y1)
    vs = c if n & 1 else s  # (one select per value: a conditional tuple would not vectorize)
    vc = -s if n & 1 else c
    vs = -vs if n & 2 else vs
    vc = -vc if n & 2 else vc
    return vs, vc


@njit
def vsin(x):
    """sin(x) for |x| < LIMIT (see the module docstring)."""
    y0, y1, n = _reduce(x)
    s = _kernel_sin(y0, y1)
    c = _kernel_cos(y0, y1)
    v = c if n & 1 else s
    return -v if n & 2 else v


@njit
def vcos(x):
    """cos(x) for |x| < LIMIT (see the module docstring)."""
    y0, y1, n = _reduce(x)
    s = _kernel_sin(y0, y1)
    c = _kernel_cos(y0, y1)
    v = -s if n & 1 else c
    return -v if n & 2 else v


# the names fused kernels call them by (fusion.VECTOR; _fz_sincos: jit/saved_twins.py)
KERNEL_GLOBALS = {"_fz_sin": vsin, "_fz_cos": vcos, "_fz_sincos": vsincos}
