"""The functional API and the caller's arrays: while f runs they are read-only (f cannot change
what the tape saved through another name), and grad, value_and_grad, hessian, hvp and jacrev
give them back writeable, as they were, even when f raises (they were left read-only)."""

import numpy as np
import pytest

import dualtape


def f(v):
    return np.sum(np.sin(v) * v)


CALLS = {
    "grad": lambda x: dualtape.grad(f)(x),
    "value_and_grad": lambda x: dualtape.value_and_grad(f)(x),
    "grad_argnums": lambda x: dualtape.grad(lambda a, b: f(a) * np.sum(b), argnums=(0, 1))(x, x + 1.0),
    "hessian": lambda x: dualtape.hessian(f)(x),
    "hvp": lambda x: dualtape.hvp(f, (x,), (np.ones_like(x),)),
    "jacrev": lambda x: dualtape.jacrev(np.sin)(x),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_arguments_come_back_writeable(name):
    x = np.linspace(0.1, 0.9, 4)
    CALLS[name](x)
    assert x.flags.writeable
    x[0] = 2.0  # the caller's own array again


def test_writeable_again_after_f_raises():
    x = np.ones(3)
    with pytest.raises(ZeroDivisionError):
        dualtape.grad(lambda v: 1 / 0)(x)
    assert x.flags.writeable


def test_a_read_only_array_stays_read_only():
    x = np.ones(3)
    x.setflags(write=False)
    dualtape.grad(f)(x)
    assert not x.flags.writeable


def test_f_cannot_write_into_its_argument_through_another_name():
    x = np.ones(3)

    def writes_alias(v):
        x[0] = 5.0  # the array the tape saved as v
        return np.sum(v * v)

    with pytest.raises(ValueError, match="read-only"):
        dualtape.grad(writes_alias)(x)
    assert x.flags.writeable and x[0] == 1.0


def test_vjp_keeps_them_read_only_while_its_pullback_may_read_them():
    x = np.array([0.5, 1.5])
    value, pullback = dualtape.vjp(np.sin, x)
    assert not x.flags.writeable
    np.testing.assert_allclose(pullback(np.ones(2))[0], np.cos([0.5, 1.5]))


def test_vjp_gives_them_back_writeable_once_its_pullback_is_gone():
    w = np.array([0.5, 1.5])
    value, pullback = dualtape.vjp(lambda w: np.sum(w ** 2), w)
    assert not w.flags.writeable
    del pullback  # (issue 19: w -= 1.0 then failed: read-only for good)
    w -= 1.0
    np.testing.assert_allclose(w, [-0.5, 0.5])
    value, pullback, aux = dualtape.vjp(lambda w: (np.sum(w ** 2), "a"), w, has_aux=True)
    del pullback
    assert w.flags.writeable
    with pytest.raises(TypeError, match="returned None"):
        dualtape.vjp(lambda w: None, w)
    assert w.flags.writeable  # f's output refused: unlocked too


def test_two_pullbacks_on_one_array_keep_it_read_only_until_both_are_gone():
    w = np.array([0.5, 1.5])
    _, first = dualtape.vjp(np.sin, w)
    _, second = dualtape.vjp(np.cos, w)
    del first
    assert not w.flags.writeable  # second still reads it: a write would make it silently wrong
    np.testing.assert_allclose(second(np.ones(2))[0], -np.sin([0.5, 1.5]))
    dualtape.grad(lambda v: np.sum(v ** 2))(w)  # a grad meanwhile leaves it locked too
    assert not w.flags.writeable
    del second
    assert w.flags.writeable
    g = dualtape.grad(lambda a, b: np.sum(a * b), argnums=(0, 1))(w, w)  # one array twice
    assert w.flags.writeable and np.allclose(g[0], w)
