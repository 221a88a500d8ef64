"""`np.sum(x, dtype=...)` and the other reductions' `dtype=` on traced values (issue 13): a float
dtype is a cast followed by the reduction, so it is differentiable in the tape, the functional
API and dual numbers; an integer or boolean dtype drops the derivative and is refused, naming
the op, the dtypes and the fix. Plain arrays keep NumPy's own semantics."""

import numpy as np
import pytest

import dualtape
import dualtape as tf
from dualtape import dnp

X = np.array([[0.5, 1.5, -2.0], [1.0, 2.0, 3.0]])
REDUCTIONS = ["sum", "mean", "prod", "cumsum", "var", "std"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, "float32"])
def test_float_dtype_is_a_cast_then_the_reduction(name, dtype):
    fn = getattr(np, name)
    expected = fn(X, dtype=dtype)
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x, dtype=dtype)
        loss = np.sum(y * y)
    assert y.numpy().dtype == expected.dtype  # NumPy's result dtype
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)
    # the derivative of the cast is the identity: the float64 gradient, to float32's precision
    reference = dualtape.grad(lambda v: np.sum(fn(v) ** 2))(X)
    rtol = 1e-12 if np.dtype(dtype) == np.float64 else 1e-5
    gradient = tape.gradient(loss, x).numpy()
    assert gradient.dtype == np.float64  # the cast's VJP casts back to the input's dtype
    np.testing.assert_allclose(gradient, reference, rtol=rtol)
    np.testing.assert_allclose(dualtape.grad(lambda v: np.sum(fn(v, dtype=dtype) ** 2))(X), reference, rtol=rtol)
    value, tangent = dualtape.jvp(lambda v: fn(v, dtype=dtype), (X,), (np.ones_like(X),))
    _, tangent64 = dualtape.jvp(fn, (X,), (np.ones_like(X),))
    assert np.asarray(tangent).dtype == expected.dtype
    np.testing.assert_allclose(tangent, tangent64, rtol=rtol)


def test_float_dtype_on_an_integer_tensor():
    n = tf.constant(np.array([1, 2, 3]))
    assert np.sum(n, dtype=np.float64).numpy() == 6.0
    assert np.mean(n, dtype=np.float32).numpy().dtype == np.float32


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.int64, np.int32, bool])
def test_integer_dtype_is_refused_naming_the_fix(name, dtype):
    fn = getattr(np, name)
    with pytest.raises(TypeError, match=rf"\[{name}\] dtype={np.dtype(dtype)} on a differentiable value of dtype "
                                        r"float64 and shape \(2, 3\).*Pass a float dtype"):
        dualtape.grad(lambda v: np.sum(fn(v, dtype=dtype)))(X)
    with pytest.raises(TypeError, match=rf"\[{name}\] dtype="):
        dualtape.jvp(lambda v: fn(v, dtype=dtype), (X,), (np.ones_like(X),))


@pytest.mark.parametrize("name", REDUCTIONS)
def test_plain_arrays_keep_numpys_dtype_semantics(name):
    # np.mean(x, dtype=int) sums in integers, then divides: not a cast followed by the mean
    expected = getattr(np, name)(X, dtype=np.int64)
    np.testing.assert_array_equal(getattr(dnp, name)(X, dtype=np.int64), expected)
