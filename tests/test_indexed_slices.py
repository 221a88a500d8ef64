"""The gradient of tf.gather(table, ids) w.r.t. the table is tf.IndexedSlices, as in TF
(issue 19, section 3): it was a dense tensor. TF 2.21's _GatherV2Grad / ResourceGather
gradient: values shaped (ids.size,) + table.shape[1:], indices the flattened ids (their
dtype), dense_shape int32; several gathers concatenate their slices; a dense use makes the
gradient dense; jacobians stay dense; optimizers accept it.
"""

import numpy as np
import pytest

import dualtape as tf

TABLE = np.arange(8.0, dtype=np.float32).reshape(4, 2)


def _gradient(source, f, **kwargs):
    with tf.GradientTape() as tape:
        if not isinstance(source, tf.Variable):
            tape.watch(source)
        y = f(source)
    return tape.gradient(y, source, **kwargs)


@pytest.mark.parametrize("kind", ["variable", "watched tensor"])
def test_gather_gradient_is_indexed_slices(kind):
    table = tf.Variable(TABLE) if kind == "variable" else tf.constant(TABLE)
    g = _gradient(table, lambda t: tf.reduce_sum(tf.gather(t, [[3, 0], [3, 1]]) * tf.constant([1.0, 2.0])))
    assert isinstance(g, tf.IndexedSlices)
    assert g.values.dtype == tf.float32 and g.values.shape == (4, 2)
    np.testing.assert_array_equal(g.values.numpy(), [[1, 2]] * 4)
    assert g.indices.dtype == tf.int32 and g.indices.numpy().tolist() == [3, 0, 3, 1]
    assert g.dense_shape.dtype == tf.int32 and g.dense_shape.numpy().tolist() == [4, 2]
    assert g.dtype == tf.float32 and g.shape == (4, 2)
    dense = tf.convert_to_tensor(g)
    np.testing.assert_array_equal(dense.numpy(), [[1, 2], [1, 2], [0, 0], [2, 4]])
    assert dense.dtype == tf.float32


def test_indexed_slices_print_as_tf():
    g = _gradient(tf.Variable(TABLE), lambda t: tf.reduce_sum(tf.gather(t, [1])))
    assert str(g) == ("IndexedSlices(indices=tf.Tensor([1], shape=(1,), dtype=int32), "
                      "values=tf.Tensor([[1. 1.]], shape=(1, 2), dtype=float32), "
                      "dense_shape=tf.Tensor([4 2], shape=(2,), dtype=int32))")


def test_embedding_lookup_and_int64_ids():
    g = _gradient(tf.Variable(TABLE), lambda t: tf.reduce_sum(tf.nn.embedding_lookup(t, np.array([2], np.int64))))
    assert isinstance(g, tf.IndexedSlices) and g.indices.dtype == tf.int64


def test_two_gathers_concatenate_their_slices():
    g = _gradient(tf.Variable(TABLE),
                  lambda t: tf.reduce_sum(tf.gather(t, [2, 2])) + 3.0 * tf.reduce_sum(tf.gather(t, [0])))
    assert isinstance(g, tf.IndexedSlices)
    assert sorted(g.indices.numpy().tolist()) == [0, 2, 2] and g.values.shape == (3, 2)
    np.testing.assert_array_equal(tf.convert_to_tensor(g).numpy(), [[3, 3], [0, 0], [2, 2], [0, 0]])


def test_a_dense_use_makes_the_gradient_dense():
    g = _gradient(tf.Variable(TABLE), lambda t: tf.reduce_sum(tf.gather(t, [1])) + tf.reduce_sum(t * t))
    assert isinstance(g, tf.Tensor)
    expected = 2 * TABLE
    expected[1] += 1
    np.testing.assert_array_equal(g.numpy(), expected)


