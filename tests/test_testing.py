"""dualtape.testing itself: check_grads must catch wrong rules, the strategies must cover
the cases the registry tests rely on (broadcasting, 0-d, domains)."""

import itertools

import numpy as np
import pytest
from hypothesis import find, given
from hypothesis import strategies as st

import dualtape
from dualtape import dnp
from dualtape.registry import REGISTRY, defop, unregister_gradient
from dualtape.testing import (HAS_FORWARD_MODE, arrays, assert_close, broadcastable_shapes,
                              central_difference, check_grads, inputs_for, numeric_jacobian)

_unique = itertools.count()


# Rules of the test primitives: module level, because rules may not close over anything.
def sin_vjp(g, ans, x):
    return g * dnp.cos(x)


def sin_jvp(dx, ans, x):
    return dx * dnp.cos(x)


def flipped_sin_vjp(g, ans, x):
    return -g * dnp.cos(x)  # deliberately wrong sign


def flipped_sin_jvp(dx, ans, x):
    return -dx * dnp.cos(x)  # deliberately wrong sign


@pytest.fixture
def make_op():
    """defop under a unique test-only name; the op leaves the registry after the test."""
    names = []

    def make(impl=np.sin, **kw):
        name = f"DualtapeTestOp{next(_unique)}"
        names.append(name)
        return defop(name, impl, **kw)

    yield make
    for name in names:
        REGISTRY.pop(name, None)


X = np.array([[-1.2, 0.3, 0.8], [2.0, -0.4, 1.1]])


# -- check_grads ----------------------------------------------------------------------------------

def test_check_grads_passes_correct_functions():
    def model(x, y):
        return dnp.sin(x) * y + dnp.exp(y) / (1.0 + x * x)

    y = np.array([0.5, -0.25, 1.5])  # broadcasts against X
    check_grads(model, [X, y], order=2)
    check_grads(model, [X.astype(np.float32), y.astype(np.float32)], order=2)


def test_check_grads_passes_a_correct_primitive(make_op):
    op = make_op(vjp=sin_vjp, jvp=sin_jvp, elementwise=True)
    check_grads(lambda x: op(x), [X], order=2)


def test_check_grads_catches_a_flipped_vjp(make_op):
    op = make_op(vjp=flipped_sin_vjp, jvp=sin_jvp, elementwise=True)

    def sine_model(x, y):
        return op(x) * y

    with pytest.raises(AssertionError) as info:
        check_grads(sine_model, [X, np.array(2.0)], modes=("rev",))
    message = str(info.value)
    assert "sine_model" in message and "argument 0" in message, message
    assert "max abs error" in message and "max rel error" in message, message


def test_check_grads_catches_a_flipped_jvp(make_op):
    if not HAS_FORWARD_MODE:
        pytest.skip("dualtape.functional.jvp is not importable: forward mode cannot be checked")
    op = make_op(vjp=sin_vjp, jvp=flipped_sin_jvp, elementwise=True)
    check_grads(lambda x: op(x), [X], modes=("rev",))  # reverse mode alone is right
    with pytest.raises(AssertionError, match="forward-mode JVP"):
        check_grads(lambda x: op(x), [X], modes=("fwd",))


def test_check_grads_order_2_catches_a_wrong_second_derivative():
    """Sin's VJP calls Cos; a wrong Cos gradient is invisible at first order only."""
    @dualtape.RegisterGradient("Cos")
    def _flipped_cos_grad(op, grad):
        return grad * dnp.sin(op.inputs[0])  # deliberately wrong sign

    try:
        check_grads(dnp.sin, [X], order=1)
        with pytest.raises(AssertionError, match="second-order"):
            check_grads(dnp.sin, [X], order=2)
    finally:
        unregister_gradient("Cos")


def test_check_grads_rejects_bad_arguments():
    with pytest.raises(ValueError, match="no floating-point argument"):
        check_grads(lambda n: n * 2, [np.array([1, 2])])
    with pytest.raises(ValueError, match="order=3"):
        check_grads(dnp.sin, [X], order=3)


