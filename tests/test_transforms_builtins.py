"""Builtins and math over differentiated values in the source transformer (calls/builtins.py):
every mode against the tape (where it runs the code) and finite differences (check_modes)."""

import math

import numpy as np
import pytest

import dualtape
import dualtape.transforms as dt
from dualtape.testing import check_modes
from dualtape.testing.check_modes import MIXED, SOURCE

X = np.array([0.3, 0.7, 1.2])


def sum_display(x):
    return sum([x[0], x[1] * x[2]])


def sum_array(x):
    return sum(x * x)


def sum_generator(x):
    return sum(v * v for v in x)


def sum_generator_if(x):
    return sum(v * i for i, v in enumerate(x) if i != 1)


def sum_comprehension_start(x):
    return sum([a * b for a, b in zip(x, x[::-1])], x[0])


def sum_rows(m):
    return np.sum(sum(m) ** 2)


def max_iterable(x):
    return max(x) * min(x)


def max_arguments(x):
    return max(x[0], x[1] * 0.5, x[2]) ** 2 + min([x[0], x[1]])


def min_generator(x):
    return min(v * v for v in x)


def reversed_loop(x):
    s = 0.0
    for v in reversed(x):
        s = s * 0.5 + v
    return s


def sorted_values(x):
    ys = sorted([x[2], x[0], x[1]])
    zs = sorted(x, reverse=True)
    return ys[0] * 2.0 + ys[1] * ys[2] ** 2 + zs[0] * zs[2]


def math_prod_dist(x):
    return math.prod([x[0], x[1]]) + math.prod(x) + math.dist([x[0], x[1]], [x[2], 0.5])


def enumerate_zip(x):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, x * 2.0), 1):
        s = s + i * a * b
    for a, b, c in zip(x, [1.0, 2.0, 3.0], (x[0], x[1], x[2])):
        s = s + a * b * c
    for (k, a), b in zip(enumerate(reversed(x)), x):
        s = s + k * a * b
    return s


def with_jumps(x):
    s = 0.0
    for i, v in enumerate(x):
        if i == 2:
            break
        if v > 10.0:
            continue
        s = s + max(v, s, 0.1) * sum(w * v for w in x)
    k = 0
    while s < 5.0 and k < 20:
        s = s + sum([s * 0.1, v])
        k = k + 1
    if s > 100.0:
        return min(x)
    return s


TAPE_AND_SOURCE = [sum_display, sum_array, sum_generator, sum_generator_if, sum_comprehension_start, sum_rows,
                   max_iterable, max_arguments, min_generator, reversed_loop, sorted_values,
                   enumerate_zip, with_jumps]


@pytest.mark.parametrize("fn", TAPE_AND_SOURCE, ids=lambda f: f.__name__)
def test_every_mode(fn):
    args = [np.array([[0.3, 0.7], [1.2, -0.4], [0.5, 0.9]])] if fn is sum_rows else [X]
    report = check_modes(fn, args)
    assert not report.refused and not report.failures


def math_rewrites(x):
    return math.log(x[0], 2.0) * x[1] + math.log(x[2], x[1] + 1.5) + math.degrees(x[0]) + math.radians(x[1]) \
        + math.ldexp(x[2], 3)


def test_math_log_base():
    # math.log(x, base) is log(x) / log(base): the base was ignored before
    np.testing.assert_allclose(dt.grad(math_rewrites)(X)[0], 0.7 / (0.3 * math.log(2.0)) + 180.0 / math.pi, rtol=1e-14)
    _, value = dt.grad(math_rewrites, preserve_result=True)(X)
    assert value == math_rewrites(X)


def divmod_value(x):
    q, r = divmod(x[0] * 3.0, 1.0)
    return r * x[1] + q


def math_functions(x):
    return (math.log2(x[0]) + math.log10(x[1]) + math.erf(x[2]) + math.lgamma(x[1] + 1.0)
            + math.gamma(x[2] + 1.0) + math.hypot(x[0], x[1]) + math.copysign(x[0], -1.0)
            + math.fmod(x[1] * 5.0, 1.0) + math.erfc(x[2]) + math.cbrt(x[1]) + math.exp2(x[0])
            + math.trunc(x[2] * 3.0) * x[0])


