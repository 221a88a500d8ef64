"""Third derivatives by every nesting of reverse and forward mode agree.

Each level of `grad` or `jvp` must see exactly its own perturbation, whatever sits
inside or outside it: a confused or disconnected level shows up as a wrong third
derivative (a silent 0 was once returned for grad(jvp(grad(f)))).
"""

import itertools

import numpy as np
import pytest

import dualtape as tf
from dualtape import dnp


def f(x):
    return dnp.sin(x) * x * x


def third_derivative(x):
    # f = x^2 sin x; f''' = -x^2 cos x - 6 x sin x + 6 cos x
    return -x * x * np.cos(x) - 6 * x * np.sin(x) + 6 * np.cos(x)


def d_rev(h):
    return lambda x: tf.grad(h)(x)


def d_fwd(h):
    return lambda x: tf.jvp(h, (x,), (1.0,))[1]


@pytest.mark.parametrize("modes", list(itertools.product("rf", repeat=3)), ids="".join)
def test_third_derivative_by_every_nesting(modes):
    h = f
    for mode in modes:
        h = (d_rev if mode == "r" else d_fwd)(h)
    for x in (0.3, -1.2):
        np.testing.assert_allclose(float(np.asarray(h(x))), third_derivative(x), rtol=1e-10)


def test_gradient_of_hvp_of_a_vector_function():
    g = lambda x: dnp.sum(dnp.sin(x) * x)  # noqa: E731
    x = np.array([0.5, 1.0])
    v = np.array([1.0, 0.0])
    # d/da sum(H(a) v) with H = diag(2 cos a - a sin a): -a cos a - 3 sin a on the first entry
    expected = np.array([-0.5 * np.cos(0.5) - 3 * np.sin(0.5), 0.0])
    np.testing.assert_allclose(tf.grad(lambda a: dnp.sum(tf.hvp(g, (a,), (v,))))(x), expected)
    np.testing.assert_allclose(
        tf.grad(lambda a: dnp.sum(tf.jvp(tf.grad(g), (a,), (v,))[1]))(x), expected)


def test_tapes_and_accumulators_three_deep():
    x = tf.constant(0.7, dtype=tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0, dtype=tf.float64)) as acc:
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            first = inner.gradient(y, x)
        second = acc.jvp(first)
    third = outer.gradient(second, x)
    np.testing.assert_allclose(third.numpy(), third_derivative(0.7), rtol=1e-10)
