"""dtypes promote as in NumPy under the functional API (issue 19): `x - np.floor(x).astype(int)`
under dualtape.grad raised TF's InvalidArgumentError. TF's strict rules stay on the TF
surface: tensors a user makes (tf.constant, tf.Variable) under a user's GradientTape, and
tf.* functions."""

import numpy as np
import pytest

import dualtape
import dualtape as tf
from dualtape.errors import InvalidArgumentError

X = np.array([1.5, 2.25, -0.75])


@pytest.mark.parametrize("f, df", [
    (lambda x: np.sum(x - np.floor(x).astype(int)), lambda x: np.ones_like(x)),  # the issue's
    (lambda x: np.sum(np.floor(x).astype(int) * 0.5 * x), lambda x: 0.5 * np.floor(x)),  # int tensor * float
    (lambda x: np.sum(x.astype(np.float32) * x), lambda x: 2 * x),  # float32 tensor * float64 tensor
    (lambda x: np.sum(x.astype(np.float32) * np.array([1.0, 2.0, 3.0])), lambda x: np.array([1.0, 2.0, 3.0])),
    (lambda x: np.sum(x * [1, 2, 3]), lambda x: np.array([1.0, 2.0, 3.0])),
])
def test_numpy_promotion_in_every_functional_mode(f, df):
    np.testing.assert_allclose(dualtape.grad(f)(X), df(X), rtol=1e-6)
    np.testing.assert_allclose(dualtape.vjp(f, X)[1](1.0)[0], df(X), rtol=1e-6)
    np.testing.assert_allclose(dualtape.jvp(f, (X,), (np.ones(3),))[1], np.sum(df(X)), rtol=1e-6)
    np.testing.assert_allclose(dualtape.hvp(f, (X,), (np.ones(3),)), dualtape.hessian(f)(X) @ np.ones(3))
    assert np.isclose(dualtape.value_and_grad(f)(X)[0], f(X.copy()), rtol=1e-6)  # NumPy's value and dtype


def test_the_value_keeps_numpy_dtype():
    value = dualtape.value_and_grad(lambda x: np.sum(x.astype(np.float32) * np.array([1.0, 2.0, 3.0])))(X)[0]
    assert value.dtype == np.float64  # NumPy: float32 * float64 array is float64 (TF would cast to float32)


def test_a_user_tape_keeps_tf_errors():
    x = tf.constant([1.5, 2.25])
    with tf.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(InvalidArgumentError, match=r"\[Op:Sub\]"):
            x - tf.cast(tf.math.floor(x), tf.int32)
        with pytest.raises(TypeError, match="Cannot convert 0.5"):
            tf.constant([1, 2]) * 0.5
    with pytest.raises(InvalidArgumentError):
        tf.constant([1.0], dtype=tf.float32) + tf.constant([1.0], dtype=tf.float64)


def test_in_place_casting_is_numpys():
    def f(x):
        k = np.floor(x).astype(int)
        k += x  # NumPy: Cannot cast ufunc 'add' output from float64 to int64 ('same_kind')
        return np.sum(k)
    with pytest.raises(TypeError, match="same_kind"):
        dualtape.grad(f)(X)

    def g(x):
        a = x.astype(np.float32)
        a += x  # float64 into float32: allowed by 'same_kind', the result stays float32
        return np.sum(a * x)
    value, grad = dualtape.value_and_grad(g)(X)
    np.testing.assert_allclose(grad, 4 * X, rtol=1e-6)
    assert np.isclose(value, g(X.copy()), rtol=1e-6)
