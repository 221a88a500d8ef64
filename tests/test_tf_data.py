"""tf.data.Dataset (issue 24): element structure, dtypes, specs, cardinality and the
transformations, against values recorded from TensorFlow 2.21 (literals below)."""

import numpy as np
import pytest

import dualtape as tf

D = tf.data.Dataset
X = np.arange(10, dtype=np.float32).reshape(5, 2)
LABELS = [0, 1, 0, 1, 1]


def _ds():
    return D.from_tensor_slices((X, LABELS))


def test_tuple_elements_stay_tuples_with_tf_dtypes_and_spec():
    ds = _ds()
    first = next(iter(ds))
    assert isinstance(first, tuple) and all(isinstance(t, tf.Tensor) for t in first)
    assert first[0].dtype == tf.float32 and first[1].dtype == tf.int32  # a Python int list is int32
    assert ds.element_spec == (tf.TensorSpec((2,), tf.float32), tf.TensorSpec((), tf.int32))
    assert repr(ds.element_spec[0]) == "TensorSpec(shape=(2,), dtype=tf.float32, name=None)"


def test_batch_values_and_specs():
    got = [(a.numpy().tolist(), b.numpy().tolist()) for a, b in _ds().batch(2)]
    assert got == [([[0.0, 1.0], [2.0, 3.0]], [0, 1]), ([[4.0, 5.0], [6.0, 7.0]], [0, 1]), ([[8.0, 9.0]], [1])]
    assert _ds().batch(2).element_spec == (tf.TensorSpec((None, 2), tf.float32), tf.TensorSpec((None,), tf.int32))
    assert _ds().batch(2, drop_remainder=True).element_spec == (tf.TensorSpec((2, 2), tf.float32),
                                                                 tf.TensorSpec((2,), tf.int32))
    assert len(list(_ds().batch(2, drop_remainder=True))) == 2


def test_nested_dicts_stay_dicts():
    d = D.from_tensor_slices({"img": X, "lab": {"y": np.array([1.0, 2, 3, 4, 5])}})
    assert d.element_spec == {"img": tf.TensorSpec((2,), tf.float32), "lab": {"y": tf.TensorSpec((), tf.float64)}}
    batches = list(d.batch(3))
    assert [sorted(b) for b in batches] == [["img", "lab"], ["img", "lab"]]
    assert batches[1]["img"].numpy().tolist() == [[6.0, 7.0], [8.0, 9.0]]
    assert batches[0]["lab"]["y"].numpy().tolist() == [1.0, 2.0, 3.0]


def test_cardinality_matches_tf():
    ds = _ds()
    got = [int(c) for c in [
        ds.cardinality(), ds.batch(2).cardinality(), ds.batch(2, drop_remainder=True).cardinality(),
        ds.repeat().cardinality(), ds.repeat(3).cardinality(), ds.filter(lambda a, b: b > 0).cardinality(),
        ds.repeat().take(7).cardinality(), ds.skip(2).cardinality(), ds.skip(9).cardinality(),
        ds.filter(lambda a, b: b > 0).take(2).cardinality(), ds.repeat().skip(3).cardinality(),
        ds.shuffle(3).map(lambda a, b: (a, b)).prefetch(tf.data.AUTOTUNE).cache().cardinality(),
        D.range(0).repeat().cardinality(), ds.repeat(0).cardinality()]]
    assert got == [5, 3, 2, -1, 15, -2, 7, 3, 0, -2, -1, 5, 0, 0]  # TF 2.21
    assert ds.cardinality().dtype == tf.int64
    assert (tf.data.INFINITE_CARDINALITY, tf.data.UNKNOWN_CARDINALITY) == (-1, -2)
    assert tf.data.AUTOTUNE == tf.data.experimental.AUTOTUNE == -1
    assert int(tf.data.experimental.cardinality(ds)) == 5
    assert len(ds) == 5
    with pytest.raises(TypeError, match="The dataset is infinite."):
        len(ds.repeat())
    with pytest.raises(TypeError, match="The dataset length is unknown."):
        len(ds.filter(lambda a, b: b > 0))


def test_map_unpacks_tuples_and_filter_range_take_skip_repeat():
    m = _ds().map(lambda a, b: (tf.reduce_sum(a), b * 2))
    assert [(float(a), int(b)) for a, b in m.as_numpy_iterator()] == [(1.0, 0), (5.0, 2), (9.0, 0), (13.0, 2), (17.0, 2)]
    assert m.element_spec == (tf.TensorSpec((), tf.float32), tf.TensorSpec((), tf.int32))
    assert list(D.range(2, 11, 3).as_numpy_iterator()) == [2, 5, 8]
    assert D.range(3).element_spec == tf.TensorSpec((), tf.int64)
    assert next(iter(D.range(3))).dtype == tf.int64
    assert list(D.range(10).skip(3).take(4).as_numpy_iterator()) == [3, 4, 5, 6]
    assert list(D.range(3).repeat(2).as_numpy_iterator()) == [0, 1, 2, 0, 1, 2]
    assert list(D.range(10).filter(lambda v: v % 3 == 0).as_numpy_iterator()) == [0, 3, 6, 9]
    assert list(D.range(4).repeat().take(6).as_numpy_iterator()) == [0, 1, 2, 3, 0, 1]
    assert list(D.range(3).enumerate(5).as_numpy_iterator()) == [(5, 0), (6, 1), (7, 2)]
    assert list(D.zip((D.range(3), D.range(4, 9))).as_numpy_iterator()) == [(0, 4), (1, 5), (2, 6)]
    assert list(D.range(5).batch(2).unbatch().as_numpy_iterator()) == [0, 1, 2, 3, 4]


