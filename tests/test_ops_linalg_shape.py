"""Per-op checks of the linalg, shape, indexing and cast primitives, from their samples.

For each op and sample: the JVP against central differences of the NumPy impl, the VJP
against the JVP by the dot-product identity, float32 in -> float32 out, the rules run on
tensors, and second order through nested tapes. Then tape tests through the public API.
"""

import numpy as np
import pytest

import dualtape as tf
from dualtape import dnp
from dualtape.core.apply_rules import jvp_output, vjp_parts
from dualtape.registry import REGISTRY

OP_NAMES = ["MatMul", "Einsum", "MatrixSolve", "MatrixInverse", "MatrixDeterminant",
            "LogMatrixDeterminant", "Cholesky", "Reshape", "BroadcastTo", "Transpose", "Swapaxes",
            "ExpandDims", "Squeeze", "ConcatV2", "Pack", "PadV2", "Tile", "StridedSlice",
            "StridedSliceGrad", "GatherV2", "Cast"]

SECOND_ORDER_NONZERO = {"MatrixSolve", "MatrixInverse", "MatrixDeterminant", "LogMatrixDeterminant",
                        "Cholesky"}

CASES = [(name, i) for name in OP_NAMES for i in range(len(REGISTRY[name].samples))]


def _draw(name, i, seed=0):
    op = REGISTRY[name]
    rng = np.random.default_rng(seed)
    args, static = op.samples[i](rng)
    diff = [k for k, a in enumerate(args)
            if np.asarray(a).dtype.kind == "f" and k not in op.nondiff_argnums]
    return op, rng, list(args), static, diff


def _inner(a, b):
    return float(np.sum(np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)))


def _tangents(rng, args, diff):
    return [rng.standard_normal(np.shape(a)) if k in diff else None for k, a in enumerate(args)]


def _shifted(args, tangents, eps):
    return [a + eps * t if t is not None else a for a, t in zip(args, tangents)]


@pytest.mark.parametrize("name,i", CASES)
def test_jvp_matches_central_difference(name, i):
    op, rng, args, static, diff = _draw(name, i)
    assert diff, f"{name} sample {i} has no differentiable input"
    u = _tangents(rng, args, diff)
    ans = op.impl(*args, **static)
    eps = 1e-2 if np.asarray(ans).dtype == np.float32 else 1e-6  # a float32 output: Cast, linear
    numeric = (np.asarray(op.impl(*_shifted(args, u, eps), **static), dtype=np.float64)
               - np.asarray(op.impl(*_shifted(args, u, -eps), **static), dtype=np.float64)) / (2 * eps)
    analytic = jvp_output(op, u, ans, args, static)
    assert np.shape(analytic) == np.shape(ans)
    rtol = 1e-3 if np.asarray(ans).dtype == np.float32 else 1e-6
    np.testing.assert_allclose(np.asarray(analytic, dtype=np.float64), numeric, rtol=rtol, atol=rtol,
                               err_msg=f"JVP of {name} sample {i}")


@pytest.mark.parametrize("name,i", CASES)
def test_vjp_is_adjoint_of_jvp(name, i):
    op, rng, args, static, diff = _draw(name, i)
    u = _tangents(rng, args, diff)
    ans = op.impl(*args, **static)
    v = rng.standard_normal(np.shape(ans))
    parts = vjp_parts(op, v, ans, args, static, diff)
    for k, part in zip(diff, parts):
        assert np.shape(part) == np.shape(args[k]), f"{name}: VJP shape of input {k}"
    lhs = sum(_inner(part, u[k]) for k, part in zip(diff, parts))
    rhs = _inner(v, jvp_output(op, u, ans, args, static))
    rtol = 1e-6 if np.asarray(ans).dtype == np.float32 else 1e-8  # Cast to float32 rounds
    assert np.isclose(lhs, rhs, rtol=rtol, atol=1e-10), f"{name} sample {i}: {lhs} != {rhs}"


def _as32(a):
    a = np.asarray(a)
    return a.astype(np.float32) if a.dtype == np.float64 else a


@pytest.mark.parametrize("name,i", CASES)
def test_float32_is_kept(name, i):
    op, rng, args, static, diff = _draw(name, i)
    args = [_as32(a) for a in args]
    ans = op.impl(*args, **static)
    expected = np.asarray(ans).dtype
    u = [_as32(t) if t is not None else None for t in _tangents(rng, args, diff)]
    assert np.asarray(jvp_output(op, u, ans, args, static)).dtype == expected
    parts = vjp_parts(op, np.ones(np.shape(ans), expected), ans, args, static, diff)
    for k, part in zip(diff, parts):
        assert np.asarray(part).dtype == np.asarray(args[k]).dtype, f"{name}: VJP dtype of input {k}"


