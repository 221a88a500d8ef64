"""jit=True's disk cache (transforms/jit/disk_cache.py): a fresh transform of code numba compiled
before loads its machine code; a changed global, helper or setting is a different file, never a
stale load. (Scalar code compiles natively in milliseconds, uncached: these tests send it to
numba, whose cache they test, with DUALTAPE_JIT_NATIVE=0.)"""

import math
import os
import pathlib
import types

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.transforms.jit import disk_cache, native

numba = pytest.importorskip("numba")

SCALE = 2.0


def scaled(x, steps):
    for _ in range(steps):
        x = math.sin(x) * SCALE + 0.1 * x
    return x


def helper_of_mine(x):
    return x * 3.0


def calls_a_user_function(x):
    return helper_of_mine(x) * x


def fresh(f):
    """A new function object with f's code (a transform of it starts from nothing)."""
    return types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__)


def by_hand(x, steps, scale):
    xs = []
    for _ in range(steps):
        xs.append(x)
        x = math.sin(x) * scale + 0.1 * x
    g = 1.0
    for x in reversed(xs):
        g *= math.cos(x) * scale + 0.1
    return g


@pytest.fixture(autouse=True)
def numba_compiles_scalar_code(monkeypatch):
    monkeypatch.setenv(native.ENV, "0")


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(disk_cache.ENV, str(tmp_path))
    return tmp_path


def _stats(g):
    return g._last.fn.stats


def test_a_fresh_transform_loads_what_an_earlier_one_compiled(folder):
    first = dt.grad(fresh(scaled), jit=True)
    assert first(0.3, 50) == pytest.approx(by_hand(0.3, 50, SCALE), rel=1e-12)
    assert sum(_stats(first).cache_misses.values()) == 1 and not _stats(first).cache_hits
    assert any(p.suffix == ".nbi" for p in (folder / "__pycache__").iterdir())
    second = dt.grad(fresh(scaled), jit=True)
    assert second(0.3, 50) == first(0.3, 50)
    assert sum(_stats(second).cache_hits.values()) == 1 and not _stats(second).cache_misses
    path = pathlib.Path(second._last.filename)
    assert path.parent == folder and path.read_text() == second.source


def test_a_changed_global_is_a_different_file_not_a_stale_load(folder, monkeypatch):
    before = dt.grad(fresh(scaled), jit=True)
    before(0.3, 20)
    monkeypatch.setattr(__import__(__name__), "SCALE", 1.5)  # numba froze 2.0 into `before`'s code
    after = dt.grad(fresh(scaled), jit=True)
    assert after(0.3, 20) == pytest.approx(by_hand(0.3, 20, 1.5), rel=1e-12)
    assert after._last.filename != before._last.filename
    assert not _stats(after).cache_hits


def test_a_global_without_a_key_compiles_uncached(folder):
    g = dt.grad(calls_a_user_function, jit=True)  # (numba compiles helper_of_mine along: no key for it)
    assert g(2.0) == pytest.approx(12.0)
    assert g._last.filename.startswith("<dualtape jit")
    assert not list(folder.glob("*.py"))


def test_off(tmp_path, monkeypatch):
    monkeypatch.setenv(disk_cache.ENV, "0")
    assert disk_cache.directory() is None
    g = dt.grad(fresh(scaled), jit=True)
    assert g(0.3, 5) == pytest.approx(by_hand(0.3, 5, SCALE), rel=1e-12)
    assert g._last.filename.startswith("<dualtape jit")


