"""Each construct the transformer refuses fails at transform time with file, line, construct
and a suggested fix (STYLE.md section 5)."""

import inspect
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
    fs = {"double": lambda t: t * 2.0}
    return fs["double"](a)


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


def mutates_list(a):  # a list another name holds: not written as `xs = xs + [v]`
    xs = [a]
    ys = xs
    xs.append(a * 2.0)
    return ys[1]


def opaque_function(x):
    return np.sum(np.unwrap(x))


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


def comprehension(x):  # in a conditional expression: not written out as a loop
    ys = [v * v for v in x] if x[0] > 0 else [x]
    return ys[0]


def returns_nothing(a):
    b = a * 2.0  # noqa: F841


def diff_prepend(x):  # the Diff op's rules do not read prepend=: the gradient had x's shape plus one
    return np.sum(np.diff(x, prepend=0.5) ** 2)


def sum_where(x):
    return np.sum(x, where=x > 0.5)


def add_where(x):  # a ufunc's where= (NumPy leaves the other elements uninitialized)
    return np.sum(np.add(x, x * x, where=x > 0.5))


def pad_edge(x):  # the PadV2 op's rules are constant padding's: edge padding was differentiated as it
    return np.sum(np.pad(x, 1, mode="edge") ** 2 * np.arange(5.0))


def prod_initial(x):
    return np.prod(x, initial=2.0)


def reshape_order(x):
    return np.sum(np.reshape(x, (3, 1), order="F") * x)


def sum_to_int(x):  # the cast to int drops the derivative: refused, as the runtime modes refuse it
    return np.sum(x, dtype=int) * np.sum(x)


CASES = [
    (uses_try, "`try`", "Move the try/except outside"),
    (uses_with, "`with`", "Move the with-block outside"),
    (uses_yield, "`yield`", "Return a value instead"),
    (uses_lambda, "a lambda", "Define the function with `def`"),
    (uses_class, "a class definition", "outside the differentiated function"),
    (writes_global, "`global`", "Return the value instead"),
    (writes_nonlocal, "`nonlocal` in the nested function `inner`", "Return the value"),
    (mutates_list, "in-place mutation `.append(...)`", "Build a new list"),
    (opaque_function, "np.unwrap", "custom_gradient"),
    (sets_attribute, "attribute assignment", "Return the value instead"),
    (varargs, "`*args` / `**kwargs` parameters", "Name each parameter"),
    (comprehension, "a list comprehension", "for loop"),
    (returns_nothing, "returns nothing", "Return the value"),
    (sum_to_int, "`np.sum(..., dtype=int)`", "Pass a float dtype"),
    (diff_prepend, "`prepend=` in the call of np.diff", "concatenate first"),
    (sum_where, "`where=` in the call of np.sum", "GradientTape"),
    (add_where, "`where=` in a call of the AddV2 op", "GradientTape"),
    (pad_edge, "`mode=` in the call of np.pad", "GradientTape"),
    (prod_initial, "`initial=` in the call of np.prod", "GradientTape"),
    (reshape_order, "`order=` in the call of np.reshape", "GradientTape"),
]


@pytest.mark.parametrize("fn, construct, fix", CASES, ids=[c[0].__name__ for c in CASES])
def test_refused_construct_message(fn, construct, fix):
    with pytest.raises(TransformError) as info:
        df = dt.grad(fn)
        df(np.ones(3) if fn in (opaque_function, comprehension, sum_to_int, diff_prepend, sum_where, prod_initial,
                                reshape_order, add_where, pad_edge) else 1.0)
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


# -- subscript writes into arrays that may share memory (a silent wrong gradient otherwise) --------
def alias_by_name(x):
    y = x
    y[0] = 5.0
    return np.sum(x * x)


def chained_alias(x):
    y = x * 1.0
    z = y
    z[0] = 5.0
    return np.sum(y * y)


def slicing_view(x):
    y = x[1:]
    y[0] = 5.0
    return np.sum(x * x)


