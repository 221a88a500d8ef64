"""TF-named constructors give TF's dtypes and values (issue 19, section 3).

`tf.linspace(-2, 2, 9)` returned int32 `[-2 -1 -1 0 0 0 1 1 2]` where TF 2.21 returns float64
`[-2. -1.5 ... 2.]` (a silent wrong input in two of TF's own tutorials). Every row below is
what TF 2.21 returns: the dtype and the values.
"""

import numpy as np
import pytest

import dualtape as tf

CASES = {
    # linspace: integer start/stop become float64; float32 stays float32; NumPy dtypes kept
    "linspace_ints": (lambda: tf.linspace(-2, 2, 9), "float64",
                      [-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0]),
    "linspace_floats": (lambda: tf.linspace(0.0, 1.0, 5), "float32", [0.0, 0.25, 0.5, 0.75, 1.0]),
    "linspace_float_int_stop": (lambda: tf.linspace(0.0, 2, 3), "float32", [0.0, 1.0, 2.0]),
    "linspace_float64": (lambda: tf.linspace(np.float64(0), np.float64(1), 3), "float64", [0.0, 0.5, 1.0]),
    "linspace_int_tensors": (lambda: tf.linspace(tf.constant(0), tf.constant(3), 4), "float64",
                             [0.0, 1.0, 2.0, 3.0]),
    "linspace_one": (lambda: tf.linspace(3.0, 5.0, 1), "float32", [3.0]),
    "linspace_vector": (lambda: tf.linspace([0.0, 10.0], [1.0, 20.0], 3), "float32",
                        [[0.0, 10.0], [0.5, 15.0], [1.0, 20.0]]),
    "linspace_vector_axis1": (lambda: tf.linspace([0.0, 10.0], [1.0, 20.0], 3, axis=1), "float32",
                              [[0.0, 0.5, 1.0], [10.0, 15.0, 20.0]]),
    # range: Python ints int32, Python floats float32, the widest argument otherwise
    "range_int": (lambda: tf.range(5), "int32", [0, 1, 2, 3, 4]),
    "range_start_limit_delta": (lambda: tf.range(3, 18, 3), "int32", [3, 6, 9, 12, 15]),
    "range_float": (lambda: tf.range(0.0, 1.0, 0.25), "float32", [0.0, 0.25, 0.5, 0.75]),
    "range_mixed": (lambda: tf.range(0, 2.0, 0.5), "float32", [0.0, 0.5, 1.0, 1.5]),
    "range_dtype": (lambda: tf.range(3, dtype=tf.float64), "float64", [0.0, 1.0, 2.0]),
    "range_negative_delta": (lambda: tf.range(3, 0, -1), "int32", [3, 2, 1]),
    # zeros / ones: float32 by default
    "zeros": (lambda: tf.zeros([2]), "float32", [0.0, 0.0]),
    "ones": (lambda: tf.ones((2,)), "float32", [1.0, 1.0]),
    "zeros_int": (lambda: tf.zeros([2], dtype=tf.int32), "int32", [0, 0]),
    # *_like and fill: the dtype of the value (Python int int32, float float32)
    "zeros_like_ints": (lambda: tf.zeros_like([1, 2]), "int32", [0, 0]),
    "zeros_like_floats": (lambda: tf.zeros_like([1.0, 2.0]), "float32", [0.0, 0.0]),
    "ones_like_float64": (lambda: tf.ones_like(np.array([1.0, 2.0])), "float64", [1.0, 1.0]),
    "ones_like_dtype": (lambda: tf.ones_like([1, 2], dtype=tf.float32), "float32", [1.0, 1.0]),
    "fill_int": (lambda: tf.fill([2], 7), "int32", [7, 7]),
    "fill_float": (lambda: tf.fill([2], 0.5), "float32", [0.5, 0.5]),
    "fill_bool": (lambda: tf.fill([2], True), "bool", [True, True]),
    "fill_tensor": (lambda: tf.fill([2], tf.constant(2.0, tf.float64)), "float64", [2.0, 2.0]),
    # eye: float32
    "eye": (lambda: tf.eye(2), "float32", [[1.0, 0.0], [0.0, 1.0]]),
    "eye_dtype": (lambda: tf.eye(2, 3, dtype=tf.int32), "int32", [[1, 0, 0], [0, 1, 0]]),
    # constant / convert_to_tensor: int32, float32, bool; NumPy arrays keep their dtype
    "constant_int": (lambda: tf.constant([1, 2]), "int32", [1, 2]),
    "constant_big_int": (lambda: tf.constant(2**40), "int64", 2**40),
    "constant_float": (lambda: tf.constant(1.5), "float32", 1.5),
    "constant_mixed": (lambda: tf.constant([1, 2.5]), "float32", [1.0, 2.5]),
    "constant_bool": (lambda: tf.constant([True, False]), "bool", [True, False]),
    "constant_float64_array": (lambda: tf.constant(np.array([1.0])), "float64", [1.0]),
    "constant_int64_array": (lambda: tf.constant(np.array([1], np.int64)), "int64", [1]),
    "constant_dtype": (lambda: tf.constant(1, dtype=tf.float32), "float32", 1.0),
    "constant_complex": (lambda: tf.constant(1 + 2j), "complex128", 1 + 2j),
    "convert_int": (lambda: tf.convert_to_tensor(3), "int32", 3),
    "convert_float": (lambda: tf.convert_to_tensor([0.5]), "float32", [0.5]),
    "convert_float64_array": (lambda: tf.convert_to_tensor(np.float64(0.5)), "float64", 0.5),
    "convert_hint": (lambda: tf.convert_to_tensor(1, dtype_hint=tf.float32), "float32", 1.0),
    # cast: truncation toward zero, as TF
    "cast_float_int": (lambda: tf.cast([1.7, -1.7], tf.int32), "int32", [1, -1]),
    "cast_bool_float": (lambda: tf.cast([True, False], tf.float32), "float32", [1.0, 0.0]),
    "cast_int_float64": (lambda: tf.cast(3, tf.float64), "float64", 3.0),
}


