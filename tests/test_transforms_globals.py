"""Generated code sees the module's current globals, as plain Python does (issue 19, item 1).

A module with `G = 9.81`, a helper reading `G` and `f` calling it: after `module.G = 1.62`
every transform (and every cache level: the transform object, its versions per argument
type and shape, jit) gave the old value or a mix of the old and the new constant. The same
for a rebound module array, an attribute of another module read as `other.K` (numba froze it),
a helper of another module (whose own `K` the caller's `K` shadowed in the generated code: a
wrong number even without rebinding), and a closure. A global (or closure variable) defined
only after transforming gave a stale NameError; one deleted, the old value's derivatives.
"""

import importlib
import itertools
import sys
import textwrap

import numpy as np
import pytest

import dualtape.transforms as dt

_ids = itertools.count()

OTHER = """
K = 2.0

def h(x):
    return K * x * x
"""

MAIN = """
import numpy as np
import {other} as other_module
from {other} import h

G = 9.81
A = np.array([1.0, 2.0, 3.0])
K = 100.0


def helper(x):
    return G * x * x


def f_scalar(x):
    return np.sum(helper(x) + G * x)


def f_array(x):
    return np.sum(A * x * x)


def f_other(x):
    return np.sum(h(x)) + K * np.sum(x)


def f_attribute(x):
    return np.sum(other_module.K * x * x)


def f_late(x):
    return np.sum(LATE * x * x)


def f_late_attribute(x):
    return np.sum(other_module.LATE * x * x)


def f_abs(x):
    return abs(x) * x
"""


@pytest.fixture
def mods(tmp_path, monkeypatch):
    """(main module, other module), freshly written and imported."""
    k = next(_ids)
    other, main = f"_dt_globals_other_{k}", f"_dt_globals_main_{k}"
    (tmp_path / f"{other}.py").write_text(textwrap.dedent(OTHER))
    (tmp_path / f"{main}.py").write_text(textwrap.dedent(MAIN.format(other=other)))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield importlib.import_module(main), importlib.import_module(other)
    sys.modules.pop(main, None)
    sys.modules.pop(other, None)


def _coefficients(case, main, other):
    """f(x) = sum(c2 / 2 * x**2 + c1 * x) for the module's current globals: (c2, c1)."""
    if case == "scalar":
        return 2 * main.G, main.G
    if case == "array":
        return 2 * main.A, 0.0
    if case == "attribute":
        return 2 * other.K, 0.0
    return 2 * other.K, main.K


def _rebind(case, main, other):
    if case == "scalar":
        main.G = 1.62
    elif case == "array":
        main.A = np.array([-4.0, 0.5, 7.0])
    elif case == "attribute":
        other.K = -3.0
    else:
        other.K, main.K = -3.0, 0.25


X = np.array([0.3, -1.2, 2.0])
V = np.array([1.0, -2.0, 0.5])
VS = np.array([[1.0, 0.0, 0.0], [0.5, 2.0, -1.0]])


def _expected(kind, c2, c1):
    grad = c2 * X + c1
    value = float(np.sum(c2 / 2 * X ** 2 + c1 * X))
    return {"grad": grad, "vjp": grad, "jvp": (value, grad @ V), "jvp batched": (value, VS @ grad),
            "hvp": c2 * V, "jacfwd": grad, "hessian": np.diag(np.broadcast_to(c2, X.shape))}[kind]


def _run(kind, f, jit=False):
    options = {"jit": True} if jit else {}
    if kind == "grad":
        return dt.grad(f, **options)(X)
    if kind == "vjp":
        return dt.vjp(f, **options)(X, 1.0)
    if kind == "jvp":
        return dt.jvp(f, **options)(X, V)
    if kind == "jvp batched":
        return dt.jvp(f, **options)(X, VS)
    if kind == "hvp":
        return dt.hvp(f, **options)(X, V)
    if kind == "jacfwd":
        return dt.jacfwd(f)(X)
    return dt.hessian(f)(X)


def _check(got, want):
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


CASES = ("scalar", "array", "other module", "attribute")
NAMES = {"scalar": "f_scalar", "array": "f_array", "other module": "f_other", "attribute": "f_attribute"}
KINDS = ("grad", "vjp", "jvp", "jvp batched", "hvp", "jacfwd", "hessian")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kind", KINDS)
def test_every_transform_sees_rebound_globals(mods, case, kind):
    main, other = mods
    f = getattr(main, NAMES[case])
    _check(_run(kind, f), _expected(kind, *_coefficients(case, main, other)))
    _run(kind, f)  # (the cached versions, the fast paths)
    _rebind(case, main, other)
    _check(_run(kind, f), _expected(kind, *_coefficients(case, main, other)))


JIT_KINDS = ("grad", "vjp", "jvp", "hvp")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kind", JIT_KINDS)
def test_jit_sees_rebound_globals(mods, case, kind):
    pytest.importorskip("numba")
    if case != "scalar" and kind in ("vjp", "hvp"):
        pytest.skip("the scalar case covers these modes (numba compiles are slow)")
    main, other = mods
    f = getattr(main, NAMES[case])
    _check(_run(kind, f, jit=True), _expected(kind, *_coefficients(case, main, other)))
    _run(kind, f, jit=True)
    _rebind(case, main, other)
    _check(_run(kind, f, jit=True), _expected(kind, *_coefficients(case, main, other)))


