"""jit=True on loops whose bound f computes (issue 19): `m = n * 2; for i in range(m)`,
`range(int(T / dt))`, nested `for j in range(i)`. The backward sweep walks such a loop as
`for i in reversed(_range1)` (the range saved in a name), which numba cannot type (no
`reversed`): every such loop failed to compile, and the message blamed the user's loop. The
compiled source counts the saved range down from its own start, step and length
(jit_stack._reversed_range), a break's trip count included. jit='fallback' warns when it
falls back. Values are checked against jit=False and central differences."""

import warnings

import numpy as np
import pytest

import dualtape.transforms as dt

numba = pytest.importorskip("numba")


def computed_bound(x, n):
    m = n * 2
    s = 0.0
    for i in range(m):
        s = s + np.sin(x) * i
    return s


def time_steps(x):
    T = 1.0
    dt_ = 0.1
    y = x
    for k in range(int(T / dt_)):
        y = y + dt_ * np.cos(y)
    return y


def nested(x):
    s = x
    for i in range(4):
        for j in range(i):
            s = s * 0.9 + np.sin(s) * j
    return s


def start_and_step(x):
    s = x
    n = 7
    for i in range(1, n, 2):
        s = s * np.cos(s) + i
    return s


def counting_down(x, n):
    s = x
    for i in range(n, 0, -1):
        s = s * 0.5 + np.sin(s) * i
    return s


def step_computed(x, n):
    s = x
    k = n // 2
    for i in range(1, 3 * n, k):
        s = s * 0.5 + np.sin(s) * i
    return s


def computed_bound_with_break(x, n):
    s = x
    m = n + 3
    for i in range(m):
        s = s * np.cos(s) + 0.1 * i
        if i >= n:
            break
    return s


def vector_steps(x, n):
    y = x
    for k in range(n * 3):
        y = y + 0.1 * np.tanh(y) * k
    return np.sum(y * y)


CASES = [(computed_bound, (0.3, 3)), (time_steps, (0.3,)), (nested, (0.3,)), (start_and_step, (0.3,)),
         (counting_down, (0.3, 4)), (step_computed, (0.3, 4)), (computed_bound_with_break, (0.3, 2)),
         (vector_steps, (np.array([0.2, -0.4, 0.9]), 3))]


def _fd(f, args, eps=1e-6):
    x = args[0]
    out = np.zeros(np.shape(x))
    for k in np.ndindex(np.shape(x)):
        hi, lo = np.array(x, dtype=float), np.array(x, dtype=float)
        hi[k] += eps
        lo[k] -= eps
        out[k] = (f(hi[()] if hi.ndim == 0 else hi, *args[1:]) - f(lo[()] if lo.ndim == 0 else lo, *args[1:])) / (2 * eps)
    return out


@pytest.mark.parametrize("f, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_loops_with_computed_bounds_compile(f, args):
    g = dt.grad(f, jit=True)
    got = g(*args)
    np.testing.assert_allclose(got, dt.grad(f)(*args), rtol=1e-12)
    np.testing.assert_allclose(got, _fd(f, args), rtol=1e-6, atol=1e-8)
    assert "reversed(" not in g.source  # what numba compiled counts down
    vjp = dt.vjp(f, jit=True)(*args, 1.0)
    np.testing.assert_allclose(vjp, got, rtol=1e-12)


def test_the_compiled_range_counts_down():
    source = dt.grad(computed_bound, jit=True)
    source(0.3, 3)
    assert "for i in range(_range1.start + (len(_range1) - 1) * _range1.step" in source.source


def test_symbolic_zero_and_mean_compile():
    # the symbolic-zero program under jit: np.mean's VJP reads reduced_size (now compiled)
    from test_transforms_symbolic_zeros import overwritten_after_overflow as f
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert dt.grad(f, argnums=(0, 1), jit=True)(0.5, 3.0) == (1.0, 0.0)


def test_fallback_warns_with_the_reason():
    def uses_einsum(a, b):
        return np.sum(np.einsum("ij,jk->ik", a * 2.0, b))
    a, b = np.linspace(0, 1, 6).reshape(2, 3), np.linspace(1, 2, 6).reshape(3, 2)
    g = dt.grad(uses_einsum, jit="fallback")
    with pytest.warns(RuntimeWarning, match="(?s)numba cannot compile.*einsum.*jit='fallback'") as record:
        np.testing.assert_allclose(g(a, b), dt.grad(uses_einsum)(a, b), rtol=1e-13)
    assert record[0].filename == __file__  # points at the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g(a, b)  # once per compiled version, not per call


def zero_term(x, y):
    z = np.zeros(3)
    for k in range(2):
        z = z + x * y  # z's tangent is zero in the first pass: the sum keeps one term (broadcast_tangent)
    return np.sum(z * z)


def test_forward_modes_compile_a_sum_with_a_zero_term():
    x, y, u = np.array([0.3, -0.2, 0.5]), np.array([1.1, 0.7, -0.4]), np.array([1.0, 0.5, -2.0])
    np.testing.assert_allclose(dt.jvp(zero_term, argnums=0, jit=True)(x, y, u)[1],
                               dt.jvp(zero_term, argnums=0)(x, y, u)[1], rtol=1e-13)
    np.testing.assert_allclose(dt.hvp(zero_term, argnums=0, jit=True)(x, y, u),
                               dt.hvp(zero_term, argnums=0)(x, y, u), rtol=1e-13)
    from test_transforms_symbolic_zeros import overflowed_then_overwritten as f
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert dt.jvp(f, argnums=0, jit=True)(0.5, 3.0, 1.0)[1] == 1.0
