"""Forward modes of the transformer with a list, tuple or dict argument (issue 19).

transforms.grad and vjp return the gradient of such an argument in its structure; jvp read
the tangent with np.ndim: a list of (W, b) pairs failed (np.ndim of a ragged list), a dict's
batch of directions went by as one direction (0.4 for [1.6, -1.2, 0.7]: a wrong number), a
list of arrays read as one stacked array made jacfwd return an array and hessian mix the
arrays' blocks. The tangent of such an argument now has its structure, read array by array
(optionally with one leading axis of directions on every array); jacfwd and hessian return
their blocks in the arguments' structure, as JAX's. Checked against finite differences.
"""

import numpy as np
import pytest

import dualtape
import dualtape.transforms as dt
from dualtape.core import nest


def f_list(xs):
    return np.sum(xs[0] * (xs[1] @ xs[0])) + np.sum(np.sin(xs[0]))


def f_tuple(xs):
    a, b = xs
    return np.sum(a * a * b)


def f_dict(d):
    return np.sum(d["a"] * d["b"]) + np.sum(d["a"] ** 3)


def f_mlp(params, x):
    h = x
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.sum(h * h)


rng = np.random.default_rng(19)
R = lambda *shape: rng.normal(size=shape)  # noqa: E731
X = np.array([[0.1, 0.2], [-0.3, 0.4]])
CASES = {  # f, the differentiated argument, the other arguments
    "list": (f_list, [R(2), R(2, 2)], ()),
    "tuple": (f_tuple, (R(3), R(3)), ()),
    "dict": (f_dict, {"a": R(2), "b": R(2)}, ()),
    "mlp": (f_mlp, [(R(2, 3), R(3)), (R(3, 2), R(2))], (X,)),
}


def _shift(x, t, h):
    return nest.tree_unflatten(x, [xl + h * tl for xl, tl in zip(nest.tree_flatten(x), nest.tree_flatten(t))])


def _direction(x):
    return nest.tree_unflatten(x, [R(*np.shape(leaf)) for leaf in nest.tree_flatten(x)])


def _fd(fn, x, t, rest, h=1e-6):
    """(fn(x + h t) - fn(x - h t)) / 2h, leaf by leaf where fn returns a structure."""
    up, down = fn(_shift(x, t, h), *rest), fn(_shift(x, t, -h), *rest)
    return [(u - d) / (2 * h) for u, d in zip(nest.tree_flatten(up), nest.tree_flatten(down))]


def _leaves(tree):
    return nest.tree_flatten(tree)