@pytest.mark.parametrize("name,i", CASES)
def test_rules_run_on_tensors(name, i):
    op, rng, args, static, diff = _draw(name, i)
    u = _tangents(rng, args, diff)
    ans = op.impl(*args, **static)
    v = rng.standard_normal(np.shape(ans))
    tensors = [tf.constant(a) for a in args]
    plain = vjp_parts(op, v, ans, args, static, diff)
    traced = vjp_parts(op, tf.constant(v), tf.constant(ans), tensors, static, diff)
    for p, t in zip(plain, traced):
        assert isinstance(t, tf.Tensor)
        np.testing.assert_allclose(t.numpy(), p, rtol=1e-12, atol=1e-12)
    jvp = jvp_output(op, [tf.constant(t) if t is not None else None for t in u], tf.constant(ans),
                     tensors, static)
    np.testing.assert_allclose(np.asarray(jvp), jvp_output(op, u, ans, args, static), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,i", CASES)
def test_second_order_by_nested_tapes(name, i):
    """h(x) = <v, f'(x)^T w-ish>: the outer tape differentiates the inner tape's VJP."""
    op, rng, args, static, diff = _draw(name, i)
    u = _tangents(rng, args, diff)
    v = rng.standard_normal(np.shape(op.impl(*args, **static)))
    w = [rng.standard_normal(np.shape(args[k])) for k in diff]

    def h(values, outer=None):
        xs = [tf.constant(a) for a in values]
        with tf.GradientTape() as inner:
            for k in diff:
                inner.watch(xs[k])
                if outer is not None:
                    outer.watch(xs[k])
            y = op(*xs, **static)
        grads = inner.gradient(y, [xs[k] for k in diff], output_gradients=tf.constant(v))
        total = None
        for g, wk in zip(grads, w):
            if g is not None:
                term = dnp.sum(g * wk)
                total = term if total is None else total + term
        return xs, total

    with tf.GradientTape() as outer:
        xs, total = h(args, outer)
    if total is None or total._id not in outer._watched:  # second derivative is zero (linear op)
        assert name not in SECOND_ORDER_NONZERO
        return
    second = outer.gradient(total, [xs[k] for k in diff])
    analytic = sum(_inner(s, u[k]) for s, k in zip(second, diff) if s is not None)
    eps = 1e-5
    numeric = (float(h(_shifted(args, u, eps))[1]) - float(h(_shifted(args, u, -eps))[1])) / (2 * eps)
    assert np.isclose(analytic, numeric, rtol=1e-5, atol=1e-6), f"{name} sample {i}"


# -- the public functions, through GradientTape ---------------------------------------------

def _grad(fn, *values):
    xs = [tf.constant(np.asarray(v, dtype=np.float64)) for v in values]
    with tf.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = fn(*xs)
    return y, tape.gradient(y, xs)


def test_getitem_basic_fancy_and_mask_through_tape():
    x0 = np.arange(12.0).reshape(3, 4)
    _, (g,) = _grad(lambda x: dnp.sum(x[1:, ::-2] * 2.0), x0)
    expected = np.zeros((3, 4))
    expected[1:, ::-2] = 2.0
    np.testing.assert_array_equal(g.numpy(), expected)

    y, (g,) = _grad(lambda x: dnp.sum(x[[0, 2, 0, 0], 1:3]), x0)  # row 0 picked three times
    expected = np.zeros((3, 4))
    np.add.at(expected, (np.array([0, 2, 0, 0]), slice(1, 3)), 1.0)
    np.testing.assert_array_equal(g.numpy(), expected)

    mask = x0 > 5.5
    y, (g,) = _grad(lambda x: dnp.sum(x[tf.constant(mask)] ** 2), x0)
    np.testing.assert_allclose(y.numpy(), np.sum(x0[mask] ** 2))
    np.testing.assert_array_equal(g.numpy(), np.where(mask, 2 * x0, 0.0))

    _, (g,) = _grad(lambda x: x[None, ..., tf.constant(-1)][0, 1], x0)
    assert g.numpy()[1, 3] == 1.0 and g.numpy().sum() == 1.0


def test_concatenate_stack_split_through_tape():
    a0, b0 = np.ones((2, 3)), np.full((2, 1), 2.0)
    y, (ga, gb) = _grad(lambda a, b: dnp.sum(dnp.concatenate([a, b * b], axis=-1) * np.arange(4.0)),
                        a0, b0)
    np.testing.assert_array_equal(ga.numpy(), np.tile(np.arange(3.0), (2, 1)))
    np.testing.assert_array_equal(gb.numpy(), np.full((2, 1), 2 * 2.0 * 3))
    pieces = dnp.split(tf.constant(np.arange(6.0)), [1, 4])
    assert [p.shape.as_list() for p in pieces] == [[1], [3], [2]]
    _, (g,) = _grad(lambda x: dnp.sum(dnp.stack(dnp.split(x, 3, axis=1), axis=0)[2]), np.ones((2, 3)))
    np.testing.assert_array_equal(g.numpy(), [[0, 0, 1], [0, 0, 1]])


def test_einsum_through_tape():
    rng = np.random.default_rng(1)
    j0 = rng.standard_normal((2, 3, 2, 4))
    y, (g,) = _grad(lambda j: dnp.sum(dnp.einsum("bxby->bxy", j)), j0)  # the guide's diagonal
    assert y.shape == () and g.shape == (2, 3, 2, 4)
    expected = np.zeros_like(j0)
    expected[0, :, 0, :] = expected[1, :, 1, :] = 1.0
    np.testing.assert_array_equal(g.numpy(), expected)
    a0, b0 = rng.standard_normal((5, 2, 3)), rng.standard_normal((3, 4))
    y, (ga, gb) = _grad(lambda a, b: dnp.sum(dnp.einsum("...ij,jk", a, b)), a0, b0)
    np.testing.assert_allclose(y.numpy(), np.einsum("...ij,jk", a0, b0).sum())
    np.testing.assert_allclose(ga.numpy(), np.broadcast_to(b0.sum(1), (5, 2, 3)))
    np.testing.assert_allclose(gb.numpy(), np.broadcast_to(a0.sum((0, 1))[:, None], (3, 4)))


def test_einsum_matches_numpy_for_implicit_and_ellipsis_forms():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3, 3)), rng.standard_normal((3, 3))
    for spec, ops in [("ba", (b,)), ("...ii", (a,)), ("ij,jk", (b, b)), ("...ij,...jk->...ik", (a, b)),
                      ("i,i", (b[0], b[1])), ("bij->", (a,)), ("iJ,Jk", (b, b))]:
        np.testing.assert_allclose(dnp.einsum(spec, *ops), np.einsum(spec, *ops), err_msg=spec)


