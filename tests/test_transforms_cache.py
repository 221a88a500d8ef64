"""The transforms' cache lives on the transformed function (transforms/cache.py, issue 13): a
process that transforms many functions frees each one, and its generated code, with the
function, while `dt.grad(f)` called again on the same `f` returns the cached transform."""

import functools
import gc
import importlib.util
import linecache
import pickle
import weakref

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.transforms.cache import cache_on

N = 200


def _module(tmp_path, name, count):
    lines = ["import numpy as np", ""]
    for i in range(count):
        lines += [f"def f{i}(x):", f"    return np.sum(np.sin(x) * {i + 1}.0)", ""]
    path = tmp_path / f"{name}.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _transform_all(module, transforms):
    """Weak references to each function and its transforms, after computing with every one."""
    refs, x = [], np.array([0.1, 0.2])
    for i in range(N):
        f = getattr(module, f"f{i}")
        made = [make(f) for make in transforms]
        np.testing.assert_allclose(made[0](x), (i + 1.0) * np.cos(x))
        refs += [weakref.ref(f)] + [weakref.ref(m) for m in made]
    return refs


@pytest.mark.parametrize("transforms", [(dt.grad,), (dt.grad, dt.jvp, dt.hvp)], ids=["grad", "grad-jvp-hvp"])
def test_transformed_functions_are_freed_with_their_function(tmp_path, transforms):
    gc.collect()
    before = {k for k in linecache.cache if k.startswith("<dualtape ")}
    module = _module(tmp_path, f"cache_user_{len(transforms)}", N)
    refs = _transform_all(module, transforms)
    del module
    gc.collect()
    alive = [r() for r in refs if r() is not None]
    assert not alive, f"{len(alive)} of {len(refs)} functions or transforms are still alive: {alive[:3]}"
    # the generated source registered for tracebacks goes with the generated code
    added = {k for k in linecache.cache if k.startswith("<dualtape ")} - before
    assert not added, sorted(added)[:3]


def test_called_functions_are_freed_with_their_module(tmp_path):
    """A user function f calls (looked up as a call target: calls/opmap.lookup) is freed with
    its module, and f with it: a cache of every call target kept each program's functions,
    globals and generated code for the whole process (the checker grew by 0.7 MB a program)."""
    lines = ["import numpy as np", ""]
    for i in range(20):
        lines += [f"def h{i}(x):", f"    return np.sin(x) * {i + 1}.0", "",
                  f"def f{i}(x):", f"    return np.sum(h{i}(x))", ""]
    path = tmp_path / "cache_called.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location("cache_called", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x, refs = np.array([0.1, 0.2]), []
    for i in range(20):
        f, h = getattr(module, f"f{i}"), getattr(module, f"h{i}")
        for make in (dt.grad, dt.jvp, dt.hvp):
            made = make(f)
            made(x) if make is dt.grad else made(x, x)
            refs.append(weakref.ref(made))
        refs += [weakref.ref(f), weakref.ref(h)]
    del module, f, h, made
    gc.collect()
    alive = [r() for r in refs if r() is not None]
    assert not alive, f"{len(alive)} of {len(refs)} functions or transforms are still alive: {alive[:3]}"


VERSIONED = """
import numpy as np


def push(acc, v):
    acc.append(v * 1.0)


def squares(xs):
    for v in xs:
        yield v * v


def star(*args):
    return sum(a * a for a in args)


def f(x):
    acc = [x]
    push(acc, x * 2.0)
    return np.sum(np.stack(acc)) + sum(squares(x)) + np.sum(star(x, x))
"""


def test_versions_of_called_functions_go_with_them(tmp_path):
    """The versions made of called functions (a list-changing helper, a generator, a *args
    helper: calls/versions.py) hold their module's globals: kept beside the functions in a
    WeakKeyDictionary they kept the functions, the module and themselves alive."""
    path = tmp_path / "cache_versions.py"
    path.write_text(VERSIONED)
    spec = importlib.util.spec_from_file_location("cache_versions", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.array([0.3, 0.5])
    np.testing.assert_allclose(dt.grad(module.f)(x), 3.0 + 6.0 * x, rtol=1e-12)
    refs = [weakref.ref(getattr(module, name)) for name in ("push", "squares", "star", "f")]
    del module, spec
    gc.collect()
    assert [r() for r in refs] == [None] * 4


def test_jitted_transforms_are_freed_with_their_function(tmp_path):
    pytest.importorskip("numba")
    module = _module(tmp_path, "cache_user_jit", 2)
    refs = [weakref.ref(module.f0), weakref.ref(dt.grad(module.f0, jit=True))]
    assert dt.grad(module.f0, jit=True) is refs[1]()
    del module
    gc.collect()
    assert all(r() is None for r in refs)


def test_the_same_function_hits_the_cache(tmp_path):
    module = _module(tmp_path, "cache_user_hits", 2)
    df = dt.grad(module.f0)
    assert dt.grad(module.f0) is df
    assert dt.grad(module.f0, argnums=0) is df  # the same options, spelled out
    assert dt.grad(module.f1) is not df
    assert dt.vjp(module.f0) is not df and dt.vjp(module.f0) is dt.vjp(module.f0)
    assert dt.jvp(module.f0) is dt.jvp(module.f0) and dt.hvp(module.f0) is dt.hvp(module.f0)
    assert dt.grad(module.f0, optimize=False) is not df


def test_a_wrapper_made_by_functools_wraps_has_its_own_cache(tmp_path):
    module = _module(tmp_path, "cache_user_wraps", 1)
    dt.grad(module.f0)

    @functools.wraps(module.f0)  # copies f0's __dict__, and so its cache, into the wrapper
    def wrapper(x):
        return module.f0(x)

    assert cache_on(wrapper) is not cache_on(module.f0)
    assert not cache_on(wrapper)


def test_pickling_the_cache_carries_nothing(tmp_path):
    module = _module(tmp_path, "cache_user_pickle", 1)
    dt.grad(module.f0)
    assert cache_on(module.f0)
    assert pickle.loads(pickle.dumps(cache_on(module.f0))) == {}