@pytest.mark.parametrize("name", CASES)
def test_constructor_dtype_and_values_are_tfs(name):
    make, dtype, values = CASES[name]
    t = make()
    assert isinstance(t, tf.Tensor)
    assert t.dtype.name == dtype, f"{name}: {t.dtype.name}, TF gives {dtype}"
    np.testing.assert_array_equal(t.numpy(), np.array(values, dtype=dtype))


@pytest.mark.parametrize("fn", ["normal", "uniform"])
def test_random_tensors_are_float32(fn):
    t = getattr(tf.random, fn)([3], seed=1)
    assert t.dtype == tf.float32 and t.shape == (3,)
    assert getattr(tf.random, fn)([2], dtype=tf.float64, seed=1).dtype == tf.float64


def test_linspace_prints_as_tf():
    assert repr(tf.linspace(-2, 2, 9)) == (
        "<tf.Tensor: shape=(9,), dtype=float64, numpy=array([-2. , -1.5, -1. , -0.5,  0. ,  0.5,  "
        "1. ,  1.5,  2. ])>")


def test_linspace_float32_is_computed_in_float32():
    # TF: start + i * ((stop - start) / (num - 1)) in float32, the last value stop itself
    got = tf.linspace(0.0, 1.0, 7).numpy()
    step = np.float32(1.0) / np.float32(6)
    expected = np.arange(7, dtype=np.float32) * step
    expected[-1] = 1.0
    np.testing.assert_array_equal(got, expected)


def test_linspace_refuses_a_stop_its_start_dtype_cannot_hold():
    # TF converts stop to start's dtype (int32 here): 2.5 cannot be held
    with pytest.raises(TypeError, match="int32"):
        tf.linspace(0, 2.5, 3)


def test_fill_with_a_watched_value_is_differentiable():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.fill([3], x) * tf.constant([1.0, 2.0, 3.0]))
    assert tape.gradient(y, x).numpy() == 6.0  # TF's Fill gradient: the sum


def test_linspace_is_differentiable_in_start_and_stop():
    a, b = tf.constant(1.0), tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        y = tf.reduce_sum(tf.linspace(a, b, 5) * tf.constant([1.0, 0.0, 0.0, 0.0, 2.0]))
    da, db = tape.gradient(y, [a, b])
    assert da.numpy() == 1.0 and db.numpy() == 2.0
    with tf.autodiff.ForwardAccumulator(b, tf.constant(1.0)) as acc:
        y = tf.linspace(a, b, 3)
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [0.0, 0.5, 1.0])


@pytest.mark.parametrize("num,expected", [(0, []), (1, [2.0]), (2, [2.0, 4.0])])
def test_linspace_short(num, expected):
    np.testing.assert_array_equal(tf.linspace(2.0, 4.0, num).numpy(), np.float32(expected))


def test_random_normal_and_uniform_are_differentiable_in_their_parameters():
    # TF: rnd * stddev + mean and rnd * (maxval - minval) + minval (float() refused them)
    mean, std = tf.Variable(1.0), tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = tf.random.normal([4], mean=mean, stddev=std, seed=3)
    z = tf.random.normal([4], seed=3)
    assert y.dtype == tf.float32
    np.testing.assert_allclose(y.numpy(), z.numpy() * 2.0 + 1.0, rtol=1e-6)
    d_mean, d_std = tape.gradient(y, [mean, std])
    assert d_mean.numpy() == 4.0 and np.isclose(d_std.numpy(), np.sum(z.numpy()), rtol=1e-6)
    lo, hi = tf.Variable(-1.0), tf.Variable(3.0)
    with tf.GradientTape() as tape:
        u = tf.random.uniform([5], minval=lo, maxval=hi, seed=4)
    r = tf.random.uniform([5], seed=4).numpy()
    np.testing.assert_allclose(u.numpy(), r * 4.0 - 1.0, rtol=1e-6)
    d_lo, d_hi = tape.gradient(u, [lo, hi])
    assert np.isclose(d_lo.numpy(), np.sum(1 - r), rtol=1e-6) and np.isclose(d_hi.numpy(), np.sum(r), rtol=1e-6)