def test_second_order_matmul_and_inv():
    a0 = np.array([[2.0, 0.5], [0.3, 1.5]])
    x = tf.constant(a0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = dnp.sum(dnp.matmul(x, x) * x)  # cubic: the Hessian is not zero
        g = inner.gradient(y, x)
        z = dnp.sum(g * g)
    h = outer.gradient(z, x)

    def grad(a):
        b = np.ones_like(a)
        return (b * a) @ a.T + a.T @ (b * a) + a @ a

    eps, numeric = 1e-6, np.zeros_like(a0)
    for idx in np.ndindex(*a0.shape):
        e = np.zeros_like(a0)
        e[idx] = eps
        numeric[idx] = (np.sum(grad(a0 + e) ** 2) - np.sum(grad(a0 - e) ** 2)) / (2 * eps)
    np.testing.assert_allclose(h.numpy(), numeric, rtol=1e-6)

    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = dnp.sum(dnp.linalg_inv(x))
        g = inner.gradient(y, x)
        z = dnp.sum(g * np.arange(4.0).reshape(2, 2))
    h = outer.gradient(z, x)

    def z_of(a):
        inv = np.linalg.inv(a)
        return np.sum(-(inv.T @ np.ones((2, 2)) @ inv.T) * np.arange(4.0).reshape(2, 2))

    for idx in np.ndindex(*a0.shape):
        e = np.zeros_like(a0)
        e[idx] = eps
        numeric[idx] = (z_of(a0 + e) - z_of(a0 - e)) / (2 * eps)
    np.testing.assert_allclose(h.numpy(), numeric, rtol=1e-6)


def test_linalg_public_functions_and_numpy_dispatch():
    from dualtape.ops.linalg_np import NUMPY_LINALG
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal(3)
    np.testing.assert_allclose(dnp.linalg_solve(a, b), np.linalg.solve(a, b))
    sign, logdet = dnp.linalg_slogdet(a)
    np.testing.assert_allclose(sign * np.exp(logdet), np.linalg.det(a))
    spd = a @ a.T
    np.testing.assert_allclose(dnp.linalg_cholesky(spd), np.linalg.cholesky(spd))
    assert NUMPY_LINALG[np.linalg.inv] is dnp.linalg_inv
    y, (ga, gb) = _grad(lambda a, b: dnp.sum(dnp.linalg_solve(a, b)), a, b)
    x = np.linalg.solve(a, b)
    gb_expected = np.linalg.solve(a.T, np.ones(3))
    np.testing.assert_allclose(gb.numpy(), gb_expected)
    np.testing.assert_allclose(ga.numpy(), -np.outer(gb_expected, x))
    _, (g,) = _grad(lambda a: dnp.linalg_slogdet(a)[1], a)
    np.testing.assert_allclose(g.numpy(), np.linalg.inv(a).T)


def test_shape_helpers_match_numpy():
    x = np.arange(24.0).reshape(2, 3, 4)
    checks = [
        (dnp.expand_dims(x, (0, -1)), np.expand_dims(x, (0, -1))),
        (dnp.squeeze(x[:, :1, None]), np.squeeze(x[:, :1, None])),
        (dnp.pad(x, ((0, 1), (2, 0), (1, 1)), constant_values=-1.0),
         np.pad(x, ((0, 1), (2, 0), (1, 1)), constant_values=-1.0)),
        (dnp.pad(x, 1), np.pad(x, 1)), (dnp.tile(x, 2), np.tile(x, 2)),
        (dnp.tile(x[0, 0], (2, 1, 2)), np.tile(x[0, 0], (2, 1, 2))),
        (dnp.repeat(x, [1, 0, 2], axis=1), np.repeat(x, [1, 0, 2], axis=1)),
        (dnp.repeat(x, 2), np.repeat(x, 2)), (dnp.ravel(x), np.ravel(x)),
        (dnp.flip(x, (0, 2)), np.flip(x, (0, 2))), (dnp.flip(x), np.flip(x)),
        (dnp.moveaxis(x, [0, 1], [-1, 0]), np.moveaxis(x, [0, 1], [-1, 0])),
        (dnp.stack([x, x], axis=-1), np.stack([x, x], axis=-1)),
        (dnp.concatenate([x, x], axis=None), np.concatenate([x, x], axis=None)),
        (dnp.take(x, [5, 0, -1]), np.take(x, [5, 0, -1])),
        (dnp.take(x, [[1, 7]], axis=2, mode="wrap"), np.take(x, [[1, 7]], axis=2, mode="wrap")),
        (dnp.gather(x, [2, 2], axis=-1), np.take(x, [2, 2], axis=-1)),
    ]
    for i, (got, want) in enumerate(checks):
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"check {i}")
    for got, want in zip(dnp.array_split(x, 3, axis=-1), np.array_split(x, 3, axis=-1)):
        np.testing.assert_array_equal(got, want)


