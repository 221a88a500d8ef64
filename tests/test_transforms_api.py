"""The public API: grad/vjp options, caching, .source, verbose, save, linecache."""

import importlib.util
import inspect
import linecache
import math

import numpy as np

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
