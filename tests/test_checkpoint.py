"""Checkpointing: `recompute_grad` / `checkpoint` at run time, `grad(f, checkpoint=...)` in the
transformer (issue 14 item 2). Checkpointed gradients must equal the unchecked ones."""

import math
import tracemalloc

import numpy as np
import pytest

import dualtape
import dualtape as tf
import dualtape.transforms as dt
from dualtape.transforms.frontend.parse import TransformError
from dualtape.transforms.runtime.revolve import Checkpoints

CALLS = [0]


def mlp_block(x, w1, w2):
    CALLS[0] += 1
    return np.tanh(np.tanh(x @ w1) @ w2)


def loop_block(x):
    CALLS[0] += 1
    for _ in range(100):
        x = x + 0.01 * np.sin(x) * x
    return x


def fd_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 4))
W1, W2 = RNG.normal(size=(4, 5)) * 0.5, RNG.normal(size=(5, 4)) * 0.5


# -- run time: recompute_grad (TF) and checkpoint / remat (JAX) ---------------------------------------

def test_recompute_grad_on_the_tape_recomputes_and_records_one_entry():
    block = tf.recompute_grad(mlp_block)
    x, w1, w2 = (tf.constant(v) for v in (X, W1, W2))
    CALLS[0] = 0
    with tf.GradientTape() as tape:
        tape.watch([x, w1, w2])
        loss = tf.reduce_sum(block(x, w1, w2) ** 2)
    assert CALLS[0] == 1 and len(tape._entries) == 3  # the block, the square, the sum
    grads = tape.gradient(loss, [x, w1, w2])
    assert CALLS[0] == 2  # the forward ran again in the backward pass
    with tf.GradientTape() as tape:
        tape.watch([x, w1, w2])
        loss = tf.reduce_sum(mlp_block(x, w1, w2) ** 2)
    assert len(tape._entries) > 3
    for got, want in zip(grads, tape.gradient(loss, [x, w1, w2])):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_recompute_grad_reaches_variables_read_inside():
    w = tf.Variable(np.array([0.5, -0.7]))

    @tf.recompute_grad
    def block(x):
        return tf.tanh(x * w) * w

    x = tf.constant(np.array([0.3, 1.1]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(block(x) ** 2)
    gx, gw = tape.gradient(y, [x, w])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum((tf.tanh(x * w) * w) ** 2)
    ex, ew = tape.gradient(y, [x, w])
    np.testing.assert_allclose(gx.numpy(), ex.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gw.numpy(), ew.numpy(), rtol=1e-12)


def test_checkpoint_matches_plain_gradient_and_differences_on_a_100_step_loop():
    x = np.array([0.3, -0.8, 1.2])

    def loss(x):
        return np.sum(dualtape.checkpoint(loop_block)(x) ** 2)

    def plain(x):
        return np.sum(loop_block(x) ** 2)

    CALLS[0] = 0
    g = dualtape.grad(loss)(x)
    assert CALLS[0] == 2
    np.testing.assert_allclose(g, dualtape.grad(plain)(x), rtol=1e-12)
    np.testing.assert_allclose(g, fd_grad(plain, x), rtol=1e-6)


def test_checkpoint_mlp_against_differences_and_remat_alias():
    assert dualtape.remat is dualtape.checkpoint
    f = dualtape.remat(lambda w1: np.sum(mlp_block(X, w1, W2)), prevent_cse=False, policy=object())
    np.testing.assert_allclose(dualtape.grad(f)(W1), fd_grad(lambda w: np.sum(mlp_block(X, w, W2)), W1),
                               rtol=1e-6)


def test_nested_checkpoints_and_second_order():
    inner = dualtape.checkpoint(lambda x: np.sin(x) * x)
    outer = dualtape.checkpoint(lambda x: inner(inner(x)) + x)

    def f(x):
        return np.sum(outer(x) ** 2)

    def plain(x):
        y = np.sin(x) * x
        return np.sum((np.sin(y) * y + x) ** 2)

    x = np.array([0.4, -1.1])
    np.testing.assert_allclose(dualtape.grad(f)(x), dualtape.grad(plain)(x), rtol=1e-12)
    np.testing.assert_allclose(dualtape.hessian(f)(x), dualtape.hessian(plain)(x), rtol=1e-12)
    gg = dualtape.grad(lambda x: np.sum(dualtape.grad(f)(x) ** 2))(x)
    np.testing.assert_allclose(gg, dualtape.grad(lambda x: np.sum(dualtape.grad(plain)(x) ** 2))(x), rtol=1e-12)
    v = np.array([1.0, 0.5])
    np.testing.assert_allclose(dualtape.hvp(f, (x,), (v,)), dualtape.hvp(plain, (x,), (v,)), rtol=1e-12)


def test_checkpoint_is_transparent_to_forward_mode():
    f = dualtape.checkpoint(loop_block)
    x, v = np.array([0.3, 0.9]), np.array([1.0, -2.0])
    y, t = dualtape.jvp(f, (x,), (v,))
    y0, t0 = dualtape.jvp(loop_block, (x,), (v,))
    np.testing.assert_allclose(y, y0, rtol=1e-14)
    np.testing.assert_allclose(t, t0, rtol=1e-12)


def test_checkpoint_static_argnums():
    f = dualtape.checkpoint(lambda x, k: np.sum(np.sin(x) ** k), static_argnums=(1,))
    x = np.array([0.2, 0.7])
    np.testing.assert_allclose(dualtape.grad(lambda x: f(x, 3))(x), 3 * np.sin(x) ** 2 * np.cos(x), rtol=1e-12)


def test_recompute_grad_keeps_the_tape_small():
    """A 2000-step block on the tape: one record instead of thousands."""
    def long_block(x):
        for _ in range(2000):
            x = x + 0.001 * tf.sin(x)
        return x

    x = tf.constant(np.array([0.5]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        tracemalloc.start()
        y = tf.recompute_grad(long_block)(x)
        _, peak_checkpointed = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert len(tape._entries) == 1
    with tf.GradientTape() as plain_tape:
        plain_tape.watch(x)
        tracemalloc.start()
        y0 = long_block(x)
        _, peak_plain = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert len(plain_tape._entries) >= 4000
    assert peak_checkpointed * 10 < peak_plain
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), plain_tape.gradient(y0, x).numpy(), rtol=1e-12)


# -- the transformer: grad(f, checkpoint=...) ----------------------------------------------------------

SPECS = ["sqrt", ("sqrt", 7), "binomial", ("binomial", 1), ("binomial", 3), "revolve", ("binomial", 2, 4)]


def scalar_loop(a, n):
    for i in range(n):
        a = a + 0.01 * math.sin(a) * a
    return a


def array_loop(x, w, n):
    s = 0.0
    for i in range(n):
        x = np.tanh(x * w) + 0.1 * x
        s = s + np.sum(x) * 0.5
    return s + np.sum(x ** 2)


def subscript_loop(x, n):
    y = np.zeros(3)
    for i in range(n):
        y[i % 3] = y[i % 3] + np.sin(x[i % 2]) * x[1]
        x = x * 0.99 + 0.01 * y[:2]
    return np.sum(y ** 2) + np.sum(x)


def nested_loop(x, n):
    for i in range(n):
        for j in range(3):
            x = x + 0.05 * np.cos(x) * j
        x = x * 0.9
    return np.sum(x * x)


def two_loops_and_while(x, n):
    k = 0
    while k < 3:
        x = np.sin(x) + x
        k = k + 1
    for i in range(n):
        x = x * 0.97 + 0.02 * np.sin(x)
    for i in range(n + 2):
        x = x + 0.01 * x * x
    return np.sum(x)


def defined_in_loop(x, n):
    for i in range(n):
        y = x * 2.0
        x = x + 0.1 * np.sin(y)
    return np.sum(x + y * i)  # y and i: their values from the last iteration


def breaking_loop(x, n):
    for i in range(n):
        x = x * 1.01
        if np.sum(x) > 100.0:
            break
    return np.sum(x)


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("n", [0, 1, 2, 10, 53])
def test_scalar_and_array_carries_match_the_unchecked_gradient(spec, n):
    np.testing.assert_allclose(dt.grad(scalar_loop, checkpoint=spec)(0.7, n), dt.grad(scalar_loop)(0.7, n),
                               rtol=1e-12)
    x, w = np.array([0.3, -0.5, 0.9]), np.array([1.1, 0.7, -0.4])
    got = dt.grad(array_loop, wrt=(0, 1), checkpoint=spec)(x, w, n)
    want = dt.grad(array_loop, wrt=(0, 1))(x, w, n)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("fn", [subscript_loop, nested_loop, two_loops_and_while, defined_in_loop])
def test_subscript_writes_nested_and_several_loops(spec, fn):
    x = np.array([0.3, -0.6])
    for n in (1, 11, 40):
        np.testing.assert_allclose(dt.grad(fn, checkpoint=spec)(x.copy(), n), dt.grad(fn)(x.copy(), n),
                                   rtol=1e-12, atol=1e-300)
    g = dt.grad(fn, checkpoint=spec)(x.copy(), 11)
    np.testing.assert_allclose(g, fd_grad(lambda v: fn(v.copy(), 11), x), rtol=1e-6)


def test_vjp_takes_checkpoint_too():
    x = np.array([0.3, -0.6])
    np.testing.assert_allclose(dt.vjp(nested_loop, checkpoint="sqrt")(x, 20, 2.0), dt.vjp(nested_loop)(x, 20, 2.0),
                               rtol=1e-12)


def test_the_source_shows_the_scheme_and_the_fallbacks():
    src = dt.grad(two_loops_and_while, checkpoint="sqrt").source
    assert "checkpoint_schedule(len(_range1), 'sqrt')" in src
    assert ".backward():" in src and "_ckpt.load(_lo)" in src
    assert "while k < 3:  (not checkpointed: a while loop's trip count is not known in advance" in src
    src = dt.grad(breaking_loop, checkpoint=("binomial", 4)).source
    assert "(not checkpointed: it may exit early" in src
    assert "('binomial', 4)" in dt.grad(nested_loop, checkpoint=("binomial", 4)).source
    x = np.array([0.3, 0.4])
    np.testing.assert_allclose(dt.grad(breaking_loop, checkpoint="sqrt")(x, 500), dt.grad(breaking_loop)(x, 500),
                               rtol=1e-12)


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match=r"\[transforms.grad\] checkpoint='often'"):
        dt.grad(scalar_loop, checkpoint="often")
    with pytest.raises(ValueError, match="not a checkpointing schedule"):
        dt.grad(scalar_loop, checkpoint=("binomial", 0))
    with pytest.raises(ValueError, match="not a checkpointing schedule"):
        dt.grad(scalar_loop, checkpoint=("sqrt", 3, 4))
    with pytest.raises(TransformError, match="cannot be combined with jit"):
        dt.grad(scalar_loop, checkpoint="sqrt", jit=True)


@pytest.mark.parametrize("spec, same", [(True, "sqrt"), (500, ("binomial", 500)), (3, ("binomial", 3)),
                                        (np.int64(4), ("binomial", 4)), (["binomial", 2], ("binomial", 2))])
def test_true_and_an_int_are_accepted(spec, same):
    """checkpoint=True is 'sqrt', an int s the binomial schedule with s states (issue 19: both
    crashed in the option parser, `tuple(spec)`)."""
    x, w = np.array([0.3, -0.5, 0.9]), np.array([1.1, 0.7, -0.4])
    for n in (0, 7, 60):
        np.testing.assert_allclose(dt.grad(scalar_loop, checkpoint=spec)(0.7, n), dt.grad(scalar_loop)(0.7, n),
                                   rtol=1e-12)
        for a, b in zip(dt.grad(array_loop, wrt=(0, 1), checkpoint=spec)(x, w, n),
                        dt.grad(array_loop, wrt=(0, 1))(x, w, n)):
            np.testing.assert_allclose(a, b, rtol=1e-12)
    assert dt.grad(scalar_loop, checkpoint=spec).source == dt.grad(scalar_loop, checkpoint=same).source


@pytest.mark.parametrize("spec", [0, -2, 2.5, ("binomial", True), ("binomial", 2.0), {"sqrt": 1}, object()])
def test_other_spellings_are_refused_naming_the_accepted_ones(spec):
    with pytest.raises(ValueError, match=r"(?s)not a checkpointing schedule.*'sqrt' \(or True\).*\(or the int s\)"):
        dt.grad(scalar_loop, checkpoint=spec)


def _peak(fn, *args, warm=3):
    fn(args[0], warm)  # compile this specialization (and warm its caches) first: not the loop's memory
    tracemalloc.start()
    try:
        out = fn(*args)
        return tracemalloc.get_traced_memory()[1], out
    finally:
        tracemalloc.stop()


def test_saved_states_grow_like_sqrt_n_not_n():
    n = 100_000
    plain, g0 = _peak(dt.grad(scalar_loop), 0.5, n)
    sqrt, g1 = _peak(dt.grad(scalar_loop, checkpoint="sqrt"), 0.5, n)
    binom, g2 = _peak(dt.grad(scalar_loop, checkpoint=("binomial", 20)), 0.5, 2000, warm=2000)
    assert math.isclose(g0, g1, rel_tol=1e-12)
    assert math.isclose(g2, dt.grad(scalar_loop)(0.5, 2000), rel_tol=1e-12)
    assert sqrt * 20 < plain, (sqrt, plain)
    assert binom < 20_000, binom
    schedule = Checkpoints(n, "sqrt")
    for action, lo, _ in schedule.forward():
        if action == "save":
            schedule.save(lo, (0.0,))
    assert schedule.max_states == math.isqrt(n) + (n % math.isqrt(n) > 0)
    schedule = Checkpoints(n, ("binomial", 8))
    schedule.save(0, (0.0,))
    steps = {"advance": 0, "reverse": 0}
    for action, lo, hi in schedule.backward():
        if action == "save":
            schedule.save(lo, (0.0,))
        elif action in steps:
            steps[action] += hi - lo
    assert schedule.max_states <= 9 and steps["reverse"] == n
    # beta(8, 11) = 75582 < n <= beta(8, 12) = 125970: each iteration runs again at most 12 times
    assert steps["advance"] <= 12 * n


def test_checkpoint_differentiates_tensors_it_closes_over():
    x, w = np.array([0.3, -0.4]), np.array([1.2, 0.8])

    def loss(x, w, checkpointed):
        def step(x):
            return x + 0.1 * np.tanh(w * x)
        step = dualtape.checkpoint(step) if checkpointed else step
        for _ in range(5):
            x = step(x)
        return np.sum(x ** 2)

    got = dualtape.grad(lambda x, w: loss(x, w, True), argnums=(0, 1))(x, w)
    want = dualtape.grad(lambda x, w: loss(x, w, False), argnums=(0, 1))(x, w)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12)
