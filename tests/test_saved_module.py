"""`df.save(path)` writes a module that needs only NumPy (issue 14, item 3).

The saved modules are imported and run in a fresh virtual environment holding NumPy alone (no
dualtape, no gast), and their results are compared with the in-process transforms. One
environment per test session (about 10 s with a warm pip cache); set DUALTAPE_NUMPY_VENV to
a directory to reuse one across sessions.
"""

import ast
import importlib.util
import os
import pathlib
import subprocess
import sys
import textwrap
import venv

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.transforms import TransformError

SOURCE = textwrap.dedent('''
    import numpy as np

    SCALE = 0.5


    def helper(v):
        return v * SCALE + 1.0


    def loop_subscripts(x, w):
        total = 0.0
        for i in range(x.shape[0]):
            total = total + np.sum(np.tanh(x[i] * w) ** 2)
        return total + np.sum(helper(w) ** 2)


    def shifted(x):
        return np.sum(np.exp(x[1:]) * x[:-1]) + np.sum(x[::2] ** 3)


    def vector(x, y):
        return np.sin(x) * y + np.cos(x[0])


    def with_keyword(x, s=1.0):
        return np.sum(np.log1p(x ** 2)) * s


    squared = lambda v: v * v  # noqa: E731
    if True: cubed = lambda v: np.sum(v ** 3) * SCALE  # noqa: E701


    def calls_lambda(x):
        return np.sum(squared(x) * SCALE)
''')

STDLIB_OK = {"math", "numpy", "operator"}  # what a saved module may import


@pytest.fixture(scope="session")
def numpy_python(tmp_path_factory):
    """The python of a fresh venv holding only NumPy (skip only if no venv can be made)."""
    where = os.environ.get("DUALTAPE_NUMPY_VENV")
    root = pathlib.Path(where) if where else tmp_path_factory.mktemp("numpy_venv") / "venv"
    python = root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not python.exists():
        try:
            venv.create(root, with_pip=True)
        except Exception as exc:  # noqa: BLE001 - e.g. ensurepip missing from this Python
            pytest.skip(f"cannot create a virtual environment here ({type(exc).__name__}: {exc})")
        done = subprocess.run([str(python), "-m", "pip", "install", "-q", "numpy"], capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, f"pip install numpy failed in {root}:\n{done.stdout}\n{done.stderr}"
    check = subprocess.run([str(python), "-c", "import numpy; import importlib.util as u; "
                            "print(u.find_spec('dualtape') is None and u.find_spec('gast') is None)"],
                           capture_output=True, text=True, timeout=120)
    assert check.stdout.strip() == "True", f"the venv at {root} is not NumPy-only: {check.stdout}{check.stderr}"
    return python


@pytest.fixture(scope="module")
def user_module(tmp_path_factory):
    path = tmp_path_factory.mktemp("saved_src") / "saved_user_fns.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("saved_user_fns", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["saved_user_fns"] = module
    spec.loader.exec_module(module)
    return module


def _imports(text):
    names = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module.split(".")[0])
    return names


def _cases(m):
    """(name, transform, positional arguments of the saved function, its keyword arguments, the
    in-process result it must match)."""
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((3, 4)), rng.standard_normal(4)
    v, u = rng.standard_normal(5), np.arange(5.0)
    loop_grad, shifted_grad = dt.grad(m.loop_subscripts, argnums=(0, 1)), dt.grad(m.shifted)
    vector_vjp, keyword_grad = dt.vjp(m.vector, argnums=(0, 1)), dt.grad(m.with_keyword)
    shifted_jvp, loop_jvp = dt.jvp(m.shifted), dt.jvp(m.loop_subscripts, argnums=1)
    shifted_hvp, loop_hvp = dt.hvp(m.shifted), dt.hvp(m.loop_subscripts, argnums=1)
    return [
        ("loop_grad", loop_grad, (x, w), {}, loop_grad(x, w)),
        ("shifted_grad", shifted_grad, (v,), {}, shifted_grad(v)),
        ("vector_vjp", vector_vjp, (v, v + 1.0, u), {}, vector_vjp(v, v + 1.0, u)),
        ("keyword_grad", keyword_grad, (v,), {"s": 2.0}, keyword_grad(v, s=2.0)),
        # generated forward code takes its tangents by name (`d` + the parameter's name)
        ("shifted_jvp", shifted_jvp, (v,), {"dx": u}, shifted_jvp(v, u)),
        ("loop_jvp", loop_jvp, (x, w), {"dw": np.ones(4)}, loop_jvp(x, w, np.ones(4))),
        # the hvp function returns (gradient, Hessian @ v)
        ("shifted_hvp", shifted_hvp, (v,), {"dx": u}, shifted_hvp.value_and_tangent(v, u)),
        ("loop_hvp", loop_hvp, (x, w), {"dw": u[:4]}, loop_hvp.value_and_tangent(x, w, u[:4])),
        # lambdas (issue 19): one transformed, one called (saved as a def), on a compound line
        ("lambda_grad", dt.grad(m.cubed), (v,), {}, dt.grad(m.cubed)(v)),
        ("calls_lambda_grad", dt.grad(m.calls_lambda), (v,), {}, dt.grad(m.calls_lambda)(v)),
    ]


def _flat(result):
    parts = result if isinstance(result, tuple) else (result,)
    return np.concatenate([np.ravel(p) for p in parts])