def test_from_tensors_and_list_slices():
    ft = D.from_tensors([1.0, 2.0])
    assert [t.numpy().tolist() for t in ft] == [[1.0, 2.0]]
    assert ft.element_spec == tf.TensorSpec((2,), tf.float32)
    assert D.from_tensor_slices([1.0, 2.0]).element_spec == tf.TensorSpec((), tf.float32)
    rows = list(D.from_tensor_slices([[1, 2], [3, 4]]).as_numpy_iterator())
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4]] and rows[0].dtype == np.int32


def test_shuffle_is_a_permutation_reshuffled_per_epoch_unless_asked():
    s = D.range(20).shuffle(20, seed=3)
    e1, e2 = list(s.as_numpy_iterator()), list(s.as_numpy_iterator())
    assert sorted(e1) == list(range(20)) and sorted(e2) == list(range(20)) and e1 != e2
    fixed = D.range(20).shuffle(20, seed=3, reshuffle_each_iteration=False)
    assert list(fixed.as_numpy_iterator()) == list(fixed.as_numpy_iterator())
    assert list(D.range(20).shuffle(20, seed=3).as_numpy_iterator()) == e1  # a seed reproduces
    small = list(D.range(20).shuffle(2, seed=0).as_numpy_iterator())  # a buffer of 2 moves little
    assert sorted(small) == list(range(20)) and all(abs(v - i) <= 19 for i, v in enumerate(small))
    assert small[0] in (0, 1)
    tf.random.set_seed(7)
    a = list(D.range(10).shuffle(10).as_numpy_iterator())
    tf.random.set_seed(7)
    assert list(D.range(10).shuffle(10).as_numpy_iterator()) == a  # the global seed reproduces


def test_cache_replays_the_first_pass():
    calls = []
    ds = D.range(3).map(lambda v: (calls.append(1), v * 2)[1]).cache()
    assert list(ds.as_numpy_iterator()) == [0, 2, 4] and list(ds.as_numpy_iterator()) == [0, 2, 4]
    assert len(calls) == 3


def test_training_loop_over_a_dataset_gets_gradients():
    w = tf.Variable(np.zeros(2, np.float32))
    ds = _ds().map(lambda a, b: (a, tf.cast(b, tf.float32))).batch(5)
    for xb, yb in ds:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((tf.reduce_sum(xb * w, axis=1) - yb) ** 2)
        g = tape.gradient(loss, w)
    # d/dw mean((Xw - y)^2) at w = 0 is -2/5 X^T y
    np.testing.assert_allclose(g.numpy(), -2 / 5 * X.T @ np.array(LABELS, np.float32), rtol=1e-6)


def test_bad_input_errors_name_the_api():
    with pytest.raises(ValueError, match=r"\[Dataset.from_tensor_slices\].*leading dimensions"):
        D.from_tensor_slices((np.zeros(3), np.zeros(4)))
    with pytest.raises(ValueError, match=r"\[Dataset.batch\].*different shapes"):
        list(D.range(3).map(lambda v: tf.zeros([int(v.numpy())])).batch(3))
    with pytest.raises(TypeError, match=r"\[Dataset.filter\]"):
        list(D.range(3).filter(lambda v: v))


def test_cache_keeps_only_a_complete_pass():
    calls = []
    ds = D.range(4).map(lambda v: (calls.append(1), v)[1]).cache()
    assert [int(v) for v in ds.take(2)] == [0, 1]  # a partial pass is not cached
    assert list(ds.as_numpy_iterator()) == [0, 1, 2, 3] and list(ds.as_numpy_iterator()) == [0, 1, 2, 3]
    assert len(calls) == 2 + 4


def _gen():
    for i in range(3):
        yield np.arange(i + 1, dtype=np.float64), i


def test_from_generator_converts_to_the_signature():
    ds = D.from_generator(_gen, output_signature=(tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int32)))
    assert ds.element_spec == (tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int32))
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    got = [(a.numpy().tolist(), a.dtype, int(b), b.dtype) for a, b in ds]  # TF 2.21, literally:
    assert got == [([0.0], tf.float32, 0, tf.int32), ([0.0, 1.0], tf.float32, 1, tf.int32),
                   ([0.0, 1.0, 2.0], tf.float32, 2, tf.int32)]
    assert len(list(ds)) == 3  # a fresh generator per pass
    old = D.from_generator(_gen, output_types=(tf.float32, tf.int64))
    assert repr(old.element_spec) == ("(TensorSpec(shape=<unknown>, dtype=tf.float32, name=None), "
                                      "TensorSpec(shape=<unknown>, dtype=tf.int64, name=None))")
    d = D.from_generator(lambda: iter([{"x": 1.5}]), output_signature={"x": tf.TensorSpec([], tf.float32)})
    assert [float(e["x"]) for e in d] == [1.5]
    shaped = D.from_generator(_gen, output_types=(tf.float32, tf.int32), output_shapes=((None,), ()))
    assert shaped.element_spec[0] == tf.TensorSpec([None], tf.float32)
    with pytest.raises(TypeError, match=r"yielded an element of shape \(1,\) where an element of shape \(2,\) "
                                        r"was expected"):  # TF's words
        list(D.from_generator(_gen, output_signature=(tf.TensorSpec([2]), tf.TensorSpec([], tf.int32))))
    with pytest.raises(TypeError, match="did not match the expected structure"):
        list(D.from_generator(_gen, output_signature=tf.TensorSpec([None])))
