"""The paths per-example gradients take (vmap of grad of a loss with x @ W for one example's
vector x): the weight cotangent as one outer product (einsum under vmap, np.multiply.outer on
plain vectors), a square's slope, vmap's and grad's argument walks. Each against what the
general path computes: expand_dims and a broadcasting multiply, or a Python loop."""

import collections

import numpy as np
import pytest

import dualtape as dt
from dualtape.core import dnp, nest
from dualtape.core.rulekit.batched import matmul_cotangent_y
from dualtape.core.rulekit.shapes import power_slope
from dualtape.functional import values

rng = np.random.default_rng(23)
X = rng.standard_normal((5, 4))
Y = rng.standard_normal((5, 3))
W = rng.standard_normal((4, 3))
B = rng.standard_normal(3)


def loop(f, *args, in_axes):
    n = next(np.shape(a)[0] for a, ax in zip(args, in_axes) if ax is not None)
    outs = [f(*[a if ax is None else a[k] for a, ax in zip(args, in_axes)]) for k in range(n)]
    return [np.stack([o[i] for o in outs]) for i in range(len(outs[0]))]


def loss(params, x, y):
    w, b = params
    return dnp.sum((dnp.tanh(x @ w + b) - y) ** 2)


def test_weight_cotangent_of_a_vector_is_its_outer_product():
    x, g = X[0], Y[0]
    want = np.expand_dims(x, -1) * np.expand_dims(g, -2)
    np.testing.assert_array_equal(matmul_cotangent_y(g, x, W), want)
    # float32 with float64: NumPy's promotion, as the broadcasting multiply's
    got = matmul_cotangent_y(g, x.astype(np.float32), W)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, np.expand_dims(x.astype(np.float32), -1) * np.expand_dims(g, -2))
    z = x + 1j * X[1]
    np.testing.assert_array_equal(matmul_cotangent_y(g, z, W), np.expand_dims(z, -1) * np.expand_dims(g, -2))


def test_per_example_gradients_match_a_loop_of_grad():
    got = dt.vmap(dt.grad(loss), in_axes=(None, 0, 0))((W, B), X, Y)
    want = loop(dt.grad(loss), (W, B), X, Y, in_axes=(None, 0, 0))
    for a, b in zip(got, want):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)


