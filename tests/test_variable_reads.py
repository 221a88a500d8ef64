"""`Variable.read_value()` and `Variable.value()` are recorded reads (issue 19, item 4).

They returned an unrecorded copy: `y = v.read_value()` under a tape gave
`tape.gradient(y, v) == None` and `watched_variables() == ()`, where TF gives 1.0 and
`(v,)`; custom gradients called on `x.read_value()` and implicit gradients (a variable read
inside a custom_gradient function) lost the variable.
"""

import numpy as np
import pytest

import dualtape as tf


@pytest.mark.parametrize("read", ["read_value", "value"])
def test_a_read_is_recorded_and_watches_the_variable(read):
    v = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = getattr(v, read)()
    assert tape.watched_variables() == (v,)
    g = tape.gradient(y, v)
    assert g.numpy() == 1.0 and g.dtype == tf.float32


@pytest.mark.parametrize("read", ["read_value", "value"])
def test_a_read_is_a_snapshot_with_the_variables_gradient(read):
    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        r = getattr(v, read)()
        y = tf.reduce_sum(r * r)
    v.assign([5.0, 6.0])
    np.testing.assert_array_equal(r.numpy(), [1.0, 2.0])  # later assignments do not change it
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [2.0, 4.0])
    assert "tf.Tensor" in repr(r)


def test_watch_accessed_variables_false_and_non_trainable_are_not_watched():
    v = tf.Variable(3.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        y = v.read_value()
    assert tape.watched_variables() == () and tape.gradient(y, v) is None
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(v)
        y = v.read_value() * 2
    assert tape.gradient(y, v).numpy() == 2.0
    frozen = tf.Variable(3.0, trainable=False)
    with tf.GradientTape() as tape:
        y = frozen.value()
    assert tape.watched_variables() == () and tape.gradient(y, frozen) is None


def test_custom_gradient_called_on_a_read():
    @tf.custom_gradient
    def scaled(x):
        def grad(dy):
            return dy * 10.0
        return x * 2.0, grad

    v = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = scaled(v.read_value())
    assert tape.gradient(y, v).numpy() == 10.0


def test_implicit_variable_gradients_through_a_read():
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def times_v(x):
        y = x * v.read_value()

        def grad(dy, variables=None):
            assert variables == [v]
            return dy * v, [dy * x * 100.0]
        return y, grad

    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = times_v(x)
    dx, dv = tape.gradient(y, [x, v])
    assert dx.numpy() == 2.0 and dv.numpy() == 300.0


def test_forward_accumulator_sees_a_read():
    v = tf.Variable(3.0)
    with tf.autodiff.ForwardAccumulator(v, tf.constant(1.0)) as acc:
        y = v.read_value() * 3.0
    assert acc.jvp(y).numpy() == 3.0


@pytest.mark.filterwarnings("ignore:The dtype of the watched variable")  # as any read of it
def test_integer_variable_reads_carry_no_gradient():
    n = tf.Variable(3)
    with tf.GradientTape() as tape:
        r = n.read_value()
    assert r.dtype == tf.int32 and r.numpy() == 3 and tape.watched_variables() == ()
