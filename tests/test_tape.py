"""GradientTape behaviour beyond the guides: the cases every AD library must get right."""

import gc
import threading
import weakref

import numpy as np
import pytest

import dualtape as tf
from dualtape import dnp


def grad_of(f, x):
    x = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.gradient(y, x)


# -- structure of the tape ---------------------------------------------------------------------

def test_long_chain_is_iterative():
    x = tf.constant(0.5, dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(100_000):
            y = y * 1.0
    assert tape.gradient(y, x).numpy() == 1.0


def test_non_persistent_tape_releases_and_refuses_second_call():
    x = tf.constant(np.ones(1000))
    with tf.GradientTape() as tape:
        tape.watch(x)
        h = x * 2.0
        ref = weakref.ref(h._value)
        y = dnp.sum(h * h)
    del h
    tape.gradient(y, x)
    gc.collect()
    assert ref() is None, "the tape still holds an intermediate after gradient()"
    with pytest.raises(RuntimeError, match="non-persistent GradientTape"):
        tape.gradient(y, x)


def test_only_watched_ops_are_recorded():
    a = tf.constant(1.0)
    b = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(a)
        _ = b * b * b
        y = a * b
    assert len(tape._entries) == 1
    assert tape.gradient(y, a).numpy() == 2.0


def test_tapes_are_thread_local():
    x = tf.constant(2.0)
    seen = []
    with tf.GradientTape() as tape:
        tape.watch(x)
        thread = threading.Thread(target=lambda: seen.append(x * x))
        thread.start()
        thread.join()
        y = x + 1.0
    assert len(tape._entries) == 1
    assert tape.gradient(seen[0], x) is None
    del y


def test_gradient_inside_own_context_warns():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
        with pytest.warns(UserWarning, match="inside its context"):
            g = tape.gradient(y, x)
    assert g.numpy() == 4.0


def test_reentering_an_active_tape_is_an_error():
    tape = tf.GradientTape()
    with tape:
        with pytest.raises(ValueError, match="still recording"):
            tape.__enter__()


def test_stop_recording_outside_context_is_an_error():
    tape = tf.GradientTape()
    with pytest.raises(ValueError, match="not recording"):
        with tape.stop_recording():
            pass


# -- gradient() arguments -----------------------------------------------------------------------

def test_nested_sources_and_list_targets():
    a, b, c = tf.Variable(1.0), tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y1 = a * b
        y2 = b * c
    grads = tape.gradient([y1, y2], {"first": [a, (b,)], "second": {"c": c}})
    assert grads["first"][0].numpy() == 2.0
    assert grads["first"][1][0].numpy() == 4.0  # a + c: the targets' gradients add up
    assert grads["second"]["c"].numpy() == 2.0


def test_output_gradients_weight_the_target_and_are_not_mutated():
    x = tf.constant([1.0, 2.0, 3.0])
    seed = np.array([1.0, 10.0, 100.0], dtype=np.float32)
    before = seed.copy()
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x, output_gradients=seed)
    np.testing.assert_allclose(g.numpy(), 2 * x.numpy() * before)
    np.testing.assert_array_equal(seed, before)


def test_output_gradients_shape_mismatch_is_clear():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(ValueError, match=r"output_gradients of shape \(3,\)"):
        tape.gradient(y, x, output_gradients=np.ones(3, np.float32))


def test_unknown_unconnected_gradients_value():
    x = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        y = x * 2.0
    with pytest.raises(ValueError, match="unconnected_gradients"):
        tape.gradient(y, x, unconnected_gradients="maybe")


def test_sources_must_be_tensors():
    x = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        y = x * 2.0
    with pytest.raises(ValueError, match="sources must be tensors"):
        tape.gradient(y, 1.0)