def test_an_unwritable_folder_turns_it_off(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv(disk_cache.ENV, str(blocked / "jit"))
    assert disk_cache.directory() is None


def test_value_keys():
    helpers = disk_cache._helpers()
    key = disk_cache.value_key
    assert key(2.0, helpers) != key(2, helpers) != key(True, helpers)
    assert key(np.float64(0.1), helpers) != key(np.float64(0.2), helpers)
    assert key(np.float64(0.1), helpers) != key(0.1, helpers) != key(np.float32(0.1), helpers)
    a = np.arange(4.0)
    assert key(a, helpers) == key(a.copy(), helpers) != key(a[::-1].copy(), helpers)
    assert key(a.astype(np.float32), helpers) != key(a, helpers)
    assert key(np.zeros(disk_cache.MAX_ARRAY_BYTES // 8 + 1), helpers) is None  # (too large to hash each call)
    assert key((1.0, a), helpers) is not None and key((1.0, object()), helpers) is None
    assert key(math, helpers) == "module:math"
    assert key(helper_of_mine, helpers) is None
    assert key(np.array([object()]), helpers) is None


def test_the_key_reads_only_the_names_the_code_reads():
    ns = {"np": np, "C": 1.0, "unrelated": object()}
    assert disk_cache.key("x = C", ns, {"C", "np"}) is not None
    assert disk_cache.key("x = C", ns, {"C", "unrelated"}) is None
    assert disk_cache.key("x = C", ns, {"C"}) != disk_cache.key("x = C", dict(ns, C=2.0), {"C"})
    assert disk_cache.key("x = C", ns, {"C"}) != disk_cache.key("x = C + 0", ns, {"C"})


def test_scalar_code_probes_untraced_and_array_code_still_fuses(folder):
    from dualtape.transforms.jit import fusion
    assert not fusion.may_hold_arrays([], {"math": math, "C": 2.0}, (0.3, 5))
    assert fusion.may_hold_arrays([], {}, (np.ones(3),))
    assert fusion.may_hold_arrays([], {}, ([np.ones(3)],))

    def vector(x):
        return np.sum(np.sin(x) * 2.0 + x * x)
    g = dt.grad(vector, jit=True)
    x = np.linspace(0.0, 1.0, 5)
    np.testing.assert_allclose(g(x), 2.0 * np.cos(x) + 2 * x, rtol=1e-13)
    assert "_fz_kernel_" in g.source


def test_environment_variable_name_is_documented():
    docs = pathlib.Path(__file__).parent.parent / "docs"
    assert any(disk_cache.ENV in p.read_text() for p in docs.glob("*.md"))
    assert os.environ.get(disk_cache.ENV)  # (conftest: the suite writes into a folder of its own)


def _function_in(namespace_name, source, name):
    """`name` defined by `source` in a fresh globals dict whose __name__ is `namespace_name`
    (code exec'd in a notebook or a dict: no module numba could import by that name)."""
    import linecache
    filename = f"<cell {next(_CELLS)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": namespace_name, "math": math, "np": np}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


_CELLS = __import__("itertools").count()


def test_a_function_of_a_module_numba_cannot_import_loads_from_the_cache(folder):
    source = "def f(x):\n    return math.sin(x) * x\n"
    first = dt.grad(_function_in("<dynamic>", source, "f"), jit=True)
    first(0.5)
    second = dt.grad(_function_in("<dynamic>", source, "f"), jit=True)
    assert second(0.5) == pytest.approx(math.cos(0.5) * 0.5 + math.sin(0.5), rel=1e-14)
    assert sum(_stats(second).cache_hits.values()) == 1


def test_an_attribute_of_another_module_is_keyed_by_its_value(folder):
    config = types.ModuleType("dualtape_test_config")
    config.K = 2.0
    source = "def f(x):\n    return config.K * x * x\n"

    def make():
        f = _function_in("user", source, "f")
        f.__globals__["config"] = config
        return dt.grad(f, jit=True)
    assert make()(3.0) == pytest.approx(12.0)
    config.K = 5.0  # numba froze 2.0 into the first module's code
    assert make()(3.0) == pytest.approx(30.0)
    config.sub = math  # an attribute that is a module: no key, compiled uncached
    assert disk_cache.key(source, {"config": config}, {"config"}, {("config", "sub")}) is None


def test_a_cache_file_numba_cannot_load_is_compiled_again(folder):
    g = dt.grad(fresh(scaled), jit=True)
    want = g(0.3, 7)
    for data in (folder / "__pycache__").glob("*.nbc"):
        data.write_bytes(b"not a pickle")
    again = dt.grad(fresh(scaled), jit=True)
    assert again(0.3, 7) == want
