"""The tape's per-op fast paths (reverse/dispatch.py record_op, GradientTape.watch of one
tensor, the array-operand path of the Tensor operators) keep their meaning: a user's
writeable array is recorded as a private copy, a complex input still meets the refusal,
and watching one tensor, a nested structure or a variable watches the same tensors."""

import numpy as np
import pytest

import dualtape as tf
from dualtape.core.errors import RefusalError


def test_a_plain_array_operand_is_recorded_as_a_private_copy():
    x = tf.constant(np.array([1.0, 2.0], dtype=np.float32))
    w = np.array([3.0, 4.0], dtype=np.float32)  # same dtype: the operator's fast path
    b = np.array([0.5, 0.25], dtype=np.float32)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * w + b
        z = tf.tanh(x) * w
    w[:] = 100.0  # the user writes into the arrays after recording
    b[:] = -7.0
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [3.0, 4.0])
    np.testing.assert_allclose(tape.gradient(z, x).numpy(), [3.0, 4.0] * (1 - np.tanh([1.0, 2.0]) ** 2),
                               rtol=1e-6)
    np.testing.assert_array_equal(y.numpy(), [3.5, 8.25])  # and the value was computed with them


def test_an_array_operand_of_another_dtype_still_converts():
    x = tf.constant(np.array([1.0, 2.0], dtype=np.float32))
    y = x + np.array([1, 2])  # an int array takes the tensor's dtype (TF's rule)
    assert y.dtype == tf.float32
    z = x + np.array([0.1, 0.2], dtype=np.float64)  # float64 data: converted to float32 too
    assert z.dtype == tf.float32
    np.testing.assert_array_equal(z.numpy(), np.float32([1.0, 2.0]) + np.float32([0.1, 0.2]))


def test_a_complex_input_on_a_watched_path_is_still_refused():
    x = tf.constant(np.array([1.0, 2.0]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises((RefusalError, TypeError, ValueError)):
            tf.nn.relu(x * np.array([1 + 1j, 2.0]))


@pytest.mark.parametrize("form", ["tensor", "list", "nested"])
def test_watch_one_tensor_or_a_structure(form):
    x = tf.constant(np.array([1.0, 2.0]))
    v = tf.Variable(np.array([3.0]), trainable=False)
    i = tf.constant(np.array([1, 2]))
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        if form == "tensor":
            tape.watch(x)
            tape.watch(v)
        elif form == "list":
            tape.watch([x, v])
        else:
            tape.watch({"a": (x,), "b": [v]})
        with pytest.warns(UserWarning, match="must be floating"):
            tape.watch(i)
        y = tf.reduce_sum(x * x) + tf.reduce_sum(v * 2.0)
    gx, gv = tape.gradient(y, [x, v])
    np.testing.assert_array_equal(gx.numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(gv.numpy(), [2.0])
    assert [t is v for t in tape.watched_variables()] == [True]
