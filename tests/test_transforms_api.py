"""The public API: grad/vjp options, caching, .source, verbose, save, linecache."""

import importlib.util
import inspect
import linecache
import math

import numpy as np
import pytest

import dualtape.transforms as dt

K = 3.0


def f(a, b=2.0):
    c = a * b + K
    return math.sin(c) * a


def g(x):
    return np.sin(x) * 2.0


def test_grad_matches_closed_form_and_options():
    a, b = 0.7, 1.3
    c = a * b + K
    da = math.cos(c) * b * a + math.sin(c)
    db = math.cos(c) * a * a
    assert math.isclose(dt.grad(f)(a, b), da, rel_tol=1e-12)
    ga, gb = dt.grad(f, wrt=(0, 1))(a, b)
    assert math.isclose(gb, db, rel_tol=1e-12)
    (ga2,), value = dt.grad(f, wrt=(0,), preserve_result=True)(a, b)
    assert math.isclose(value, f(a, b)) and math.isclose(ga2, da, rel_tol=1e-12)
    assert math.isclose(dt.grad(f, optimize=False)(a, b), da, rel_tol=1e-12)
    assert math.isclose(dt.grad(f)(a, b=b), da, rel_tol=1e-12)


def test_decorator_and_cache():
    assert dt.grad(f) is dt.grad(f)
    assert dt.grad(f) is not dt.grad(f, wrt=1)

    @dt.grad
    def h(a):
        return a * a

    assert h(3.0) == 6.0


def test_vjp_non_scalar_output():
    x = np.linspace(0.1, 1.0, 4)
    dy = np.arange(4.0)
    got = dt.vjp(g)(x, dy)
    np.testing.assert_allclose(got, dy * 2.0 * np.cos(x), rtol=1e-12)


def g_sum(x):
    return np.sum(np.sin(x) * 2.0)


def test_source_verbose_and_linecache(capsys):
    # (grad of g itself is refused since issue 9: its output is not a scalar)
    df = dt.grad(g_sum, verbose=True)
    printed = capsys.readouterr().out
    assert "def g_sum_vjp(x, bout=1.0):" in printed and printed.strip() == df.source.strip()
    df(np.ones(2))
    fn = df._compiled_for((np.ones(2),), {})[0]  # (the version for these shapes: concrete.py)
    assert "def g_sum_vjp" in inspect.getsource(fn)
    assert fn.__dualtape_source__ == df.source_for(np.ones(2))
    assert any(name.startswith("<dualtape g_sum_vjp#") for name in linecache.cache)


