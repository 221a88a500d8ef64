"""tf.function, tf.TensorSpec, tf.py_function and tf.numpy_function (issue 24), run eagerly,
against TensorFlow 2.21's behaviour (values and messages recorded below as literals)."""

import numpy as np
import pytest

import dualtape as tf


def test_bare_and_configured_decorators_return_tensors():
    @tf.function
    def f():
        return 1.5

    out = f()
    assert isinstance(out, tf.Tensor) and out.dtype == tf.float32 and float(out) == 1.5  # TF: a tensor

    @tf.function(jit_compile=True, reduce_retracing=True, autograph=False)
    def g(x, scale=2.0):
        return {"y": x * scale, "none": None}

    out = g(tf.constant([1.0, 2.0]), scale=3.0)
    assert out["none"] is None and out["y"].numpy().tolist() == [3.0, 6.0]
    assert g.python_function(1.0)["y"] == 2.0 and g.__name__ == "g"


def test_input_signature_converts_and_checks():
    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def g(x):
        return tf.reduce_sum(x)

    assert float(g([[1.0, 2.0]])) == 3.0  # TF: tf.Tensor(3.0, shape=(), dtype=float32)
    with pytest.raises(TypeError, match=r"\[tf.function\].*shape \(2, 3\).*TensorSpec\(shape=\(None, 2\)"):
        g(np.zeros((2, 3), np.float32))  # TF: TypeError (Can not cast TensorSpec(shape=(2, 3), ...)
    with pytest.raises(TypeError, match=r"dtype float64"):
        g(tf.constant(np.zeros((2, 2))))
    with pytest.raises(TypeError, match="input_signature must hold tf.TensorSpec"):
        tf.function(lambda x: x, input_signature=[(2, 2)])


def test_tensor_spec():
    spec = tf.TensorSpec((None, 3))
    assert repr(spec) == "TensorSpec(shape=(None, 3), dtype=tf.float32, name=None)"  # TF's repr
    assert spec.is_compatible_with(tf.zeros([5, 3])) and not spec.is_compatible_with(tf.zeros([5, 2]))
    assert not spec.is_compatible_with(tf.zeros([5, 3], tf.float64))
    assert spec == tf.TensorSpec([None, 3], tf.float32) and spec != tf.TensorSpec([None, 3], tf.int32)
    assert tf.TensorSpec.from_tensor(tf.constant([1, 2])) == tf.TensorSpec((2,), tf.int32)
    assert spec.shape.as_list() == [None, 3]


def test_gradients_through_and_inside_a_function():
    w = tf.Variable([1.0, -2.0])

    @tf.function
    def loss(x):
        return tf.reduce_sum(w * x ** 2)

    x = tf.constant([3.0, 0.5])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = loss(x)
    gw, gx = tape.gradient(y, [w, x])
    np.testing.assert_allclose(gw.numpy(), [9.0, 0.25])
    np.testing.assert_allclose(gx.numpy(), [6.0, -2.0])

    @tf.function
    def train_step(x):
        with tf.GradientTape() as tape:
            y = loss(x)
        return y, tape.gradient(y, w)

    y, g = train_step(x)
    assert float(y) == 8.5 and g.numpy().tolist() == [9.0, 0.25]


def test_methods_bind_per_instance():
    class Model(tf.Module):
        def __init__(self, k):
            super().__init__()
            self.k = tf.Variable(k)

        @tf.function
        def __call__(self, x):
            return self.k * x

        @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
        def double(self, x):
            return 2.0 * self.k * x

    a, b = Model(2.0), Model(5.0)
    assert float(a(3.0)) == 6.0 and float(b(3.0)) == 15.0 and float(a.double(1.0)) == 4.0
    assert a.double is a.double and a.double is not b.double  # bound once per instance, as TF caches it
    assert type(a).__dict__["double"].python_function.__name__ == "double"
    with tf.GradientTape() as tape:
        y = b(3.0)
    assert float(tape.gradient(y, b.k)) == 3.0


def test_py_function_is_differentiable_and_converts():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.py_function(lambda a: a * a, [x], tf.float32)
        z = tf.numpy_function(lambda a: a * a, [x], tf.float32)
    # TF 2.21: py grad [2. 4.], numpy_function grad None
    assert tape.gradient(y, x).numpy().tolist() == [2.0, 4.0]
    assert tape.gradient(z, x) is None
    assert z.numpy().tolist() == [1.0, 4.0] and z.dtype == tf.float32
    out = tf.py_function(lambda a: 3.0, [x], tf.float32)
    assert out.dtype == tf.float32 and float(out) == 3.0
    assert tf.py_function(lambda a: np.float64(3.0), [x], tf.float32).dtype == tf.float32
    pair = tf.py_function(lambda a: [a, a], [x], [tf.float32, tf.float32])
    assert isinstance(pair, list) and len(pair) == 2
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[py_function\].*float64.*float32"):
        tf.py_function(lambda a: tf.cast(a, tf.float64), [x], tf.float32)  # TF: InvalidArgumentError
    with pytest.raises(TypeError, match=r"\[py_function\] inp must be a list"):
        tf.py_function(lambda a: a, x, tf.float32)


def test_numpy_function_gets_arrays_and_returns_tout():
    x = tf.constant([1.0, 2.0])
    seen = []
    out = tf.numpy_function(lambda a: (seen.append(type(a)), (a, a.sum()))[1], [x], [tf.float32, tf.float32])
    assert seen == [np.ndarray] and [o.numpy().tolist() for o in out] == [[1.0, 2.0], 3.0]
    assert float(tf.numpy_function(lambda a: 3.0, [x], tf.float32)) == 3.0
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[numpy_function\].*float64.*float32"):
        tf.numpy_function(lambda a: a.astype(np.float64), [x], tf.float32)  # TF graphs raise (eager TF returns float64)
    with pytest.raises(ValueError, match=r"returned 2 values but Tout declares 1"):
        tf.numpy_function(lambda a: (a, a), [x], [tf.float32])
