"""jit=True on the constructs the transformer accepts beyond floats and arrays (issue 21): each
compiles, or, where it holds a Python container numba cannot (a list built by list operations, a
dict, a function value, a `*args` helper), runs the uncompiled generated code with a
RuntimeWarning that names it. Never a refusal, never a different number."""

import functools
import math
import types
import warnings

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.transforms.frontend.parse import TransformError

pytest.importorskip("numba")


def appended(x):
    ys = []
    for i in range(3):
        ys.append(np.sin(x) * i)
    return np.sum(np.stack(ys))


def dict_display(x):
    d = {"a": x * x, "b": np.cos(x)}
    return np.sum(d["a"] + d["b"])


def activation(x, act=np.tanh):
    return np.sum(act(x))


def squares(*args):
    return sum(a * a for a in args)


def star_helper(x):
    return np.sum(squares(x, 2 * x))


def builtin_sum(x):
    return sum([np.sin(x[i]) for i in range(3)])


def sorted_smallest(x):
    return sum(sorted([x[0], x[1], x[2]])[:2])


def zipped_rows(x):
    rows = [x, 2 * x]
    s = 0.0
    for a, b in zip(*rows):
        s = s + a * b
    return s


def nested(x):
    def g(y):
        return np.tanh(y) * x
    return np.sum(g(x) + g(2 * x))


def assigned_lambda(x):
    g = lambda y: y * y  # noqa: E731
    return np.sum(g(x))


def partial_power(x):
    g = functools.partial(np.power, 2.0)
    return np.sum(g(x))


def math_builtins(x):
    return math.hypot(x[0], x[1]) + math.atan2(x[0], x[1])


FALLS_BACK = [appended, dict_display, activation, star_helper, builtin_sum, sorted_smallest]
COMPILES = [nested, assigned_lambda, partial_power, math_builtins]
X = np.array([0.3, 0.5, 0.7])
T = np.array([1.0, -0.5, 0.25])


def _fresh(fn):
    """A new function object of the same code: its transforms are built (and warn) again."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    return functools.update_wrapper(copy, fn)


def _run(mode, fn, **options):
    if mode == "grad":
        return dt.grad(fn, **options)(X)
    if mode == "jvp":
        return dt.jvp(fn, **options)(X, T)[1]
    return dt.hvp(fn, **options)(X, T)


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
@pytest.mark.parametrize("fn", FALLS_BACK, ids=lambda f: f.__name__)
def test_python_containers_compile_or_fall_back_with_a_warning(fn, mode):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = _run(mode, _fresh(fn), jit=True)
    np.testing.assert_allclose(got, _run(mode, fn), rtol=1e-12, atol=1e-15)
    for w in caught:
        if issubclass(w.category, RuntimeWarning):
            assert "so jit=True: running the uncompiled generated code" in str(w.message)
            assert f"of {fn.__name__}: " in str(w.message) and "(it holds " in str(w.message)


@pytest.mark.parametrize("fn", FALLS_BACK, ids=lambda f: f.__name__)
def test_gradients_of_python_containers_fall_back(fn):
    with pytest.warns(RuntimeWarning, match="(?s)numba cannot compile.*it holds .*so jit=True: running the uncompiled"):
        got = dt.grad(_fresh(fn), jit=True)(X)
    np.testing.assert_array_equal(got, dt.grad(fn)(X))


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
@pytest.mark.parametrize("fn", COMPILES, ids=lambda f: f.__name__)
def test_functions_as_values_and_math_compile(fn, mode):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = _run(mode, fn, jit=True)
    np.testing.assert_allclose(got, _run(mode, fn), rtol=1e-12, atol=1e-15)


def test_zip_of_a_list_falls_back_where_numba_cannot():
    with pytest.warns(RuntimeWarning, match="so jit=True: running the uncompiled"):
        got = dt.grad(zipped_rows, jit=True)(X)
    np.testing.assert_allclose(got, 4 * X, rtol=1e-15)


def einsum_only(a, b):
    c = a * 2.0
    return np.sum(np.einsum("ij,jk->ik", c, b))


def test_other_constructs_numba_cannot_compile_are_still_refused():
    with pytest.raises(TransformError, match="numba cannot compile.*einsum"):
        dt.grad(einsum_only, jit=True)(np.ones((2, 3)), np.ones((3, 2)))
