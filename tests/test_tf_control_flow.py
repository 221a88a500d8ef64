"""tf.while_loop, tf.cond, tf.scan, tf.foldl / foldr, tf.clip_by_global_norm and tf.newaxis
(issue 24), eager and differentiable through the tape, against TF 2.21's values (literals)."""

import numpy as np
import pytest

import dualtape as tf


def test_while_loop_structures_as_tf():
    out = tf.while_loop(lambda i: i < 5, lambda i: [i + 1], [0])
    assert isinstance(out, list) and int(out[0]) == 5 and out[0].dtype == tf.int32  # TF: [<int32 5>]
    out = tf.while_loop(lambda i: i < 5, lambda i: (i + 1,), (0,))
    assert isinstance(out, tuple) and int(out[0]) == 5
    i, s = tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s * 2.0), (0, 1.0))
    assert int(i) == 5 and float(s) == 32.0 and s.dtype == tf.float32
    out = tf.while_loop(lambda i: i < 50, lambda i: [i + 1], [tf.constant(0)], maximum_iterations=7)
    assert int(out[0]) == 7
    out = tf.while_loop(lambda d: d["i"] < 3, lambda d: [{"i": d["i"] + 1}], [{"i": 0}])
    assert isinstance(out[0], dict) and int(out[0]["i"]) == 3
    none_run = tf.while_loop(lambda i: i < 0, lambda i: [i + 1], [3])
    assert int(none_run[0]) == 3 and isinstance(none_run[0], tf.Tensor)


def test_while_loop_refuses_a_body_of_another_structure():
    with pytest.raises(TypeError, match=r"\[while_loop\] body returned a tensor; it must return a list or tuple"):
        tf.while_loop(lambda i: i < 5, lambda i: i + 1, [tf.constant(0)])  # TF: TypeError too
    with pytest.raises(ValueError, match=r"\[while_loop\] body's result does not have the structure"):
        tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1,), (0, 1.0))
    with pytest.raises(ValueError, match="loop_vars must be a non-empty list"):
        tf.while_loop(lambda i: i < 5, lambda i: [i + 1], 0)


def test_gradients_through_while_loop_and_cond():
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * x[i]), (0, 1.0))[1]
    assert tape.gradient(y, x).numpy().tolist() == [6.0, 3.0, 2.0]  # TF 2.21
    w = tf.Variable(2.0)
    for flag, want in ((True, 4.0), (False, 1.0)):
        with tf.GradientTape() as tape:
            y = tf.cond(tf.constant(flag), lambda: w * w, lambda: w + 1.0)
        assert float(tape.gradient(y, w)) == want
    assert tf.cond(tf.constant(True), lambda: 1.0, lambda: 2.0) == 1.0  # TF returns the branch's value
    assert tf.cond(False, lambda: (1, 2), lambda: (3, 4)) == (3, 4)
    with pytest.raises(ValueError, match=r"\[cond\] pred must be a scalar"):
        tf.cond(tf.constant([True, False]), lambda: 1, lambda: 2)


def test_scan_and_folds_match_tf():
    v = tf.constant([1.0, 2.0, 3.0])
    assert tf.scan(lambda a, x: a + x, v).numpy().tolist() == [1.0, 3.0, 6.0]
    assert tf.scan(lambda a, x: a + x, v, initializer=10.0).numpy().tolist() == [11.0, 13.0, 16.0]
    s, p = tf.scan(lambda a, x: (a[0] + x, a[1] * x), v, initializer=(0.0, 1.0))
    assert s.numpy().tolist() == [1.0, 3.0, 6.0] and p.numpy().tolist() == [1.0, 2.0, 6.0]
    assert tf.scan(lambda a, x: a + x, v, reverse=True).numpy().tolist() == [6.0, 5.0, 3.0]
    pairs = (tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]))
    assert tf.scan(lambda a, x: a + x[0] * x[1], pairs, initializer=0.0).numpy().tolist() == [3.0, 11.0]
    assert float(tf.foldl(lambda a, x: a - x, v)) == -4.0 and float(tf.foldr(lambda a, x: a - x, v)) == 0.0
    assert float(tf.foldl(lambda a, x: a * 2 + x, v, initializer=1.0)) == 19.0
    assert float(tf.foldr(lambda a, x: a * 2 + x, v, initializer=1.0)) == 25.0
    with tf.GradientTape() as tape:
        tape.watch(v)
        y = tf.reduce_sum(tf.scan(lambda a, x: a * x, v))
    assert tape.gradient(y, v).numpy().tolist() == [9.0, 4.0, 2.0]  # TF 2.21
    with pytest.raises(ValueError, match=r"\[scan\] every tensor in elems needs the same leading dimension"):
        tf.scan(lambda a, x: a, (tf.zeros([2]), tf.zeros([3])))


def test_clip_by_global_norm_matches_tf():
    a, b = tf.constant([3.0, 4.0]), tf.constant([[12.0]])
    clipped, norm = tf.clip_by_global_norm([a, None, b], 6.5)
    assert clipped[0].numpy().tolist() == [1.5, 2.0] and clipped[1] is None
    assert clipped[2].numpy().tolist() == [[6.0]] and float(norm) == 13.0
    clipped, norm = tf.clip_by_global_norm([a], 100.0)
    assert clipped[0].numpy().tolist() == [3.0, 4.0] and float(norm) == 5.0
    clipped, norm = tf.clip_by_global_norm([a], 1.0, use_norm=tf.constant(10.0))
    np.testing.assert_array_equal(clipped[0].numpy(), np.array([0.3, 0.4], np.float32))  # TF 2.21
    assert float(norm) == 10.0
    clipped, norm = tf.clip_by_global_norm([tf.constant([np.inf, 1.0])], 1.0)
    assert np.isnan(clipped[0].numpy()).all() and np.isinf(norm.numpy())  # TF: [nan, nan], inf
    with tf.GradientTape() as tape:
        tape.watch(a)
        clipped, _ = tf.clip_by_global_norm([a], 1.0)
        y = tf.reduce_sum(clipped[0] * [1.0, 2.0])
    np.testing.assert_allclose(tape.gradient(y, a).numpy(), [-0.06399999558925629, 0.04800000786781311],
                               rtol=4 * np.finfo(np.float32).eps)  # TF 2.21
    assert float(tf.linalg.global_norm([a, b])) == 13.0
    with pytest.raises(TypeError, match="`t_list` should be a sequence of tensors"):
        tf.clip_by_global_norm(a, 1.0)


def test_newaxis():
    x = tf.constant([1.0, 2.0])
    assert tf.newaxis is None and x[:, tf.newaxis].shape == (2, 1)
