"""jit=True's native backend (transforms/jit/native/): generated code on Python floats, ints and
bools compiled by LLVM directly. It must give the uncompiled code's numbers, and where Python
would raise or leave 64-bit ints, Python's answer (the uncompiled code runs that call)."""

import gc
import math
import os
import pathlib
import sys
import types

import numpy as np
import pytest

import dualtape.transforms as dt

pytest.importorskip("numba")  # (the jit extra brings llvmlite)

from dualtape.transforms.jit.native import ENV, engine  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "benchmarks"))
from workloads_src import chain, pendulum  # noqa: E402


def fresh(f):
    """A new function object with f's code: its transforms are new (they are cached per function)."""
    return types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__)


def is_native(g):
    return g._last.ir is not None


def by_numba(transform, f, wrt, args):
    previous = os.environ.get(ENV)
    os.environ[ENV] = "0"
    try:
        g = transform(fresh(f), wrt=wrt, jit=True)
        result = g(*args)
        assert g._last.ir is None
        return result
    finally:
        if previous is None:
            del os.environ[ENV]
        else:
            os.environ[ENV] = previous


def agree(f, args, wrt=0, transform=dt.grad, numba=True):
    """transform(f, jit=True) natively compiled: the numbers numba's code gives for the same
    source (the same IEEE operations and C library; where numba compiles it), and the
    uncompiled gradient's (whose general version orders a few operations otherwise: to 1e-13)."""
    g = transform(f, wrt=wrt, jit=True)
    got = g(*args)
    assert is_native(g), g._last.source
    if numba:
        np.testing.assert_array_equal(got, by_numba(transform, f, wrt, args))
    np.testing.assert_allclose(got, transform(f, wrt=wrt)(*args), rtol=1e-13, atol=1e-15)
    return g


def branches_and_while(x, y, n):
    s = 0.0
    i = 0
    while i < n:
        if x > 0.5:
            s = s + math.exp(-x) * y
        elif x < -3.0:
            continue_value = x * 2.0
            s = s + continue_value
        else:
            s = s - x ** 2
        x = x * 0.9 + abs(y) * 0.01
        i += 1
    return s + max(x, y) * min(x, y)


def nested_loops_break_continue(x, n):
    total = 0.0
    for i in range(n):
        for j in range(3):
            if j == 1:
                continue
            total = total + math.sin(x * (i + 1)) * math.cos(x + j)
        if total > 5.0:
            break
    return total


def ints_floor_div_mod(x, k):
    m = k // 3
    r = k % 3
    return x * m + x * x * r + (x if k > 0 else -x)


def loop_with_break(x, n):
    for i in range(n):
        x = math.tanh(x) + 0.1 * i
        if x > 1.5:
            break
    return math.sqrt(1.0 + x * x)


def numpy_on_floats(x, y, n):
    for _ in range(n):
        x = np.sin(x) * np.exp(-y * y) + np.arctan(x * y) + np.log(1.0 + x * x) * np.pi
        y = np.tanh(y) + np.sqrt(1.0 + x * x) * 0.1
    return x * y


def bool_flag(x, flip):
    y = x * math.atan(x)
    if flip:
        y = -x * x
    return y


@pytest.mark.parametrize("f, args, wrt", [
    (chain, (0.3, 200), 0),
    (pendulum, (0.1, 1.0, 300), (0, 1)),
    (branches_and_while, (1.0, 2.0, 7), (0, 1)),
    (branches_and_while, (0.2, -0.5, 9), (0, 1)),
    (nested_loops_break_continue, (0.7, 12), 0),
    (ints_floor_div_mod, (0.4, -7), 0),
    (ints_floor_div_mod, (0.4, 8), 0),
    (loop_with_break, (0.2, 10), 0),
    (loop_with_break, (-3.0, 4), 0),
    (numpy_on_floats, (0.3, 0.7, 20), (0, 1)),
    (bool_flag, (0.4, True), 0),
    (bool_flag, (0.4, False), 0),
])
def test_scalar_code_compiles_natively_with_the_uncompiled_numbers(f, args, wrt):
    agree(f, args, wrt)


def nested_unpack(x, y, n):
    for _ in range(n):
        x, y = y * 0.5 + math.sin(x), x
    a, (b, c) = x, (y, x * y)
    return a * b + c


