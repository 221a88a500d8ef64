"""A list or dict argument passed to two calls of a user function: the caller adds the two
adjoints the callee returns item by item (key by key), as the tape does. With `+` the two
lists were concatenated (a gradient of two items for a list of one, silently) and two dicts
could not be added (a TypeError)."""

import warnings

import numpy as np
import pytest

import dualtape
import dualtape.transforms as dt

X = np.array([1.0, 2.0])


def inner_list(p, x):
    return np.sum(np.tanh(x * p[0]) * p[1])


def outer_list(p, x):
    return inner_list(p, x) + inner_list(p, 2 * x)


def inner_dict(p, x):
    return np.sum(np.tanh(x * p["w"]))


def outer_dict(p, x):
    return inner_dict(p, x) + inner_dict(p, 2 * x)


def middle(p, x):
    return inner_list(p, x) * 0.5


def outer_through_middle(p, x):
    """The list reaches the indexing function through another call: still added item by item."""
    return middle(p, x) + middle(p, 3 * x) + inner_list(p, x)


LIST = [np.array([0.3, 0.4]), np.array([0.5, -0.2])]


def leaves(tree):
    if isinstance(tree, dict):
        return np.concatenate([leaves(tree[k]) for k in sorted(tree)])
    if isinstance(tree, (list, tuple)):
        return np.concatenate([leaves(t) for t in tree])
    return np.ravel(tree)


def test_list_argument_of_two_calls():
    got, want = dt.grad(outer_list)(LIST, X), dualtape.grad(outer_list)(LIST, X)
    assert isinstance(got, list) and len(got) == 2
    np.testing.assert_allclose(leaves(got), leaves(want), rtol=1e-13)


def test_dict_argument_of_two_calls():
    p = {"w": np.array([0.3, 0.4])}
    got, want = dt.grad(outer_dict)(p, X), dualtape.grad(outer_dict)(p, X)
    assert set(got) == {"w"}
    np.testing.assert_allclose(got["w"], want["w"], rtol=1e-13)


def test_list_through_an_intermediate_call():
    got, want = dt.grad(outer_through_middle)(LIST, X), dualtape.grad(outer_through_middle)(LIST, X)
    assert len(got) == 2
    np.testing.assert_allclose(leaves(got), leaves(want), rtol=1e-13)


def test_hvp_and_jvp_of_a_list_argument_of_two_calls():
    v = [np.ones(2), np.array([1.0, -1.0])]
    grad_of = lambda q: leaves(dualtape.grad(outer_list)(q, X))  # noqa: E731
    h = 1e-6
    fd = (grad_of([a + h * d for a, d in zip(LIST, v)]) - grad_of([a - h * d for a, d in zip(LIST, v)])) / (2 * h)
    np.testing.assert_allclose(leaves(dt.hvp(outer_list)(LIST, X, v)), fd, rtol=1e-7, atol=1e-9)
    value, tangent = dt.jvp(outer_list)(LIST, X, v)
    assert np.isclose(tangent, leaves(dualtape.grad(outer_list)(LIST, X)) @ leaves(v), rtol=1e-13)


def index_helper(x):
    return x[0] * 2.0


def twice_indexed(x):
    return index_helper(x) * index_helper(np.sin(x)) + np.sum(x * x) + x[1] * np.sin(x[0])


def test_jit_compiles_accumulated_array_adjoints():
    """An indexed array's adjoint is added with the runtime `accumulate` (it may be a list's):
    numba compiles it for arrays."""
    pytest.importorskip("numba")
    x = np.array([0.3, 0.5, 0.7])
    df = dt.grad(twice_indexed, jit=True)
    assert "accumulate(" in df.source_for(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # compiled, no fallback
        got = df(x)
    np.testing.assert_allclose(got, dualtape.grad(twice_indexed)(x), rtol=1e-13)


def tuples_appended(x):
    ys = []
    for i in range(len(x) - 1):
        ys.append((x[i] * 2.0, np.sin(x[i + 1])))
    return ys


def sum_of_tuples(x):
    """np.sum of a tuple item reads it as an array: its adjoint, one row per item, is added to
    the list adjoint item by item (a whole row was added to each item: a crash, or a gradient
    of the wrong shape)."""
    total = 0.0
    for pair in tuples_appended(x):
        total = total + np.sum(pair) * np.sum(np.sin(pair))
    return total


def test_an_array_adjoint_of_a_list_of_tuples_is_split_by_item():
    x, u = np.array([0.3, -0.5, 0.8]), np.array([1.0, -2.0, 0.5])
    eps = 1e-6
    fd = np.array([(sum_of_tuples(x + eps * e) - sum_of_tuples(x - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(dt.grad(sum_of_tuples)(x), fd, rtol=1e-6)
    np.testing.assert_allclose(dt.vjp(sum_of_tuples)(x, 2.0), 2.0 * fd, rtol=1e-6)
    np.testing.assert_allclose(dt.jvp(sum_of_tuples)(x, u)[1], fd @ u, rtol=1e-6)
    hu = (dt.grad(sum_of_tuples)(x + eps * u) - dt.grad(sum_of_tuples)(x - eps * u)) / (2 * eps)
    np.testing.assert_allclose(dt.hvp(sum_of_tuples)(x, u), hu, rtol=1e-5)
