"""dualtape.vmap: JAX's semantics (in_axes, out_axes, pytrees, errors), nesting, and composition
with every functional transform and the tape, each checked against a Python loop."""

import dataclasses

import numpy as np
import pytest

import dualtape as dt
from dualtape.core import dnp
from dualtape.core.errors import RefusalError

rng = np.random.default_rng(7)
X = rng.standard_normal((4, 3))
Y = rng.standard_normal((4, 3))
W = rng.standard_normal((3, 2))


def loop(f, *args, in_axes=0):
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    n = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    return np.stack([f(*[a if ax is None else np.take(a, k, axis=ax) for a, ax in zip(args, axes)])
                     for k in range(n)])


# -- in_axes, out_axes, pytrees --------------------------------------------------------------

def test_in_axes_int_none_and_tuple():
    f = lambda x, w: np.tanh(x @ w)
    np.testing.assert_allclose(dt.vmap(f, in_axes=(0, None))(X, W), np.tanh(X @ W))
    np.testing.assert_allclose(dt.vmap(f, in_axes=(1, None))(X.T, W), np.tanh(X @ W))
    np.testing.assert_allclose(dt.vmap(lambda x, y: x * y)(X, Y), X * Y)
    np.testing.assert_allclose(dt.vmap(lambda x: x.sum(), in_axes=-1)(X), X.sum(0))


def test_out_axes_and_structured_outputs():
    out = dt.vmap(lambda x: (x * 2, {"s": x.sum(), "c": 1.0}), out_axes=(1, {"s": 0, "c": None}))(X)
    np.testing.assert_allclose(out[0], (X * 2).T)
    np.testing.assert_allclose(out[1]["s"], X.sum(1))
    assert out[1]["c"] == 1.0
    np.testing.assert_allclose(dt.vmap(lambda x: np.outer(x, x), out_axes=-1)(X),
                               np.moveaxis(loop(lambda x: np.outer(x, x), X), 0, -1))
    # an output that does not depend on the batch is broadcast along the batch axis
    np.testing.assert_allclose(dt.vmap(lambda x: np.ones(2))(X), np.ones((4, 2)))


def test_pytree_arguments_and_in_axes():
    params = {"w": W, "b": np.arange(2.0)}
    f = lambda p, x: x @ p["w"] + p["b"]
    np.testing.assert_allclose(dt.vmap(f, in_axes=(None, 0))(params, X), X @ W + np.arange(2.0))
    batched_b = {"w": W, "b": rng.standard_normal((4, 2))}
    np.testing.assert_allclose(dt.vmap(f, in_axes=({"w": None, "b": 0}, 0))(batched_b, X),
                               X @ W + batched_b["b"])
    pair = (X, Y.T)
    np.testing.assert_allclose(dt.vmap(lambda p: p[0] - p[1], in_axes=((0, 1),))(pair), X - Y)


@dataclasses.dataclass
class Point:
    x: np.ndarray
    y: np.ndarray


def test_dataclass_in_and_out():
    out = dt.vmap(lambda p: Point(p.y, p.x * 2))(Point(X, Y))
    assert isinstance(out, Point)
    np.testing.assert_allclose(out.x, Y)
    np.testing.assert_allclose(out.y, X * 2)


def test_keyword_arguments_are_mapped_over_axis_0():
    np.testing.assert_allclose(dt.vmap(lambda x, *, scale: x * scale)(X, scale=np.arange(4.0)),
                               X * np.arange(4.0)[:, None])


# -- errors, as JAX raises them ------------------------------------------------------------

def test_inconsistent_sizes_name_the_arguments():
    with pytest.raises(ValueError, match=r"inconsistent sizes.*argument 0 \(x\) has size 4.*argument 1 \(y\) has size 3"):
        dt.vmap(lambda x, y: x + y)(X, Y[:3])


def test_axis_out_of_range():
    with pytest.raises(ValueError, match=r"axis 2.*shape \(4, 3\)"):
        dt.vmap(lambda x: x, in_axes=2)(X)
    with pytest.raises(ValueError, match="out_axes=3 is out of range"):
        dt.vmap(lambda x: x, out_axes=3)(X)


def test_nothing_mapped_needs_axis_size():
    with pytest.raises(ValueError, match="at least one"):
        dt.vmap(lambda x: x, in_axes=None)(X)
    np.testing.assert_allclose(dt.vmap(lambda x: x, in_axes=None, axis_size=2)(W), np.stack([W, W]))


def test_malformed_in_axes():
    np.testing.assert_allclose(dt.vmap(lambda x, v: x + v, in_axes=[0, None])(X, W[:, 0]), X + W[:, 0])
    with pytest.raises(ValueError, match="2 entries but f was called with 1"):
        dt.vmap(lambda x: x, in_axes=(0, 0))(X)
    with pytest.raises(ValueError, match="out_axes is None"):
        dt.vmap(lambda x: x, out_axes=None)(X)