def transpose_view(x):
    y = x.T
    y[0] = 5.0
    return np.sum(x * x)


def reshape_view(x):
    y = np.reshape(x, (3,))
    y[0] = 5.0
    return np.sum(x * x)


def reshape_method_view(x):
    y = x.reshape(3)
    y[0] += 5.0
    return np.sum(x * x)


def parameter_write(x):
    x[0] = 5.0
    return np.sum(x * x)


def view_alive_at_write(x):
    y = x * 1.0
    z = y[1:]
    y[1] = 5.0
    return np.sum(z * z)


def alias_in_loop(x):
    y = x * 1.0
    for i in range(2):
        y[i] = 5.0
        y = x
    return np.sum(y * x)


ALIAS_CASES = [
    (alias_by_name, "`y = x`", "y = x.copy()"),
    (chained_alias, "`z = y`", "z = y.copy()"),
    (slicing_view, "`y = x[1:]`", "y = x[1:].copy()"),
    (transpose_view, "`y = x.T`", "y = x.T.copy()"),
    (reshape_view, "`y = np.reshape(x, (3,))`", "y = np.reshape(x, (3,)).copy()"),
    (reshape_method_view, "`y = x.reshape(3)`", "y = x.reshape(3).copy()"),
    (parameter_write, "is a parameter", "x_copy = x.copy()"),
    (view_alive_at_write, "`z` (line", "z = y[1:].copy()"),
    (alias_in_loop, "`y = x`", "y = x.copy()"),
]


@pytest.mark.parametrize("api", ["grad", "jvp", "hvp"])
@pytest.mark.parametrize("fn, binding, fix", ALIAS_CASES, ids=[c[0].__name__ for c in ALIAS_CASES])
def test_write_into_shared_memory_is_refused(fn, binding, fix, api):
    with pytest.raises(TransformError) as info:
        getattr(dt, api)(fn)(np.array([1.0, 2.0, 3.0]), *([np.ones(3)] if api != "grad" else []))
    message = str(info.value)
    write_line = next(i for i, line in enumerate(inspect.getsource(fn).splitlines())
                      if "] = " in line or "] += " in line) + fn.__code__.co_firstlineno
    assert message.startswith(f"[transforms.{api}]"), message
    assert f"test_transforms_errors.py:{write_line} in {fn.__name__}" in message, message
    assert "may share memory" in message, message
    assert binding in message, message
    assert f"Make a copy first: {fix}" in message, message


def copy_then_write(x):
    y = x.copy()
    y[0] = 5.0 * x[1]
    z = y
    return np.sum(z * y * x)


def test_write_into_a_copy_matches_finite_differences():
    x = np.array([1.0, 2.0, 3.0])
    u = np.array([0.3, -1.0, 2.0])
    before = x.copy()
    g = dt.grad(copy_then_write)(x)
    assert np.array_equal(x, before), "the gradient must not change the caller's array"
    eps = 1e-6
    fd = np.array([(copy_then_write(x + eps * e) - copy_then_write(x - eps * e)) / (2 * eps)
                   for e in np.eye(3)])
    assert np.allclose(g, fd, rtol=1e-6, atol=1e-6), (g, fd)
    _, tangent = dt.jvp(copy_then_write)(x, u)
    assert np.isclose(tangent, fd @ u, rtol=1e-6)
    hv = dt.hvp(copy_then_write)(x, u)
    fd_hv = (dt.grad(copy_then_write)(x + eps * u) - dt.grad(copy_then_write)(x - eps * u)) / (2 * eps)
    assert np.allclose(hv, fd_hv, rtol=1e-5, atol=1e-6), (hv, fd_hv)


# -- `c op= v` on an array that may share memory: NumPy writes in place (#aug-assign) --------------
# For floats `c += v` rebinds `c`; on an array it writes through every name sharing `c`, which
# the transformer (differentiating `c = c + v`) would not see. Refused where `c` may be an array.
def aug_shared_by_other_name(x):
    y = x * 1.0
    z = y
    y += x
    return np.sum(z * z)