def test_one_hot_and_cast_and_constructors():
    hot = dnp.one_hot(np.array([0, 2, 3]), 3)
    assert hot.dtype == np.float32
    np.testing.assert_array_equal(hot, [[1, 0, 0], [0, 0, 1], [0, 0, 0]])
    assert dnp.one_hot(tf.constant([1]), 2, axis=0).shape == (2, 1)
    x = tf.constant(np.array([1.5, -2.0]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = dnp.cast(x, tf.float32)
        z = dnp.sum(y * y)
    assert y.dtype == tf.float32
    g = tape.gradient(z, x)
    assert g.dtype == tf.float64
    np.testing.assert_allclose(g.numpy(), [3.0, -4.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        n = dnp.cast(x, np.int32)
    assert n.dtype == tf.int32
    with pytest.warns(UserWarning, match="must be floating"):
        assert tape.gradient(n, x) is None
    assert isinstance(dnp.eye(tf.constant(2)), np.ndarray)
    np.testing.assert_array_equal(dnp.linspace(tf.constant(0.0), 1.0, 3), [0.0, 0.5, 1.0])
    assert dnp.zeros((2, 1), dtype=tf.float32).dtype == np.float32
    np.testing.assert_array_equal(dnp.arange(tf.constant(3)), [0, 1, 2])
    np.testing.assert_array_equal(dnp.full(2, 7.0), [7.0, 7.0])


@pytest.mark.parametrize("source,target", [(np.float64, np.float32), (np.float32, np.float64)])
def test_cast_rules_between_float_dtypes(source, target):
    op = REGISTRY["Cast"]
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3)).astype(source)
    static = {"dtype": np.dtype(target)}
    ans = op.impl(x, **static)
    u, v = rng.standard_normal(x.shape).astype(source), rng.standard_normal(x.shape).astype(target)
    jvp = jvp_output(op, [u], ans, [x], static)
    (vjp,) = vjp_parts(op, v, ans, [x], static, [0])
    assert ans.dtype == target and jvp.dtype == target and vjp.dtype == source
    np.testing.assert_allclose(jvp, u, rtol=1e-6)
    assert np.isclose(_inner(vjp, u), _inner(v, jvp), rtol=1e-6)
    (none,) = vjp_parts(op, v, ans, [np.arange(6).reshape(2, 3)], static, [0])
    assert none is None  # no gradient into an integer input