def test_per_example_gradients_in_float32_and_complex():
    params = (W.astype(np.float32), B.astype(np.float32))
    got = dt.vmap(dt.grad(loss), in_axes=(None, 0, 0))(params, X.astype(np.float32), Y.astype(np.float32))
    want = loop(dt.grad(loss), params, X.astype(np.float32), Y.astype(np.float32), in_axes=(None, 0, 0))
    for a, b in zip(got, want):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=4 * np.finfo(np.float32).eps, atol=1e-6)

    def real_loss(w, x):
        return dnp.sum(dnp.abs(x @ w) ** 2)

    z = X + 1j * X[::-1]
    got = dt.vmap(dt.grad(real_loss), in_axes=(None, 0))(W + 0j, z)
    want = np.stack([dt.grad(real_loss)(W + 0j, z[k]) for k in range(5)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_weight_cotangent_when_only_one_side_is_batched():
    # x the same for every example, the cotangent batched (the weights mapped over)
    ws = rng.standard_normal((5, 4, 3))
    f = lambda w, x: dnp.sum(dnp.sin(x @ w))
    got = dt.vmap(dt.grad(f), in_axes=(0, None))(ws, X[0])
    np.testing.assert_allclose(got, np.stack([dt.grad(f)(ws[k], X[0]) for k in range(5)]), rtol=1e-13)
    # the cotangent the same for every example (a linear loss), x batched
    lin = lambda w, x: dnp.sum(x @ w)
    got = dt.vmap(dt.grad(lin), in_axes=(None, 0))(W, X)
    np.testing.assert_allclose(got, np.stack([np.outer(X[k], np.ones(3)) for k in range(5)]))


def test_higher_orders_through_the_outer_product():
    # forward over reverse, under vmap and not: the outer product's own rules
    f = lambda w, x: dnp.sum(dnp.tanh(x @ w) ** 3)
    h = dt.hessian(f)
    np.testing.assert_allclose(dt.vmap(h, in_axes=(None, 0))(W, X), np.stack([h(W, X[k]) for k in range(5)]),
                               rtol=1e-12, atol=1e-13)
    step = 1e-6
    e = np.zeros_like(W)
    e[1, 2] = 1.0
    g = dt.grad(f)
    numeric = (g(W + step * e, X[0]) - g(W - step * e, X[0])) / (2 * step)
    np.testing.assert_allclose(h(W, X[0])[:, :, 1, 2], numeric, rtol=1e-6, atol=1e-8)
    # nested vmap: per-example, per-row gradients
    inner = dt.vmap(dt.vmap(dt.grad(f), in_axes=(None, 0)), in_axes=(None, 0))
    xs = rng.standard_normal((2, 3, 4))
    np.testing.assert_allclose(inner(W, xs), np.stack([[g(W, xs[i, j]) for j in range(3)] for i in range(2)]),
                               rtol=1e-13)


def test_a_squares_slope():
    x = X[0].astype(np.float32)
    assert power_slope(x, 2).dtype == np.float32
    np.testing.assert_array_equal(power_slope(x, 2), 2 * np.power(x, 1))
    np.testing.assert_array_equal(power_slope(X[0], 2.0), 2.0 * np.power(X[0], 1.0))
    z = X[0] + 1j * X[1]
    np.testing.assert_array_equal(power_slope(z, 2), 2 * np.power(z, 1))
    np.testing.assert_allclose(dt.hessian(lambda v: dnp.sum(v ** 2))(X[0]), 2 * np.eye(4))
    np.testing.assert_array_equal(dt.grad(lambda v: dnp.sum(v ** 2))(X[0]), 2 * X[0])


Point = collections.namedtuple("Point", "x y")


@pytest.mark.parametrize("tree", [
    (X, (W, B), [Y, [B]]),
    [X, (), (W,)],
    (X, None, W),
    (X, Point(W, B)),
    [{"b": B, "a": W}, X],
    (X, [W, (B, (Y,))]),
])
def test_flatten_and_pack_walk_as_nest_does(tree):
    leaves = values.flatten(tree)
    want = nest.tree_flatten(tree)
    assert len(leaves) == len(want) and all(a is b for a, b in zip(leaves, want))
    marked = [("leaf", i) for i in range(len(leaves))]
    assert values.pack(tree, marked) == nest.tree_unflatten(tree, marked)
    assert type(values.pack(tree, marked)) is type(tree)


def test_vmap_names_arguments_only_in_its_errors():
    def f(first, second):
        return first + second

    with pytest.raises(ValueError, match=r"argument 0 \(first\) has size 5.*argument 1 \(second\) has size 4"):
        dt.vmap(f)(X, X[:4])
    with pytest.raises(ValueError, match=r"keyword argument 'second' has size 4"):
        dt.vmap(f)(X, second=X[:4])
    with pytest.raises(ValueError, match=r"map argument 1 \(second\) along axis 2"):
        dt.vmap(f, in_axes=(0, 2))(X, X)


def test_einsum_subscripts_parsed_once_still_check_each_call():
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    np.testing.assert_allclose(dnp.einsum("ij,jk->ik", a, b), a @ b)
    np.testing.assert_allclose(dnp.einsum("ij,jk", a, b), a @ b)
    np.testing.assert_allclose(dnp.einsum("...j,jk->...k", X[:, :3], b), X[:, :3] @ b)
    np.testing.assert_allclose(dnp.einsum("...j,jk->...k", a[0], b), a[0] @ b)
    with pytest.raises(ValueError, match="does not fit an operand"):
        dnp.einsum("ij,jk->ik", a[0], b)
    got = dt.vmap(lambda u, v: dnp.einsum("i,j->ij", u, v))(X, Y)
    np.testing.assert_array_equal(got, np.einsum("zi,zj->zij", X, Y))
    got = dt.vmap(lambda u, v: dnp.einsum("i,j->ij", u, v), in_axes=(0, None))(X, B)
    np.testing.assert_array_equal(got, np.einsum("zi,j->zij", X, B))