def aug_alias_of_parameter(a, b):
    c = a
    c += b
    c *= a
    return np.sum(c * a)


def aug_parameter(x):
    x -= 1.0
    return np.sum(x * x)


def aug_view(x):
    c = x[1:]
    c *= 2.0
    return np.sum(x * x)


def aug_transpose_view(m):
    c = m.T
    c /= 2.0
    return np.sum(m * m)


def aug_alias_in_branch(x, flag):
    if flag:
        c = x
    else:
        c = x * 1.0
    c += x
    return np.sum(c * x)


def aug_alias_in_loop(x):
    c = x * 1.0
    z = x
    for i in range(2):
        c -= x
        z = c
    return np.sum(z * x)


def aug_helper(c, v):
    c += v
    return c


def aug_in_helper(x):
    return np.sum(aug_helper(x * 1.0, x) * x)


AUG_CASES = [  # (function, its aug line's text, the shared binding, the fix)
    (aug_shared_by_other_name, "y += x", "`z` (line",
     "Write y = y + x to make a new array, or copy first: z = y.copy()"),
    (aug_alias_of_parameter, "c += b", "(`c = a`) is another name for `a`",
     "Write c = c + b to make a new array, or copy first: c = a.copy()"),
    (aug_parameter, "x -= 1.0", "`x` is a parameter",
     "Write x = x - 1.0 to make a new array, or copy first: x = x.copy()"),
    (aug_view, "c *= 2.0", "(`c = x[1:]`) is a subscript", "copy first: c = x[1:].copy()"),
    (aug_transpose_view, "c /= 2.0", "(`c = m.T`) is the attribute `.T`", "Write c = c / 2.0"),
    (aug_alias_in_branch, "c += x", "(`c = x`) is another name for `x`", "copy first: c = x.copy()"),
    (aug_alias_in_loop, "c -= x", "`z` (line", "copy first: z = c.copy()"),
    (aug_in_helper, "c += v", "`c` is a parameter", "Write c = c + v to make a new array"),
]


def _aug_args(fn):
    if fn is aug_alias_of_parameter:
        return (np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.5, 2.5]))
    if fn is aug_transpose_view:
        return (np.arange(1.0, 7.0).reshape(2, 3),)
    if fn is aug_alias_in_branch:
        return (np.array([1.0, 2.0, 3.0]), True)
    return (np.array([1.0, 2.0, 3.0]),)


@pytest.mark.parametrize("api", ["grad", "vjp", "jvp", "hvp"])
@pytest.mark.parametrize("fn, text, binding, fix", AUG_CASES, ids=[c[0].__name__ for c in AUG_CASES])
def test_aug_assign_into_shared_array_is_refused(fn, text, binding, fix, api):
    args = _aug_args(fn)
    before = [np.copy(a) for a in args]
    extra = {"grad": (), "vjp": (1.0,), "jvp": (np.ones_like(args[0]),), "hvp": (np.ones_like(args[0]),)}[api]
    transformed = getattr(dt, api)(fn)  # decorating succeeds: with Python floats `+=` rebinds
    with pytest.raises(TransformError) as info:
        transformed(*args, *extra)
    message = str(info.value)
    source_fn = aug_helper if fn is aug_in_helper else fn
    line = next(i for i, s in enumerate(inspect.getsource(source_fn).splitlines())
                if s.strip() == text) + source_fn.__code__.co_firstlineno
    assert message.startswith(f"[transforms.{api}]"), message
    assert f"test_transforms_errors.py:{line} in {source_fn.__name__}" in message, message
    assert f"`{text}` writes into `{text.split()[0]}` in place when it is an array" in message, message
    assert "may share memory" in message and binding in message, message
    assert fix in message, message
    for a, b in zip(args, before):
        assert np.array_equal(a, b), "a refused call must not change the caller's arrays"
    with pytest.raises(TransformError, match="with Python floats"):  # the general version is the array one
        print(transformed.source)


