"""transforms/optimize/preaccumulate.py: the adjoint statements of one line folded into one (issue 13)."""

import math

import numpy as np
import pytest

import dualtape.transforms as dt


def chain(x, steps):
    for _ in range(steps):
        x = np.sin(x) * 1.0001 + 0.01 * x * x
    return np.sum(x)


def swap_mix(a, b, n):
    p, q = a, b
    for _ in range(n):
        p, q = q, p + q * 0.5
    return p * q


def _general(df, *args):
    return df.module.compile(df.name)(*args)


@pytest.mark.parametrize("x", [np.full(10, 0.3), np.array(0.3), np.linspace(-1.0, 1.0, 7)])
def test_the_chain_step_is_one_multiply_by_its_derivative(x):
    df = dt.grad(chain)
    source = df.source_for(x, 50)
    assert "bx = bx * (0.02 * x + 1.0001 * np.cos(x))" in source
    assert "x = _stack.pop()" in source  # (a pop is read once: never expanded into the sum)
    np.testing.assert_allclose(df(x, 50), _general(df, x, 50), rtol=1e-12)


def test_adjoints_read_by_each_other_are_assigned_at_once():
    df = dt.grad(swap_mix, wrt=(0, 1))
    assert "bp, bq = " in df.source_for(0.7, -0.4, 5)
    for args in [(0.7, -0.4, 5), (1.5, 2.0, 0), (0.1, 0.2, 1)]:
        np.testing.assert_allclose(df(*args), _general(df, *args), rtol=1e-13)


def square_branch(a):
    b = a * a if a > 1.0 else math.sin(a)
    return b + a


def test_like_terms_are_collected():
    df = dt.grad(square_branch)
    assert "ba = ba + bb * (2.0 * a)" in df.source_for(2.0)
    assert df(2.0) == 5.0 and abs(df(0.5) - (math.cos(0.5) + 1.0)) < 1e-15


def cancels(x):
    x -= x  # (found by tests/test_programs.py: the adjoint's terms cancel, x - x)
    return x + x


def partly_cancels(x, y):
    z = x * y - x * y + x
    return z * z


def test_terms_that_cancel_leave_the_statements_as_they_were():
    assert dt.grad(cancels)(0.0) == 0.0
    df = dt.grad(partly_cancels, wrt=(0, 1))
    np.testing.assert_allclose(df(0.5, 1.5), _general(df, 0.5, 1.5), rtol=1e-13)
