"""dualtape.transforms with jit=True: the generated code compiled by numba (transforms/jit/compile.py).

numba is an optional extra (`pip install dualtape[jit]`): without it only the test of the
missing-numba error runs (the others are skipped).
"""

import builtins
import contextlib
import io
import math
import pathlib
import re
import sys
import types

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.transforms.frontend.parse import TransformError

BENCHMARKS = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))  # as test_benchmarks.py: the workload programs are defined once there

from workloads_src import chain, pendulum  # noqa: E402


def fresh(f):
    """A new function object with f's code: its transforms are new (they are cached per function)."""
    return types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__)


def mlp(W1, b1, W2, x):
    h = np.tanh(x @ W1 + b1)
    out = h @ W2
    return np.sum(out * out)


def branchy(x, n):
    y = np.zeros(n)
    for i in range(n):
        if x[i] > 0.0:
            y[i] = x[i] * x[i]
        else:
            y[i] = np.sin(x[i])
    return np.sum(y)


def chain_np(x, steps):
    for _ in range(steps):
        x = np.sin(x) * 1.0001 + 0.01 * x * x
    return np.sum(x)


def python_helper(v):
    return v * 2.0


def uses_helper(x):
    y = x * x
    z = python_helper(y)
    return z + x


def uses_einsum(a, b):
    c = a * 2.0
    d = np.einsum("ij,jk->ik", c, b)
    return np.sum(d)


def cubic(x):
    return np.sum(x * x * x) + np.sum(np.sin(x))


def fd(f, args, i, eps=1e-6):
    """Central differences of f w.r.t. args[i] (a float or an array)."""
    x = args[i]
    if np.ndim(x) == 0:
        hi = list(args); hi[i] = x + eps
        lo = list(args); lo[i] = x - eps
        return (f(*hi) - f(*lo)) / (2 * eps)
    out = np.zeros(np.shape(x))
    for k in np.ndindex(*np.shape(x)):
        hi, lo = np.array(x, dtype=float), np.array(x, dtype=float)
        hi[k] += eps
        lo[k] -= eps
        out[k] = (f(*args[:i], hi, *args[i + 1:]) - f(*args[:i], lo, *args[i + 1:])) / (2 * eps)
    return out


def test_missing_numba_is_a_clear_error(monkeypatch):
    real_import = builtins.__import__

    def no_numba(name, *args, **kwargs):
        if name == "numba" or name.startswith("numba."):
            raise ImportError("No module named 'numba'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_numba)

    def f(x):
        return x * x

    with pytest.raises(TransformError, match=r"(?s)numba.*not installed.*pip install 'dualtape\[jit\]'"):
        dt.grad(f, jit=True)
    assert dt.grad(f)(3.0) == 6.0  # without jit nothing needs numba


try:
    import numba  # noqa: F401
    HAVE_NUMBA = True
except ImportError:
    HAVE_NUMBA = False
needs_numba = pytest.mark.skipif(not HAVE_NUMBA, reason="numba is an optional extra: pip install 'dualtape[jit]'")


@needs_numba
def test_scalar_chain_1000_steps():
    g = dt.grad(chain, jit=True)
    got = g(0.3, 1000)
    assert got == pytest.approx(dt.grad(chain)(0.3, 1000), rel=1e-13)
    assert got == pytest.approx(fd(chain, (0.3, 1000), 0), rel=1e-6)
    assert g(0.7, 3000) == pytest.approx(dt.grad(chain)(0.7, 3000), rel=1e-13)  # the stack grows
    assert "_stack_x = np.empty(" in g.source and "_stack.append" not in g.source


@needs_numba
def test_rk4_pendulum():
    g = dt.grad(pendulum, wrt=(0, 1), jit=True)
    got = g(0.3, 1.2, 1000)
    np.testing.assert_allclose(got, dt.grad(pendulum, wrt=(0, 1))(0.3, 1.2, 1000), rtol=1e-12)
    np.testing.assert_allclose(got, [fd(pendulum, (0.3, 1.2, 1000), i) for i in (0, 1)], rtol=1e-6)
    assert "np.empty((" in g.source  # (theta, omega) pairs on a two-column stack


@needs_numba
def test_mlp_matmul_tanh():
    rng = np.random.default_rng(0)
    W1, b1, W2, x = rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=(4, 2)), rng.normal(size=(5, 3))
    args = (W1, b1, W2, x)
    grads = dt.grad(mlp, wrt=(0, 1, 2), jit=True)(*args)  # one compilation (about 5 s) for the three
    for wrt, got in enumerate(grads):
        np.testing.assert_allclose(got, dt.grad(mlp, wrt=wrt)(*args), rtol=1e-12)
        np.testing.assert_allclose(got, fd(mlp, args, wrt), rtol=1e-6, atol=1e-8)