def test_aug_assign_refusal_holds_for_traced_values():
    import dualtape
    x = dualtape.constant(np.array([1.0, 2.0, 3.0]))
    with pytest.raises(TransformError, match="`z` \\(line"):
        dt.grad(aug_shared_by_other_name)(x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, float, "float32", None])
def test_reduction_with_a_float_dtype(dtype):
    def f(x):
        return np.sum(np.sin(x), dtype=dtype) + np.mean(x * x, dtype=dtype)

    x = np.linspace(0.1, 0.9, 4)
    expected = np.cos(x) + 2.0 * x / x.size
    np.testing.assert_allclose(dt.grad(f)(x), expected, rtol=1e-6)


def test_an_argument_at_its_default_is_read_as_absent():
    def f(x):
        return np.sum(np.diff(x, n=1, axis=-1)) + np.sum(x * x, initial=1.0) + np.sum(np.reshape(x, (3,), order="C"))

    x = np.array([0.3, 0.7, 1.1])
    np.testing.assert_allclose(dt.grad(f)(x), [-1.0 + 0.6 + 1.0, 1.4 + 1.0, 1.0 + 2.2 + 1.0], rtol=1e-12)


# -- errors raised inside generated code name the user's line (issue 19): the traceback ended at
#    File "<dualtape f_vjp#1>", line 32

def mismatched_dot(x, w):
    y = np.tanh(x)
    z = np.dot(w, y)
    return np.sum(z)


def calls_a_bad_helper(x):
    y = x * 2.0
    return np.sum(np.log(y) + bad_helper(x))


def bad_helper(x):
    return np.dot(np.ones((2, 3)), x)


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return f"{__file__}:{first + [s.strip() for s in lines].index(text)} in {fn.__name__}: {text}"


@pytest.mark.parametrize("mode", ["grad", "vjp", "hvp", "jvp"])
def test_an_error_inside_generated_code_names_the_users_file_and_line(mode):
    import traceback
    x, w = np.ones(3), np.ones((2, 4))
    call = {"grad": lambda: dt.grad(mismatched_dot)(x, w), "vjp": lambda: dt.vjp(mismatched_dot)(x, w, np.ones(2)),
            "hvp": lambda: dt.hvp(mismatched_dot)(x, w, x), "jvp": lambda: dt.jvp(mismatched_dot)(x, w, x)}[mode]
    with pytest.raises(ValueError, match="not aligned|mismatch") as info:  # (jvp: np.matmul's message)
        call()
    where = _line_of(mismatched_dot, "z = np.dot(w, y)")
    assert info.value.__notes__ == [f"dualtape.transforms: raised by the generated code of {where}"]
    assert where in "".join(traceback.format_exception(info.value))


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_an_error_in_a_helpers_generated_code_names_both_lines(mode):
    x = np.ones(2)
    with pytest.raises(ValueError) as info:
        dt.grad(calls_a_bad_helper)(x) if mode == "grad" else dt.jvp(calls_a_bad_helper)(x, x)
    notes = "\n".join(info.value.__notes__)
    assert _line_of(calls_a_bad_helper, "return np.sum(np.log(y) + bad_helper(x))") in notes
    if mode == "jvp":  # (grad's forward sweep calls bad_helper itself: its frame is the user's file)
        assert _line_of(bad_helper, "return np.dot(np.ones((2, 3)), x)") in notes


def test_an_error_in_jits_uncompiled_first_run_names_the_users_line():
    pytest.importorskip("numba")
    with pytest.raises(ValueError, match="not aligned") as info:
        dt.grad(mismatched_dot, jit=True)(np.ones(3), np.ones((2, 4)))
    assert _line_of(mismatched_dot, "z = np.dot(w, y)") in "\n".join(info.value.__notes__)
