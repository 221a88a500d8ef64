"""Dicts in transformed code (transforms/frontend/dicts.py): dict displays with constant keys
over differentiated values, read by key, by `.get`, and in loops over keys, values and items;
dicts of arrays as arguments (every mode) and as results (vjp takes a dict cotangent, jvp gives
dict tangents), against the tape and finite differences. Displays with keys only known at run
time and dict comprehensions stay refused."""

import numpy as np
import pytest

import dualtape
import dualtape.transforms as dt
from dualtape.testing import check_modes
from dualtape.transforms import TransformError

X, W = np.array([0.3, 0.7]), np.array([1.1, -0.4])


def by_key(x, w):
    d = {"a": x, "b": x * w}
    return np.sum(d["a"] * np.sin(d["b"]))


def loop_over_keys(x, w):
    d = {"a": x, "b": x * w}
    s = 0.0
    for k in d:
        s = s + np.sum(d[k] ** 2)
    return s


def items_values_keys(x, w):
    d = {"a": x, "b": x * w, 3: np.cos(x)}
    s = 0.0
    for k, v in d.items():
        s = s + np.sum(v * w)
    for v in d.values():
        s = s + np.sum(v)
    for k in d.keys():
        s = s * np.sum(d[k])
    return s


def get(x, w):
    d = {"a": x, "b": x * w}
    return np.sum(d.get("a") * d.get("b", 2.0)) + np.sum(d.get("c", w))


def in_a_branch(x, w):
    d = {"a": x * 2.0, "b": np.sin(x)}
    if np.sum(w) > 0:
        y = d["a"] * w
    else:
        y = d["b"]
    return np.sum(y * d["b"])


def in_comprehensions(x, w):
    d = {"a": x, "b": x * w}
    ys = [np.sin(v) * 2.0 for v in d.values()]
    zs = [d[k] * w for k in d if k != "a"]
    return np.sum(np.stack(ys + zs))


CASES = [by_key, loop_over_keys, items_values_keys, get, in_a_branch, in_comprehensions]


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_every_mode_agrees(f):
    report = check_modes(f, [X, W])
    assert not report.refused and report.checked, report


def loss(p, x):
    h = np.tanh(x * p["w"] + p["b"])
    return np.sum(h ** 2)


P = {"w": np.array([0.3, 0.5]), "b": 0.2}
DP = {"w": np.array([1.0, -0.5]), "b": 0.7}


def test_dict_argument_in_every_mode():
    tape = dualtape.grad(loss)(P, X)
    for got in (dt.grad(loss)(P, X), dt.vjp(loss)(P, X, 1.0)):
        assert set(got) == {"w", "b"}
        for key in got:
            np.testing.assert_allclose(got[key], tape[key], rtol=1e-12)
    value, tangent = dt.jvp(loss)(P, X, DP)
    expected = dualtape.jvp(loss, (P, X), (DP, np.zeros(2)))[1]
    np.testing.assert_allclose(tangent, expected, rtol=1e-12)
    hvp = dt.hvp(loss)(P, X, DP)
    expected = dualtape.jvp(lambda p: dualtape.grad(loss)(p, X), (P,), (DP,))[1]
    for key in hvp:
        np.testing.assert_allclose(hvp[key], expected[key], rtol=1e-10)


def dict_result(x, w):
    l = np.sum(np.sin(x * w))
    return {"loss": l, "aux": x * 2.0}


def test_dict_result_vjp_and_jvp():
    dy = {"loss": 0.5, "aux": np.array([1.0, -2.0])}
    got = dt.vjp(dict_result)(X, W, dy)
    np.testing.assert_allclose(got, dualtape.vjp(dict_result, X, W)[1](dy)[0], rtol=1e-12)
    value, tangent = dt.jvp(dict_result)(X, W, np.array([1.0, 0.5]))
    _, expected = dualtape.jvp(dict_result, (X, W), (np.array([1.0, 0.5]), np.zeros(2)))
    assert set(tangent) == {"loss", "aux"} and value["aux"] == pytest.approx(X * 2.0)
    for key in expected:
        np.testing.assert_allclose(tangent[key], expected[key], rtol=1e-12)
    _, batched = dt.jvp(dict_result)(X, W, np.eye(2))
    for j in range(2):
        one = dt.jvp(dict_result)(X, W, np.eye(2)[j])[1]
        for key in one:
            np.testing.assert_allclose(batched[key][j], one[key], rtol=1e-12)


def key_from_a_loop(x, w):
    keys = ["a", "b"]
    d = {keys[0]: x, keys[1]: x * w}
    return np.sum(d["a"])


def dict_comprehension(x, w):
    d = {k: x * k for k in range(2)}
    return np.sum(d[0])


@pytest.mark.parametrize("f, construct", [(key_from_a_loop, "Dict"), (dict_comprehension, "a dict comprehension")])
def test_dynamic_keys_stay_refused(f, construct):
    with pytest.raises(TransformError, match=f"{construct} over differentiated values is not supported"):
        dt.grad(f)(X, W)