def test_a_global_array_rebound_to_another_shape_is_read_at_its_new_shape(mods):
    main, _ = mods
    df = dt.grad(main.f_array)
    np.testing.assert_allclose(df(X), 2 * main.A * X)
    main.A = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    x4 = np.arange(4.0)
    np.testing.assert_allclose(df(x4), 2 * main.A * x4)
    with pytest.raises(ValueError, match="broadcast"):  # plain Python's error: A has 4 items, x 3
        df(X)


def test_a_helper_of_another_module_reads_its_own_globals_not_the_callers(mods):
    """f's module has a `K` of its own: the helper's adjoint read that one (400.0 for 8.0)."""
    main, other = mods
    assert main.K != other.K
    np.testing.assert_allclose(dt.grad(main.f_other)(np.array([2.0])), 4 * other.K + main.K)
    np.testing.assert_allclose(dt.jvp(main.f_other)(np.array([2.0]), np.array([1.0]))[1], 4 * other.K + main.K)


def test_a_rebound_helper_function_is_the_one_called(mods):
    main, other = mods
    df = dt.grad(main.f_scalar)
    np.testing.assert_allclose(df(X), 2 * main.G * X + main.G)
    main.helper = other.h
    np.testing.assert_allclose(df(X), 2 * other.K * X + main.G)


def _closure(c):
    def f(x):
        return c * x * x

    def rebind(value):
        nonlocal c
        c = value
    return f, rebind


def test_a_rebound_closure_variable_is_read():
    f, rebind = _closure(3.0)
    df, jv = dt.grad(f), dt.jvp(f)
    assert df(2.0) == 12.0 and jv(2.0, 1.0) == (12.0, 12.0)
    rebind(-1.0)
    assert df(2.0) == -4.0 and jv(2.0, 1.0) == (-4.0, -4.0)


def test_the_check_is_one_identity_comparison_per_global(mods):
    """What a call costs for it (benchmarks/wl_globals.py times calls): one generated function."""
    main, _ = mods
    df = dt.grad(main.f_scalar)
    df(X)
    assert df._guard.holds() is True
    main.G = main.G + 0.0  # equal value, another object: compiled again (an identity check)
    assert df._guard.holds() is False


def test_jit_sees_a_global_array_written_in_place(mods):
    """numba freezes a global array into the compiled code: a write into it in place (plain
    Python sees it) gave the old gradient; jit's guard also compares the arrays' contents."""
    pytest.importorskip("numba")
    main, _ = mods
    df = dt.grad(main.f_array, jit=True)
    np.testing.assert_allclose(df(X), 2 * main.A * X)
    main.A[0] = 100.0
    np.testing.assert_allclose(df(X), 2 * main.A * X)
    np.testing.assert_allclose(dt.grad(main.f_array)(X), 2 * main.A * X)  # (uncompiled: the same array)


def _array_closure():
    w = np.array([1.0, 2.0, 3.0])

    def f(x):
        return np.sum(w * x * x)
    return f, w


def test_jit_sees_a_closure_array_written_in_place():
    pytest.importorskip("numba")
    f, w = _array_closure()
    df = dt.grad(f, jit=True)
    np.testing.assert_allclose(df(X), 2 * w * X)
    w[1] = -5.0
    np.testing.assert_allclose(df(X), 2 * w * X)


@pytest.mark.parametrize("kind", KINDS + tuple(f"jit {k}" for k in JIT_KINDS))
@pytest.mark.parametrize("case", ("global", "attribute"))
def test_a_global_defined_after_transforming_is_read_and_a_deleted_one_is_gone(mods, case, kind):
    """f reads LATE (or other.LATE), which does not exist yet: plain Python's NameError
    (AttributeError), then, once defined, its derivatives (a stale NameError before: the name
    absent when generated was not watched); deleted again, the error again."""
    main, other = mods
    f, holder = (main.f_late, main) if case == "global" else (main.f_late_attribute, other)
    jit = kind.startswith("jit ")
    if jit:
        pytest.importorskip("numba")
    kind = kind.removeprefix("jit ")
    with pytest.raises((NameError, AttributeError), match="LATE"):
        _run(kind, f, jit)
    for value in (2.0, -0.5):
        holder.LATE = value
        _check(_run(kind, f, jit), _expected(kind, 2 * value, 0.0))
    del holder.LATE
    with pytest.raises((NameError, AttributeError), match="LATE"):
        _run(kind, f, jit)


def test_a_closure_variable_bound_after_transforming_is_read():
    def make():
        def f(x):
            return c * x * x
        df, jv = dt.grad(f), dt.jvp(f)
        with pytest.raises(NameError, match="'c'"):
            df(2.0)
        c = 3.0
        return df, jv
    df, jv = make()
    assert df(2.0) == 12.0 and jv(2.0, 1.0) == (12.0, 12.0)


def test_a_builtin_shadowed_by_a_global_after_transforming_is_the_one_called(mods):
    """`abs` read as a global is the builtin until the module defines its own."""
    main, _ = mods
    df, jv = dt.grad(main.f_abs), dt.jvp(main.f_abs)
    assert df(-3.0) == 6.0 and jv(-3.0, 1.0) == (-9.0, 6.0)
    main.abs = lambda v: 2.0 * v
    assert main.f_abs(-3.0) == 18.0 and df(-3.0) == -12.0 and jv(-3.0, 1.0) == (18.0, -12.0)
