"""tape.batch_jacobian's forward sweep (reverse/forward_jacobian.py): chains of elementwise
ops and `x @ w` give the reverse sweep's jacobians (within a few float32 ulp) and the finite
differences' (float64), in the source's dtype; anything else falls back to the reverse sweep
with its semantics (overrides, custom gradients, recording tapes, unconnected sources)."""

import numpy as np
import pytest

import dualtape as tf
from dualtape import dnp
from dualtape.registry import unregister_gradient
from dualtape.reverse import forward_jacobian
from dualtape.testing import numeric_jacobian


def counted(monkeypatch, name):
    """Whether each call of forward_jacobian.<name> gave a result (False: it fell back)."""
    taken = []
    original = getattr(forward_jacobian, name)

    def counting(*args):
        jac = original(*args)
        taken.append(jac is not None)
        return jac
    monkeypatch.setattr(forward_jacobian, name, counting)
    return taken


@pytest.fixture
def sweeps(monkeypatch):
    return counted(monkeypatch, "batch_jacobian")


def reverse_only(monkeypatch):
    monkeypatch.setattr(forward_jacobian, "batch_jacobian", lambda *args: None)


def layers(sizes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [((rng.standard_normal((m, k)) / np.sqrt(m)).astype(dtype), (rng.standard_normal(k) * 0.5).astype(dtype))
            for m, k in zip(sizes[:-1], sizes[1:])]


def mlp(params, activations):
    def f(x):
        for (w, b), act in zip(params, activations):
            x = act(tf.matmul(x, w) + b)
        return x
    return f


def residual(params):
    def f(x):
        (w1, b1), (w2, b2) = params
        h = tf.nn.elu(tf.matmul(x, w1) + b1)
        h = h + tf.tanh(h) * 0.5  # two reads of h: a residual branch
        return tf.sigmoid(tf.matmul(h, w2) + b2) * h ** 2  # a dense and a factored input
    return f


def batch_jacobian(f, x, **options):
    x = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.batch_jacobian(y, x, **options)


def per_example_differences(f, x):
    full = numeric_jacobian(lambda v: np.asarray(f(tf.constant(v))), (x,))  # (batch, *outs, batch, *ins)
    idx = np.arange(x.shape[0])
    return np.moveaxis(full, 1 + full.ndim // 2 - 1, 1)[idx, idx]


ELU, TANH, SOFTPLUS = tf.nn.elu, tf.tanh, tf.nn.softplus
PROBLEMS = {
    "elu MLP 3-5-4": ((3, 5, 4), [ELU, ELU]),
    "3 layers (G > batch, then a dense matmul)": ((2, 6, 5, 7), [TANH, SOFTPLUS, ELU]),
    "wide hidden layer": ((2, 9, 3), [ELU, TANH]),
    "one layer": ((3, 4), [TANH]),
}


@pytest.mark.parametrize("name", PROBLEMS)
def test_forward_sweep_agrees_with_reverse_and_differences(name, sweeps, monkeypatch):
    sizes, activations = PROBLEMS[name]
    rng = np.random.default_rng(1)
    x64 = rng.standard_normal((4, sizes[0]))
    f64 = mlp(layers(sizes, np.float64), activations)
    jac = batch_jacobian(f64, x64)
    assert sweeps == [True] and jac.dtype == tf.float64 and tuple(jac.shape) == (4, sizes[-1], sizes[0])
    np.testing.assert_allclose(jac.numpy(), per_example_differences(f64, x64), rtol=1e-6, atol=1e-8)
    f32 = mlp(layers(sizes, np.float32), activations)
    fast = batch_jacobian(f32, x64.astype(np.float32))
    assert fast.dtype == tf.float32 and fast.numpy().dtype == np.float32
    reverse_only(monkeypatch)
    slow = batch_jacobian(f32, x64.astype(np.float32))
    np.testing.assert_allclose(fast.numpy(), slow.numpy(), rtol=4e-6, atol=1e-6)
    np.testing.assert_allclose(batch_jacobian(f64, x64).numpy(), jac.numpy(), rtol=1e-12, atol=1e-14)


def test_residual_branches_and_higher_rank_sources(sweeps, monkeypatch):
    rng = np.random.default_rng(2)
    f = residual(layers((4, 5, 5), np.float64))
    x = rng.standard_normal((3, 4))
    jac = batch_jacobian(f, x)
    np.testing.assert_allclose(jac.numpy(), per_example_differences(f, x), rtol=1e-6, atol=1e-8)

    def g(v):  # (batch, 2, 3) source: elementwise ops keep its shape
        return tf.tanh(v) * dnp.exp(v * 0.5) + v
    v = rng.standard_normal((2, 2, 3))
    jv = batch_jacobian(g, v)
    assert tuple(jv.shape) == (2, 2, 3, 2, 3)
    expected = per_example_differences(g, v.reshape(2, 6).reshape(2, 2, 3))
    np.testing.assert_allclose(jv.numpy(), expected, rtol=1e-6, atol=1e-8)
    assert sweeps == [True, True]
    reverse_only(monkeypatch)
    np.testing.assert_allclose(batch_jacobian(f, x).numpy(), jac.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(batch_jacobian(g, v).numpy(), jv.numpy(), rtol=1e-12, atol=1e-14)


def test_chunked_directions(sweeps, monkeypatch):
    params = layers((5, 6, 7), np.float64)
    f = mlp(params, [ELU, TANH])
    g = lambda v: mlp(params, [ELU, TANH])(tf.tanh(v))  # noqa: E731 (a scale before the first matmul)
    x = np.random.default_rng(3).standard_normal((3, 5))
    whole, whole_g = batch_jacobian(f, x).numpy(), batch_jacobian(g, x).numpy()
    monkeypatch.setattr("dualtape.reverse.jacobians.CHUNK_ELEMENTS", 3 * 7 * 2)  # 2 directions a sweep
    np.testing.assert_allclose(batch_jacobian(f, x).numpy(), whole, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(batch_jacobian(g, x).numpy(), whole_g, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(whole_g, per_example_differences(g, x), rtol=1e-6, atol=1e-8)
    assert sweeps == [True] * 4


def test_falls_back_where_it_does_not_apply(sweeps):
    rng = np.random.default_rng(4)
    params = layers((3, 4, 5), np.float64)
    x = rng.standard_normal((2, 3))
    checks = {
        "softmax (mixes features: no diagonal)": lambda v: tf.nn.softmax(mlp(params, [ELU, TANH])(v)),
        "more inputs than outputs": lambda v: tf.tanh(tf.matmul(v, params[0][0][:, :2])),
        "w @ x (mixes the examples)": lambda v: tf.tanh(tf.matmul(np.eye(2)[::-1], v)),
        "a broadcast elementwise input": lambda v: tf.tanh(tf.matmul(v, np.ones((3, 1))) * v),
        "a float64 intermediate from a float32 source": None,
        "a 0-d intermediate (a full sum)": lambda v: tf.tanh(v) * dnp.sum(v ** 2),
    }
    for name, f in checks.items():
        if f is None:
            x32 = x.astype(np.float32)
            jac = batch_jacobian(lambda v: tf.tanh(dnp.multiply(v, np.full(3, 0.5))), x32)  # (NumPy's promotion)
            assert jac.dtype == tf.float32, name
            np.testing.assert_allclose(jac.numpy(), 0.5 * (1 - np.tanh(0.5 * x32) ** 2)[:, :, None] * np.eye(3),
                                       rtol=1e-6, err_msg=name)
            continue
        jac = batch_jacobian(f, x).numpy()
        if name.startswith("w @ x"):  # TF's meaning: the jacobian summed over the target's batch
            y = np.tanh(x[::-1])
            np.testing.assert_allclose(jac, (1 - y * y)[::-1, :, None] * np.eye(3), rtol=1e-12, err_msg=name)
            continue
        if name.startswith("a 0-d"):  # (it couples the examples too)
            y, s = np.tanh(x), np.sum(x ** 2)
            expected = (1 - y * y)[:, :, None] * s * np.eye(3) + np.sum(y, axis=0)[None, :, None] * 2 * x[:, None, :]
            np.testing.assert_allclose(jac, expected, rtol=1e-12, err_msg=name)
            continue
        np.testing.assert_allclose(jac, per_example_differences(f, x), rtol=1e-6, atol=1e-8, err_msg=name)
    assert sweeps == [False] * len(checks)


def test_overrides_and_custom_gradients_keep_their_meaning(sweeps):
    params = layers((3, 4, 5), np.float64)
    x = np.random.default_rng(5).standard_normal((2, 3))

    @tf.RegisterGradient("Elu")
    def _doubled(op, grad):  # (a deliberately different gradient: the jacobian must follow it)
        return 2.0 * grad

    try:
        jac = batch_jacobian(mlp(params, [ELU, TANH]), x).numpy()
    finally:
        unregister_gradient("Elu")
    w1, b1 = params[0]
    w2, b2 = params[1]
    h = np.asarray(tf.nn.elu(x @ w1 + b1))
    slope = 1 - np.tanh(h @ w2 + b2) ** 2
    expected = slope[:, :, None] * np.einsum("gf,jf->gj", w2.T, 2.0 * w1)[None]
    np.testing.assert_allclose(jac, expected, rtol=1e-12, atol=1e-14)

    @tf.custom_gradient
    def clipped(v):
        def grad(dy):
            return dy * 0.0  # a straight zero: no jacobian flows through
        return tf.tanh(v), grad

    zero = batch_jacobian(lambda v: clipped(tf.matmul(v, w1) + b1), x).numpy()
    np.testing.assert_array_equal(zero, np.zeros((2, 4, 3)))
    assert sweeps == [False, False]


def test_tapes_and_unconnected_sources(sweeps):
    params = layers((3, 4, 4), np.float64)
    f = mlp(params, [ELU, TANH])
    x = tf.constant(np.random.default_rng(6).standard_normal((2, 3)))
    other = tf.constant(np.ones((2, 3)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, other])
        y = f(x)
    first = tape.batch_jacobian(y, x).numpy()
    np.testing.assert_array_equal(tape.batch_jacobian(y, x).numpy(), first)  # persistent: twice
    assert tape.batch_jacobian(y, other) is None
    np.testing.assert_array_equal(tape.batch_jacobian(y, other, unconnected_gradients="zero").numpy(),
                                  np.zeros((2, 4, 3)))
    unwatched = tf.constant(np.ones((2, 3)))
    with tf.GradientTape() as tape:
        tape.watch(x)
        z = f(x) + tf.matmul(unwatched, params[1][0][:3]) * 0.0
    assert tape.batch_jacobian(z, unwatched) is None
    assert sweeps == [True, True, False, False, False]
    with tf.GradientTape() as outer:  # a recording tape sees the reverse sweep's ops
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        s = dnp.sum(inner.batch_jacobian(y, x) ** 2)
    assert sweeps[-1] is False
    assert outer.gradient(s, x) is not None


def test_a_dense_jacobian_read_twice_is_not_scaled_in_place(sweeps):
    (w1, b1), (w2, b2) = layers((3, 4, 5), np.float64, seed=7)

    def f(v):
        d = tf.matmul(tf.nn.elu(tf.matmul(v, w1) + b1), w2)  # dense jacobians, read twice below
        z = tf.tanh(d + b2)  # (the Add hands d's jacobians on as they are)
        return z * tf.sigmoid(d)
    x = np.random.default_rng(8).standard_normal((3, 3))
    np.testing.assert_allclose(batch_jacobian(f, x).numpy(), per_example_differences(f, x), rtol=1e-6, atol=1e-8)
    assert sweeps == [True]


def test_an_identity_step_hands_on_a_copy_of_a_dense_jacobian_read_again(sweeps):
    """(d + b2) hands d's dense jacobians on; d is read again, so the tanh after the Add
    (which scales its input's jacobians in place when no other step reads them) must
    scale a copy."""
    (w1, b1), (w2, b2) = layers((3, 4, 5), np.float64, seed=11)

    def f(v):
        d = tf.matmul(tf.tanh(tf.matmul(v, w1) + b1), w2)
        return tf.tanh(d + b2) + d * 0.5
    x = np.random.default_rng(12).standard_normal((3, 3))
    np.testing.assert_allclose(batch_jacobian(f, x).numpy(), per_example_differences(f, x), rtol=1e-6, atol=1e-8)
    assert sweeps == [True]


@pytest.mark.parametrize("batch", [3, 40])
def test_batch_last_dense_jacobians_in_deep_float32_chains(batch, sweeps, monkeypatch):
    """Four layers, float32: the first matmul takes the identity's columns, the second the
    products' GEMM (batch >= G) or the dense one (batch < G), the later ones one GEMM over
    the (k, F, batch) jacobians, direction first. The (batch, outs, ins) result is float32 (no
    float64 inside) and equals the reverse sweep's, and the finite differences in float64."""
    sizes = (5, 8, 6, 7, 9)
    rng = np.random.default_rng(13)
    x64 = rng.standard_normal((batch, sizes[0]))
    f64 = mlp(layers(sizes, np.float64, seed=14), [ELU, TANH, SOFTPLUS, ELU])
    jac64 = batch_jacobian(f64, x64)
    np.testing.assert_allclose(jac64.numpy(), per_example_differences(f64, x64), rtol=1e-6, atol=1e-8)
    f32 = mlp(layers(sizes, np.float32, seed=14), [ELU, TANH, SOFTPLUS, ELU])
    fast = batch_jacobian(f32, x64.astype(np.float32))
    assert fast.dtype == tf.float32 and fast.numpy().dtype == np.float32
    assert fast.numpy().shape == (batch, sizes[-1], sizes[0])
    assert sweeps == [True, True]
    reverse_only(monkeypatch)
    slow = batch_jacobian(f32, x64.astype(np.float32))
    np.testing.assert_allclose(fast.numpy(), slow.numpy(), rtol=4e-6, atol=1e-6)
    np.testing.assert_allclose(fast.numpy(), jac64.numpy(), rtol=2e-4, atol=1e-5)


def test_chunked_batch_last_pieces_join_on_the_directions(sweeps, monkeypatch):
    """Directions in sweeps of 2 (the last one of 1) with dense jacobians after a second
    matmul: the pieces join on their direction axis, and a higher-rank target keeps its
    shape."""
    params = layers((5, 4, 6), np.float32, seed=15)
    x = np.random.default_rng(16).standard_normal((3, 5)).astype(np.float32)

    def f(v):
        return tf.reshape(mlp(params, [TANH, ELU])(v), (3, 2, 3))
    whole = batch_jacobian(lambda v: mlp(params, [TANH, ELU])(v), x).numpy()
    monkeypatch.setattr("dualtape.reverse.jacobians.CHUNK_ELEMENTS", 3 * 6 * 2)
    chunked = batch_jacobian(lambda v: mlp(params, [TANH, ELU])(v), x).numpy()
    np.testing.assert_allclose(chunked, whole, rtol=1e-6, atol=1e-7)
    assert chunked.dtype == np.float32
    shaped = batch_jacobian(f, x)  # (a reshape: not an op this sweep knows)
    np.testing.assert_allclose(shaped.numpy(), whole.reshape(3, 2, 3, 5), rtol=4e-6, atol=1e-6)
    assert sweeps == [True, True, False]


# -- tape.jacobian of one source: the same sweep with no batch axis -----------------------------

@pytest.fixture
def full_sweeps(monkeypatch):
    return counted(monkeypatch, "jacobian")


def full_jacobian(f, x, sources=None):
    x = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.jacobian(y, x if sources is None else sources(x))


def test_full_jacobian_by_the_forward_sweep(full_sweeps, monkeypatch):
    rng = np.random.default_rng(9)
    w, w2 = rng.standard_normal((6, 4)), rng.standard_normal((5, 6))
    b = rng.standard_normal((6, 1))
    def like(a, v):  # (dnp.matmul promotes as NumPy does: the weights in the source's dtype)
        return a.astype(v.dtype.as_numpy_dtype)

    cases = {
        "tanh(W @ x + b), a column": (lambda v: tf.tanh(tf.matmul(w, v) + b), (4, 1)),
        "W @ x of a vector, twice": (lambda v: tf.nn.elu(dnp.matmul(like(w2, v), tf.tanh(dnp.matmul(like(w, v), v)))),
                                     (4,)),
        "w @ x, a column with a scale first": (lambda v: tf.sigmoid(tf.matmul(w, tf.tanh(v))), (4, 1)),
        "x @ w, a row, two layers": (lambda v: tf.tanh(tf.matmul(tf.nn.elu(tf.matmul(v, w.T)), w2.T)), (1, 4)),
        "x @ w, a row, one layer": (lambda v: tf.nn.softplus(tf.matmul(v, w.T)), (1, 4)),
        "x @ w of a vector": (lambda v: tf.tanh(dnp.matmul(v, like(w.T, v))), (4,)),
    }
    expected_taken = []
    for name, (f, shape) in cases.items():
        x = rng.standard_normal(shape)
        jac = full_jacobian(f, x)
        expected_taken.append(True)
        assert full_sweeps == expected_taken, name
        numeric = numeric_jacobian(lambda v: np.asarray(f(tf.constant(v))), (x,))
        np.testing.assert_allclose(jac.numpy(), numeric, rtol=1e-6, atol=1e-8, err_msg=name)
        f32 = full_jacobian(f, x.astype(np.float32))
        assert f32.dtype == tf.float32, name
        expected_taken.append(True)
        with monkeypatch.context() as m:
            m.setattr(forward_jacobian, "jacobian", lambda *args: None)
            reverse = full_jacobian(f, x)
            reverse32 = full_jacobian(f, x.astype(np.float32))
        np.testing.assert_allclose(jac.numpy(), reverse.numpy(), rtol=1e-12, atol=1e-14, err_msg=name)
        np.testing.assert_allclose(f32.numpy(), reverse32.numpy(), rtol=4e-6, atol=1e-6, err_msg=name)


def test_full_jacobian_falls_back(full_sweeps):
    rng = np.random.default_rng(10)
    w = rng.standard_normal((6, 4))
    x = rng.standard_normal((4, 1))
    listed = full_jacobian(lambda v: tf.tanh(tf.matmul(w, v)), x, sources=lambda v: [v])
    assert isinstance(listed, list) and tuple(listed[0].shape) == (6, 1, 4, 1)  # (a list: never asked)
    wide = full_jacobian(lambda v: tf.tanh(tf.matmul(w.T, v)), rng.standard_normal((6, 1)))
    assert tuple(wide.shape) == (4, 1, 6, 1)  # (more inputs than outputs)

    def sliced(v):
        return tf.tanh(tf.matmul(w, v))[:5]

    def rows(v):  # (x @ w of several rows: a block-diagonal jacobian, left to the reverse sweep)
        return tf.nn.elu(tf.matmul(v, w.T))
    for f, x0 in ((sliced, x), (rows, rng.standard_normal((3, 4)))):
        numeric = numeric_jacobian(lambda v: np.asarray(f(tf.constant(v))), (x0,))
        np.testing.assert_allclose(full_jacobian(f, x0).numpy(), numeric, rtol=1e-6, atol=1e-8)
    assert full_sweeps == [False, False, False]
