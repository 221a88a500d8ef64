"""The vectorizable sin and cos of fused loops (transforms/jit/vecmath.py): within 1 ulp of
libm over their whole range (near multiples of pi/2 too), -0.0 kept, and a fused loop given an
argument outside their range (huge, inf, nan) computes what np.sin and np.cos give."""

import ast
import math
import textwrap

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.transforms.jit import fusion

numba = pytest.importorskip("numba")
vecmath = pytest.importorskip("dualtape.transforms.jit.vecmath")


@numba.njit
def _apply_sin(x, out):
    for i in range(x.shape[0]):
        out[i] = vecmath.vsin(x[i])


@numba.njit
def _apply_cos(x, out):
    for i in range(x.shape[0]):
        out[i] = vecmath.vcos(x[i])


TWINS = [(_apply_sin, math.sin), (_apply_cos, math.cos)]


def ulps(a, b):
    """The distance in units in the last place between float64 arrays (0 for equal values)."""
    def ordered(v):
        i = np.asarray(v, dtype=np.float64).view(np.int64)
        return np.where(i < 0, np.int64(-2**63) - i, i)
    return np.abs(ordered(a) - ordered(b))


def check(apply, reference, x):
    out = np.empty_like(x)
    apply(x, out)
    expected = np.array([reference(v) for v in x])
    assert ulps(out, expected).max() <= 1, x[np.argmax(ulps(out, expected))]


@pytest.mark.parametrize("apply, reference", TWINS)
def test_within_one_ulp_of_libm_over_their_range(apply, reference):
    rng = np.random.default_rng(7)
    magnitudes = 10.0 ** rng.uniform(-300, np.log10(vecmath.LIMIT), 40_000)
    x = np.concatenate([magnitudes * rng.choice([-1.0, 1.0], magnitudes.size),
                        rng.uniform(-10.0, 10.0, 20_000), rng.uniform(-vecmath.LIMIT, vecmath.LIMIT, 20_000),
                        [5e-324, -5e-324, 2.2e-308, 1e-8, math.pi / 4, vecmath.LIMIT, -vecmath.LIMIT]])
    check(apply, reference, x)


@pytest.mark.parametrize("apply, reference", TWINS)
def test_near_multiples_of_half_pi(apply, reference):
    """Where the reduced argument cancels most: the doubles nearest k pi/2 and their neighbours."""
    k = np.concatenate([np.arange(1.0, 3000.0), np.geomspace(3000.0, 1e6, 3000).round()])
    near = k * (math.pi / 2)
    x = np.concatenate([near, np.nextafter(near, 0.0), np.nextafter(near, np.inf), -near])
    check(apply, reference, x)


def test_signed_zero():
    out = np.empty(2)
    _apply_sin(np.array([0.0, -0.0]), out)
    assert np.array_equal(np.signbit(out), [False, True]) and not out.any()
    _apply_cos(np.array([0.0, -0.0]), out)
    assert np.array_equal(out, [1.0, 1.0])


def sin_cos_chain(x, steps):
    for _ in range(steps):
        x = np.sin(x) * 0.5 + np.cos(x) * 0.25 + 0.01 * x
    return np.sum(x)


def test_a_fused_loop_uses_the_twins_and_falls_back_outside_their_range():
    g, plain = dt.grad(sin_cos_chain, jit=True), dt.grad(sin_cos_chain)
    x = np.linspace(-3.0, 3.0, 11)
    np.testing.assert_allclose(g(x, 50), plain(x, 50), rtol=1e-12, atol=1e-14)
    source = g.source
    assert "_fz_sin(" in source and "_fz_cos(" in source and "if not _fz_ok:" in source
    for outside in (1e7, -3e15, 1e300, np.inf, np.nan):  # (the first step's argument: np.sin's own values)
        y = x.copy()
        y[4] = outside
        with np.errstate(invalid="ignore"):
            expected, got = plain(y, 1), g(y, 1)
        np.testing.assert_array_equal(got, expected)


def test_only_array_arguments_get_the_twins():
    """np.sin of a scalar-only expression inside a run keeps np.sin (and its argument's type)."""
    source = """
    def f(x, s):
        a = x * np.sin(s + 1.0)
        b = np.sin(a) + np.cos(x * s)
        return b
    """
    fn = ast.parse(textwrap.dedent(source)).body[0]
    kinds = {"x": ("array", 1), "s": "scalar", "a": ("array", 1), "b": ("array", 1)}
    caller, kernel = [ast.unparse(f) for f in fusion.fuse_functions([fn], {"f": kinds})]
    fast, slow = kernel.split("if not _fz_ok:")
    assert "np.sin(s + 1.0)" in fast and "_fz_sin(_fz_a0)" in fast and "_fz_cos(_fz_a1)" in fast
    assert "_fz_ok &= abs(_fz_a0) < 1647099.0" in fast and "_fz_ok &= abs(_fz_a1) < 1647099.0" in fast
    assert "_fz_" + "sin" not in slow and "np.cos(x[_fz_i] * s)" in slow


@numba.njit
def _apply_sincos(x, s, c):
    for i in range(x.shape[0]):
        s[i], c[i] = vecmath.vsincos(x[i])


def test_sincos_gives_the_values_of_sin_and_cos():
    """One reduction for both (a forward loop saving cos beside sin: jit/saved_twins.py)."""
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.uniform(-vecmath.LIMIT, vecmath.LIMIT, 20_000), rng.uniform(-10.0, 10.0, 20_000),
                        np.arange(-64, 65) * (math.pi / 4), [0.0, -0.0, 5e-324, -vecmath.LIMIT]])
    s, c, s1, c1 = (np.empty_like(x) for _ in range(4))
    _apply_sincos(x, s, c)
    _apply_sin(x, s1)
    _apply_cos(x, c1)
    np.testing.assert_array_equal(s, s1)
    np.testing.assert_array_equal(c, c1)
    assert np.signbit(s[np.flatnonzero(x == 0.0)]).tolist() == np.signbit(x[x == 0.0]).tolist()
