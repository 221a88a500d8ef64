"""Vectorized jacobians (issue #4): batched-cotangent VJPs per op, and every way of
computing a jacobian agreeing with every other one.

The per-op tests are generated from the registry: an op flagged `batch_vjp=True` whose
rules mishandle a leading batch axis of cotangents fails here, whatever op it is.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dualtape as tf
from dualtape import dnp
from dualtape.reverse import jacobians
from dualtape import functional as fn
from dualtape.core.apply_rules import vjp_parts
from dualtape.registry import REGISTRY
from dualtape.testing import broadcastable_shapes, differentiable_argnums, inputs_for, numeric_jacobian

K = 3  # rows in a batch of cotangents
DIFF_OPS = [op for op in REGISTRY.values() if op.has_rules]
SAMPLED = [(op, i) for op in DIFF_OPS for i in range(len(op.samples))]
ELEMENTWISE = [op for op in DIFF_OPS if op.elementwise]
# The issue's list: these must stay batch-capable (a regression here is a 10x slowdown).
MUST_BATCH = ["MatMul", "Sum", "Mean", "Max", "Min", "Reshape", "Transpose", "Swapaxes",
              "ExpandDims", "Squeeze", "BroadcastTo", "ConcatV2", "Pack", "StridedSlice",
              "GatherV2", "Einsum", "Softmax", "LogSoftmax", "Cumsum", "PadV2", "Tile",
              "ReduceLogSumExp", "ReduceVariance", "ReduceStd", "EuclideanNorm"]


def close(actual, expected, rtol=1e-9, atol=1e-12, what=""):
    actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)


# -- per op: a batch of cotangents == the stacked single cotangents -----------------------------

def check_batched_vjp(op, args, static, seed):
    argnums = differentiable_argnums(op, args)
    if not argnums:
        pytest.skip(f"{op.name}: no differentiable floating input in this sample")
    ans = op.impl(*args, **static)
    g = np.random.default_rng(seed).standard_normal((K,) + np.shape(ans)).astype(np.result_type(ans))
    stacked = [vjp_parts(op, g[k], ans, args, static, argnums) for k in range(K)]
    batched = vjp_parts(op, g, ans, args, static, argnums, batch=K)
    for j, i in enumerate(argnums):
        what = f"[{op.name}] input {i}, batch_vjp={op.batch_vjp}, static={static}"
        if stacked[0][j] is None:
            assert batched[j] is None, what
            continue
        close(batched[j], np.stack([np.asarray(row[j]) for row in stacked]), what=what)


@pytest.mark.parametrize("op, index", SAMPLED, ids=[f"{op.name}-{i}" for op, i in SAMPLED])
def test_batched_vjp_equals_stacked_vjps_on_samples(op, index):
    args, static = op.samples[index](np.random.default_rng(index))
    args = tuple(np.asarray(a) if isinstance(a, float) else a for a in args)  # 0-d samples
    check_batched_vjp(op, args, static, seed=index)


@pytest.mark.parametrize("op", ELEMENTWISE, ids=lambda op: op.name)
@settings(max_examples=6)
@given(data=st.data())
def test_batched_vjp_equals_stacked_vjps_broadcasting(op, data):
    args, static = data.draw(inputs_for(op), label="args, static")
    check_batched_vjp(op, args, static, seed=data.draw(st.integers(0, 2**16)))


def test_issue_ops_are_batch_capable():
    slow = [name for name in MUST_BATCH if not REGISTRY[name].batch_vjp]
    assert not slow, f"these ops' VJPs lost batch_vjp=True and will loop per jacobian row: {slow}"


# -- whole jacobians: jacrev == jacfwd == tape.jacobian (pfor, loop) == gradients == FD --------

def mixed(x, y):
    """Broadcasting, then reshape, softmax, cumsum, logsumexp, reversed slicing, transpose."""
    z = dnp.tanh(x * y) + 0.5 * dnp.sin(x)
    flat = dnp.reshape(z, (-1,))
    mix = tf.nn.softmax(flat) * dnp.cumsum(flat) + dnp.logsumexp(flat) * flat[::-1]
    return dnp.transpose(dnp.reshape(mix, dnp.shape(z)))


def jacobians_by_tape(x, y, use_pfor):
    xt, yt = tf.constant(x), tf.constant(y)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([xt, yt])
        out = mixed(xt, yt)
    nested = tape.jacobian(out, {"x": xt, "rest": [yt]}, experimental_use_pfor=use_pfor)
    return tape, out, (xt, yt), (nested["x"], nested["rest"][0])


@given(shapes=broadcastable_shapes(2), seed=st.integers(0, 2**16))
def test_every_jacobian_agrees(shapes, seed):
    rng = np.random.default_rng(seed)
    x, y = (rng.standard_normal(s) for s in shapes)
    tape, out, sources, by_pfor = jacobians_by_tape(x, y, use_pfor=True)
    by_loop = jacobians_by_tape(x, y, use_pfor=False)[3]
    out_shape = tuple(out.shape)
    n = int(np.prod(out_shape))
    rows = []
    for r in range(n):  # one gradient per output element, seeded with e_r
        seed_r = np.zeros(n)
        seed_r[r] = 1
        rows.append(tape.gradient(out, list(sources), output_gradients=seed_r.reshape(out_shape),
                                  unconnected_gradients=tf.UnconnectedGradients.ZERO))
    by_rev = fn.jacrev(mixed, argnums=(0, 1))(x, y)
    by_fwd = fn.jacfwd(mixed, argnums=(0, 1))(x, y)
    by_choice = fn.jacobian(mixed, argnums=(0, 1))(x, y)
    for i, (arg, shape) in enumerate(zip((x, y), shapes)):
        full = out_shape + tuple(shape)
        numeric = numeric_jacobian(lambda a, b: np.asarray(mixed(a, b)), (x, y), argnum=i)
        stacked = np.stack([np.asarray(row[i]) for row in rows]).reshape(full) if n else np.zeros(full)
        close(by_pfor[i], numeric, rtol=1e-6, atol=1e-7, what=f"pfor vs finite differences, arg {i}")
        for name, other in (("loop", by_loop[i]), ("gradients", stacked), ("jacrev", by_rev[i]),
                            ("jacfwd", by_fwd[i]), ("jacobian", by_choice[i])):
            close(other, by_pfor[i], what=f"{name} vs pfor, arg {i}, shapes {shapes}")


@st.composite
def batch_problems(draw):
    batch = draw(st.integers(1, 4))
    ins = draw(st.lists(st.integers(1, 3), min_size=1, max_size=2).map(tuple))
    outs = draw(st.lists(st.integers(1, 3), min_size=1, max_size=2).map(tuple))
    return batch, ins, outs, draw(st.integers(0, 2**16))


@given(problem=batch_problems())
def test_batch_jacobian_is_the_target_batch_sum(problem):
    batch, ins, outs, seed = problem
    rng = np.random.default_rng(seed)
    n_in, n_out = int(np.prod(ins)), int(np.prod(outs))
    w = rng.standard_normal((n_in, n_out))
    x = tf.constant(rng.standard_normal((batch,) + ins))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = tf.nn.elu(dnp.reshape(x, (batch, n_in)) @ w)
        y = tf.nn.softmax(dnp.reshape(h, (batch,) + outs), axis=-1) * dnp.sum(x ** 2)
    full = np.asarray(tape.jacobian(y, x))  # (batch, *outs, batch, *ins)
    jb = tape.batch_jacobian(y, x)
    jb_loop = tape.batch_jacobian(y, x, experimental_use_pfor=False)
    assert tuple(jb.shape) == (batch,) + outs + ins
    # One seed row per output element j, set in every example: what batch_jacobian computes
    # is the full jacobian summed over the TARGET's batch axis. It holds even when the
    # examples are coupled (here through sum(x ** 2), TF's caveat), where it is not the
    # diagonal blocks; the next test checks the blocks where the examples are independent.
    summed = np.moveaxis(full.sum(axis=0), len(outs), 0)
    close(jb, summed, what="batch_jacobian vs the full jacobian summed over the target batch")
    close(jb_loop, jb, what="batch_jacobian loop vs pfor")


@given(problem=batch_problems())
def test_batch_jacobian_equals_diagonal_blocks_when_independent(problem):
    batch, ins, outs, seed = problem
    rng = np.random.default_rng(seed)
    n_in, n_out = int(np.prod(ins)), int(np.prod(outs))
    w = rng.standard_normal((n_in, n_out))
    x = tf.constant(rng.standard_normal((batch,) + ins))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = tf.nn.elu(dnp.reshape(x, (batch, n_in)) @ w)
        y = tf.nn.log_softmax(dnp.reshape(h, (batch,) + outs), axis=-1)
    full = np.asarray(tape.jacobian(y, x))
    idx = np.arange(batch)
    moved = np.moveaxis(full, 1 + len(outs), 1)  # (batch, batch, *outs, *ins)
    diagonal = moved[idx, idx]
    close(tape.batch_jacobian(y, x), diagonal, what="batch_jacobian vs diagonal blocks")
    off = moved[~np.eye(batch, dtype=bool)]
    assert np.all(off == 0)


# -- unconnected sources, errors, chunking, looped ops, higher order --------------------------

def test_unconnected_sources_none_and_zero():
    x, unused = tf.constant([1.0, 2.0]), tf.constant(np.ones((2, 3)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, unused])
        y = dnp.stack([x * 2.0, x ** 2, x])
    j = tape.jacobian(y, [x, unused])
    assert j[1] is None and tuple(j[0].shape) == (3, 2, 2)
    jz = tape.jacobian(y, [x, unused], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    close(jz[1], np.zeros((3, 2, 2, 3)))
    close(jz[0], j[0])
    assert tape.jacobian(y, [unused], experimental_use_pfor=False)[0] is None
    xb = tf.constant(np.ones((2, 3)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([xb, unused])
        yb = xb * 3.0
    assert tape.batch_jacobian(yb, unused) is None
    zero = tape.batch_jacobian(yb, unused, unconnected_gradients="zero")
    close(zero, np.zeros((2, 3, 3)))
    close(tape.batch_jacobian(yb, xb), np.broadcast_to(3.0 * np.eye(3), (2, 3, 3)))


def test_batch_jacobian_checks_first_dimensions_as_tf():
    x = tf.constant(np.ones((4, 3)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = dnp.reshape(x, (3, 4)) * 2.0
        v = dnp.sum(x, axis=1)
    with pytest.raises(ValueError) as info:
        tape.batch_jacobian(y, x)
    assert str(info.value) == ("Need first dimension of target shape ((3, 4)) and source shape "
                               "((4, 3)) to match.")
    with pytest.raises(ValueError, match=r"^Shape \(4,\) must have rank at least 2$"):
        tape.batch_jacobian(v, x)


def test_loop_needs_a_persistent_tape_as_tf():
    x = tf.constant(np.ones((2, 2)))
    for api in ("jacobian", "batch_jacobian"):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        with pytest.raises(RuntimeError) as info:  # TF 2.21: RuntimeError (was ValueError)
            getattr(tape, api)(y, x, experimental_use_pfor=False)
        assert str(info.value) == ("GradientTape must be created with persistent=True to compute "
                                   f"the {api} with experimental_use_pfor=False.")


def test_chunks_give_the_same_jacobian(monkeypatch):
    x = tf.constant(np.linspace(-1.0, 1.0, 6).reshape(2, 3))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = dnp.concatenate([dnp.reshape(dnp.tanh(x) @ np.ones((3, 2)), (-1,)), np.zeros(3)])
        yb = dnp.concatenate([dnp.sin(x), np.zeros((2, 2))], axis=1)
    whole, whole_b = tape.jacobian(y, x), tape.batch_jacobian(yb, x)
    monkeypatch.setattr(jacobians, "MIN_ROWS", 2)
    monkeypatch.setattr(jacobians, "CACHE_BYTES", 8 * 6 * 2)  # 2 rows of (2, 3) per sweep
    close(tape.jacobian(y, x), whole)
    close(tape.batch_jacobian(yb, x), whole_b)
    monkeypatch.setattr(jacobians, "CHUNK_ELEMENTS", 7)  # 1 row per sweep; late rows unconnected
    close(tape.jacobian(y, x), whole)
    close(tape.batch_jacobian(yb, x), whole_b)


def test_looped_ops_in_a_batched_sweep(monkeypatch):
    @tf.custom_gradient
    def cube(x):
        def grad(dy):
            return dy * 3.0 * x ** 2
        return x ** 3, grad

    x = tf.constant([0.5, -1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.nn.softmax(cube(x))
    expected = np.asarray(tape.jacobian(y, x, experimental_use_pfor=False))
    close(tape.jacobian(y, x), expected)
    monkeypatch.setattr(REGISTRY["Softmax"], "batch_vjp", False)  # now looped per row too
    close(tape.jacobian(y, x), expected)


def test_hessian_by_nested_tapes_and_jacobian_under_an_outer_tape():
    rng = np.random.default_rng(1)
    a, x0 = rng.standard_normal((4, 3)), rng.standard_normal(3)

    def loss(x):
        return dnp.sum(tf.nn.log_softmax(dnp.tanh(a @ x)) ** 2)

    x = tf.constant(x0)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            value = loss(x)
        g = inner.gradient(value, x)
    h = outer.jacobian(g, x)
    grad_np = fn.grad(loss)
    close(h, numeric_jacobian(lambda v: np.asarray(grad_np(v)), (x0,)), rtol=1e-6, atol=1e-7)
    # d/dx of a function of a jacobian: the batched rules recorded on the outer tape
    results = []
    for use_pfor in (True, False):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape(persistent=True) as inner:
                inner.watch(x)
                y = tf.nn.softmax(dnp.tanh(a @ x) * x[0])
            j = inner.jacobian(y, x, experimental_use_pfor=use_pfor)
            s = dnp.sum(j ** 2)
        results.append(outer.gradient(s, x))
    close(results[0], results[1])


@pytest.mark.parametrize("shape_in, shape_out", [((2,), (5, 3)), ((4, 3), (2,))])
def test_functional_jacobian_picks_a_mode_and_agrees(shape_in, shape_out):
    rng = np.random.default_rng(2)
    w = rng.standard_normal(shape_out + shape_in)
    axes = tuple(range(-len(shape_in), 0))

    def f(x):
        return dnp.sin(dnp.sum(w * x, axis=axes))

    x = rng.standard_normal(shape_in)
    expected = np.cos(np.sum(w * x, axis=axes))[(...,) + (None,) * len(shape_in)] * w
    close(fn.jacobian(f)(x), expected)
    close(fn.jacrev(f)(x), expected)


def test_a_float32_source_keeps_its_dtype_through_float64_constants():
    """NumPy promotes float32 times a float64 constant to float64 inside the recorded ops; the
    jacobians, like tape.gradient, are of the source's dtype (TF: a gradient has its
    source's dtype), with the same values."""
    x32 = np.arange(6, dtype=np.float32).reshape(3, 2) / 7
    w = np.linspace(-1.0, 1.0, 8).reshape(2, 4)  # float64
    x = tf.constant(x32)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.tanh(dnp.matmul(x, w))  # float64, and not a chain the forward sweep takes
    assert y.dtype == tf.float64
    assert tape.gradient(y, x).dtype == tf.float32
    jac, batch = tape.jacobian(y, x), tape.batch_jacobian(y, x)
    assert jac.dtype == tf.float32 and batch.dtype == tf.float32
    slope = 1 - np.tanh(x32.astype(np.float64) @ w) ** 2  # (3, 4)
    want = np.einsum("bo,io->boi", slope, w)  # d y[b, o] / d x[b, i]
    np.testing.assert_allclose(batch.numpy(), want.astype(np.float32), rtol=2e-7)
    np.testing.assert_allclose(np.einsum("bobi->boi", jac.numpy()), want, rtol=2e-7)