def test_tuples_held_in_names_compile_where_numba_refuses():
    """numba cannot type zeros_like of a tuple (the adjoint of `(b, c) = (y, x * y)`): jit=True
    refused this code; the native backend holds the tuple's items in names of their own."""
    g = dt.grad(nested_unpack, wrt=(0, 1), jit=True)
    np.testing.assert_allclose(g(0.3, 0.4, 5), dt.grad(nested_unpack, wrt=(0, 1))(0.3, 0.4, 5), rtol=1e-13)
    assert is_native(g)


def loop_variable_after(x, n):
    for i in range(n):
        x = x * 1.5 + i
    return x * i


def test_a_name_a_path_leaves_unassigned_raises_as_python():
    g, plain = dt.grad(loop_variable_after, jit=True), dt.grad(loop_variable_after)
    assert g(0.5, 3) == plain(0.5, 3)
    assert is_native(g)
    with pytest.raises(UnboundLocalError):  # (no iteration: i was never assigned)
        plain(0.5, 0)
    with pytest.raises(UnboundLocalError):
        g(0.5, 0)


def early_returns(x, n):
    if n > x:
        return x * 2.0
    for i in range(n):
        x = math.sin(x) + 0.1 * i
        if x > 0.9:
            return x * x
    return x * 3.0


@pytest.mark.parametrize("args", [(0.5, 3), (5.0, 3), (0.95, 1), (0.1, 0), (2.0, 1), (1.2, 2)])
def test_early_returns_compile_where_numba_refuses(args):
    """The generated code keeps the value returned in a name that is None until a return runs
    (`_retval`), and pushes it: numba cannot type that (jit=True refused such f). Natively a
    name holds None or a float; read as a number where it is None, the uncompiled code runs."""
    g = dt.grad(early_returns, jit=True)
    np.testing.assert_allclose(g(*args), dt.grad(early_returns)(*args), rtol=1e-13)
    assert is_native(g)


def rate(theta, damping, omega):
    return -9.81 * math.sin(theta) - damping * omega


def euler(theta, omega, damping, n, h=0.01):
    for _ in range(n):
        theta, omega = theta + h * omega, omega + h * rate(theta, damping, omega)
    return theta


def calls_twice(x, n):
    s = 0.0
    for i in range(n):
        s = s + euler(x, 0.1 * i, 0.3, 3) * rate(x, 0.2, s)
    return s


@pytest.mark.parametrize("f, args, wrt, numba", [(euler, (1.0, 0.0, 0.2, 50), (0, 2), True),
                                                 (calls_twice, (0.7, 4), 0, False)])
def test_the_users_functions_compile_natively_with_the_code_that_calls_them(f, args, wrt, numba):
    """The functions f calls (their source read as the generated code is) and the adjoints of
    them in the module are LLVM functions of the same module, called directly (numba refuses
    calls_twice: a function of the user's that calls another)."""
    g = agree(f, args, wrt, numba=numba)
    assert g._last.ir.count("define i32") >= 2


def raises_inside(x):
    return rate(x, 1.0 / (x - 1.0), 2.0)


def test_an_error_in_a_called_function_is_pythons():
    g = dt.grad(raises_inside, jit=True)
    assert g(0.5) == dt.grad(raises_inside)(0.5)
    assert is_native(g)
    with pytest.raises(ZeroDivisionError):
        g(1.0)


def test_a_stack_longer_than_the_probe_grows():
    g = agree(chain, (0.3, 5))  # (the probe saw 5 steps)
    assert g(0.3, 5000) == by_numba(dt.grad, chain, 0, (0.3, 5000))
    assert is_native(g)


def test_jvp_and_hvp_compile_natively():
    for transform in (dt.jvp, dt.hvp):
        agree(pendulum, (0.1, 1.0, 100, (1.0, 0.5)), (0, 1), transform)


def reciprocal(x):
    return 1.0 / (x - 1.0)


def log_of(x):
    return math.log(x) * x


def exp_of(x):
    return math.exp(x) * 2.0


def sin_of(x):
    return math.sin(x)


def pow_of(x, y):
    return x ** y