@pytest.mark.parametrize("fn", [divmod_value, math_functions, math_prod_dist, math_rewrites], ids=lambda f: f.__name__)
def test_source_modes(fn):
    # (the tape runs these on tensors, which divmod and math.* do not take)
    report = check_modes(fn, [X], modes=SOURCE)
    assert not report.refused and not report.failures
    for mode in ("grad", "jacfwd", "hessian"):
        getattr(dt, mode)(fn)(X)


def test_math_against_numpy():
    def f_np(x):
        return (np.log2(x[0]) + np.log10(x[1]) + np.hypot(x[0], x[1]) + np.copysign(x[0], -1.0)
                + np.fmod(x[1] * 5.0, 1.0) + np.cbrt(x[1]) + np.exp2(x[0]))

    def f_math(x):
        return (math.log2(x[0]) + math.log10(x[1]) + math.hypot(x[0], x[1]) + math.copysign(x[0], -1.0)
                + math.fmod(x[1] * 5.0, 1.0) + math.cbrt(x[1]) + math.exp2(x[0]))
    np.testing.assert_allclose(dt.grad(f_math)(X), dualtape.grad(f_np)(X), rtol=1e-12)


def enumerate_start(x):
    s = 0.0
    for i, v in enumerate(x, start=2):
        s = s + i * v
    return s


def test_enumerate_start():
    np.testing.assert_array_equal(dt.grad(enumerate_start)(X), [2.0, 3.0, 4.0])


def test_sum_value_is_pythons():
    def f(x):
        return sum([x[0], x[1], x[2]]) + sum(v for v in x)
    _, value = dt.grad(f, preserve_result=True)(X)
    assert value == sum([X[0], X[1], X[2]]) + sum(v for v in X)


def test_sorted_follows_permutation():
    def f(x):
        ys = sorted([x[0], x[1], x[2]])
        return ys[0] + 10.0 * ys[2]
    np.testing.assert_array_equal(dt.grad(f)(np.array([2.0, 1.0, 3.0])), [0.0, 1.0, 10.0])
    np.testing.assert_array_equal(dt.grad(f)(np.array([3.0, 1.0, 2.0])), [10.0, 1.0, 0.0])


def max_key(x):
    return max([x[0], x[1]], key=abs)


def fsum(x):
    return math.fsum([x[0], x[1]])


def degrees(x):
    return math.modf(x[0])[0]


def float_of_value(x):
    return sorted([x[0], x[1]], key=float)[0]


@pytest.mark.parametrize("fn, words", [(max_key, "key="), (fsum, "math.fsum"), (degrees, "math.modf"),
                                       (float_of_value, "key=")], ids=lambda v: getattr(v, "__name__", ""))
def test_refused_loudly(fn, words):
    with pytest.raises(dt.TransformError, match="test_transforms_builtins.py:[0-9]+") as info:
        dt.grad(fn)(X)
    assert words in str(info.value)


def test_saved_and_jit(tmp_path):
    df = dt.grad(sorted_values)
    expected = df(X)
    path = tmp_path / "saved.py"
    df.save(path)
    assert "import dualtape" not in path.read_text() and "from dualtape" not in path.read_text()
    assert "def sorted_order" in path.read_text()
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    np.testing.assert_allclose(namespace["sorted_values_vjp"](X), expected, rtol=1e-15)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(dt.grad(sum_generator, jit=True)(X), 2 * X, rtol=1e-15)
        np.testing.assert_array_equal(dt.grad(max_iterable, jit=True)(X), dt.grad(max_iterable)(X))
        np.testing.assert_array_equal(dt.grad(sorted_values, jit="fallback")(X), expected)  # (lists: uncompiled)


def inactive_math_log(x):
    r1 = math.log(1.5 + 0.886 * 0.886, 2.0 + (0.58 * 1.37) * (0.58 * 1.37))
    return 1.699 + np.sum(x) + r1


def test_traced_code_keeps_math_log_with_a_base():
    # (the checker's shrunk program: the traced version respelled it np.log(a, b), b being `out`)
    report = check_modes(inactive_math_log, [np.array([-0.735, -0.0])])
    assert not report.refused and not report.failures


def generator_over_its_own_name(x):
    v = x * 2.0
    return sum(v * v for v in v) + max(v for v in v)


def test_generator_iterates_over_the_outer_name():
    np.testing.assert_allclose(dt.grad(generator_over_its_own_name)(X), 8.0 * X + [0.0, 0.0, 2.0], rtol=1e-15)
