"""In-place operations under the functional API follow NumPy (issue 19): `a4 = a3; a3 += a3`
doubles a4 too, as it does on NumPy arrays (every runtime mode gave 0.607 where NumPy gives
2.427). The traced object itself is updated (value and tape node or tangent), so every name
holding it sees the update; where NumPy's semantics cannot be followed (views, arguments, a
NumPy array receiving a traced value), the operation is refused by name. A user's
GradientTape keeps TF's semantics: `t += 1` rebinds."""

import numpy as np
import pytest

import dualtape
import dualtape as tf
from dualtape.errors import RefusalError
from dualtape.testing import check_modes

RUNTIME = ("tape", "functional.grad", "functional.vjp", "functional.jvp", "functional.jacfwd",
           "functional.jacrev", "functional.hvp")
X = np.random.default_rng(0).standard_normal((2, 3))


# -- NumPy's semantics, followed: every mode agrees with NumPy and with differences -----------

def shared(x):  # the issue's program
    a3 = np.cov(x)
    a4 = a3
    a3 += a3
    return np.sum(a4 * a4)


def every_operator(x):
    a = x * 2.0
    b = a
    a *= x
    a -= 0.5
    a /= 1.5
    a **= 2
    return np.sum(b * x)


def ufunc_out(x):
    a = np.sin(x)
    b = a
    np.add(a, x, out=a)
    np.multiply(a, 2.0, out=a)
    return np.sum(b ** 2)


def loop_accumulator(x):
    acc = x * 0.0
    first = acc
    for i in range(3):
        acc += x ** i
    return np.sum(acc * first)


def matmul_in_place(x):
    a = x @ x.T
    b = a
    a @= a
    return np.sum(b)


def scalar_argument(x):  # a Python number argument is rebound, as Python does with numbers
    y = x
    x += 1.0
    return x * y


def numpy_scalar_shared(x):  # the long run (seed 2002, program 1969): np.sum gives an np.float64
    by = np.sum(np.tanh(x))
    p4, q5 = [by, by]
    p4 += p4  # NumPy scalars are immutable: p4 is rebound, q5 keeps by
    return p4 + q5


def numpy_scalar_rebound(x):
    by = np.sum(x * x)
    q5 = by
    by += 1.0
    by *= x[0]  # x[0] is an np.float64 too
    return by * q5


@pytest.mark.parametrize("f, args", [
    (shared, (X,)), (every_operator, (X,)), (ufunc_out, (X,)), (loop_accumulator, (X,)),
    (matmul_in_place, (X,)), (scalar_argument, (2.0,)), (numpy_scalar_shared, (X,)),
    (numpy_scalar_rebound, (X,)),
])
def test_every_runtime_mode_follows_numpy(f, args):
    report = check_modes(f, args, modes=RUNTIME)
    assert not report.failures and not report.refused, report


@pytest.mark.parametrize("f", [numpy_scalar_shared, numpy_scalar_rebound])
def test_numpy_scalars_are_rebound_in_every_mode(f):
    """The transformer's hvp and the mixed modes run generated code on dual numbers and
    tensors: an in-place update of a NumPy scalar there rebinds too (it mutated the dual)."""
    report = check_modes(f, (X[0],))
    assert not report.failures, report


