"""Each construct the transformer refuses fails at transform time with file, line, construct
and a suggested fix (STYLE.md section 5)."""

import math
import os

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.transforms import TransformError

COUNTER = 0


def uses_try(a):
    try:
        b = a * 2.0
    except ValueError:
        b = a
    return b


def uses_with(a):
    with open(os.devnull) as fh:  # noqa: F841
        b = a * 2.0
    return b


def uses_yield(a):
    yield a * 2.0


def uses_lambda(a):
    f = lambda t: t * 2.0  # noqa: E731
    return f(a)


def uses_class(a):
    class Box:
        pass
    return a


def writes_global(a):
    global COUNTER
    COUNTER = a
    return a


def writes_nonlocal(a):
    total = a

    def inner():
        nonlocal total
        total = total * 2.0
    inner()
    return total


def mutates_list(a):
    xs = [a]
    xs.append(a * 2.0)
    return xs[0]


def opaque_function(x):
    return np.sum(np.fft.fft(x))


def sets_attribute(a):
    box = np.zeros(1)
    box.flags = a
    return a


def recursive(a, n):
    if n == 0:
        return a
    return recursive(a * 2.0, n - 1)


def varargs(*args):
    return args[0]


def comprehension(x):
    ys = [v * v for v in x]
    return ys[0]


def returns_nothing(a):
    b = a * 2.0  # noqa: F841


CASES = [
    (uses_try, "`try`", "Move the try/except outside"),
    (uses_with, "`with`", "Move the with-block outside"),
    (uses_yield, "`yield`", "Return a value instead"),
    (uses_lambda, "a lambda", "custom_gradient"),
    (uses_class, "a class definition", "outside the differentiated function"),
    (writes_global, "`global`", "Return the value instead"),
    (writes_nonlocal, "a nested function definition", "module level"),
    (mutates_list, "in-place mutation `.append(...)`", "Build a new list"),
    (opaque_function, "np.fft.fft", "custom_gradient"),
    (sets_attribute, "attribute assignment", "Return the value instead"),
    (varargs, "`*args` / `**kwargs` parameters", "Name each parameter"),
    (comprehension, "a list comprehension", "for loop"),
    (returns_nothing, "returns nothing", "Return the value"),
]


@pytest.mark.parametrize("fn, construct, fix", CASES, ids=[c[0].__name__ for c in CASES])
def test_refused_construct_message(fn, construct, fix):
    with pytest.raises(TransformError) as info:
        df = dt.grad(fn)
        df(np.ones(3) if fn is opaque_function or fn is comprehension else 1.0)
    message = str(info.value)
    assert message.startswith("[transforms.grad]"), message
    assert "test_transforms_errors.py:" in message, message
    assert construct in message, message
    assert fix in message, message
    assert f"in {fn.__name__}" in message, message


def test_refusal_names_the_right_line():
    with pytest.raises(TransformError) as info:
        dt.grad(uses_try)
    line = uses_try.__code__.co_firstlineno + 1
    assert f"test_transforms_errors.py:{line} " in str(info.value)


def test_recursion_is_refused():
    with pytest.raises(TransformError, match="recursive call of recursive"):
        dt.grad(recursive)(1.0, 3)


def test_bad_wrt():
    with pytest.raises(TransformError, match="wrt=5"):
        dt.grad(poly_ok, wrt=5)


def poly_ok(a):
    return a * a


def test_not_a_function():
    with pytest.raises(TransformError, match="expects a Python function"):
        dt.grad(math.sin)
