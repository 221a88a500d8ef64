"""Forward mode: dual numbers, chunked tangents, nesting tags, ForwardAccumulator (issue #3)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dualtape as tf
from dualtape import dnp
from dualtape.forward.dual import Dual, new_tag
from dualtape.registry import defop


def _dual(x, t, batch=None):
    return Dual(np.asarray(x, float), np.asarray(t, float), new_tag(), batch)


def test_numpy_protocols_and_operators_route_to_dnp():
    x = _dual([1.0, 2.0], [1.0, 0.5])
    y = np.sin(x) * x + 2.0 - x / 3.0
    expected = (np.cos([1.0, 2.0]) * [1.0, 2.0] + np.sin([1.0, 2.0]) - 1 / 3) * [1.0, 0.5]
    assert isinstance(y, Dual)
    np.testing.assert_allclose(y.tangent, expected)
    assert y.shape == (2,) and y.ndim == 1 and y.dtype == np.float64
    assert isinstance(np.sum(x ** 2), Dual)


def test_comparisons_and_bool_use_the_primal():
    x = _dual(2.0, 1e9)
    assert bool(x > 1.0) and not bool(x < 1.0)
    assert int(x) == 2
    # regression: #10, float() of a dual dropped its tangent silently (tests/test_escapes.py)
    with pytest.raises(TypeError, match="tangent"):
        float(x)


def test_plain_conversion_of_a_dual_is_an_error():
    with pytest.raises(TypeError, match="tangent"):
        np.asarray(_dual([1.0], [1.0]))


def test_op_without_jvp_rule_raises_lookup_error_naming_it():
    op = defop("NoJvpForTest3", lambda x: x * 2)
    with pytest.raises(LookupError, match="NoJvpForTest3"):
        tf.jvp(op, (1.0,), (1.0,))


@pytest.mark.parametrize("shapes", [((3,), (2, 3)), ((2, 1), (1, 4)), ((), (3,)), ((4,), ())])
def test_batched_tangents_broadcast_like_single_ones(shapes):
    rng = np.random.default_rng(1)
    x, y = (rng.standard_normal(s) for s in shapes)
    k = 3
    tx, ty = (rng.standard_normal((k,) + s) for s in shapes)

    def f(a, b):
        z = np.tanh(a) * b + a / (1.5 + b * b)
        return z + dnp.sum(z * z, axis=0) if np.ndim(z) else z

    tag = new_tag()
    out = f(Dual(x, tx, tag, k), Dual(y, ty, tag, k))
    for j in range(k):
        single = tf.jvp(f, (x, y), (tx[j], ty[j]))[1]
        np.testing.assert_allclose(out.tangent[j], single, rtol=1e-12, atol=1e-12)


def test_batched_matmul_shapes():
    rng = np.random.default_rng(2)
    for xs, ys in [((3, 4), (4, 2)), ((3, 4), (4,)), ((4,), (4, 2)), ((4,), (4,)), ((2, 3, 4), (4, 5))]:
        x, y = rng.standard_normal(xs), rng.standard_normal(ys)
        jx = tf.jacfwd(lambda a, b: a @ b, argnums=(0, 1))(x, y)
        jr = tf.jacrev(lambda a, b: a @ b, argnums=(0, 1))(x, y)
        for a, b in zip(jx, jr):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


# -- perturbation confusion (issue #3): every nesting of forward and reverse ------------------

def test_classic_perturbation_confusion():
    inner = lambda x: tf.jvp(lambda y: x + y, (1.0,), (1.0,))[1]
    assert tf.jvp(lambda x: x * inner(x), (1.0,), (1.0,))[1] == 1.0


INNER = {
    "forward": lambda x: tf.jvp(lambda y: x * y, (2.0,), (1.0,))[1],
    "reverse": lambda x: tf.grad(lambda y: x * y)(2.0),
}
OUTER = {
    "forward": lambda h: tf.jvp(h, (1.0,), (1.0,))[1],
    "reverse": lambda h: tf.grad(h)(1.0),
}


@pytest.mark.parametrize("outer", OUTER)
@pytest.mark.parametrize("inner", INNER)
def test_x_times_inner_derivative_is_2_in_every_nesting(outer, inner):
    d = INNER[inner]
    assert OUTER[outer](lambda x: x * d(x)) == 2.0
    assert OUTER[outer](lambda x: x * d(x)) == 2.0  # the same inner call twice: same answer
    assert OUTER[outer](lambda x: d(x) * d(x)) == 2.0  # d(x) = x, so d/dx x^2


@pytest.mark.parametrize("outer", OUTER)
@pytest.mark.parametrize("inner", ["forward", "reverse"])
def test_inner_derivative_at_the_outer_variable(outer, inner):
    # d/dx [x * d/dy (x + y)|_{y=x}] = 1: y's perturbation must not leak into x's
    d = {"forward": lambda x: tf.jvp(lambda y: x + y, (x,), (1.0,))[1],
         "reverse": lambda x: tf.grad(lambda y: x + y)(x)}[inner]
    assert OUTER[outer](lambda x: x * d(x)) == 1.0


# -- ForwardAccumulator ------------------------------------------------------------------------

def test_accumulator_around_tape_gives_hvp_as_in_tf_guide():
    x = tf.constant([2.0, 3.0], dtype=tf.float64)
    v = tf.constant([1.0, -1.0], dtype=tf.float64)
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = dnp.sum(x ** 3 * x[::-1])
        g = tape.gradient(y, x)
    hvp = acc.jvp(g).numpy()
    expected = tf.hvp(lambda a: dnp.sum(a ** 3 * a[::-1]), (np.array([2.0, 3.0]),),
                      (np.array([1.0, -1.0]),))
    np.testing.assert_allclose(hvp, expected)


def test_tape_around_accumulator_is_reverse_over_forward():
    x = tf.constant([0.5, 1.5], dtype=tf.float64)
    v = np.array([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tf.autodiff.ForwardAccumulator(x, v) as acc:
            y = dnp.sum(dnp.sin(x) * x)
        jv = acc.jvp(y)
    g = tape.gradient(jv, x).numpy()
    f = lambda a: dnp.sum(dnp.sin(a) * a)
    np.testing.assert_allclose(g, tf.hvp(f, (x.numpy(),), (v,)))


def test_accumulator_with_variables_and_nested_structures():
    w = tf.Variable([[1.0], [2.0]])
    b = tf.Variable([0.5])
    x = tf.constant([[2.0, 3.0], [1.0, 4.0]])
    targets = tf.constant([[1.0], [-1.0]])
    with tf.autodiff.ForwardAccumulator(primals={"w": w, "b": b},
                                        tangents={"w": tf.constant([[1.0], [0.0]]),
                                                  "b": tf.constant([0.0])}) as acc:
        loss = dnp.sum((x @ w + b - targets) ** 2.0)
    out = acc.jvp({"loss": loss, "w": w, "none": x})
    residual = x.numpy() @ w.numpy() + b.numpy() - targets.numpy()
    np.testing.assert_allclose(out["loss"].numpy(), np.sum(2 * residual[:, 0] * x.numpy()[:, 0]), rtol=1e-6)
    np.testing.assert_allclose(out["w"].numpy(), [[1.0], [0.0]])
    assert out["none"] is None
    zero = acc.jvp(x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(zero.numpy(), np.zeros((2, 2)))


def test_accumulator_ignores_its_own_jvp_but_outer_ones_see_it():
    x = tf.constant(1.5, dtype=tf.float64)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0, dtype=tf.float64)) as outer:
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0, dtype=tf.float64)) as inner:
            y = x * x * x
        first = inner.jvp(y)
    assert first.numpy() == pytest.approx(3 * 1.5 ** 2)
    assert outer.jvp(first).numpy() == pytest.approx(6 * 1.5)


@given(st.lists(st.floats(-2, 2), min_size=1, max_size=5), st.data())
def test_accumulator_matches_functional_jvp(values, data):
    x = np.array(values)
    v = np.array(data.draw(st.lists(st.floats(-2, 2), min_size=len(x), max_size=len(x))))
    f = lambda a: dnp.sum(dnp.tanh(a) * a ** 2) + dnp.mean(np.exp(-a * a))
    xt = tf.constant(x)
    with tf.autodiff.ForwardAccumulator(xt, v) as acc:
        y = f(xt)
    np.testing.assert_allclose(acc.jvp(y).numpy(), tf.jvp(f, (x,), (v,))[1], rtol=1e-10, atol=1e-12)


def test_jvp_never_writes_into_input_tangents():
    # FloorMod's x-rule returns dx itself: adding the y-part must not happen in place
    x, y = np.array([5.5, -3.0]), np.array([2.0, 4.0])
    dx, dy = np.array([1.0, 2.0]), np.array([0.5, 0.25])
    saved = dx.copy(), dy.copy()
    _, t = tf.jvp(dnp.mod, (x, y), (dx, dy))
    np.testing.assert_array_equal(dx, saved[0])
    np.testing.assert_array_equal(dy, saved[1])
    np.testing.assert_allclose(t, dx - dy * np.floor_divide(x, y))
    # Mul adds two fresh parts (in place); the inputs stay as they were
    _, t = tf.jvp(lambda a, b: a * b, (x, y), (dx, dy))
    np.testing.assert_allclose(t, dx * y + x * dy)
    np.testing.assert_array_equal(dx, saved[0])


def test_linear_ops_with_one_constant_argument():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    c = np.array([10.0, 20.0], dtype=np.float32)
    _, t = tf.jvp(lambda a: a - c, (x,), (np.ones_like(x),))
    np.testing.assert_array_equal(t, np.ones_like(x))
    assert t.dtype == np.float64
    _, t = tf.jvp(lambda a: c - a, (x,), (np.ones_like(x),))
    np.testing.assert_array_equal(t, -np.ones_like(x))
    _, t = tf.jvp(lambda a: dnp.sum(dnp.transpose(a) + a, axis=0), (x,), (x,))
    np.testing.assert_allclose(t, np.sum(x.T + x, axis=0))