@needs_numba
def test_loop_with_branches_and_subscript_writes():
    x = np.array([0.5, -0.3, 1.2, -2.0, 0.1])
    g = dt.grad(branchy, jit=True)
    got = g(x, 5)
    np.testing.assert_allclose(got, dt.grad(branchy)(x, 5), rtol=1e-13)
    np.testing.assert_allclose(got, fd(branchy, (x, 5), 0), rtol=1e-6)
    np.testing.assert_allclose(g(-x, 5), dt.grad(branchy)(-x, 5), rtol=1e-13)


@needs_numba
def test_array_stacks_vjp_and_zero_d_arrays():
    x = np.linspace(0.1, 0.9, 10)
    got = dt.grad(chain_np, jit=True)(x, 200)  # the saved vectors go on a list
    np.testing.assert_allclose(got, dt.grad(chain_np)(x, 200), rtol=1e-12)
    np.testing.assert_allclose(got, fd(chain_np, (x, 200), 0), rtol=1e-6)
    x0 = np.asarray(0.3)  # a 0-d array: numba computes with its value
    assert float(dt.grad(chain_np, jit=True)(x0, 100)) == pytest.approx(float(dt.grad(chain_np)(x0, 100)))
    rng = np.random.default_rng(1)
    W1, b1, W2, X = rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=(4, 2)), rng.normal(size=(5, 3))
    np.testing.assert_allclose(dt.vjp(mlp, wrt=1, jit=True)(W1, b1, W2, X, 2.0),
                               dt.vjp(mlp, wrt=1)(W1, b1, W2, X, 2.0), rtol=1e-12)


@needs_numba
def test_jvp_and_hvp():
    x = np.array([0.3, -1.1, 2.0])
    v = np.array([1.0, 0.5, -2.0])
    value, tangent = dt.jvp(cubic, jit=True)(x, v)
    ref_value, ref_tangent = dt.jvp(cubic)(x, v)
    assert value == pytest.approx(ref_value)
    np.testing.assert_allclose(tangent, ref_tangent, rtol=1e-13)
    np.testing.assert_allclose(tangent, np.dot(fd(cubic, (x,), 0), v), rtol=1e-6)
    hv = dt.hvp(cubic, jit=True)(x, v)
    np.testing.assert_allclose(hv, dt.hvp(cubic)(x, v), rtol=1e-13)
    np.testing.assert_allclose(hv, np.diag(6 * x - np.sin(x)) @ v, rtol=1e-12)
    # a scalar loop: the hvp of the chain (forward over the adjoint, with both stacks)
    h = dt.hvp(chain, jit=True)(0.3, 50, 1.0)
    np.testing.assert_allclose(h, dt.hvp(chain)(0.3, 50, 1.0), rtol=1e-12)


def two_args(x, y, scale=2.0):
    return np.sum(np.sin(x) * y) * scale


def _flat(result):
    """A jvp's (value, tangents) or an hvp's tangents, as one flat array."""
    parts = result if isinstance(result, tuple) else (result,)
    return np.concatenate([np.ravel(_flat(p)) if isinstance(p, tuple) else np.ravel(p) for p in parts])


@needs_numba
def test_jvp_and_hvp_called_again_take_the_fast_path_with_the_same_checks():
    """A jvp or hvp called again with argument types seen before skips binding and checks
    (`Jitted._fast_tangent`): the same numbers as the first call and the uncompiled code, in
    the compiled function's parameter order; other types, a batch of directions, complex
    tangents and keyword arguments still go the checked way."""
    rng = np.random.default_rng(3)
    x, y, v, w = (rng.normal(size=4) for _ in range(4))
    for wrt, tangents in ((0, v), (1, w), ((0, 1), (v, w))):
        for api in (dt.jvp, dt.hvp):
            compiled = api(two_args, wrt=wrt, jit=True)
            first = _flat(compiled(x, y, tangents))
            assert compiled._fast_tangent  # (a second call with these types takes the fast path)
            np.testing.assert_array_equal(_flat(compiled(x, y, tangents)), first)
            np.testing.assert_allclose(first, _flat(api(two_args, wrt=wrt)(x, y, tangents)), rtol=1e-13, atol=1e-15)
            complex_tangents = tuple(t + 0j for t in tangents) if isinstance(tangents, tuple) else tangents + 0j
            with pytest.raises(TypeError, match="complex"):
                compiled(x, y, complex_tangents)
    hvp = dt.hvp(two_args, wrt=0, jit=True)
    hvp(x, y, v)
    directions = np.stack([v, w])  # a batch: another key, the batched code
    np.testing.assert_allclose(hvp(x, y, directions), dt.hvp(two_args, wrt=0)(x, y, directions), rtol=1e-13)
    np.testing.assert_allclose(hvp(x, y, v, scale=3.0), 1.5 * hvp(x, y, v), rtol=1e-13)


