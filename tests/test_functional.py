"""Functional API: jvp, grad, vjp, jacfwd, jacrev, hessian, hvp, linearize (issue #3)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dualtape as tf
from dualtape import dnp


def f_scalar(x):
    return dnp.sum(dnp.sin(x) * x ** 2) + dnp.sum(x[:-1] * x[1:] ** 2)


def f_vector(x):
    return dnp.tanh(x) * dnp.sum(x * x) + x[::-1]


vectors = hnp.arrays(np.float64, st.integers(2, 6), elements=st.floats(-2, 2))


def tape_jacobian(f, x):
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = f(xt)
    return tape.jacobian(y, xt).numpy()


def tape_hessian(f, x):
    xt = tf.constant(x)
    with tf.GradientTape() as outer:
        outer.watch(xt)
        with tf.GradientTape() as inner:
            inner.watch(xt)
            y = f(xt)
        g = inner.gradient(y, xt)
    return outer.jacobian(g, xt).numpy()


@given(vectors, st.data())
def test_jvp_is_tape_jacobian_times_v(x, data):
    v = data.draw(hnp.arrays(np.float64, x.shape, elements=st.floats(-2, 2)))
    out, jv = tf.jvp(f_vector, (x,), (v,))
    np.testing.assert_allclose(out, f_vector(x))
    np.testing.assert_allclose(jv, tape_jacobian(f_vector, x) @ v, rtol=1e-10, atol=1e-10)


@given(vectors, st.data())
def test_hvp_is_hessian_times_v_and_finite_difference_of_gradient(x, data):
    v = data.draw(hnp.arrays(np.float64, x.shape, elements=st.floats(-2, 2)))
    hv = tf.hvp(f_scalar, (x,), (v,))
    H = tf.hessian(f_scalar)(x)
    np.testing.assert_allclose(hv, H @ v, rtol=1e-10, atol=1e-10)
    eps = 1e-6
    g = tf.grad(f_scalar)
    fd = (g(x + eps * v) - g(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-5)


@given(vectors)
def test_hessian_is_symmetric_and_matches_nested_tapes(x):
    H = tf.hessian(f_scalar)(x)
    np.testing.assert_allclose(H, H.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(H, tape_hessian(f_scalar, x), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 7, None])
def test_results_do_not_depend_on_chunk_size(chunk_size):
    x = np.linspace(-1.0, 1.5, 7)
    branchy = lambda a: dnp.where(a > 0, a ** 3, dnp.sin(a)) * dnp.sum(a)
    np.testing.assert_allclose(tf.jacfwd(branchy, chunk_size=chunk_size)(x), tf.jacrev(branchy)(x),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tf.hessian(f_scalar, chunk_size=chunk_size)(x),
                               tf.hessian(f_scalar)(x), rtol=1e-12, atol=1e-12)


def test_dtypes_float64_kept_and_python_floats_are_float64():
    out, t = tf.jvp(lambda x: x * 3.0, (2.0,), (1.0,))
    assert out.dtype == np.float64 and t.dtype == np.float64
    g = tf.grad(lambda x: dnp.sum(x * x))(np.array([1.0, 2.0], np.float32))
    assert g.dtype == np.float32 and isinstance(g, np.ndarray)
    assert tf.grad(lambda x: x ** 3)(2.0) == 12.0


def test_integer_inputs_raise_a_clear_type_error():
    with pytest.raises(TypeError, match="float"):
        tf.grad(lambda x: x * x)(3)
    with pytest.raises(TypeError, match="float"):
        tf.jvp(lambda x: x * x, (np.arange(3),), (np.ones(3),))


def test_nested_structures_in_and_out():
    params = {"w": np.array([[1.0, 2.0], [3.0, 4.0]]), "b": np.array([0.5, -0.5])}
    x = np.array([1.0, -1.0])

    def loss(p, x):
        h = dnp.tanh(p["w"] @ x + p["b"])
        return dnp.sum(h * h)

    g = tf.grad(loss)(params, x)
    assert set(g) == {"w", "b"} and g["w"].shape == (2, 2)
    eps = 1e-6
    bumped = {"w": params["w"], "b": params["b"] + [eps, 0]}
    assert g["b"][0] == pytest.approx((loss(bumped, x) - loss(params, x)) / eps, rel=1e-4)
    value, (gp, gx) = tf.value_and_grad(loss, argnums=(0, 1))(params, x)
    assert value == pytest.approx(loss(params, x))
    np.testing.assert_allclose(gp["w"], g["w"])

    out, jv = tf.jvp(lambda p: {"sum": p[0] + p[1], "prod": [p[0] * p[1]]},
                     ((np.array(2.0), np.array(3.0)),), ((np.array(1.0), np.array(0.0)),))
    assert out["sum"] == 5.0 and jv["sum"] == 1.0 and jv["prod"][0] == 3.0

    value, vjp_fn = tf.vjp(lambda a, b: (a * b, a + b), np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    ga, gb = vjp_fn((np.ones(2), np.array([1.0, 0.0])))
    np.testing.assert_allclose(ga, [4.0, 4.0])
    np.testing.assert_allclose(gb, [2.0, 2.0])


def test_has_aux_and_linearize():
    g, aux = tf.grad(lambda x: (x * x, {"x": x}), has_aux=True)(3.0)
    assert g == 6.0 and aux["x"] == 3.0
    out, f_jvp = tf.linearize(np.sin, np.array([0.0, 1.0]))
    np.testing.assert_allclose(out, np.sin([0.0, 1.0]))
    np.testing.assert_allclose(f_jvp(np.array([1.0, 2.0])), np.cos([0.0, 1.0]) * [1.0, 2.0])


def test_jacobians_of_several_arguments_and_unconnected_outputs():
    x, y = np.array([1.0, 2.0]), np.array([3.0])
    f = lambda a, b: (a * b, np.ones(3))
    for jac in (tf.jacfwd, tf.jacrev):
        (jx, jy), (cx, cy) = jac(f, argnums=(0, 1))(x, y)
        np.testing.assert_allclose(jx, np.diag([3.0, 3.0]))
        np.testing.assert_allclose(jy, [[1.0], [2.0]])
        assert cx.shape == (3, 2) and not cx.any() and cy.shape == (3, 1)


def test_hvp_of_mlp_matches_hessian_column():
    rng = np.random.default_rng(0)
    params = [rng.standard_normal((3, 4)) * 0.5, rng.standard_normal(4) * 0.1]
    x = rng.standard_normal((5, 3))

    def loss(w, b):
        return dnp.mean(dnp.tanh(x @ w + b) ** 2)

    vw, vb = np.zeros((3, 4)), np.zeros(4)
    vw[1, 2] = 1.0
    hw, hb = tf.hvp(loss, (params[0], params[1]), (vw, vb))
    H = tf.hessian(lambda w: loss(w, params[1]))(params[0])
    np.testing.assert_allclose(hw, H[:, :, 1, 2], rtol=1e-10, atol=1e-12)
    assert hb.shape == (4,)


def test_grad_of_grad_and_jvp_of_jvp_give_second_derivatives():
    f = lambda x: x ** 3 * dnp.sin(x)
    x = 0.7
    d2 = 6 * x * np.sin(x) + 6 * x ** 2 * np.cos(x) - x ** 3 * np.sin(x)
    assert tf.grad(tf.grad(f))(x) == pytest.approx(d2)
    assert tf.jvp(lambda a: tf.jvp(f, (a,), (1.0,))[1], (x,), (1.0,))[1] == pytest.approx(d2)
    assert tf.jvp(tf.grad(f), (x,), (1.0,))[1] == pytest.approx(d2)
    assert tf.grad(lambda a: tf.jvp(f, (a,), (1.0,))[1])(x) == pytest.approx(d2)


# -- second order on a recorded tape (second_order.py) -------------------------------------------

SECOND_ORDER_CORPUS = [
    lambda x: dnp.sum(dnp.exp(x) / (1 + x * x)),
    lambda x: dnp.sum(dnp.tanh(dnp.reshape(x, (2, 3)) @ np.arange(6.0).reshape(3, 2) + x[:2])),
    lambda x: dnp.sum(dnp.maximum(x, 0.1) * dnp.log1p(x * x)) + dnp.mean(x) ** 2,
    lambda x: dnp.sum(dnp.sum(dnp.reshape(x, (3, 2)) ** 3, axis=1) * x[::2]),
    lambda x: dnp.sum(dnp.where(x > 0, x ** 3, dnp.sin(x))) * dnp.prod(x[1:3]),
    lambda x: dnp.sum(dnp.transpose(dnp.reshape(x, (2, 3))) @ dnp.reshape(x, (2, 3))),
    lambda x: dnp.logsumexp(x * x) + dnp.sum(dnp.sqrt(1 + x ** 2)),
]


@pytest.mark.parametrize("f", SECOND_ORDER_CORPUS)
def test_hessian_and_hvp_on_the_tape_match_jacfwd_of_grad(f):
    x = np.array([0.3, -0.7, 1.1, 0.5, -1.3, 0.9])
    v = np.array([1.0, -2.0, 0.5, 0.25, 3.0, -1.0])
    nested = tf.jacfwd(tf.grad(f))(x)
    np.testing.assert_allclose(tf.hessian(f)(x), nested, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tf.hessian(f, chunk_size=4)(x), nested, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tf.hvp(f, (x,), (v,)), nested @ v, rtol=1e-10, atol=1e-12)


def test_hessian_of_matrix_argument_and_float32():
    w = np.arange(6.0).reshape(2, 3) / 10
    f = lambda a: dnp.sum(dnp.sin(a) * a)
    H = tf.hessian(f)(w)
    assert H.shape == (2, 3, 2, 3)
    np.testing.assert_allclose(H, tf.jacfwd(tf.grad(f))(w), rtol=1e-12)
    assert tf.hessian(f)(w.astype(np.float32)).dtype == np.float32


def test_second_order_of_linear_and_constant_functions_is_zero():
    x = np.array([1.0, 2.0, 3.0])
    for f in (lambda a: dnp.sum(a * 2.0), lambda a: 5.0 * np.ones(()), lambda a: dnp.sum(a) * 0.0 + 1.0):
        np.testing.assert_array_equal(tf.hessian(f)(x), np.zeros((3, 3)))
        np.testing.assert_array_equal(tf.hvp(f, (x,), (x,)), np.zeros(3))


def test_hvp_with_nested_primals_matches_hessian_blocks():
    params = {"w": np.array([[0.5, -0.2], [0.1, 0.3]]), "b": np.array([0.2, -0.1])}
    x = np.array([[1.0, 2.0], [-1.0, 0.5], [0.3, 0.3]])
    loss = lambda p: dnp.sum(dnp.tanh(x @ p["w"] + p["b"]) ** 2)
    v = {"w": np.array([[1.0, 0.0], [0.0, -1.0]]), "b": np.array([0.5, 2.0])}
    hv = tf.hvp(loss, (params,), (v,))
    expected = tf.jvp(tf.grad(loss), (params,), (v,))[1]
    for key in ("w", "b"):
        np.testing.assert_allclose(hv[key], expected[key], rtol=1e-12)


def test_second_order_inside_other_transforms_and_with_transforms_inside():
    f = lambda x: dnp.sum(x ** 3 * dnp.sin(x))
    x = np.array([0.4, -0.8])
    H = tf.hessian(f)(x)
    # a transform around hessian / hvp: the jvp-of-grad fallback, which nests
    third = tf.jvp(lambda a: tf.hessian(f)(a), (x,), (np.array([1.0, 0.0]),))[1]
    eps = 1e-6
    fd = (tf.hessian(f)(x + [eps, 0]) - tf.hessian(f)(x - [eps, 0])) / (2 * eps)
    np.testing.assert_allclose(third, fd, rtol=1e-6, atol=1e-6)
    d3 = tf.jacfwd(lambda a: tf.hvp(f, (a,), (np.array([1.0, 0.0]),)))(x)[:, 0]
    np.testing.assert_allclose(d3, third[:, 0], rtol=1e-10)
    # a transform inside f leaves traced values on the tape: also the fallback
    g = lambda a: tf.jvp(f, (a,), (np.ones(2),))[1] + f(a)
    np.testing.assert_allclose(tf.hessian(g)(x), tf.jacfwd(tf.grad(g))(x), rtol=1e-10)
    np.testing.assert_allclose(H, tf.jacfwd(tf.grad(f))(x), rtol=1e-12)


def test_second_order_errors_name_the_api():
    with pytest.raises(TypeError, match=r"\[hessian\] f must return a scalar"):
        tf.hessian(lambda a: a * 2)(np.ones(3))
    with pytest.raises(TypeError, match=r"\[hvp\] f must return a scalar"):
        tf.hvp(lambda a: a * 2, (np.ones(3),), (np.ones(3),))
    with pytest.raises(ValueError, match=r"\[hvp\] tangent of shape \(2,\)"):
        tf.hvp(lambda a: dnp.sum(a), (np.ones(3),), (np.ones(2),))


def test_tangent_sweep_skips_what_the_backward_pass_never_reads():
    from dualtape.ops import elementwise, reductions, trigonometric
    from dualtape.forward.second_order import _vjp_reads
    assert _vjp_reads(reductions.sum_vjp) == (False, set())  # np.shape(x) only
    assert _vjp_reads(elementwise.mul_vjp_x) == (False, {1})
    assert _vjp_reads(trigonometric.tanh_vjp) == (True, set())

    def scale_vjp(g, ans, x, y):
        return g * x.shape[0] * np.ndim(y)

    assert _vjp_reads(scale_vjp) == (False, set())
    assert _vjp_reads(lambda g, ans, x: g * x) is None  # no def to read: assume everything
