"""tf.nn.silu / swish, tf.nn.embedding_lookup and tf.grad_pass_through (issue 19, section 3):
missing before; TF 2.21's values, dtypes and gradients, in tape and forward modes."""

import numpy as np
import pytest

import dualtape as tf

X = np.array([-2.0, -0.5, 0.0, 0.5, 3.0], np.float32)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize("name", ["silu", "swish"])
@pytest.mark.parametrize("beta", [1.0, 2.5])
def test_silu_values_and_derivatives(name, beta):
    fn = getattr(tf.nn, name)
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x, beta=beta)
    x64 = X.astype(np.float64)
    s = _sigmoid(beta * x64)
    assert y.dtype == tf.float32
    np.testing.assert_allclose(y.numpy(), x64 * s, rtol=1e-6, atol=1e-7)
    slope = s + beta * x64 * s * (1 - s)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), slope, rtol=1e-5, atol=1e-6)
    with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
        y = fn(x, beta=beta)
    np.testing.assert_allclose(acc.jvp(y).numpy(), slope, rtol=1e-5, atol=1e-6)


def test_silu_default_beta_and_float64():
    y = tf.nn.silu(tf.constant([1.0], tf.float64))
    assert y.dtype == tf.float64 and np.isclose(y.numpy()[0], _sigmoid(1.0))


def test_embedding_lookup_gathers_rows():
    params = tf.constant(np.arange(12.0, dtype=np.float32).reshape(4, 3))
    out = tf.nn.embedding_lookup(params, [[0, 3], [2, 2]])
    assert out.shape == (2, 2, 3) and out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), np.arange(12.0).reshape(4, 3)[[[0, 3], [2, 2]]])
    np.testing.assert_array_equal(tf.nn.embedding_lookup([params], tf.constant(1)).numpy(), [3, 4, 5])


def test_embedding_lookup_gradient_adds_repeated_rows():
    table = tf.Variable(np.ones((4, 2), np.float32))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.nn.embedding_lookup(table, [3, 0, 3]) * tf.constant([[1.0, 2.0]]))
    g = tf.convert_to_tensor(tape.gradient(y, table))
    np.testing.assert_array_equal(g.numpy(), [[1, 2], [0, 0], [0, 0], [2, 4]])
    x = tf.constant(np.ones((3, 2)))
    with tf.autodiff.ForwardAccumulator(x, tf.constant(np.arange(6.0).reshape(3, 2))) as acc:
        y = tf.nn.embedding_lookup(x, [2, 0])
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [[4, 5], [0, 1]])


def test_embedding_lookup_max_norm_clips_each_embedding():
    params = tf.constant([[3.0, 4.0], [0.3, 0.4]])
    np.testing.assert_allclose(tf.nn.embedding_lookup(params, [0, 1], max_norm=1.0).numpy(),
                               [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)


def test_embedding_lookup_refuses_what_it_cannot_do():
    params = tf.constant(np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"\[embedding_lookup\] got 2 partitioned params"):
        tf.nn.embedding_lookup([params, params], [0])
    with pytest.raises(TypeError, match=r"\[embedding_lookup\] ids must be integers"):
        tf.nn.embedding_lookup(params, [0.5])


def test_grad_pass_through_values_and_identity_gradient():
    x = tf.Variable([1.3, -0.4, 2.6])
    rounded = tf.grad_pass_through(tf.round)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(rounded(x) * tf.constant([2.0, 3.0, 4.0]))
    assert y.numpy() == 2.0 * 1 + 3.0 * -0.0 + 4.0 * 3
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 3.0, 4.0])  # round: 0 / None
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 2.0, 3.0])) as acc:
        y = rounded(x)
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(tf.grad(lambda a: np.sum(rounded(a)))(np.array([0.2, 0.7])), [1.0, 1.0])


def test_grad_pass_through_gives_variables_no_gradient():
    w = tf.Variable(3.0)
    x = tf.Variable([1.0, 2.0])
    scaled = tf.grad_pass_through(lambda a: a * w)  # TF's docstring example
    with tf.GradientTape() as tape:
        y = scaled(x)
    dx, dw = tape.gradient(y, [x, w])
    np.testing.assert_array_equal(y.numpy(), [3.0, 6.0])
    np.testing.assert_array_equal(dx.numpy(), [1.0, 1.0])
    assert dw is None