@needs_numba
def test_called_user_functions_compile_too():
    g = dt.grad(uses_helper, jit=True)
    assert g(1.5) == pytest.approx(dt.grad(uses_helper)(1.5))
    assert g(1.5) == pytest.approx(2 * 2 * 1.5 + 1)


@needs_numba
def test_refusal_names_construct_and_lines():
    a, b = np.ones((2, 3)), np.ones((3, 2))
    g = dt.grad(uses_einsum, jit=True)
    with pytest.raises(TransformError) as info:
        g(a, b)
    text = str(info.value)
    assert "numba cannot compile" in text and "einsum" in text
    assert "generated line" in text
    line = uses_einsum.__code__.co_firstlineno + 2
    assert f"test_jit.py:{line}: d = np.einsum(" in text
    assert "jit='fallback'" in text


@needs_numba
def test_fallback_when_asked():
    a, b = np.linspace(0, 1, 6).reshape(2, 3), np.linspace(1, 2, 6).reshape(3, 2)
    g = dt.grad(uses_einsum, jit="fallback")
    with pytest.warns(RuntimeWarning, match="(?s)einsum.*jit='fallback': running the uncompiled"):
        np.testing.assert_allclose(g(a, b), dt.grad(uses_einsum)(a, b), rtol=1e-13)
    assert "einsum" in g.fallback_reason
    assert g.source == g._last.module.source()  # what runs: the uncompiled generated code


@needs_numba
def test_bad_jit_value():
    with pytest.raises(TransformError, match="jit='fallback'"):
        dt.grad(chain, jit="yes")


@needs_numba
def test_source_is_what_numba_compiled(monkeypatch):
    monkeypatch.setenv("DUALTAPE_JIT_NATIVE", "0")  # (scalar code: tests/test_jit_native.py)
    g = dt.grad(fresh(chain), jit=True)
    g(0.3, 10)
    assert g.source == g._last.source
    filename = g._last.fn.py_func.__code__.co_filename
    # (the disk cache's file of this source, or, with the cache off, linecache's entry)
    assert filename.startswith("<dualtape jit") or pathlib.Path(filename).read_text() == g.source
    import linecache
    assert "".join(linecache.getlines(filename)) == g.source
    assert g.compile_seconds > 0


@needs_numba
def test_docs_section_shows_the_compiled_source():
    doc = (pathlib.Path(__file__).parent.parent / "docs" / "transforms.md").read_text()
    namespace = {}
    with contextlib.redirect_stdout(io.StringIO()):
        for block in re.findall(r"```python\n(.*?)```", doc, flags=re.S):  # up to the one defining `examples`
            exec(block, namespace)
            if "examples" in namespace:
                break
    section = doc[doc.index("## Compiled gradients (numba)"):]
    shown = re.search(r"```txt\n(.*?)```", section, flags=re.S).group(1)
    dloop = dt.grad(namespace["examples"].loop, jit=True)
    assert dloop(1.0, 3) == pytest.approx(sum(i * math.cos(i) for i in range(3)))
    assert dloop.source.strip() == shown.strip()


def _sum_as_float64(x):
    return np.sum(x, dtype="float64") + np.sum(np.sin(x))


def test_an_error_inside_numbas_typing_is_a_refusal_or_a_fallback():
    """numba types `np.sum(x, dtype="float64")` with an AttributeError it does not wrap in a
    NumbaError (found by the random-program checker's jit modes): jit=True refuses naming
    the generated line, jit="fallback" runs the uncompiled code."""
    x = np.array([0.5, -1.0, 2.0])
    with pytest.raises(dt.TransformError, match="numba cannot compile"):
        dt.grad(_sum_as_float64, jit=True)(x)
    with pytest.warns(RuntimeWarning, match="running the uncompiled generated code"):
        got = dt.grad(_sum_as_float64, jit="fallback")(x)
    np.testing.assert_allclose(got, 1 + np.cos(x), rtol=1e-15)