def test_save_writes_a_self_contained_module(tmp_path):
    df = dt.grad(f, wrt=(0, 1))
    path = df.save(tmp_path / "f_grad.py")
    text = path.read_text()
    assert "import numpy as np" in text and "K = 3.0" in text
    spec = importlib.util.spec_from_file_location("f_grad", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    np.testing.assert_allclose(module.f_vjp(0.7, 1.3), dt.grad(f, wrt=(0, 1))(0.7, 1.3), rtol=1e-12)


# -- tuple argnums of jacfwd and hessian (issue 19): `TypeError: 'NoneType' object is not iterable`

def two_args(x, y):
    return np.sin(x) * y ** 2


def scalar_of_two(x, y):
    return np.sum(x ** 2 * y[0]) + np.sum(x) * np.sum(y ** 3)


XA, YA = np.array([0.3, 0.5]), np.array([1.5, 2.0, -0.5])


def test_jacfwd_with_a_tuple_of_argnums_returns_a_tuple_of_jacobians():
    x, y = XA, YA[:2]
    jx, jy = np.diag(np.cos(x) * y ** 2), np.diag(np.sin(x) * 2 * y)
    (got,) = dt.jacfwd(two_args, argnums=(0,))(x, y)
    np.testing.assert_allclose(got, jx, rtol=1e-12)
    got = dt.jacfwd(two_args, argnums=(0, 1))(x, y)
    assert isinstance(got, tuple) and len(got) == 2
    np.testing.assert_allclose(got[0], jx, rtol=1e-12)
    np.testing.assert_allclose(got[1], jy, rtol=1e-12)
    (gy,) = dt.jacfwd(two_args, argnums=(1,))(x, y)
    np.testing.assert_allclose(gy, jy, rtol=1e-12)
    np.testing.assert_allclose(dt.jacfwd(two_args, argnums=1)(x, y), jy, rtol=1e-12)  # (an int: one array)
    jx_scalar, jy_scalar = dt.jacfwd(two_args, argnums=(0, 1))(0.3, 1.5)  # scalars: 0-d Jacobians
    assert np.isclose(jx_scalar, np.cos(0.3) * 1.5 ** 2) and np.isclose(jy_scalar, np.sin(0.3) * 3.0)


def test_hessian_with_a_tuple_of_argnums_returns_the_blocks_as_jax_does():
    x, y = XA, YA
    hxx = 2 * y[0] * np.eye(2)
    hxy = np.zeros((2, 3))
    hxy[:, 0] = 2 * x
    hxy += 3 * y ** 2
    hyy = 6 * np.sum(x) * np.diag(y)
    ((got,),) = dt.hessian(scalar_of_two, argnums=(0,))(x, y)
    np.testing.assert_allclose(got, hxx, rtol=1e-12)
    blocks = dt.hessian(scalar_of_two, argnums=(0, 1))(x, y)
    assert [len(row) for row in blocks] == [2, 2]
    want = ((hxx, hxy), (hxy.T, hyy))
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(blocks[i][j], want[i][j], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dt.hessian(scalar_of_two, argnums=1)(x, y), hyy, rtol=1e-12, atol=1e-12)


# -- lambdas on a compound statement's line (issue 19): a raw SyntaxError about valid code

def lambda_in_try():
    try: return dt.grad(lambda x: x * x)(3.0)  # noqa: E701
    except ZeroDivisionError: return None  # noqa: E701


def lambda_in_for_header():
    out = []
    for g in [dt.grad(lambda x: x * x * x), dt.grad(lambda x: np.sin(x) * 2.0)]: out.append(g(2.0))  # noqa: E701
    return out


def lambda_in_if_and_with():
    import contextlib
    if True: first = dt.jvp(lambda x, y=2.0: (K * x  # noqa: E701
                                              + y * x ** 2))(1.0, 1.0)
    with contextlib.nullcontext(): second = dt.hvp(lambda x: np.sum(x ** 3))(np.ones(2), np.ones(2))  # noqa: E701
    return first, second


square = lambda x: x * x  # noqa: E731


def calls_a_lambda(x):
    return square(x) + K * x


def test_a_lambda_on_a_compound_statement_line_is_transformed():
    assert lambda_in_try() == 6.0
    assert lambda_in_for_header() == [12.0, 2.0 * np.cos(2.0)]
    (value, tangent), hv = lambda_in_if_and_with()
    assert (value, tangent) == (K + 2.0, K + 4.0)
    np.testing.assert_allclose(hv, [6.0, 6.0])
    assert dt.grad(calls_a_lambda)(2.0) == 4.0 + K  # a lambda called by f: its adjoint too
    assert "def lambda_vjp(x, bout=1.0):" in dt.grad(square).source


def test_two_lambdas_of_one_line_without_columns_are_refused_naming_the_line(tmp_path):
    """Without column positions (python -X no_debug_ranges) two different lambdas of one line
    cannot be told apart: a TransformError names the line and the fix."""
    import subprocess
    import sys
    script = tmp_path / "two_lambdas.py"
    script.write_text("import dualtape.transforms as dt\n"
                      "fs = [lambda x: x * 2.0, lambda x: x * x]\n"
                      "try:\n    dt.grad(fs[1])\nexcept dt.TransformError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-X", "no_debug_ranges", str(script)], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert f"{script}:2: cannot tell which lambda" in out and "with `def`" in out


# -- integer arguments (issue 19): the transformer gave `n * n` at 3 the derivative 6.0 where
#    dualtape.grad refuses; the modes agree now

def n_squared(n):
    return n * n


def scaled(x, n):
    return np.sum(x * n)


@pytest.mark.parametrize("value", [3, True, np.int64(3), np.int32(2), np.bool_(True), np.arange(3),
                                   np.array([True, False])])
@pytest.mark.parametrize("mode", ["grad", "vjp", "jvp", "hvp", "jacfwd", "hessian"])
def test_a_differentiated_integer_argument_is_refused_as_dualtape_grad_refuses_it(mode, value):
    import dualtape
    call = {"grad": lambda: dt.grad(n_squared)(value), "vjp": lambda: dt.vjp(n_squared)(value, 1.0),
            "jvp": lambda: dt.jvp(n_squared)(value, 1.0), "hvp": lambda: dt.hvp(n_squared)(value, 1.0),
            "jacfwd": lambda: dt.jacfwd(n_squared)(value), "hessian": lambda: dt.hessian(n_squared)(value)}[mode]
    with pytest.raises(TypeError, match="only floating inputs can be differentiated") as transformer:
        call()
    dtype = np.asarray(value).dtype
    assert f"the differentiated argument `n` has dtype {dtype}" in str(transformer.value)
    with pytest.raises(TypeError, match=f"has dtype {dtype}, but only floating inputs can be differentiated"):
        dualtape.grad(lambda n: np.sum(n * n))(value)


def test_integer_arguments_that_are_not_differentiated_keep_working():
    x = np.array([0.5, 2.0])
    np.testing.assert_allclose(dt.grad(scaled)(x, 3), [3.0, 3.0])
    np.testing.assert_allclose(dt.grad(scaled)(x, np.int64(2)), [2.0, 2.0])
    np.testing.assert_allclose(dt.jvp(scaled)(x, 3, np.ones(2)), (7.5, 6.0))
    np.testing.assert_allclose(dt.hvp(lambda x, n: np.sum(x ** n))(x, 2, np.ones(2)), [2.0, 2.0])
    with pytest.raises(TypeError, match="argument `n` has dtype int64"):
        dt.grad(scaled, argnums=(0, 1))(x, 3)
    assert dt.grad(n_squared)(3.0) == 6.0


def test_jit_refuses_a_differentiated_integer_argument_too():
    pytest.importorskip("numba")
    with pytest.raises(TypeError, match="argument `n` has dtype int64, but only floating inputs"):
        dt.grad(n_squared, jit=True)(3)
    assert dt.grad(scaled, jit=True)(np.array([0.5, 2.0]), 3).tolist() == [3.0, 3.0]


def test_a_lambda_whose_file_changed_since_is_refused_clearly(tmp_path, monkeypatch):
    import importlib
    path = tmp_path / "_dt_changed_lambda.py"
    path.write_text("f = lambda x: x * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("_dt_changed_lambda")
    path.write_text("\n\nf = lambda x: x * x\n")  # (line 1 holds no lambda now)
    linecache.checkcache(str(path))
    with pytest.raises(dt.TransformError, match="cannot read the source of <lambda>: no lambda of line 1 .* changed"):
        dt.grad(module.f)
