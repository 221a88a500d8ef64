"""Values leaving a recording GradientTape are refused (issue 19, item 3): a deliberate
difference from TF, where `float(y)`, `math.tanh(y)`, `np.asarray(y)` and `b[0] = y` inside
the `with` block silently cut the gradient (None, or a gradient missing that path).

Each route is refused with a RefusalError naming the user's line and the fixes; `.numpy()`,
`tape.stop_recording()`, the end of the block, `bool()`, `int()`, printing and tensors the
tape has not recorded keep TF's behaviour.
"""

import math

import numpy as np
import pytest

import dualtape as tf
from dualtape.errors import RefusalError


def _write(y):
    b = np.zeros(2)
    b[0] = y * 2  # the example: NumPy wraps our refusal in its ValueError
    return b


ROUTES = {
    "float": lambda y: float(y),
    "math.tanh": lambda y: math.tanh(y),
    "complex": lambda y: complex(y),
    "np.asarray": lambda y: np.asarray(y),
    "np.array": lambda y: np.array(y),
    "np.float64": lambda y: np.float64(y),
    "write": _write,
    "np.array_list": lambda y: np.array([y, y]),
    "np.mean_list": lambda y: np.mean([y, 2 * y]),
    "tf.constant_list": lambda y: tf.constant([y, y]),
    "tf.constant_dtype": lambda y: tf.constant(y, dtype=tf.float64),
}


def _chain(error):
    while error is not None:
        yield error
        error = error.__cause__ or error.__context__


@pytest.mark.parametrize("route", ROUTES)
def test_conversion_of_a_recorded_value_is_refused(route):
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = tf.math.sin(x) * x
        with pytest.raises((TypeError, ValueError)) as info:
            ROUTES[route](y)
    ours = [e for e in _chain(info.value) if isinstance(e, RefusalError)]
    assert ours, f"{route}: {info.value!r}"
    message = str(ours[0])
    assert message.startswith("[GradientTape]")
    assert "test_tape_escapes.py, line" in message  # the user's line, not dualtape's
    assert ".numpy()" in message and "stop_recording" in message and "tf.math" in message
    assert "silently" in message and "TensorFlow" in message
    assert tape.gradient(y, x) is not None  # the tape itself is unharmed


def test_the_line_named_is_the_users():
    x = tf.constant([0.5, 1.5])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * 2
        with pytest.raises(RefusalError) as info:
            math.tanh(y[0])  # marker: the line
    assert "math.tanh(y[0])  # marker: the line" in str(info.value)


def test_logging_a_loss_inside_the_block_names_numpy():
    w = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(w ** 2)
        with pytest.raises(RefusalError, match=r"print\(float\(loss\)\).*\.numpy\(\)"):
            print(float(loss))
        print(loss.numpy())  # the way out on purpose
    assert float(loss) == 5.0  # after the block, as in TF
    np.testing.assert_array_equal(tape.gradient(loss, w).numpy(), [2.0, 4.0])


def test_the_watched_source_itself_is_refused_once_watched():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        assert float(x) == 3.0  # not watched yet: no gradient to cut
        tape.watch(x)
        with pytest.raises(RefusalError):
            math.exp(x)
        y = tf.exp(x)
    assert np.isclose(tape.gradient(y, x).numpy(), np.exp(3.0))


def test_what_stays_allowed_under_a_recording_tape():
    x = tf.Variable([1.0, -2.0])
    n = tf.constant([3, 1])
    other = tf.constant([4.0, 5.0])
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
        assert bool(y[0] > 0) and int(y[0]) == 1 and math.floor(y[1]) == 4  # branching, int
        if y[1] > 3:  # control flow on a recorded value, as in TF's guide
            z = y * 2.0
        assert int(n[0]) == 3 and list(range(n[1])) == [0] and float(n[0]) == 3.0  # integers
        assert float(other[0]) == 4.0 and np.asarray(other).tolist() == [4.0, 5.0]  # not recorded
        assert f"{y[0]:.1f}" == "1.0" and "tf.Tensor" in str(y) and "numpy=" in repr(y)
        assert y.numpy().tolist() == [1.0, 4.0] and y[0].numpy().item() == 1.0
        with tape.stop_recording():
            assert float(y[0]) == 1.0 and np.asarray(y).tolist() == [1.0, 4.0]
        s = tf.constant(y)  # TF returns the tensor itself: still on the tape
        moving = tf.Variable([0.0, 0.0])
        moving.assign(0.9 * moving + 0.1 * y)  # state, as Keras' moving averages: allowed
    np.testing.assert_allclose(tape.gradient(z, x).numpy(), [4.0, -8.0])
    np.testing.assert_allclose(tape.gradient(s, x).numpy(), [2.0, -4.0])
    np.testing.assert_allclose(moving.numpy(), [0.1, 0.4], rtol=1e-6)
    assert float(y[0]) == 1.0 and np.asarray(y).tolist() == [1.0, 4.0]  # outside, as in TF


def test_nested_tapes_refuse_for_the_tape_still_recording():
    x = tf.Variable(1.5)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = x ** 3
        dy = inner.gradient(y, x)  # recorded by the outer tape
        with pytest.raises(RefusalError):
            float(dy)
        with pytest.raises(RefusalError):
            float(y)
    assert float(dy) == pytest.approx(6.75) and np.isclose(outer.gradient(dy, x).numpy(), 9.0)


def test_a_tape_that_watches_nothing_refuses_nothing():
    x = tf.Variable(2.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        y = x * x
        assert float(y) == 4.0 and math.tanh(y) == math.tanh(4.0)
    assert tape.gradient(y, x) is None


def test_forward_accumulators_keep_tfs_semantics():
    x = tf.constant(2.0)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        y = x * x
        assert float(y) == 4.0
    assert acc.jvp(y).numpy() == 4.0


def test_a_write_into_a_numpy_array_leaves_the_block_as_the_refusal():
    x = tf.Variable([1.0, 2.0])
    with pytest.raises(RefusalError, match=r"b\[0\] = x\[0\] \* 2  # marker.*\.numpy\(\)"):
        with tf.GradientTape():
            b = np.zeros(2)
            b[0] = x[0] * 2  # marker: NumPy's own ValueError would hide the refusal
    with pytest.raises(ValueError, match="sequence"):  # not ours: NumPy's error stays
        with tf.GradientTape():
            np.zeros(2)[0] = [1.0, 2.0]
