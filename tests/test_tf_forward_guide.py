"""The examples of TF's forward-mode documentation (tf.autodiff.ForwardAccumulator)."""

import numpy as np

import dualtape as tf


def test_hessian_vector_product_forward_over_backward():
    v = tf.Variable([1., 2.])
    with tf.autodiff.ForwardAccumulator(v, tf.constant([1., 0.])) as acc:
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(v ** 3.)
        backward = tape.gradient(y, v)
    assert repr(backward) == "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 3., 12.], dtype=float32)>"
    assert repr(acc.jvp(backward)) == "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([6., 0.], dtype=float32)>"


def test_jvp_of_a_keras_style_layer():
    tf.keras.backend.clear_session()
    x = tf.constant([[2.0, 3.0], [1.0, 4.0]])
    targets = tf.constant([[1.], [-1.]])
    dense = tf.keras.layers.Dense(1)
    dense.build([None, 2])
    with tf.autodiff.ForwardAccumulator(primals=dense.kernel, tangents=tf.constant([[1.], [0.]])) as acc:
        loss = tf.reduce_sum((dense(x) - targets) ** 2.)
    kernel = dense.kernel.numpy()
    residual = x.numpy() @ kernel - targets.numpy()
    expected = np.sum(2 * residual * (x.numpy() @ np.array([[1.0], [0.0]])))
    np.testing.assert_allclose(acc.jvp(loss).numpy(), expected, rtol=1e-5)
    assert len(dense.trainable_variables) == 2  # build() by hand is not repeated by the call


def test_jvp_of_a_keras_layer_output_and_unconnected():
    x = tf.constant([[2.0, 3.0]])
    dense = tf.keras.layers.Dense(1, use_bias=False)
    dense.build([None, 2])
    other = tf.Variable(1.0)
    with tf.autodiff.ForwardAccumulator(dense.kernel, tf.constant([[1.], [1.]])) as acc:
        out = dense(x)
        unrelated = other * 2.0
    np.testing.assert_allclose(acc.jvp(out).numpy(), [[5.0]])
    assert acc.jvp(unrelated) is None
    zero = acc.jvp(unrelated, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert zero.numpy() == 0.0