def test_gradient_through_a_shared_cotangent_is_not_mutated():
    x = tf.constant(np.array([1.0, 2.0]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x + x  # AddV2's rule hands the same cotangent object to both inputs
        z = y + x
    np.testing.assert_array_equal(tape.gradient(z, x).numpy(), [3.0, 3.0])


def test_in_place_update_of_a_numpy_operand_is_not_seen():
    a = np.array([1.0, 2.0])
    x = tf.constant(np.array([3.0, 4.0]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = dnp.sum(x * a)
    a[:] = 100.0
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.0, 2.0])


def test_tensors_are_immutable():
    t = tf.constant(np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(t)[0] = 5.0
    copy = t.numpy()
    copy[0] = 5.0
    assert t.numpy()[0] == 1.0


# -- numerics: kinks, ties, stability, dtypes, broadcasting ----------------------------------

def test_kinks_follow_tf():
    assert grad_of(lambda x: dnp.abs(x), 0.0).numpy() == 0.0
    assert grad_of(lambda x: tf.nn.relu(x), 0.0).numpy() == 0.0


def test_maximum_tie_goes_to_x_and_minimum_too():
    x, y = tf.constant(1.0), tf.constant(1.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        hi = tf.maximum(x, y)
        lo = tf.minimum(x, y)
    assert [g.numpy() for g in tape.gradient(hi, [x, y])] == [1.0, 0.0]
    assert [g.numpy() for g in tape.gradient(lo, [x, y])] == [1.0, 0.0]


def test_reduce_max_ties_split_evenly():
    g = grad_of(lambda x: tf.reduce_max(x), np.array([1.0, 3.0, 3.0, 2.0]))
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.5, 0.5, 0.0])


@pytest.mark.parametrize("fn", [
    lambda x: tf.reduce_logsumexp(x),
    lambda x: tf.reduce_sum(tf.nn.softplus(x)),
    lambda x: tf.reduce_sum(tf.nn.sigmoid(x)),
    lambda x: tf.reduce_sum(tf.nn.log_softmax(x)),
], ids=["logsumexp", "softplus", "sigmoid", "log_softmax"])
def test_stable_rules_at_large_inputs(fn):
    for dtype in (np.float32, np.float64):
        g = grad_of(fn, np.array([-1000.0, 0.0, 1000.0], dtype=dtype))
        assert np.all(np.isfinite(g.numpy())), g
        assert g.dtype == dtype


@pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")  # the NaN is the point
def test_where_sqrt_at_zero_matches_tf_and_double_where_is_safe():
    # TF returns NaN here: the unselected branch's gradient 0 * inf leaks through.
    x = np.array([0.0, 4.0])
    g = grad_of(lambda x: tf.where(x > 0, tf.sqrt(x), 0.0), x)
    assert np.isnan(g.numpy()[0]) and g.numpy()[1] == 0.25
    # The double-where idiom keeps the unselected branch finite.
    def safe(x):
        positive = x > 0
        return tf.where(positive, tf.sqrt(tf.where(positive, x, 1.0)), 0.0)
    np.testing.assert_array_equal(grad_of(safe, x).numpy(), [0.0, 0.25])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_is_preserved(dtype):
    x = np.array([0.5, 1.5], dtype=dtype)
    g = grad_of(lambda x: tf.reduce_sum(tf.exp(x) * 2.5 + x ** 2 / 3.0), x)
    assert g.dtype == dtype


@pytest.mark.parametrize("shape_x, shape_y", [
    ((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 1), (1, 3)), ((), (2, 3)), ((4, 1, 3), (2, 1)),
])
def test_broadcasting_vjps_reduce_to_input_shapes(shape_x, shape_y):
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal(shape_x))
    y = tf.constant(rng.standard_normal(shape_y))
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        z = dnp.sum(x * y + x / (y * y + 1))
    gx, gy = tape.gradient(z, [x, y])
    assert gx.shape == x.shape and gy.shape == y.shape
    xv, yv = x.numpy(), y.numpy()
    full = np.broadcast_shapes(np.shape(xv), np.shape(yv))
    expected_x = np.sum(np.broadcast_to(yv + 1 / (yv * yv + 1), full)) if not np.shape(xv) else None
    if expected_x is not None:
        assert np.isclose(gx.numpy(), expected_x)


def test_python_scalars_and_empty_arrays():
    assert grad_of(lambda x: x * 3.0 + 1, 2.0).numpy() == 3.0
    g = grad_of(lambda x: dnp.sum(x * x), np.zeros((0, 3)))
    assert g.shape == (0, 3)


def test_shape_errors_name_the_op_and_shapes():
    with pytest.raises(ValueError, match=r"\[AddV2\].*\(2,\).*\(3,\)"):
        tf.constant([1.0, 2.0]) + tf.constant([1.0, 2.0, 3.0])


def test_mixed_float_dtypes_raise_like_tf():
    with pytest.raises(tf.errors.InvalidArgumentError, match="cannot compute Mul"):
        tf.constant(1.0) * tf.constant(np.float64(2.0))
    with pytest.raises(TypeError, match="Cannot convert 2.5"):
        tf.constant(1) * 2.5


# -- gradient registration -----------------------------------------------------------------------

def test_register_gradient_adds_a_rule_to_an_op_without_one():
    from dualtape.registry import unregister_gradient

    @tf.RegisterGradient("AdjustContrastv2")
    def _adjust_contrast_grad(op, grad):
        return grad * op.inputs[1], None

    try:
        image = tf.Variable([[[0.5, 0.0, 0.0]]])
        delta = tf.Variable(2.0)
        with tf.GradientTape() as tape:
            new_image = tf.image.adjust_contrast(image, delta)
        gi, gd = tape.gradient(new_image, [image, delta])
        np.testing.assert_allclose(gi.numpy(), np.full((1, 1, 3), 2.0))
        assert gd is None
        with pytest.raises(KeyError, match="Registering two gradient"):
            tf.RegisterGradient("AdjustContrastv2")(_adjust_contrast_grad)
    finally:
        unregister_gradient("AdjustContrastv2")


def test_custom_gradient_with_variables():
    v = tf.Variable(3.0)

    @tf.custom_gradient
    def scaled(x):
        def grad_fn(dy, variables=None):
            return dy * v, [dy * x * 10.0]
        return x * v, grad_fn

    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = scaled(x)
    gx, gv = tape.gradient(y, [x, v])
    assert gx.numpy() == 3.0 and gv.numpy() == 20.0


def test_custom_gradient_second_order():
    @tf.custom_gradient
    def cube(x):
        def grad_fn(dy):
            return dy * 3.0 * x * x
        return x * x * x, grad_fn

    x = tf.Variable(2.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = cube(x)
        g = t1.gradient(y, x)
    assert g.numpy() == 12.0
    assert t2.gradient(g, x).numpy() == 12.0


def test_module_collects_variables():
    class Block(tf.Module):
        def __init__(self):
            super().__init__()
            self.dense = tf.layers.Dense(3)
            self.scale = tf.Variable(1.0, name="scale")
            self.frozen = tf.Variable(0.0, trainable=False, name="frozen")
            self.extras = [tf.Variable(2.0, name="extra")]

    block = Block()
    block.dense(tf.ones((1, 2)))
    names = [v.name for v in block.trainable_variables]
    assert "scale:0" in names and "extra:0" in names and "frozen:0" not in names
    assert len(block.variables) == 5
    assert block.submodules == (block.dense,)
    assert block.name == "block"


def test_float32_source_keeps_float32_gradient_with_float64_numpy_data():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        y = x * np.ones(2)  # TF converts the array to the tensor's dtype
        z = np.multiply(x, np.full(2, 3.0))  # NumPy's own promotion gives float64 ...
    assert y.dtype == tf.float32 and z.dtype == tf.float64
    assert tape.gradient(y, x).dtype == tf.float32
    gz = tape.gradient(z, x)  # ... but the gradient has the source's dtype
    assert gz.dtype == tf.float32
    np.testing.assert_array_equal(gz.numpy(), [3.0, 3.0])


def test_numpy_function_without_rule_refuses_live_values_only():
    x = tf.Variable([3.0, 1.0])  # (np.sort has a rule now: np.unwrap has none)
    with tf.GradientTape():
        with pytest.raises(TypeError, match=r"\[np.unwrap\] has no differentiable"):
            np.unwrap(x)  # a trainable variable the tape would watch
        unwrapped = np.unwrap(tf.stop_gradient(x * x))  # stopped: plain NumPy is fine
    np.testing.assert_allclose(unwrapped, np.unwrap([9.0, 1.0]))
    np.testing.assert_array_equal(np.unwrap(x), [3.0, 1.0])  # no tape: plain NumPy


def test_multiline_str_matches_tf():
    assert str(tf.constant([[1.0, 2.0], [3.0, 4.0]])) == (
        "tf.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)")


def test_gradient_dtype_is_the_source_dtype_after_numpy_promotion():
    v = tf.Variable([1.0, 2.0, 3.0])  # float32
    a = np.arange(3.0)  # float64: NumPy promotes the results below to float64
    with tf.GradientTape() as tape:
        r = a + v
        s = a @ v
    assert r.dtype == tf.float64 and s.dtype == tf.float64
    g = tape.gradient([r, s], v)
    assert g.dtype == tf.float32
    np.testing.assert_array_equal(g.numpy(), [1.0, 2.0, 3.0])


def test_writing_into_a_tensor_is_a_clear_error():
    t = tf.constant([1.0, 2.0])
    with pytest.raises(TypeError, match="immutable"):
        t[0] = 5.0
