"""transforms/optimize/slices.py: slice adjoints written in place in the versions for concrete shapes.

A loss that slices its parameters out of one flat vector gets one flat adjoint, allocated once,
each slice's adjoint written into it (`btheta[0:4096] = ...`, `+=` where regions overlap, zeros
only where the slices leave a gap); forward over reverse (hvp) drops the gradient's own flat
array. Every version must give what the general version (any shapes) and dualtape.grad give.
"""

import pathlib
import re
import sys

import numpy as np
import pytest

import dualtape
import dualtape.transforms as dt

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "benchmarks"))
from workloads_src import flat_mlp_loss  # noqa: E402  (the workload of benchmarks/wl_flat.py)

N = 4


def overlapping(t):
    return np.sum(np.sin(t[0:6])) + np.sum(t[3:9] ** 2)


def gaps(t):
    return np.sum(np.sin(t[1:4])) + np.sum(t[6:8] ** 2)


def strided(t, m):
    return np.sum(np.sin(t[1:7:2])) + np.sum(m[1:3, 0] * t[0:2]) + np.sum(m[0] ** 2)


def whole_and_slices(t):
    return np.sum(t * t) + np.sum(np.sin(t[0:3]))


def global_bound(t):
    return np.sum(t[0:N] ** 2) + np.sum(np.cos(t[N:]))


def argument_bound(t, n):
    return np.sum(t[0:n] ** 3) + np.sum(t[n:2 * n])


def _general(df, args):
    return df.module.compile(df.name)(*args)


def _flat_problem(dtype=np.float64, batch=5):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(batch, 3)).astype(dtype), rng.normal(size=(batch, 2)).astype(dtype)
    n = 3 * 64 + 64 + 64 * 64 + 64 + 64 * 2 + 2
    return (rng.normal(size=n) * 0.1).astype(dtype), x, y, rng.normal(size=n).astype(dtype)


def test_flat_parameter_gradient_writes_each_slice_once():
    theta, x, y, _ = _flat_problem()
    df = dt.grad(flat_mlp_loss, wrt=0)
    source = df.source_for(theta, x, y)
    assert "btheta = np.empty_like(theta)" in source  # every element written: no zeros
    assert "btheta[0:192] = b_t1" in source and "btheta[4416:4544] = b_t3" in source
    assert "add_at" not in source and "zeros_like" not in source and "reshape_like" not in source
    got = df(theta, x, y)
    np.testing.assert_allclose(got, _general(df, (theta, x, y)), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(got, dualtape.grad(flat_mlp_loss)(theta, x, y), rtol=1e-12, atol=1e-14)
    assert got.dtype == np.float64 and got.shape == theta.shape


def test_flat_parameter_gradient_in_float32():
    theta, x, y, _ = _flat_problem(np.float32)
    df = dt.grad(flat_mlp_loss, wrt=0)
    got = df(theta, x, y)
    want = _general(df, (theta, x, y))
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_flat_parameter_hvp_computes_only_the_tangent():
    theta, x, y, v = _flat_problem()
    h = dt.hvp(flat_mlp_loss, wrt=0)
    source = h.source_for(theta, x, y, v)
    assert not re.search(r"\bbtheta\b", source)  # the gradient's own flat array: nobody reads it
    assert "dbtheta = np.empty_like(theta)" in source
    got = h(theta, x, y, v)
    want = dualtape.hvp(lambda t: flat_mlp_loss(t, x, y), (theta,), (v,))
    np.testing.assert_allclose(got, want[0] if isinstance(want, tuple) else want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn, n", [(overlapping, 10), (gaps, 10), (whole_and_slices, 5), (global_bound, 7)])
def test_slices_that_overlap_or_leave_gaps(fn, n):
    t = np.random.default_rng(1).normal(size=n)
    df = dt.grad(fn)
    source = df.source_for(t)
    got = df(t)
    np.testing.assert_allclose(got, _general(df, (t,)), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(got, dualtape.grad(fn)(t), rtol=1e-13, atol=1e-15)
    if fn is overlapping:  # the first write into each region assigns, a second adds; t[9] is never written
        assert re.search(r"(bt\w*) = np.zeros_like\(t\)\n.*\1\[3:9\] = .*\1\[0:6\] \+= ", source, re.S)
    if fn is gaps:
        assert re.search(r"bt\w* = np.zeros_like\(t\)", source) and "+=" not in source


def test_a_global_bound_rebound_is_seen():
    global N
    t = np.random.default_rng(2).normal(size=7)
    df = dt.grad(global_bound)
    assert re.search(r"bt\w*\[0:4\] = ", df.source_for(t))
    np.testing.assert_allclose(df(t), dualtape.grad(global_bound)(t), rtol=1e-14)
    v = np.random.default_rng(3).normal(size=7)
    h = dt.hvp(global_bound)
    np.testing.assert_allclose(h(t, v), dualtape.hvp(global_bound, (t,), (v,)), rtol=1e-13)
    try:
        N = 2
        np.testing.assert_allclose(df(t), dualtape.grad(global_bound)(t), rtol=1e-14)
        assert re.search(r"bt\w*\[0:2\] = ", df.source_for(t))
        np.testing.assert_allclose(h(t, v), dualtape.hvp(global_bound, (t,), (v,)), rtol=1e-13)
    finally:
        N = 4


def test_strided_and_two_axis_slices():
    rng = np.random.default_rng(3)
    t, m = rng.normal(size=8), rng.normal(size=(4, 3))
    df = dt.grad(strided, wrt=(0, 1))
    got = df(t, m)
    for g, e, w in zip(got, _general(df, (t, m)), dualtape.grad(strided, argnums=(0, 1))(t, m)):
        np.testing.assert_allclose(g, e, rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)


def test_bounds_known_only_at_run_time():
    """One version serves every n (versions are per shape, not per int value): nothing is folded."""
    t = np.random.default_rng(4).normal(size=9)
    df = dt.grad(argument_bound, wrt=0)
    for n in (2, 3, 4):
        np.testing.assert_allclose(df(t, n), dualtape.grad(argument_bound)(t, n), rtol=1e-13)
    assert "slice(0, n)" in df.source_for(t, 3)


def negative_steps_and_bounds(t):
    return np.sum(np.sin(t[::-1]) * t[::-1]) + np.sum(t[-3:] ** 2) + np.sum(np.cos(t[1:-1])) + np.sum(t[-1:0:-2])


def test_negative_steps_and_bounds():
    t = np.random.default_rng(5).normal(size=8)
    df = dt.grad(negative_steps_and_bounds)
    got = df(t)
    np.testing.assert_allclose(got, _general(df, (t,)), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(got, dualtape.grad(negative_steps_and_bounds)(t), rtol=1e-13, atol=1e-15)
    assert "[::-1]" in df.source_for(t) and "[::1]" not in df.source_for(t)
