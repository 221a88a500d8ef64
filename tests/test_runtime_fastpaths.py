"""The runtime fast paths of issue 13 give the same values as the general paths.

- a tape's backward pass adds basic-slice cotangents into one buffer per source (no
  full-size zeros per slice) and adds into buffers it made in place;
- a ForwardAccumulator with nothing recording outside it runs JVP rules on plain values;
- batched MatMul VJPs (vectorized jacobians) are one GEMM for 2-D operands.
"""

import numpy as np
import pytest

import dualtape as tf
from dualtape import dnp


def _slices(x):
    a = x[1:4] * 2.0
    b = x[::2] ** 2
    c = x[2:5] * x[3:6]          # overlapping slices of the same source
    d = dnp.sin(x) * 0.5         # a non-slice use between them
    e = x[-1] * 3.0              # an int index
    f = x[np.array([0, 0, 2])]   # a fancy index (np.add.at semantics) after the basic ones
    return dnp.sum(a) + dnp.sum(b) + dnp.sum(c) + dnp.sum(d) + e + dnp.sum(f)


def _slices_expected(x):
    g = np.zeros_like(x)
    g[1:4] += 2.0
    g[::2] += 2 * x[::2]
    g[2:5] += x[3:6]
    g[3:6] += x[2:5]
    g += 0.5 * np.cos(x)
    g[-1] += 3.0
    g[0] += 2.0
    g[2] += 1.0
    return g


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_slice_cotangents_accumulate_in_one_buffer(dtype):
    x = tf.constant(np.linspace(-1.0, 2.0, 8).astype(dtype))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = _slices(x)
    g = tape.gradient(y, x).numpy()
    assert g.dtype == dtype
    np.testing.assert_allclose(g, _slices_expected(x.numpy().astype(np.float64)),
                               rtol=1e-6 if dtype == np.float32 else 1e-14)


def test_slice_cotangents_2d_and_sources_inside():
    x = tf.constant(np.arange(12.0).reshape(3, 4) / 7)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = x * 1.5
        y = dnp.sum(h[:, 1:] * h[:, :-1]) + dnp.sum(h[1] ** 3) + dnp.sum(h[..., None, 2])
    gx, gh = tape.gradient(y, [x, h])
    hv = x.numpy() * 1.5
    expected = np.zeros_like(hv)
    expected[:, 1:] += hv[:, :-1]
    expected[:, :-1] += hv[:, 1:]
    expected[1] += 3 * hv[1] ** 2
    expected[:, 2] += 1.0
    np.testing.assert_allclose(gh.numpy(), expected, rtol=1e-14)
    np.testing.assert_allclose(gx.numpy(), 1.5 * expected, rtol=1e-14)
    # a second pass over the persistent tape gives the same (its buffers are its own)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), gx.numpy())


def test_output_gradients_are_not_written_into():
    x = tf.constant(np.arange(6.0))
    seed = np.ones(3)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x[:3] + x[3:] + x[1:4]
    g = tape.gradient(y, x, output_gradients=seed)
    np.testing.assert_array_equal(seed, np.ones(3))
    np.testing.assert_array_equal(g.numpy(), [1.0, 2.0, 2.0, 2.0, 1.0, 1.0])


def test_fan_in_sums_do_not_touch_the_seed_or_inputs():
    x = tf.constant(np.array([0.3, -0.7]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0 + x * 3.0 + dnp.sin(x) + x
    g = tape.gradient(y, x).numpy()
    np.testing.assert_allclose(g, 6.0 + np.cos([0.3, -0.7]), rtol=1e-15)


def test_accumulator_plain_path_matches_the_traced_path():
    x0, v0 = np.array([0.2, -0.4, 1.1]), np.array([1.0, 0.5, -2.0])

    def f(x):
        return dnp.sum(dnp.tanh(x) * x ** 2 + dnp.exp(-x) / 3.0)

    x, v = tf.constant(x0), tf.constant(v0)
    with tf.autodiff.ForwardAccumulator(x, v) as acc:   # nothing outside records: plain path
        fast = acc.jvp(f(x)).numpy()
    with tf.GradientTape() as tape:                     # a tape outside: the traced path
        tape.watch(x)
        with tf.autodiff.ForwardAccumulator(x, v) as acc:
            slow_t = acc.jvp(f(x))
    slow = slow_t.numpy()
    np.testing.assert_allclose(fast, slow, rtol=1e-15)
    # and the tape outside still sees the tangent computation (reverse over forward)
    assert tape.gradient(slow_t, x) is not None


def test_accumulator_scalar_chain_and_float32():
    x = tf.constant(np.float32(0.3))
    with tf.autodiff.ForwardAccumulator(x, tf.constant(np.float32(1.0))) as acc:
        y = x
        for _ in range(5):
            y = dnp.sin(y) * 1.0001 + 0.01 * y * y
    t = acc.jvp(y)
    assert t.dtype == tf.float32
    xs, d = 0.3, 1.0
    for _ in range(5):
        d = d * (np.cos(xs) * 1.0001 + 0.02 * xs)
        xs = np.sin(xs) * 1.0001 + 0.01 * xs * xs
    np.testing.assert_allclose(float(t.numpy()), d, rtol=1e-5)


@pytest.mark.parametrize("x_shape", [(30, 1), (30, 4)])
def test_batched_matmul_vjp_one_gemm_matches_the_loop(x_shape):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((20, 30)).astype(np.float32)
    x = tf.constant(rng.standard_normal(x_shape).astype(np.float32))
    b = rng.standard_normal((20, x_shape[1])).astype(np.float32)
    wt = tf.constant(w)
    jacs = []
    for pfor in (True, False):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([x, wt])
            y = tf.tanh(tf.matmul(wt, x) + b)
        jacs.append(tape.jacobian(y, [x, wt], experimental_use_pfor=pfor))
    for fast, slow in zip(*jacs):
        np.testing.assert_allclose(fast.numpy(), slow.numpy(), rtol=1e-5, atol=1e-6)


def test_tape_inside_accumulator_sees_forward_and_backward_but_not_the_jvps():
    """TF's rule (pywrap_tfe_src: an accumulator's JVP ops are recorded only on tapes
    created before it): forward-over-reverse works, and a tape entered inside the
    accumulator does not record the accumulator's tangent computation."""
    x0 = np.array([0.3, -1.2])
    x, v = tf.constant(x0), tf.constant(np.array([1.0, 2.0]))
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = dnp.sum(x ** 3)
            jvp = acc.jvp(y)
        g = tape.gradient(y, x)
        assert tape.gradient(jvp, x) is None
    np.testing.assert_allclose(jvp.numpy(), np.sum(3 * x0 ** 2 * [1.0, 2.0]), rtol=1e-15)
    np.testing.assert_allclose(acc.jvp(g).numpy(), 6 * x0 * [1.0, 2.0], rtol=1e-15)
    with tf.GradientTape() as outer:      # a tape entered before it does see them
        outer.watch(x)
        with tf.autodiff.ForwardAccumulator(x, v) as acc:
            jvp = acc.jvp(dnp.sum(x ** 3))
    np.testing.assert_allclose(outer.gradient(jvp, x).numpy(), 6 * x0 * [1.0, 2.0], rtol=1e-15)
