"""jit=True saves float64 vectors in one preallocated buffer per stack (transforms/jit/stacks.py's
ROWS), not in a list of arrays: the same gradients as the uncompiled code when the vectors change
length from step to step, when a call saves more than the probe sized the buffer for (RowsFull:
compiled again with larger buffers) or saves longer vectors, and when a fused loop writes the
next vector into the buffer. The compiled call's fast path for array arguments keys on dtype and ndim (a
complex array is still refused, a float32 one compiled anew)."""

import numpy as np
import pytest

import dualtape.transforms as dt

numba = pytest.importorskip("numba")


def chain(x, steps):
    for _ in range(steps):
        x = np.sin(x) * 1.0001 + 0.01 * x * x
    return np.sum(x)


def shrinking(x, steps):
    for _ in range(steps):
        x = np.sin(x[1:]) + x[:-1] * 0.5
    return np.sum(x * x)


def two_runs(x, steps):
    for _ in range(steps):
        x = np.sin(x) * 0.5 + x * 0.25
        y = np.sum(x)
        x = np.cos(x) * 0.5 + x * 0.1 * y
    return np.sum(x * x)


def flipped(x, steps):
    for _ in range(steps):
        x = np.sin(x) * 0.5 + x * 0.25
        x = x[::-1]
        x = x * 1.5 + x * x
    return np.sum(x * np.arange(x.shape[0]))


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_vectors_go_to_one_buffer_and_more_steps_than_the_probe_compile_larger_buffers():
    g, plain = dt.grad(chain, jit=True), dt.grad(chain)
    x = np.linspace(-1.0, 1.0, 10)
    close(g(x, 50), plain(x, 50))
    source, entry = g.source, g._last
    assert "_stack_x = np.empty(" in source and "raise RowsFull()" in source and "_stack_x.append" not in source
    close(g(x, 400), plain(x, 400))  # (past the probe's 50 steps: RowsFull, then twice the room)
    assert g._last is entry and entry.room >= 2 and g.source != source
    close(g(x, 400), plain(x, 400))  # (fits now: the fast path again)
    close(g(x, 50), plain(x, 50))
    long = np.linspace(-1.0, 1.0, 37)
    close(g(long, 80), plain(long, 80))  # (longer vectors: fewer fit)
    close(g(x[:3], 60), plain(x[:3], 60))
    close(g(x[::2], 30), plain(x[::2], 30))  # (a strided argument is copied in like any other)


def test_vectors_of_changing_length():
    g, plain = dt.grad(shrinking, jit=True), dt.grad(shrinking)
    x = np.linspace(-2.0, 2.0, 12)
    close(g(x, 8), plain(x, 8))
    assert "np.empty(" in g.source and "raise RowsFull()" in g.source
    close(g(np.linspace(-1.0, 3.0, 30), 25), plain(np.linspace(-1.0, 3.0, 30), 25))


@pytest.mark.filterwarnings("ignore:.*numba cannot compile")  # (float32 runs uncompiled today: another version)
def test_the_fast_path_for_arrays_keys_on_dtype_and_ndim():
    g = dt.grad(chain, jit=True)
    x = np.linspace(-1.0, 1.0, 6)
    close(g(x, 5), dt.grad(chain)(x, 5))
    close(g(x, 5), dt.grad(chain)(x, 5))  # (the fast path)
    with pytest.raises(TypeError, match="complex"):
        g(x.astype(np.complex128), 5)
    x32 = x.astype(np.float32)
    got = g(x32, 5)
    assert got.dtype == dt.grad(chain)(x32, 5).dtype
    np.testing.assert_allclose(got, dt.grad(chain)(x32, 5), rtol=1e-5)
    m = x.reshape(2, 3)
    close(g(m, 5), dt.grad(chain)(m, 5))
    close(g(np.array(0.4), 5), dt.grad(chain)(np.array(0.4), 5))


@pytest.mark.parametrize("f", [chain, two_runs, flipped])
def test_a_fused_loop_writes_the_vector_it_saves_next_into_the_buffer(f):
    """The room lent to a fused loop's result: pushed in place when it is what the stack saves
    next, left alone (a copy goes above it) when something else is saved first."""
    g, plain = dt.grad(f, jit=True), dt.grad(f)
    x = np.linspace(-1.0, 1.0, 9)
    close(g(x, 12), plain(x, 12))
    assert "_lent_x = _free_x" in g.source
    close(g(x, 40), plain(x, 40))  # (past the probe's buffer)
    close(g(x[:1], 12), plain(x[:1], 12))


def twice_fused(x, steps):  # (two fused results of x lent room per push: more than the pushes)
    for _ in range(steps):
        x = np.sin(x) * 0.5 + x
        x = np.cos(x) * 0.25 + 0.5 * x
    return np.sum(x * x)


def test_a_full_buffer_compiles_larger_ones_until_the_call_fits():
    """Each rebuild doubles the room (jit/compile.py's `grown`): a call that needs more than
    twice the probe's pushes still ends, with the uncompiled code's numbers, and the next
    call of that size fits."""
    g, plain = dt.grad(twice_fused, jit=True), dt.grad(twice_fused)
    x = np.linspace(-1.0, 1.0, 8)
    close(g(x, 2), plain(x, 2))
    close(g(x, 300), plain(x, 300))
    room = g._last.room
    assert room >= 2
    close(g(x, 300), plain(x, 300))
    assert g._last.room == room
    for api in (dt.jvp, dt.hvp):  # (their fast path too)
        h, direction = api(twice_fused, jit=True), np.ones(8)
        h(x, 2, direction)
        close(h(x, 200, direction), api(twice_fused)(x, 200, direction))