def _kinds(tree):
    """The structure of `tree`, lists and tuples alike (what the generated code builds)."""
    if isinstance(tree, dict):
        return {k: _kinds(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [_kinds(v) for v in tree]
    return np.shape(tree)


@pytest.mark.parametrize("case", CASES)
def test_jvp_one_direction(case):
    f, x, rest = CASES[case]
    t = _direction(x)
    value, tangent = dt.jvp(f)(x, *rest, t)
    np.testing.assert_allclose(value, f(x, *rest), rtol=1e-12)
    np.testing.assert_allclose(tangent, _fd(f, x, t, rest)[0], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("case", CASES)
def test_jvp_a_batch_of_directions(case):
    f, x, rest = CASES[case]
    ts = [_direction(x) for _ in range(3)]
    batch = nest.tree_unflatten(x, [np.stack(leaves) for leaves in zip(*map(_leaves, ts))])
    _, tangent = dt.jvp(f)(x, *rest, batch)
    np.testing.assert_allclose(tangent, [_fd(f, x, t, rest)[0] for t in ts], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("case", CASES)
def test_hvp_is_the_slope_of_the_gradient(case):
    f, x, rest = CASES[case]
    t = _direction(x)
    hv = dt.hvp(f)(x, *rest, t)
    assert _kinds(hv) == _kinds(x)
    want = _fd(lambda y, *r: dt.grad(f)(y, *r), x, t, rest, 1e-5)
    for got, w in zip(_leaves(hv), want):
        np.testing.assert_allclose(got, w, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("case", CASES)
def test_jacfwd_returns_the_gradient_in_the_arguments_structure(case):
    f, x, rest = CASES[case]
    jac = dt.jacfwd(f)(x, *rest)
    assert type(jac) is type(x) and _kinds(jac) == _kinds(x)
    t = _direction(x)
    slope = sum(np.sum(j * tl) for j, tl in zip(_leaves(jac), _leaves(t)))
    np.testing.assert_allclose(slope, _fd(f, x, t, rest)[0], rtol=1e-6)
    for j, g in zip(_leaves(jac), _leaves(dt.grad(f)(x, *rest))):
        np.testing.assert_allclose(j, g, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("case", CASES)
def test_hessian_blocks_in_the_arguments_structure(case):
    """H[i][j] = d2f / dx_i dx_j (x_i's shape + x_j's shape), as JAX's hessian of a pytree:
    contracted with a direction t over each x_j, it is hvp's x_i part."""
    f, x, rest = CASES[case]
    hess = dt.hessian(f)(x, *rest)
    t = _direction(x)
    hv = _leaves(dt.hvp(f)(x, *rest, t))
    leaves, n = _leaves(hess), len(_leaves(x))
    assert type(hess) is type(x) and len(leaves) == n * n  # (x's structure, each array's row in x's structure)
    for i, leaf_i in enumerate(_leaves(x)):
        blocks = leaves[i * n:(i + 1) * n]
        contracted = sum(np.tensordot(block, tl, axes=np.ndim(tl)) for block, tl in zip(blocks, _leaves(t)))
        np.testing.assert_allclose(contracted, hv[i], rtol=1e-9, atol=1e-12)
        for block, leaf_j in zip(blocks, _leaves(x)):
            assert np.shape(block) == np.shape(leaf_i) + np.shape(leaf_j)


def test_a_tangent_of_another_structure_is_refused_by_name():
    f, x, rest = CASES["mlp"]
    for mode in (dt.jvp, dt.hvp):
        with pytest.raises(TypeError, match="the tangent of `params` must have the structure of `params`"):
            mode(f)(x, *rest, [(R(2, 3), R(3))])
    with pytest.raises(TypeError, match="the tangent of `d` must have the structure"):
        dt.jvp(f_dict)({"a": R(2), "b": R(2)}, {"a": R(2)})


def test_a_batch_axis_on_some_arrays_only_is_refused():
    with pytest.raises(TypeError, match="leading axis of directions on some of its arrays"):
        dt.jvp(f_dict)({"a": R(2), "b": R(2)}, {"a": R(3, 2), "b": R(2)})


def test_jit_jvp_of_a_tuple_and_a_list_of_pairs_and_a_ragged_list_refused():
    """numba takes tuples of arrays and a list of (W, b) tuples; a list of arrays of two ndims
    raised numba's own TypeError (can't unbox heterogeneous list) from the first call: jit=True
    runs the uncompiled code with a warning naming it (a Python container, issue 21), as jit='fallback' does."""
    pytest.importorskip("numba")
    for case in ("tuple", "mlp"):
        f, x, rest = CASES[case]
        t = _direction(x)
        np.testing.assert_allclose(dt.jvp(f, jit=True)(x, *rest, t)[1], _fd(f, x, t, rest)[0], rtol=1e-6)
    f, x, rest = CASES["list"]
    t = _direction(x)
    with pytest.warns(RuntimeWarning, match="(?s)heterogeneous list.*pass a tuple.*so jit=True: running the uncompiled"):
        np.testing.assert_allclose(dt.jvp(f, jit=True)(x, t)[1], _fd(f, x, t, rest)[0], rtol=1e-6)
    with pytest.warns(RuntimeWarning, match="jit='fallback'"):
        np.testing.assert_allclose(dt.jvp(f, jit="fallback")(x, t)[1], _fd(f, x, t, rest)[0], rtol=1e-6)


def test_the_gradient_of_a_tuple_argument_is_a_tuple():
    """As JAX, autograd and the tape: the gradient has the argument's containers (the generated
    code builds a tuple's adjoint as a list)."""
    def loss(params, x):
        (w, b), scale = params
        return np.sum(np.tanh(x * w + b)) * scale

    x = np.array([0.3, -0.5])
    params = ((x * 2.0, 0.5), 1.5)
    want = dualtape.grad(loss)(params, x)
    for got in (dt.grad(loss)(params, x), dt.vjp(loss)(params, x, 1.0), dt.grad(loss, preserve_result=True)(params, x)[0],
                dt.grad(loss, wrt=(0, 1))(params, x)[0]):
        assert type(got) is tuple and type(got[0]) is tuple, got
        np.testing.assert_allclose(got[0][0], want[0][0], rtol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    assert isinstance(dt.grad(loss)([[x, 0.5], 1.5], x), list)
