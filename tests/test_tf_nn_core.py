"""tf.nn's activations, losses, convolution and pooling (issue 24) against TensorFlow 2.21:
outputs and gradients recorded by tf_nn_reference_recorder.py (tf_nn_references.py), within
a few float32 roundings of the array's scale; forward mode against the tape; errors."""

import numpy as np
import pytest

import dualtape as tf
from dualtape import dnp
from tf_nn_cases import CASES, call, cotangent
from tf_nn_references import REFERENCES

EPS32 = np.finfo(np.float32).eps


def assert_f32_close(got, want, what, ulps=8):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    err = float(np.max(np.abs(got - want), initial=0.0))
    assert err <= ulps * EPS32 * scale, f"{what}: max error {err:.3g} > {ulps} ulp of {scale:.3g}"


@pytest.mark.parametrize("key", list(CASES))
def test_matches_tensorflow(key):
    name, build, wrt, kwargs = CASES[key]
    want_y, want_grads = REFERENCES[key]
    args = [tf.constant(a) for a in build()]
    with tf.GradientTape() as tape:
        for i in wrt:
            tape.watch(args[i])
        y = call(tf.nn, name, args, kwargs)
        loss = tf.reduce_sum(y * cotangent(y.shape))
    assert y.dtype == tf.float32
    assert_f32_close(y.numpy(), want_y, f"{key} output")
    for i, g, want in zip(wrt, tape.gradient(loss, [args[i] for i in wrt]), want_grads):
        assert g.dtype == tf.float32
        assert_f32_close(g.numpy(), want, f"{key} gradient of input {i}")


@pytest.mark.parametrize("key", list(CASES))
def test_forward_mode_agrees_with_the_tape(key):
    """<cotangent, J t> from dual numbers equals <J^T cotangent, t> from the tape (float64)."""
    name, build, wrt, kwargs = CASES[key]
    args = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in build()]
    tangents = [np.sin(np.arange(args[i].size) * 0.3 + 1).reshape(args[i].shape) for i in wrt]

    def f(*diff):
        full = list(args)
        for i, d in zip(wrt, diff):
            full[i] = d
        return call(tf.nn, name, [tf.convert_to_tensor(a) for a in full], kwargs)

    y, jv = tf.jvp(f, [args[i] for i in wrt], tangents)
    c = cotangent(np.shape(y)).astype(np.float64)
    _, vjp = tf.vjp(f, *[args[i] for i in wrt])
    grads = vjp(c)
    lhs = float(np.sum(c * np.asarray(jv)))
    rhs = sum(float(np.sum(np.asarray(g) * t)) for g, t in zip(grads, tangents))
    assert abs(lhs - rhs) <= 1e-10 * max(1.0, abs(lhs)), (key, lhs, rhs)


def test_conv2d_nchw_equals_nhwc_and_second_order():
    x = tf.constant(np.sin(np.arange(50.0)).reshape(1, 5, 5, 2))
    w = tf.constant(np.cos(np.arange(36.0)).reshape(3, 3, 2, 2))
    y = tf.nn.conv2d(x, w, 2, "SAME")
    y_nchw = tf.nn.conv2d(tf.transpose(x, [0, 3, 1, 2]), w, [1, 1, 2, 2], "SAME", data_format="NCHW")
    np.testing.assert_allclose(tf.transpose(y_nchw, [0, 2, 3, 1]).numpy(), y.numpy(), rtol=1e-12)
    # d/dw of <x, d/dx sum(conv(x, w)^2)>: two tapes through Conv2D and its adjoints
    with tf.GradientTape() as outer:
        outer.watch(w)
        with tf.GradientTape() as inner:
            inner.watch(x)
            loss = tf.reduce_sum(tf.nn.conv2d(x, w, 2, "SAME") ** 2)
        gx = inner.gradient(loss, x)
        z = tf.reduce_sum(gx * x)
    # z = <x, 2 J^T J x> = 2 * loss (loss is quadratic in x): dz/dw = 2 dloss/dw
    with tf.GradientTape() as tape:
        tape.watch(w)
        loss = tf.reduce_sum(tf.nn.conv2d(x, w, 2, "SAME") ** 2)
    np.testing.assert_allclose(outer.gradient(z, w).numpy(), 2 * tape.gradient(loss, w).numpy(), rtol=1e-10)


def test_conv_and_pool_through_the_transformer_and_jacobians():
    import dualtape.transforms as dt  # noqa: F401  (the registry tests run every op through it)
    x = np.sin(np.arange(32.0)).reshape(1, 4, 4, 2)
    jac = tf.jacrev(lambda v: dnp.max_pool2d(v, ksize=(2, 2), strides=(2, 2)))(x)
    assert jac.shape == (1, 2, 2, 2, 1, 4, 4, 2) and np.all(jac.sum(axis=(4, 5, 6, 7)) == 1)


def test_dropout_scales_kept_elements_and_gradient():
    x = tf.constant(np.full((2000,), 3.0, np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.dropout(x, 0.25, seed=5)
    kept = y.numpy() != 0
    assert 0.7 < kept.mean() < 0.8
    np.testing.assert_array_equal(y.numpy()[kept], np.float32(3.0) * np.float32(1 / 0.75))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), np.where(kept, np.float32(1 / 0.75), 0))
    rows = tf.nn.dropout(tf.ones([4, 50]), 0.5, noise_shape=[4, 1], seed=1).numpy()
    assert all(len(set(r)) == 1 for r in rows)  # one draw per row
    np.testing.assert_array_equal(tf.nn.dropout(tf.ones([3]), 0.5, seed=9).numpy(),
                                  tf.nn.dropout(tf.ones([3]), 0.5, seed=9).numpy())
    assert tf.nn.dropout(x, 0.0) is x
    with pytest.raises(ValueError, match=r"range \[0, 1\), got 1.0"):
        tf.nn.dropout(x, 1.0)
    with pytest.raises(ValueError, match="floating point"):
        tf.nn.dropout(tf.constant([1, 2]), 0.5)


def test_errors_name_the_op_shapes_and_fix():
    x = tf.zeros([1, 4, 4, 2])
    with pytest.raises(ValueError, match=r"\[conv2d\] input has 2 channels but filters of shape \(3, 3, 3, 1\)"):
        tf.nn.conv2d(x, tf.zeros([3, 3, 3, 1]), 1, "SAME")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Computed output size would be negative"):
        tf.nn.conv2d(x, tf.zeros([5, 5, 2, 1]), 1, "VALID")
    with pytest.raises(ValueError, match=r"\[max_pool2d\] input must be 4-D"):
        tf.nn.max_pool2d(tf.zeros([4, 4]), 2, 2, "VALID")
    with pytest.raises(ValueError, match=r"\[conv2d\] padding must be 'SAME', 'VALID'"):
        tf.nn.conv2d(x, tf.zeros([3, 3, 2, 1]), 1, "FULL")
    with pytest.raises(TypeError, match=r"\[conv2d\] input is float32 but filters are float64"):
        tf.nn.conv2d(x, tf.zeros([3, 3, 2, 1], tf.float64), 1, "SAME")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"label value of 3 which is outside the valid range of \[0, 3\)"):
        tf.nn.sparse_softmax_cross_entropy_with_logits([0, 3], tf.zeros([2, 3]))
    with pytest.raises(ValueError, match=r"Shape mismatch: The shape of labels \(received \(3,\)\)"):
        tf.nn.sparse_softmax_cross_entropy_with_logits([0, 1, 2], tf.zeros([2, 3]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[bias_add\] Must provide as many biases"):
        tf.nn.bias_add(tf.zeros([2, 4]), tf.zeros([3]))