@pytest.mark.parametrize("f, args, error", [
    (reciprocal, (1.0,), ZeroDivisionError),
    (log_of, (-1.0,), ValueError),
    (log_of, (0.0,), ValueError),
    (exp_of, (1000.0,), OverflowError),
    (sin_of, (math.inf,), ValueError),
    (pow_of, (0.0, -1.0), ZeroDivisionError),
])
def test_where_python_raises_the_compiled_code_raises_the_same(f, args, error):
    g = dt.grad(f, wrt=0, jit=True)
    with pytest.raises(error):
        dt.grad(f, wrt=0)(*args)
    with pytest.raises(error):
        g(*args)


def test_a_negative_number_to_a_fractional_power_gives_what_python_gives():
    g, plain = dt.grad(pow_of, wrt=0, jit=True), dt.grad(pow_of, wrt=0)
    assert g(2.0, 0.5) == plain(2.0, 0.5)
    assert is_native(g)
    np.testing.assert_array_equal(g(-8.0, 1.0 / 3.0), plain(-8.0, 1.0 / 3.0))  # (the uncompiled code answers)


def scaled_by_int(x, n):
    k = n * n
    return x * k + x * (n > x)


def test_ints_beyond_64_bits_are_python_ints():
    g, plain = dt.grad(scaled_by_int, wrt=0, jit=True), dt.grad(scaled_by_int, wrt=0)
    assert g(0.5, 3) == plain(0.5, 3) == 10.0
    assert is_native(g)
    for n in (2 ** 40, 2 ** 70, -2 ** 63, 2 ** 53 + 1):  # (n * n overflows; the int argument itself does not fit)
        assert g(0.5, n) == plain(0.5, n)


def compares_int_and_float(x, n):
    y = x * 3.0
    if n > x:
        y = x * 2.0
    return y


def test_an_int_and_a_float_compare_exactly():
    g, plain = dt.grad(compares_int_and_float, wrt=0, jit=True), dt.grad(compares_int_and_float, wrt=0)
    big = 2 ** 53 + 1  # (float(big) == 2.0 ** 53: a comparison in doubles says n > x is false)
    assert g(float(2 ** 53), big) == plain(float(2 ** 53), big) == 2.0
    assert g(0.5, 1) == 2.0 and g(2.5, 1) == 3.0
    assert is_native(g)


def min_max(x, y):
    return max(x, y) + 2.0 * min(x, y)


def test_min_and_max_keep_the_first_of_equals_and_nans_as_python():
    g, plain = dt.grad(min_max, wrt=(0, 1), jit=True), dt.grad(min_max, wrt=(0, 1))
    for args in [(1.0, 2.0), (2.0, 1.0), (1.0, 1.0), (math.nan, 1.0), (1.0, math.nan)]:
        np.testing.assert_array_equal(g(*args), plain(*args))
    assert is_native(g)


def test_off_sends_scalar_code_to_numba(monkeypatch):
    monkeypatch.setenv(ENV, "0")
    g = dt.grad(fresh(chain), jit=True)
    assert g(0.3, 20) == pytest.approx(dt.grad(chain)(0.3, 20), rel=1e-14)
    assert g._last.ir is None and hasattr(g._last.fn, "py_func")


def test_arrays_go_to_numba():
    def f(x):
        return np.sum(np.sin(x) * x)
    g = dt.grad(f, jit=True)
    np.testing.assert_allclose(g(np.linspace(0, 1, 5)), dt.grad(f)(np.linspace(0, 1, 5)), rtol=1e-14)
    assert g._last.ir is None


def test_the_source_is_what_llvm_compiled_and_the_ir_is_kept():
    g = dt.grad(chain, jit=True)
    g(0.3, 10)
    assert g.source == g._last.source and "def chain_vjp(x, steps, bx=1.0)" in g.source
    assert 'define i32 @"chain_vjp"' in g._last.ir and "@sin" in g._last.ir
    assert g.compile_seconds > 0


def test_the_machine_code_is_freed_with_its_transform():
    before = len(engine._alive)
    g = dt.grad(fresh(chain), jit=True)
    g(0.3, 10)
    assert len(engine._alive) == before + 1
    del g
    gc.collect()
    assert len(engine._alive) == before
