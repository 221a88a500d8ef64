"""A fused forward loop that computes sin of the vector a rows stack just saved also writes its
cos beside it, and the fused backward loop reads it there instead of computing it
(transforms/jit/saved_twins.py): the same gradients as the uncompiled code, and the backward
computes cos itself wherever the saved one may not be the popped vector's (a forward loop that
did not run, vectors of another length)."""

import numpy as np
import pytest

import dualtape.transforms as dt

numba = pytest.importorskip("numba")


def chain(x, steps):
    for _ in range(steps):
        x = np.sin(x) * 1.0001 + 0.01 * x * x
    return np.sum(x)


def both(x, steps):  # (the backward needs cos and sin of x)
    for _ in range(steps):
        x = np.sin(x) * np.cos(x) + 0.1 * x
    return np.sum(x * x)


def scaled(x, w, steps):
    for _ in range(steps):
        x = np.sin(x * w) + 0.5 * x
    return np.sum(x)


def writes_in_place(x, steps):
    y = x * 1.0
    for _ in range(steps):
        y = np.sin(y) * 0.5 + 0.1 * y
        y[0] = 0.5
    return np.sum(y)


def close(a, b):
    for p, q in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        np.testing.assert_allclose(p, q, rtol=1e-12, atol=1e-14)


def kernel(source, name):
    return source[source.index(f"def {name}("):].split("\n\n\n")[0]


def test_the_forward_loop_saves_cos_and_the_backward_reads_it():
    g = dt.grad(chain, jit=True)
    x = np.linspace(-1.0, 1.0, 10)
    source = g.source_for(x, 5)
    assert "_fz_sincos(" in kernel(source, "_fz_kernel_0_twins")
    backward = kernel(source, "_fz_kernel_1_twins")
    assert "_fz_b_cos[_fz_at + _fz_i]" in backward and "_fz_cos(" not in backward and "_fz_sin(" not in backward
    close(g(x, 300), dt.grad(chain)(x, 300))


def test_sin_and_cos_both_saved():
    g = dt.grad(both, jit=True)
    x = np.linspace(-1.0, 1.0, 9)
    source = g.source_for(x, 4)
    assert "_fz_twin_sin_x" in source and "_fz_twin_cos_x" in source
    close(g(x, 200), dt.grad(both)(x, 200))


def test_arguments_out_of_the_twins_range():
    g = dt.grad(chain, jit=True)
    huge = np.array([0.3, 1e7, -2.5, np.inf, 0.1, np.nan, 3.0, -1e300, 0.2, 5.0])
    with np.errstate(all="ignore"):
        close(g(huge, 3), dt.grad(chain)(huge, 3))
        close(g(huge[[0, 2, 4, 6]] * 1e7, 4), dt.grad(chain)(huge[[0, 2, 4, 6]] * 1e7, 4))


def test_an_overflowing_stack_and_other_lengths():
    """The probe sizes the stack for 3 steps: a later call of 400 compiles larger buffers, and
    vectors of other lengths (one element: any stride) use the same compiled version."""
    g = dt.grad(chain, jit=True)
    x = np.linspace(-1.0, 1.0, 10)
    close(g(x, 3), dt.grad(chain)(x, 3))
    for v, steps in ((x, 400), (x[:3], 50), (x[:1], 20), (x[::-2], 30), (np.empty(0), 5)):
        close(g(v, steps), dt.grad(chain)(v, steps))


def test_a_forward_loop_that_did_not_run_leaves_no_saved_cos():
    """w of shape (1,): the shape guard runs the statements as they were (no fused loop) in the
    forward; the backward computes cos itself."""
    g, plain = dt.grad(scaled, wrt=(0, 1), jit=True), dt.grad(scaled, wrt=(0, 1))
    x = np.linspace(-1.0, 1.0, 5)
    close(g(x, np.linspace(0.5, 1.5, 5), 20), plain(x, np.linspace(0.5, 1.5, 5), 20))
    close(g(x, np.array([0.7]), 20), plain(x, np.array([0.7]), 20))


def test_no_saved_cos_where_the_function_writes_in_place():
    g = dt.grad(writes_in_place, jit=True)
    x = np.linspace(-1.0, 1.0, 6)
    assert "_fz_twin" not in g.source_for(x, 4)
    close(g(x, 40), dt.grad(writes_in_place)(x, 40))


@pytest.mark.parametrize("api", ["jvp", "hvp"])
def test_forward_and_second_order_modes(api):
    x, u = np.linspace(-1.0, 1.0, 6), np.linspace(0.5, -0.5, 6)
    close(getattr(dt, api)(both, jit=True)(x, 30, u), getattr(dt, api)(both)(x, 30, u))
