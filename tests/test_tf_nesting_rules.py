"""TF 2.21's rules for accumulators, tapes and custom gradients (issue 19, section 3).

- A ForwardAccumulator and a GradientTape nest by the order they are entered now: each
  kept the level of its first entry, so re-entering them the other way round was nested
  the old way (the tape missed the accumulator's JVP computations: gradient None).
- A ForwardAccumulator watching the same tensor twice raises ValueError (the tangents
  were summed).
- A custom_gradient whose gradient function returns the wrong number of gradients raises
  ValueError in TF's wording; on a method, `self` is no input.
"""

import numpy as np
import pytest

import dualtape as tf


def test_reentered_tape_and_accumulator_nest_as_entered_now():
    x = tf.constant(2.0)
    acc = tf.autodiff.ForwardAccumulator(x, tf.constant(1.0))
    tape = tf.GradientTape(persistent=True)
    with acc:  # first: the accumulator outside the tape
        with tape:
            tape.watch(x)
            x * x
    tape.reset()
    with tape:  # now the tape outside: it records the accumulator's JVP (reverse over forward)
        tape.watch(x)
        with acc:
            y = x ** 3
            jvp = acc.jvp(y)
    assert jvp.numpy() == 12.0
    assert tape.gradient(jvp, x).numpy() == 12.0  # d(3 x^2)/dx at 2 (was None)


def test_reentered_accumulator_outside_a_reentered_tape():
    x = tf.constant(2.0)
    acc = tf.autodiff.ForwardAccumulator(x, tf.constant(1.0))
    tape = tf.GradientTape(persistent=True)
    with tape:  # first: the tape outside
        with acc:
            pass
    with acc:  # now the accumulator outside: it sees the tape's backward pass
        with tape:
            tape.watch(x)
            y = x ** 3
        g = tape.gradient(y, x)
    assert g.numpy() == 12.0 and acc.jvp(g).numpy() == 12.0


def test_stop_recording_keeps_the_tapes_place():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
            with tape.stop_recording():
                pass
            y = x ** 3
            jvp = acc.jvp(y)
    assert tape.gradient(jvp, x).numpy() == 12.0


def test_accumulator_watching_a_tensor_twice_raises():
    x = tf.constant([1.0, 2.0])
    with pytest.raises(ValueError, match="watched twice"):
        tf.autodiff.ForwardAccumulator([x, x], [tf.constant([1.0, 0.0]), tf.constant([0.0, 1.0])])
    v = tf.Variable(1.0)
    with pytest.raises(ValueError, match="watched twice"):
        tf.autodiff.ForwardAccumulator((v, v), (1.0, 2.0))


@pytest.mark.parametrize("returned", [1, 3])
def test_custom_gradient_with_the_wrong_number_of_gradients(returned):
    @tf.custom_gradient
    def f(x, y):
        def grad(dy):
            return (dy,) * returned if returned > 1 else dy
        return x * y, grad

    x, y = tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        z = f(x, y)
    with pytest.raises(ValueError, match=rf"custom_gradient function expected to return 2 "
                                         rf"gradients, but returned {returned} instead"):
        tape.gradient(z, [x, y])


class Scaler:
    def __init__(self, k):
        self.k = k

    @tf.custom_gradient
    def scale(self, x):
        def grad(dy):
            return dy * self.k * 10.0  # one gradient: x's (self is no input, as in TF)
        return x * self.k, grad


def test_custom_gradient_on_a_method_does_not_count_self():
    s = Scaler(2.0)
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = s.scale(x)
    assert y.numpy() == 6.0 and tape.gradient(y, x).numpy() == 20.0
    assert tf.grad(lambda a: s.scale(a))(3.0) == 20.0
    assert Scaler.scale.__name__ == "scale" and s.scale.__name__ == "scale"
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        y = s.scale(x)
    assert acc.jvp(y).numpy() == 20.0
