"""More runtime fast paths (issue 13), each checked against the general path it skips:

- `unreduce` broadcasts a plain array back with one read-only ndarray view;
- `unbroadcast_to` sums a bias's cotangent over the leading axes directly;
- `GradientTape.watch` / `gradient` and `ForwardAccumulator` take a flat list or tuple of
  tensors as it is (no walk over the structure), and seed a float target with ones directly;
- `ForwardAccumulator.jvp` hands out a tangent it made without copying it (read-only).
"""

import collections

import numpy as np
import pytest

import dualtape as tf
from dualtape import dnp
from dualtape.core import rulekit
from dualtape.core.apply_rules import unbroadcast_to
from dualtape.core.rulekit.shapes import unreduce

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("axis", [None, 0, 1, 2, (0, 2), -1, (1,)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("layout", ["C", "F", "readonly"])
def test_unreduce_view_matches_broadcast_to(axis, keepdims, layout):
    x = RNG.standard_normal((3, 4, 5))
    g = np.sum(x, axis=axis, keepdims=keepdims)
    if layout == "F":
        g = np.asfortranarray(g)
    elif layout == "readonly" and isinstance(g, np.ndarray):
        g.flags.writeable = False
    out = unreduce(g, x.shape, axis, keepdims)
    expected = np.broadcast_to(np.sum(x, axis=axis, keepdims=True), x.shape)
    assert out.shape == x.shape and out.dtype == x.dtype
    np.testing.assert_array_equal(out, expected)
    assert not out.flags.writeable       # a view: never written into, as np.broadcast_to's
    assert unreduce(np.float32(2.0), (2, 3)).dtype == np.float32


def test_unreduce_keeps_batch_axes_and_empty_shapes():
    g = RNG.standard_normal((2,))            # two batched cotangents of a full sum
    saved, rulekit.BATCH_NDIM[0] = rulekit.BATCH_NDIM[0], 1
    try:
        out = unreduce(g, (3, 4))
    finally:
        rulekit.BATCH_NDIM[0] = saved
    np.testing.assert_array_equal(out, np.broadcast_to(g[:, None, None], (2, 3, 4)))
    assert unreduce(np.ones(()), (0, 3)).shape == (0, 3)
    with tf.GradientTape() as tape:
        x = tf.constant(np.ones((0, 3)))
        tape.watch(x)
        y = dnp.sum(x)
    assert tape.gradient(y, x).shape == (0, 3)


def test_bias_cotangent_summed_over_leading_axes():
    part = RNG.standard_normal((2, 3, 4))
    for x in (np.zeros(4), np.zeros((3, 4)), np.zeros((1, 4)), np.zeros((3, 1)), np.float64(1.0)):
        out = unbroadcast_to(part, x)
        expected = rulekit.unbroadcast(part, np.shape(x))
        assert np.shape(out) == np.shape(x)
        np.testing.assert_allclose(out, expected, rtol=1e-15)
    out32 = unbroadcast_to(part, np.zeros(4, np.float32))   # cast to the input's dtype
    assert out32.dtype == np.float32


def test_gradient_structures_flat_and_nested():
    a, b, c = (tf.constant(RNG.standard_normal(3)) for _ in range(3))
    Pair = collections.namedtuple("Pair", "first second")
    with tf.GradientTape(persistent=True) as tape:
        tape.watch((a, [b, c]))
        y = dnp.sum(a * b * c)
    flat_list = tape.gradient(y, [a, b, c])
    flat_tuple = tape.gradient(y, (a, b, c))
    nested = tape.gradient(y, [[a], (b, c)])
    named = tape.gradient(y, Pair(a, [b, c]))
    keyed = tape.gradient(y, {"z": a, "b": b})
    assert type(flat_list) is list and type(flat_tuple) is tuple
    assert isinstance(nested[0], list) and isinstance(nested[1], tuple)
    assert isinstance(named, Pair) and isinstance(named.second, list)
    ga = (b * c).numpy()
    for got in (flat_list[0], flat_tuple[0], nested[0][0], named.first, keyed["z"]):
        np.testing.assert_allclose(got.numpy(), ga, rtol=1e-15)
    with pytest.raises(ValueError, match="sources must be tensors"):
        tape.gradient(y, [a, np.ones(3)])
    with pytest.raises(ValueError, match="can only watch tensors"):
        tape.watch([a, 1.0])


def test_seed_of_float_targets_and_refusals():
    x = tf.constant(np.array([1.0, 2.0], dtype=np.float32))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        n = tf.cast(x, tf.int32)
    g = tape.gradient(y, x)                   # the seed is ones of y's shape and dtype
    assert g.dtype == tf.float32
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(tape.gradient([y, y], x).numpy(), [4.0, 8.0])
    assert tape.gradient(x, x).numpy().tolist() == [1.0, 1.0]
    with pytest.warns(UserWarning, match="must be floating"):
        assert tape.gradient(n, x) is None


def test_accumulator_flat_watch_and_jvp_without_copies():
    x0, v0 = np.array([0.3, -0.2]), np.array([1.0, 3.0])
    x, v = tf.constant(x0), tf.constant(v0)
    with tf.autodiff.ForwardAccumulator([x], [v]) as acc:
        y = dnp.sin(x) * 2.0
    t1, = acc.jvp([y])
    t2 = acc.jvp(y)
    assert t1 is t2                          # the tensor that now holds the tangent
    np.testing.assert_allclose(t1.numpy(), 2 * np.cos(x0) * v0, rtol=1e-15)
    with pytest.raises(ValueError):
        t1._value[0] = 1.0                    # read-only, like every tensor's value
    assert acc.jvp((x, y))[0] is v           # a watched primal: its own tangent tensor
    nested = acc.jvp({"y": [y], "x": x})
    assert nested["y"][0] is t1 and nested["x"] is v
    with pytest.raises(ValueError, match="watched twice"):  # TF 2.21 (the tangents were added)
        tf.autodiff.ForwardAccumulator([x, x], [v, v])
    with pytest.raises(ValueError, match="tangent shape"):
        tf.autodiff.ForwardAccumulator([x], [tf.constant(np.ones(3))])
    with pytest.raises(ValueError, match="only floating"):
        tf.autodiff.ForwardAccumulator([tf.constant([1, 2])], [tf.constant([1, 2])])
    with pytest.raises(TypeError, match="primals must be tensors"):
        tf.autodiff.ForwardAccumulator([x0], [v])


def test_functional_grad_seed_value_and_scalar_check():
    x0 = np.array([0.5, -1.5])
    value, g = tf.value_and_grad(lambda x: dnp.sum(x * x))(x0.copy())
    assert type(value) is np.ndarray and value.shape == () and value == np.sum(x0 * x0)
    np.testing.assert_array_equal(g, 2 * x0)
    value, g = tf.value_and_grad(lambda x: dnp.sum(x * x, keepdims=True))(x0.copy())
    assert value.shape == (1,) and g.dtype == np.float64
    g32 = tf.grad(lambda x: dnp.sum(dnp.sin(x)))(x0.astype(np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, np.cos(x0), rtol=1e-6)
    with pytest.raises(TypeError, match="must return a scalar"):
        tf.grad(lambda x: x * 2.0)(x0.copy())
    with pytest.raises(Exception, match="float"):   # the escape refusal is unchanged
        tf.grad(lambda x: float(dnp.sum(x)) * dnp.sum(x))(x0.copy())
    v = tf.Variable(np.array([1.0, 2.0]))           # a variable read inside a tape: watched
    with tf.GradientTape() as tape:
        y = dnp.sum(v * v)
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [2.0, 4.0])


def test_linear_ops_with_every_tangent_plain():
    """jvp_output runs a LINEAR op on the tangents directly when each input has a plain one:
    broadcasting, static arguments and dtypes as the general path gives them."""
    from dualtape.core.apply_rules import _linear_args, jvp_output
    from dualtape.core.registry import REGISTRY

    x, dx = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    b, db = RNG.standard_normal(4).astype(np.float32), RNG.standard_normal(4).astype(np.float32)
    cases = [("AddV2", [dx, db], [x, b], {}), ("Sub", [dx, db], [x, b], {}),
             ("Sum", [dx], [x], {"axis": 1, "keepdims": True}),
             ("Transpose", [dx], [x], {"axes": (1, 0)})]
    for name, tangents, values, static in cases:
        op = REGISTRY[name]
        ans = op.impl(*values, **static)
        fast = jvp_output(op, tangents, ans, values, static)
        slow = op(*_linear_args(op, tangents, values), **static)
        assert fast.shape == ans.shape and fast.dtype == ans.dtype
        np.testing.assert_array_equal(fast, slow)
    v32 = tf.constant(np.ones(4, np.float32))
    x32 = tf.constant(np.arange(4.0, dtype=np.float32))
    with tf.autodiff.ForwardAccumulator([x32], [v32 * 2.0]) as acc:  # (once: TF refuses twice)
        y = dnp.sum(x32 + x32 * 2.0)
    assert acc.jvp(y).dtype == tf.float32 and acc.jvp(y).numpy() == 24.0


def test_inline_rule_path_matches_vjp_parts():
    """replay calls the rules of the common ops inline; with a RegisterGradient registration
    present every record goes through vjp_parts instead: the gradients agree exactly."""
    from dualtape.core.registry import unregister_gradient

    x0 = RNG.standard_normal((3, 4))
    b0 = RNG.standard_normal(4)

    def program(x, b):
        h = dnp.maximum(x * b + 1.0, 0.5) / (1.0 + dnp.exp(-x))
        k = tf.cast(x > 0, tf.int32)                 # an integer value: no gradient through it
        return dnp.sum(h[:, 1:] * b[1:]) + dnp.mean(h ** 2) + dnp.sum(tf.cast(k, tf.float64) * x)

    def gradients():
        x, b = tf.constant(x0), tf.constant(b0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = program(x, b)
            tape.watch(b)                            # watched after use: still gets a gradient
        return [g.numpy() for g in tape.gradient(y, [x, b])]

    inline = gradients()
    tf.RegisterGradient("InlineReplayTestOnly")(lambda op, grad: grad)
    try:
        general = gradients()
    finally:
        unregister_gradient("InlineReplayTestOnly")
    for a, b in zip(inline, general):
        np.testing.assert_array_equal(a, b)


def test_grad_argnums_checked_per_arity_and_inputs_as_before():
    f = lambda a, b, c=None: dnp.sum(a * b)
    g = tf.grad(f, argnums=(0, 1))
    a0, b0 = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    for _ in range(2):
        ga, gb = g(a0.copy(), b0.copy())
        np.testing.assert_array_equal(ga, b0)
        np.testing.assert_array_equal(gb, a0)
    with pytest.raises(ValueError, match="argnums"):
        tf.grad(f, argnums=2)(a0.copy(), b0.copy())
    np.testing.assert_array_equal(tf.grad(f, argnums=-1)(a0.copy(), b0.copy()), a0)
    g32 = tf.grad(f)(a0.astype(np.float32), b0.astype(np.float32))        # float32 kept
    assert g32.dtype == np.float32
    with pytest.raises(TypeError, match="only floating"):
        tf.grad(f)(np.array([1, 2]), b0.copy())
