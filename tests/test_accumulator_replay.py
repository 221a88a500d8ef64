"""A backward pass that only a ForwardAccumulator watches (`acc.jvp(tape.gradient(y, x))`,
no tape recording) is replayed on dual numbers instead of tensors (accumulator.py,
`_replay_on_duals`). Each case here is compared with the general path (the rules run on
tensors the accumulator sees op by op), forced by switching the replay off."""

import numpy as np
import pytest

import dualtape as tf
from dualtape import dnp
from dualtape.forward import accumulator
from dualtape.reverse import tape as tape_module

RNG = np.random.default_rng(3)
W1, B1, W2 = RNG.standard_normal((4, 5)), RNG.standard_normal(5), RNG.standard_normal((5, 2))
X = RNG.standard_normal((3, 4))


def mlp(w1, b1, w2):
    h = dnp.tanh(X @ w1 + b1)
    return dnp.sum((h @ w2 - 1.0) ** 2) / 3


def sliced(w1, b1, w2):  # slices (StridedSlice's in-place path), reuse, broadcasting, mean
    h = dnp.sin(X @ w1) * b1
    return dnp.sum(h[:, 1:] * h[:, :-1]) + dnp.mean(h[0] * b1) + dnp.sum(w2 * w2 * w2)


def hvp(f, primals, tangents, *, persistent=False, numpy_tangents=False, twice=False):
    ps = [tf.constant(p) for p in primals]
    ts = [t if numpy_tangents else tf.constant(t) for t in tangents]
    with tf.autodiff.ForwardAccumulator(ps, ts) as acc:
        with tf.GradientTape(persistent=persistent) as tape:
            tape.watch(ps)
            y = f(*ps)
        g = tape.gradient(y, ps)
        if twice:
            g = tape.gradient(y, ps)
    return [x.numpy() for x in g], [None if t is None else t.numpy() for t in acc.jvp(g)], acc


def general(monkeypatch, *args, **kwargs):
    with monkeypatch.context() as m:
        m.setattr(tape_module, "accumulator_replay", [None])
        return hvp(*args, **kwargs)


@pytest.mark.parametrize("f", [mlp, sliced])
@pytest.mark.parametrize("options", [{}, {"persistent": True, "twice": True}, {"numpy_tangents": True}])
def test_dual_replay_matches_the_general_path(monkeypatch, f, options):
    primals = (W1, B1, W2)
    tangents = [RNG.standard_normal(p.shape) for p in primals]
    grads, jvps, acc = hvp(f, primals, tangents, **options)
    grads_ref, jvps_ref, acc_ref = general(monkeypatch, f, primals, tangents, **options)
    for a, b in zip(grads + jvps, grads_ref + jvps_ref):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    # the replay keeps no tangent per op of the backward pass, only one per gradient
    assert len(acc._tangents) < len(acc_ref._tangents)


def test_hvp_of_the_mlp_against_dualtape_hvp():
    primals = (W1, B1, W2)
    tangents = [RNG.standard_normal(p.shape) for p in primals]
    _, jvps, _ = hvp(mlp, primals, tangents)
    expected = tf.hvp(mlp, primals, tuple(tangents))
    for a, b in zip(jvps, expected):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def test_gradient_without_tangent_is_unconnected_and_float32_kept(monkeypatch):
    x = tf.constant(np.array([0.5, -1.0], dtype=np.float32))
    c = tf.constant(np.array([2.0, 3.0], dtype=np.float32))
    with tf.autodiff.ForwardAccumulator(c, tf.constant(np.ones(2, np.float32))) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = dnp.sum(x * 4.0)            # the gradient does not depend on c
        g = tape.gradient(y, x)
    assert g.dtype == tf.float32 and acc.jvp(g) is None
    x32 = tf.constant(np.array([0.5, -1.0], dtype=np.float32))
    with tf.autodiff.ForwardAccumulator(x32, tf.constant(np.ones(2, np.float32))) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x32)
            y = dnp.sum(dnp.sin(x32) * x32)
        g = tape.gradient(y, x32)
    t = acc.jvp(g)
    assert g.dtype == tf.float32 and t.dtype == tf.float32
    x0 = np.array([0.5, -1.0])
    np.testing.assert_allclose(t.numpy(), 2 * np.cos(x0) - x0 * np.sin(x0), rtol=1e-6)


def test_general_path_kept_where_the_replay_does_not_apply():
    x0, v0 = np.array([0.3, -0.8]), np.array([1.0, 2.0])
    x, v = tf.constant(x0), tf.constant(v0)

    @tf.custom_gradient
    def cube(t):
        return t * t * t, lambda dy: dy * 3.0 * t * t

    with tf.autodiff.ForwardAccumulator(x, v) as acc:   # a custom gradient: its function sees tensors
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = dnp.sum(cube(x))
        g = tape.gradient(y, x)
    np.testing.assert_allclose(acc.jvp(g).numpy(), 6 * x0 * v0, rtol=1e-15)
    with tf.autodiff.ForwardAccumulator(x, v) as outer:  # nested accumulators: third order
        with tf.autodiff.ForwardAccumulator(x, v) as inner:
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = dnp.sum(x ** 4)
            g = tape.gradient(y, x)
        hv = inner.jvp(g)
    np.testing.assert_allclose(hv.numpy(), 12 * x0 ** 2 * v0, rtol=1e-15)
    np.testing.assert_allclose(outer.jvp(hv).numpy(), 24 * x0 * v0 * v0, rtol=1e-15)
    with tf.autodiff.ForwardAccumulator(x, v) as acc:    # a tracked seed (output_gradients)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = dnp.sin(x)
        g = tape.gradient(y, x, output_gradients=x * 1.0)
    np.testing.assert_allclose(acc.jvp(g).numpy(), (np.cos(x0) - x0 * np.sin(x0)) * v0, rtol=1e-15)


def test_functional_grad_inside_an_accumulator(monkeypatch):
    """dualtape.grad's private tape, replayed for an accumulator around it: the gradient stays
    a tensor the accumulator tracks, and a float() of a traced value inside f still raises."""
    x0, v0 = np.array([0.3, -0.8, 1.5]), np.array([1.0, 2.0, -1.0])

    def run():
        x = tf.constant(x0)
        with tf.autodiff.ForwardAccumulator(x, tf.constant(v0)) as acc:
            g = tf.grad(lambda t: dnp.sum(dnp.exp(t) * t))(x)
            return g.numpy(), acc.jvp(g).numpy()

    fast = run()
    with monkeypatch.context() as m:
        m.setattr(tape_module, "accumulator_replay", [None])
        slow = run()
    for a, b in zip(fast, slow):
        np.testing.assert_allclose(a, b, rtol=1e-15)
    np.testing.assert_allclose(fast[1], np.exp(x0) * (x0 + 2) * v0, rtol=1e-14)
    x = tf.constant(x0)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(v0)):
        with pytest.raises(Exception, match="float"):
            tf.grad(lambda t: float(dnp.sum(t)) * dnp.sum(t))(x)
    assert accumulator._replay_on_duals is tape_module.accumulator_replay[0]