def test_python_control_flow_on_a_batched_value_is_refused():
    def branchy(x):
        return x if x.sum() > 0 else -x
    with pytest.raises(RefusalError, match=r"\[vmap\].*np.where"):
        dt.vmap(branchy)(X)
    with pytest.raises(RefusalError, match=r"\[vmap\].*float\(\)"):
        dt.vmap(lambda x: float(x[0]))(X)
    with pytest.raises(RefusalError, match=r"\[vmap\]"):
        dt.vmap(lambda x: np.asarray(x))(X)
    # the value-independent branch on a shape is fine
    np.testing.assert_allclose(dt.vmap(lambda x: x * 2 if x.shape[0] == 3 else x)(X), X * 2)


def test_a_shape_that_depends_on_the_values_is_an_error():
    with pytest.raises(RefusalError, match="different shapes"):
        dt.vmap(lambda x: dnp.getitem(x, x > 0))(X)


# -- nesting -------------------------------------------------------------------------------

def test_nested_vmap_and_closures_over_an_outer_batch():
    outer = dt.vmap(lambda x: dt.vmap(lambda y: x * y)(Y[0]))(X[:, 0])
    np.testing.assert_allclose(outer, np.outer(X[:, 0], Y[0]))
    pairwise = dt.vmap(dt.vmap(lambda a, b: np.sum((a - b) ** 2), in_axes=(None, 0)), in_axes=(0, None))(X, Y)
    np.testing.assert_allclose(pairwise, ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1))


def test_batched_indices():
    table = rng.standard_normal((10, 4))
    idx = np.array([[1, 2], [3, 3], [0, 9]])
    np.testing.assert_allclose(dt.vmap(lambda i: dt.numpy_api.take(table, i, axis=0))(idx), table[idx])
    rows = rng.standard_normal((3, 10, 2))
    np.testing.assert_allclose(dt.vmap(lambda x, i: x[i])(rows, idx), np.stack([rows[k][idx[k]] for k in range(3)]))
    np.testing.assert_allclose(dt.vmap(lambda x, i: x[i, 1])(rows, idx[:, 0]),
                               np.stack([rows[k][idx[k, 0], 1] for k in range(3)]))
    with pytest.raises(RefusalError, match="numpy_api.take"):
        dt.vmap(lambda i: table[i])(idx)


# -- composition with the functional transforms --------------------------------------------

def mlp_loss(params, x, y):
    h = np.tanh(x @ params["w1"] + params["b1"])
    return np.sum((h @ params["w2"] - y) ** 2)


PARAMS = {"w1": rng.standard_normal((3, 5)), "b1": rng.standard_normal(5), "w2": rng.standard_normal((5, 2))}
YS = rng.standard_normal((4, 2))


def test_per_example_gradients():
    got = dt.vmap(dt.grad(mlp_loss), in_axes=(None, 0, 0))(PARAMS, X, YS)
    for k in range(4):
        want = dt.grad(mlp_loss)(PARAMS, X[k], YS[k])
        for name in PARAMS:
            np.testing.assert_allclose(got[name][k], want[name], rtol=1e-12, atol=1e-12)
    value, g = dt.vmap(dt.value_and_grad(mlp_loss, argnums=1), in_axes=(None, 0, 0))(PARAMS, X, YS)
    np.testing.assert_allclose(value, [mlp_loss(PARAMS, X[k], YS[k]) for k in range(4)])
    np.testing.assert_allclose(g, loop(lambda x, y: dt.grad(mlp_loss, argnums=1)(PARAMS, x, y), X, YS))


def test_grad_of_vmap():
    f = lambda w: np.sum(dt.vmap(lambda x, y: mlp_loss({**PARAMS, "w2": w}, x, y))(X, YS))
    np.testing.assert_allclose(dt.grad(f)(PARAMS["w2"]),
                               dt.grad(lambda w: sum(mlp_loss({**PARAMS, "w2": w}, X[k], YS[k]) for k in range(4)))(PARAMS["w2"]))


def g(x):
    return np.sin(x) * np.sum(x ** 2) + np.prod(x[:2])