def test_finite_differences_of_a_linear_map():
    a = np.arange(6.0).reshape(2, 3)
    f = lambda x: a @ x  # noqa: E731
    x = np.array([0.5, -1.0, 2.0])
    assert_close(numeric_jacobian(f, [x]), a, 1e-8, 1e-8, what="numeric_jacobian")
    t = np.array([1.0, 0.0, -1.0])
    assert_close(central_difference(f, [x], [t], 1e-6), a @ t, 1e-8, 1e-8, what="central_difference")


def test_assert_close_names_the_error():
    with pytest.raises(AssertionError, match=r"my value: max abs error 0\.5"):
        assert_close(np.array([1.0, 2.5]), np.array([1.0, 2.0]), 1e-6, 0.0, what="my value")


# -- strategies -----------------------------------------------------------------------------------

@given(shapes=broadcastable_shapes(3))
def test_broadcastable_shapes_broadcast(shapes):
    assert len(shapes) == 3
    np.broadcast_shapes(*shapes)


@pytest.mark.parametrize("feature, holds", [
    ("a 0-d shape", lambda s: any(len(x) == 0 for x in s)),
    ("a size-1 axis broadcast against a longer one", lambda s: _stretches_size_one(s)),
    ("missing leading axes", lambda s: len({len(x) for x in s}) > 1),
])
def test_broadcastable_shapes_cover(feature, holds):
    find(broadcastable_shapes(2), holds)  # raises NoSuchExample if never generated


def _stretches_size_one(shapes):
    out = np.broadcast_shapes(*shapes)
    return any(n == 1 and out[len(out) - len(s) + k] > 1 for s in shapes for k, n in enumerate(s))


@given(data=st.data())
def test_arrays_are_finite_and_well_scaled(data):
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    shape = data.draw(st.sampled_from([(), (3,), (2, 1, 3)]))
    a = data.draw(arrays(dtype, shape))
    assert a.dtype == dtype and a.shape == shape
    assert np.all(np.isfinite(a)) and np.all(np.abs(a) <= 3)


def _frac_distance(q):
    return np.abs(q - np.round(q))


DOMAIN_CHECKS = {
    "Log": lambda x: np.all(x > 0),
    "Reciprocal": lambda x: np.all(np.abs(x) >= 0.05),
    "Asin": lambda x: np.all(np.abs(x) < 1),
    "RealDiv": lambda x, y: np.all(np.abs(y) >= 0.05),
    "FloorMod": lambda x, y: np.all(_frac_distance(np.asarray(x) / np.asarray(y)) >= 0.05),
    "Maximum": lambda x, y: np.all(np.abs(np.asarray(x) - np.asarray(y)) >= 0.05),
    "ClipByValue": lambda x, lo, hi: np.all(np.asarray(lo) < np.asarray(hi)),
    "SelectV2": lambda c, x, y: np.asarray(c).dtype == np.bool_,
}


@pytest.mark.parametrize("name", sorted(DOMAIN_CHECKS))
@given(data=st.data())
def test_inputs_for_honors_the_domain(name, data):
    op = REGISTRY[name]
    args, static = data.draw(inputs_for(op))
    assert static == {}
    np.broadcast_shapes(*[np.shape(a) for a in args])
    with np.errstate(all="ignore"):
        assert DOMAIN_CHECKS[name](*args), f"{name} drawn outside its domain: {args}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_inputs_for_uses_samples_of_other_ops(dtype):
    op = REGISTRY["MatMul"]
    args, static = find(inputs_for(op, dtype), lambda case: True)
    assert any(a.shape == s[0][i].shape for s in [f(np.random.default_rng(0)) for f in op.samples]
               for i, a in enumerate(args) if i < len(s[0]))
    assert all(a.dtype == dtype for a in args)


def test_inputs_for_rejects_unknown_domains(make_op):
    op = make_op(vjp=sin_vjp, jvp=sin_jvp, elementwise=True, domain={"x": "squarefree"})
    with pytest.raises(ValueError, match="squarefree"):
        inputs_for(op)
    unsampled = make_op(impl=np.sum, vjp=sin_vjp, jvp=sin_jvp)
    with pytest.raises(ValueError, match="samples"):
        inputs_for(unsampled)