def test_saved_modules_run_with_numpy_alone(numpy_python, user_module, tmp_path):
    script = ["import sys, numpy as np", f"sys.path.insert(0, {str(tmp_path)!r})", "out = {}",
              "def flat(r):",
              "    return np.concatenate([np.ravel(p) for p in (r if isinstance(r, tuple) else (r,))])"]
    expected = {}
    for name, transform, args, kwargs, result in _cases(user_module):
        path = transform.save(tmp_path / f"{name}.py")
        text = pathlib.Path(path).read_text()
        assert _imports(text) <= STDLIB_OK, f"{name}: the saved module imports {_imports(text) - STDLIB_OK}"
        np.savez(tmp_path / f"{name}_in.npz", *args, **{f"kw_{k}": v for k, v in kwargs.items()})
        script += [f"import {name}", f"a = np.load({str(tmp_path / f'{name}_in.npz')!r})",
                   f"args = [a[f'arr_{{i}}'] for i in range({len(args)})]",
                   "kwargs = {k[3:]: a[k] for k in a.files if k.startswith('kw_')}",
                   f"out[{name!r}] = flat({name}.{transform.name}(*args, **kwargs))"]
        expected[name] = _flat(result)
    script.append(f"np.savez({str(tmp_path / 'results.npz')!r}, **out)")
    (tmp_path / "run_saved.py").write_text("\n".join(script) + "\n")
    done = subprocess.run([str(numpy_python), str(tmp_path / "run_saved.py")], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    got = np.load(tmp_path / "results.npz")
    for name, want in expected.items():
        np.testing.assert_allclose(got[name], want, rtol=1e-12, atol=1e-14, err_msg=name)


def test_saved_module_carries_user_helpers_and_runtime_helpers(user_module, tmp_path):
    text = pathlib.Path(dt.grad(user_module.loop_subscripts, argnums=(0, 1)).save(tmp_path / "g.py")).read_text()
    tree = ast.parse(text)
    defined = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    assert {"helper", "helper_vjp", "unbroadcast", "zeros_like", "add_at"} <= defined
    assert "SCALE = 0.5" in text
    assert "from dualtape" not in text and "import dualtape" not in text


def test_saved_helpers_are_the_runtime_source(user_module, tmp_path):
    """runtime.py and the rulekit stay the one definition: a saved helper is their source, verbatim."""
    import inspect

    from dualtape.core import rulekit
    from dualtape.transforms import runtime
    text = pathlib.Path(dt.grad(user_module.loop_subscripts).save(tmp_path / "h.py")).read_text()
    for helper in (runtime.zeros_like, runtime.add_at, rulekit.unbroadcast):
        assert inspect.getsource(helper) in text, helper.__name__


CALLS = [  # runtime helpers run by the NumPy-only venv and in process: same results
    "unbroadcast(np.ones((2, 3)), (3,))",
    "unreduce(np.arange(3.0), (2, 3), 0)",
    "add_at(np.zeros(3), np.array([0, 0, 2]), np.ones(3))",
    "zeros_like(np.arange(3))",
    "div_no_nan(np.array([1.0, 2.0]), np.array([0.0, 4.0]))",
    "matmul_vjp_left(np.ones((2, 4)), np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4))",
    "np.asarray(einsum_subscripts('ij,jk', (2, 3), (3, 4)) == 'ij,jk->ik')",
    "set_item(np.zeros(4), slice(1, 3), np.ones(2))",
]


def test_every_runtime_helper_is_written_as_numpy_code(numpy_python, tmp_path):
    """Each public name of runtime.py (and the rulekit it re-exports) can be saved: the module
    holding all of them imports with NumPy alone, and helpers called there agree with dualtape's."""
    import types

    from dualtape.transforms import runtime
    from dualtape.transforms.codegen import save as standalone

    names = sorted(k for k, v in standalone.RUNTIME_NAMES.items() if not isinstance(v, types.ModuleType))

    class EveryHelper:  # stands in for the generated module: code reading every helper
        namespace = {}

        def source(self):
            return "def _reads_every_helper():\n    return (" + ", ".join(names) + ",)\n"

        @property
        def functions(self):  # the generated functions, as trees
            return ast.parse(self.source()).body

    # a helper may need another package only where it wraps an op of that package (SciPy's
    # special functions): those are saved but not run here; the rest run with NumPy alone
    numpy_only, other = [], {}
    for name in names:
        class One(EveryHelper):
            def source(self, name=name):
                return f"def _reads_one_helper():\n    return {name}\n"
        try:
            extra = _imports(standalone.module_source(One(), name)) - STDLIB_OK - {"collections", "string"}
        except TransformError as exc:  # a helper of a SciPy op's rule, where SciPy is not installed
            # (the SciPy ops, dnp.digamma, dnp.scipy_expm, ..., are declared only with SciPy installed;
            # with SciPy, every helper must save)
            if "dualtape.core.dnp does not define" not in str(exc) or importlib.util.find_spec("scipy"):
                raise
            extra = {"scipy"}
        if extra:
            other[name] = extra
        else:
            numpy_only.append(name)
    assert all(extra <= {"scipy"} for extra in other.values()), other
    names = numpy_only
    text = standalone.module_source(EveryHelper(), "Every runtime helper.")
    assert _imports(text) <= STDLIB_OK | {"collections", "string"}, _imports(text)
    (tmp_path / "every_helper.py").write_text(text)
    script = ["import sys, numpy as np", f"sys.path.insert(0, {str(tmp_path)!r})", "import every_helper",
              "space = dict(vars(every_helper))",
              f"np.savez({str(tmp_path / 'helpers.npz')!r}, *[np.asarray(eval(c, space)) for c in {CALLS!r}])"]
    (tmp_path / "run_helpers.py").write_text("\n".join(script) + "\n")
    done = subprocess.run([str(numpy_python), str(tmp_path / "run_helpers.py")], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    got = np.load(tmp_path / "helpers.npz")
    space = dict(vars(runtime))
    for i, call in enumerate(CALLS):
        np.testing.assert_array_equal(got[f"arr_{i}"], np.asarray(eval(call, space)), err_msg=call)