def test_forward_and_second_order_transforms_under_vmap():
    for transform in (dt.jacfwd, dt.jacrev):
        np.testing.assert_allclose(dt.vmap(transform(g))(X), loop(transform(g), X), rtol=1e-12, atol=1e-12)
    h = dt.hessian(lambda x: np.sum(g(x) ** 2))
    np.testing.assert_allclose(dt.vmap(h)(X), loop(h, X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dt.vmap(lambda x, t: dt.jvp(g, (x,), (t,))[1])(X, Y),
                               loop(lambda x, t: dt.jvp(g, (x,), (t,))[1], X, Y))
    np.testing.assert_allclose(dt.vmap(lambda x, v: dt.hvp(lambda z: np.sum(g(z)), (x,), (v,))[1])(X, Y),
                               loop(lambda x, v: dt.hvp(lambda z: np.sum(g(z)), (x,), (v,))[1], X, Y))
    np.testing.assert_allclose(dt.vmap(lambda x, v: dt.vjp(g, x)[1](v)[0])(X, Y),
                               loop(lambda x, v: dt.vjp(g, x)[1](v)[0], X, Y))


def test_transforms_of_vmap():
    vg = dt.vmap(g)
    x = X[:2]
    np.testing.assert_allclose(dt.jacfwd(vg)(x), dt.jacfwd(lambda z: np.stack([g(z[0]), g(z[1])]))(x))
    np.testing.assert_allclose(dt.jacrev(vg)(x), dt.jacfwd(vg)(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dt.hessian(lambda z: np.sum(vg(z)))(x),
                               dt.hessian(lambda z: np.sum(g(z[0]) + g(z[1])))(x), rtol=1e-12, atol=1e-12)
    _, tangent = dt.jvp(vg, (x,), (Y[:2],))
    np.testing.assert_allclose(tangent, loop(lambda a, t: dt.jvp(g, (a,), (t,))[1], x, Y[:2]))


def test_jacrev_as_vmap_of_vjp():
    x = X[0]
    _, pullback = dt.vjp(g, x)
    np.testing.assert_allclose(dt.vmap(pullback)(np.eye(3))[0], dt.jacrev(g)(x), rtol=1e-12, atol=1e-12)


def test_vmap_under_a_gradient_tape():
    w = dt.Variable(W)
    with dt.GradientTape() as tape:
        y = dt.vmap(lambda x: np.sum(np.tanh(x @ w) ** 2))(X)
        loss = dt.reduce_sum(y)
    want = dt.grad(lambda w: np.sum(np.tanh(X @ w) ** 2))(W)
    np.testing.assert_allclose(tape.gradient(loss, w), want, rtol=1e-6)


def test_vectorized_map():
    out = dt.vectorized_map(lambda x: dt.reduce_sum(x * x), dt.constant(X))
    np.testing.assert_allclose(out.numpy(), (X.astype(np.float32) ** 2).sum(1), rtol=1e-6)
    pair = dt.vectorized_map(lambda e: e[0] * e[1], (dt.constant(X), dt.constant(Y)))
    np.testing.assert_allclose(pair.numpy(), (X * Y).astype(np.float32), rtol=1e-6)


def test_in_place_updates_under_vmap():
    def running_sum(x):
        s = 0.0
        for i in range(3):
            s += x[i]  # each example's s is a NumPy scalar: rebound, as NumPy does
        return s
    np.testing.assert_allclose(dt.vmap(dt.grad(running_sum))(X), np.ones_like(X))

    def shifted(x):
        y = x * 2
        y += 1  # an array updated in place: which arrays share its memory cannot be followed
        return np.sum(y)
    with pytest.raises(RefusalError, match="vmap batches in place"):
        dt.vmap(dt.grad(shifted))(X)
    with pytest.raises(RefusalError, match=r"\[vmap\].*Python `if`"):
        dt.vmap(dt.grad(lambda x: x[0] if x[1] > 0 else x[2]))(X)


def test_one_hot_and_stacking_under_vmap():
    labels = np.array([[0, 2], [1, 1], [2, 0]])
    np.testing.assert_allclose(dt.vmap(lambda l: dt.one_hot(l, 3))(labels), np.eye(3, dtype=np.float32)[labels])
    np.testing.assert_allclose(dt.vmap(lambda l: dt.one_hot(l, 3, axis=0))(labels),
                               np.stack([np.eye(3, dtype=np.float32)[l].T for l in labels]))
    for stack in (np.hstack, np.vstack, np.column_stack, np.dstack):
        for x in (X, M2):
            np.testing.assert_allclose(dt.vmap(lambda a: stack([a, a * 2]))(x),
                                       np.stack([stack([a, a * 2]) for a in x]), err_msg=stack.__name__)
    np.testing.assert_allclose(dt.vmap(lambda a, v: np.hstack([a, v]), in_axes=(0, None))(X, W[:, 0]),
                               np.stack([np.hstack([a, W[:, 0]]) for a in X]))


M2 = rng.standard_normal((4, 2, 3))


def test_norms_under_vmap():
    for kw in ({}, {"ord": 1}, {"axis": 0}, {"ord": np.inf}):
        np.testing.assert_allclose(dt.vmap(lambda a: np.linalg.norm(a, **kw))(X),
                                   np.stack([np.linalg.norm(a, **kw) for a in X]), err_msg=str(kw))
    for kw in ({}, {"ord": "fro"}, {"ord": 1}, {"axis": 1}, {"axis": (0, 1)}, {"ord": 2}):
        np.testing.assert_allclose(dt.vmap(lambda a: np.linalg.norm(a, **kw))(M2),
                                   np.stack([np.linalg.norm(a, **kw) for a in M2]), err_msg=str(kw))


def test_complex_values_under_vmap():
    z = X + 1j * Y

    def real_loss(z):
        return np.sum(np.abs(np.exp(z) * np.conj(z)) ** 2)

    np.testing.assert_allclose(dt.vmap(dt.grad(real_loss))(z), loop(dt.grad(real_loss), z), rtol=1e-12)
    holomorphic = lambda z: np.sin(z) * z.sum()
    np.testing.assert_allclose(dt.vmap(dt.jacfwd(holomorphic, holomorphic=True))(z),
                               loop(dt.jacfwd(holomorphic, holomorphic=True), z), rtol=1e-12)
    np.testing.assert_allclose(dt.vmap(lambda z, t: dt.jvp(holomorphic, (z,), (t,))[1])(z, z[::-1]),
                               loop(lambda z, t: dt.jvp(holomorphic, (z,), (t,))[1], z, z[::-1]), rtol=1e-12)


def test_custom_rules_under_vmap():
    @dt.custom_vjp
    def f(x):
        return np.sin(x) * 2

    f.defvjp(lambda x: (f(x), x), lambda x, g: (g * np.cos(x) * 2,))
    np.testing.assert_allclose(dt.vmap(dt.grad(lambda x: np.sum(f(x))))(X), 2 * np.cos(X))

    @dt.custom_jvp
    def h(x):
        return np.exp(x)

    h.defjvp(lambda primals, tangents: (h(primals[0]), h(primals[0]) * tangents[0]))
    np.testing.assert_allclose(dt.vmap(dt.grad(lambda x: np.sum(h(x))))(X), np.exp(X))
    np.testing.assert_allclose(dt.vmap(lambda x: dt.jvp(h, (x,), (np.ones(3),))[1])(X), np.exp(X))

    @dt.primitive
    def cube(x):
        return x ** 3

    dt.defvjp(cube, lambda ans, x: lambda g: g * 3 * x ** 2)
    np.testing.assert_allclose(dt.vmap(dt.grad(lambda x: np.sum(cube(x))))(X), 3 * X ** 2)
    checkpointed = lambda x: np.sum(dt.checkpoint(lambda y: np.sin(y) ** 2)(x))
    np.testing.assert_allclose(dt.vmap(dt.grad(checkpointed))(X), 2 * np.sin(X) * np.cos(X))
    np.testing.assert_allclose(dt.vmap(lambda x: x * 2, axis_name="batch")(X), X * 2)


def test_a_gradient_tape_inside_vectorized_map():
    """TF's per-example gradients: a GradientTape inside the mapped function."""
    def per_example(x):
        with dt.GradientTape() as tape:
            tape.watch(x)
            z = dt.reduce_sum(dt.sin(x) ** 2)
        return tape.gradient(z, x)

    np.testing.assert_allclose(dt.vectorized_map(per_example, dt.constant(X)).numpy(),
                               (2 * np.sin(X) * np.cos(X)).astype(np.float32), rtol=1e-5)
    np.testing.assert_allclose(dt.vmap(lambda r: per_example(dt.convert_to_tensor(r)))(X), 2 * np.sin(X) * np.cos(X))
    w = dt.Variable(W)

    def per_example_w(x):
        with dt.GradientTape() as tape:
            loss = dt.reduce_sum(dt.matmul(x[None, :], w) ** 2)
        return tape.gradient(loss, w)

    got = dt.vectorized_map(per_example_w, dt.constant(X, dtype=dt.float64))
    want = np.stack([2 * np.outer(x, x @ W) for x in X])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def test_an_outer_vmaps_index_inside_an_inner_vmap():
    """x[i] with i batched by the outer vmap and x by the inner one: each level takes its own."""
    table = rng.standard_normal((3, 5, 4))
    idx = np.array([0, 3])
    got = dt.vmap(lambda i: dt.vmap(lambda x: x[i])(table))(idx)
    np.testing.assert_allclose(got, np.stack([np.stack([x[i] for x in table]) for i in idx]))
    got = dt.vmap(lambda x: dt.vmap(lambda i: x[i])(idx))(table)
    np.testing.assert_allclose(got, np.stack([np.stack([x[i] for i in idx]) for x in table]))