def test_the_issue_numbers():
    x = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]])
    value, g = dualtape.value_and_grad(shared)(x)
    np.testing.assert_allclose(value, shared(x.copy()), rtol=1e-12)
    _, tangent = dualtape.jvp(shared, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(tangent, np.sum(g), rtol=1e-10)
    assert np.isclose(dualtape.grad(scalar_argument)(2.0), 5.0)  # d/dx (x + 1) x = 2x + 1


# -- refused where NumPy's semantics cannot be followed ----------------------------------------

def view_then_update(x):
    a = x * 1.0
    row = a[0]  # a view of a
    a += 1.0  # NumPy changes row too
    return np.sum(row)


def update_a_view(x):
    a = x * 1.0
    tail = a[1:]
    tail += 1.0  # NumPy writes into a
    return np.sum(a)


def reshape_then_update(x):
    a = x * 1.0
    flat = a.reshape(-1)
    a *= 2.0
    return np.sum(flat)


def array_argument(x):
    x += 1.0  # NumPy writes into the caller's array
    return np.sum(x ** 2)


def numpy_accumulator(x):
    acc = np.zeros(x.shape)
    acc += x  # np.add(acc, x, out=acc): a NumPy array cannot hold x's derivative
    return np.sum(acc)


def add_out_numpy(x):
    c = np.ones(x.shape)
    np.add(x, x, out=c)
    return np.sum(c)


@pytest.mark.parametrize("f, construct", [
    (view_then_update, "shares its memory with another live value"),
    (update_a_view, "shares its memory with another live value"),
    (reshape_then_update, "shares its memory with another live value"),
    (array_argument, "writes into an argument of the differentiated function"),
    (numpy_accumulator, "out= writes the result into a plain NumPy array"),
    (add_out_numpy, "out= writes the result into a plain NumPy array"),
])
def test_refused_in_every_runtime_mode(f, construct):
    report = check_modes(f, (X,), modes=RUNTIME)
    assert not report.failures
    assert set(report.refused) == set(RUNTIME), report.refused
    assert all(construct in why for why in report.refused.values()), report.refused


def test_the_refusals_name_the_fix():
    with pytest.raises(RefusalError, match=r"\[np\.add\] out= .*`y \+= x` .*y = y \+ x"):
        dualtape.grad(numpy_accumulator)(X)
    with pytest.raises(RefusalError, match=r"\[np\.add\] out= .*y = y \+ x"):
        dualtape.jvp(add_out_numpy, (X,), (X,))
    with pytest.raises(RefusalError, match=r"\[in-place \+\] .*Fix: .*a = a \+ b.*dualtape\.transforms"):
        dualtape.grad(update_a_view)(X)
    with pytest.raises(RefusalError, match="caller's array"):
        dualtape.jacfwd(array_argument)(X)


def test_views_that_are_gone_do_not_block():
    def f(x):
        s = np.sum(x[0] * 2.0)  # the view x[0] is a temporary, gone before the update
        c = np.cov(x)  # np.cov's result is a view of its own temporary
        c += s
        return np.sum(c ** 2)
    np.testing.assert_allclose(dualtape.grad(f)(X), dualtape.grad(lambda x: np.sum((np.cov(x) + np.sum(x[0] * 2.0)) ** 2))(X),
                               rtol=1e-12)


def test_numpy_errors_for_shapes():
    with pytest.raises(ValueError, match="non-broadcastable output operand"):
        dualtape.grad(lambda x: np.sum(_iadd(x[0] * 1.0, x)))(np.ones((2, 3)))  # (3,) += (2, 3)
    # an np.float64 (x[0] of a vector) += an array is rebound to the array, as in NumPy
    np.testing.assert_allclose(dualtape.grad(lambda x: np.sum(_iadd(x[0] * 1.0, x)))(np.ones(3)),
                               [4.0, 1.0, 1.0])


def _iadd(a, b):
    a += b
    return a


# -- TF's semantics on a user's tape ---------------------------------------------------------

def test_a_user_tape_keeps_tf_semantics():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        t = x * 2.0
        u = t
        t += 1.0  # rebinds t; u keeps the old tensor, as in TF
    assert np.allclose(u.numpy(), [2.0, 4.0]) and np.allclose(t.numpy(), [3.0, 5.0])
    assert np.allclose(tape.gradient(t, x), [2.0, 2.0])
    v = tf.Variable([1.0, 2.0])
    w = v
    v += 1.0  # a tensor now; the variable is unchanged, as in TF
    assert np.allclose(w.numpy(), [1.0, 2.0]) and np.allclose(v.numpy(), [2.0, 3.0])