def test_output_gradients_and_unconnected_gradients():
    g = _gradient(tf.Variable(TABLE), lambda t: tf.gather(t, [1, 3]),
                  output_gradients=tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    assert isinstance(g, tf.IndexedSlices)
    np.testing.assert_array_equal(g.values.numpy(), [[1, 2], [3, 4]])
    table, other = tf.Variable(TABLE), tf.Variable([1.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.gather(table, [0]))
    g_table, g_other = tape.gradient(y, [table, other], unconnected_gradients="zero")
    assert isinstance(g_table, tf.IndexedSlices) and g_other.numpy().tolist() == [0.0]


def test_a_gathered_intermediate_source_still_carries_the_gradient_through():
    x = tf.Variable(TABLE)
    with tf.GradientTape() as tape:
        h = x * 2.0
        y = tf.reduce_sum(tf.gather(h, [0, 0]))
    g_h, g_x = tape.gradient(y, [h, x])
    np.testing.assert_array_equal(tf.convert_to_tensor(g_h).numpy(), [[2, 2], [0, 0], [0, 0], [0, 0]])
    np.testing.assert_array_equal(tf.convert_to_tensor(g_x).numpy(), [[4, 4], [0, 0], [0, 0], [0, 0]])


def test_axis_one_and_jacobians_and_the_functional_api_stay_dense():
    g = _gradient(tf.Variable(TABLE), lambda t: tf.reduce_sum(tf.gather(t, [1], axis=1)))
    assert isinstance(g, tf.Tensor) and g.numpy().tolist() == [[0, 1]] * 4
    table = tf.Variable(TABLE)
    with tf.GradientTape() as tape:
        y = tf.gather(table, [3])
    j = tape.jacobian(y, table)
    assert isinstance(j, tf.Tensor) and j.shape == (1, 2, 4, 2) and j.numpy()[0, 1, 3, 1] == 1.0
    assert isinstance(tf.grad(lambda t: np.sum(tf.gather(t, [1])))(TABLE), np.ndarray)


def test_higher_order_through_a_gather_stays_right():
    x = tf.Variable(TABLE)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.reduce_sum(tf.gather(x, [1, 1]) ** 3)
        g = inner.gradient(y, x)  # recorded by the outer tape: dense, as documented
        s = tf.reduce_sum(tf.convert_to_tensor(g))
    assert isinstance(g, tf.Tensor)
    h = outer.gradient(s, x)
    assert isinstance(h, tf.IndexedSlices)
    expected = np.zeros_like(TABLE)
    expected[1] = 2 * 6 * TABLE[1]
    np.testing.assert_allclose(tf.convert_to_tensor(h).numpy(), expected)


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_optimizers_accept_indexed_slices(name):
    sparse, dense = tf.Variable(TABLE), tf.Variable(TABLE)
    opt_sparse = getattr(tf.keras.optimizers, name)(learning_rate=0.1)
    opt_dense = getattr(tf.keras.optimizers, name)(learning_rate=0.1)
    for _ in range(2):
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.gather(sparse, [0, 2, 2]) ** 2)
        g = tape.gradient(y, sparse)
        assert isinstance(g, tf.IndexedSlices)
        opt_sparse.apply_gradients([(g, sparse)])
        opt_dense.apply_gradients([(tf.convert_to_tensor(g), dense)])
    np.testing.assert_array_equal(sparse.numpy(), dense.numpy())
    assert not np.array_equal(sparse.numpy(), TABLE)


def test_functional_optimizers_accept_indexed_slices():
    g = _gradient(tf.Variable(TABLE), lambda t: tf.reduce_sum(tf.gather(t, [3])))
    opt = tf.optimizers.sgd(0.5) if hasattr(tf.optimizers, "sgd") else None
    if opt is None:
        pytest.skip("no functional sgd")
    updates, _ = opt.update({"w": g}, opt.init({"w": TABLE}))
    np.testing.assert_array_equal(np.asarray(updates["w"]), -0.5 * tf.convert_to_tensor(g).numpy())
