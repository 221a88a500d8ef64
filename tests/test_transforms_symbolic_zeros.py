"""Symbolic zeros in the transformer's reverse modes (issue 19): an adjoint known to be zero
(never written, or reset by an overwrite such as `x1 = x0`) is not multiplied through. The
loop's backward sweep computed `bx1 = bx1 * exp(x1)` for an x1 that `x1 = x0` had overwritten:
0 * inf = NaN where expm1 overflowed, a NaN gradient for a function that does not depend on x1.
A loop's carried adjoints that are zero at the start of the backward loop but nonzero in later
iterations stay materialized (a fixed point over the body: transforms/reverse/symbolic_zeros.py).
Forward mode has the same property for tangents: a tangent known to be zero is not read (jvp of
`overflowed_then_overwritten` gave NaN for 1.0: `d_x1 = dx1 * (_x1 + 1)` with dx1 a zero)."""

import warnings

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.testing import check_modes

KN = np.array([-0.55, -0.78, 0.03, 0.53])


def overwritten_after_overflow(x0, x1):  # the program: d/dx1 is 0, grad gave NaN
    for w4, v5 in zip([0.5, 1.0, 2], KN):
        x1 = np.expm1(x1)
    x1 = x0
    return np.mean(x1)


def arrays_overwritten(x0, x1):
    for k in range(3):
        x1 = np.expm1(x1) * x0
    x1 = x0 * 2.0
    return np.sum(x1)


def nonzero_in_later_iterations(x0, x1):  # by is zero in the first backward pass, not after
    y = 0.0
    z = 0.0
    for i in range(3):
        z = z + y * 2.0
        y = x0 * x1
    return z


def zero_through_a_branch(x0, x1):
    y = x1
    for i in range(3):
        if i > 5:
            y = x0
        y = np.expm1(y)
    y = x0 * 3.0
    return y


def nested_loops(x0, x1):
    for i in range(2):
        for j in range(3):
            x1 = np.expm1(x1)
        x1 = np.exp(x1)
    x1 = x0
    return x1 * x0


def overflowed_then_overwritten(x0, x1):  # forward mode: jvp in x0 gave NaN (dx1 is a zero)
    for i in range(3):
        x1 = np.expm1(x1)
    out = np.exp(-x1)
    x1 = x0
    return out + x1


def overflowed_in_a_branch(x0, x1):
    y = np.expm1(np.expm1(np.expm1(x1)))
    if x0 > 0:
        z = np.exp(-y)
    else:
        z = y * 0.0
    y = x0
    return z + y


SCALAR_CASES = [overwritten_after_overflow, nonzero_in_later_iterations, zero_through_a_branch, nested_loops]
FORWARD_CASES = [overflowed_then_overwritten, overflowed_in_a_branch]


@pytest.fixture(autouse=True)
def _quiet_overflow():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # f's own expm1 overflows at x1 = 3
        yield


@pytest.mark.parametrize("f", SCALAR_CASES, ids=[f.__name__ for f in SCALAR_CASES])
def test_every_mode_agrees(f):
    check_modes(f, [0.5, 3.0])  # raises on a wrong number (NaN included) or a crash in any mode


def test_arrays_every_mode_agrees():
    check_modes(arrays_overwritten, [np.array([0.5, 0.2]), np.array([3.0, 1.0])])


def test_zero_gradient_is_exact_in_every_reverse_mode():
    f = overwritten_after_overflow
    assert dt.grad(f, argnums=(0, 1))(0.5, 3.0) == (1.0, 0.0)
    assert dt.grad(f, argnums=(0, 1), optimize=False)(0.5, 3.0) == (1.0, 0.0)
    assert dt.grad(f, argnums=(0, 1))(np.float64(0.5), np.float64(3.0)) == (1.0, 0.0)  # versions per type
    assert dt.grad(f, argnums=1)(np.array(0.5), np.array(3.0)) == 0.0
    assert dt.vjp(f, argnums=(0, 1))(0.5, 3.0, 1.0) == (1.0, 0.0)
    assert tuple(dt.hvp(f, argnums=(0, 1))(0.5, 3.0, (1.0, 1.0))) == (0.0, 0.0)


def test_the_dead_loop_has_no_adjoint_statement():
    source = dt.grad(overwritten_after_overflow, argnums=(0, 1)).source
    backward = source.split("# backward")[1]
    assert "expm1" not in backward and "bx1 * " not in backward


@pytest.mark.parametrize("f", FORWARD_CASES, ids=[f.__name__ for f in FORWARD_CASES])
def test_forward_modes_read_no_zero_tangent(f):
    # x1 = 3.0 overflows: the derivative in x1 is undefined (inf * 0), but in x0 it is 1
    assert dt.jvp(f, argnums=0)(0.5, 3.0, 1.0)[1] == 1.0
    np.testing.assert_array_equal(dt.jvp(f, argnums=0)(0.5, 3.0, np.array([1.0, 2.0]))[1], [1.0, 2.0])
    assert dt.grad(f, argnums=0)(0.5, 3.0) == 1.0
    assert dt.hvp(f, argnums=0)(0.5, 3.0, 1.0) == 0.0
    check_modes(f, [0.5, 0.1])  # away from the overflow: every mode, both arguments


def test_the_loop_reads_no_zero_tangent():
    source = dt.jvp(overflowed_then_overwritten, argnums=0).source
    assert "dx1 * " not in source and "d_neg_x1 * " not in source
