"""Every ```python block of docs/**/*.md and README.md runs, so the docs cannot rot.

Each file is one notebook: its blocks run in order in one fresh namespace. Blocks fenced
```text, ```bash (or anything but python) are shown, not run. Where a page shows printed
output, the block itself asserts it. Files are found by glob when the tests are collected,
so new pages are picked up without touching this module.
"""

import importlib.util
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import dualtape as tf
from dualtape import registry

ROOT = Path(__file__).resolve().parent.parent
DOC_FILES = sorted((ROOT / "docs").rglob("*.md")) + sorted(ROOT.glob("README.md"))

# A fence opens with ```lang at the start of a line and closes with a bare ``` line.
_FENCE = re.compile(r"^```[ \t]*([\w+-]*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


# Pages importing these are skipped where the optional package is missing.
OPTIONAL_IMPORTS = {"matplotlib": "plots; install the docs extra",
                    "sklearn": "loads a scikit-learn dataset; install the train extra",
                    "dask": "runs on Dask arrays; install the dask extra",
                    "scipy": "differentiates SciPy's functions; install the scipy extra"}


def python_blocks(text):
    """The source of each ```python (or ```py) block, in order, with its line number."""
    blocks = []
    for match in _FENCE.finditer(text):
        if match.group(1).lower() in ("python", "py", "python3"):
            line = text.count("\n", 0, match.start(2)) + 1
            blocks.append((line, match.group(2)))
    return blocks


@pytest.fixture
def isolated_globals(monkeypatch):
    """Reset what a page may change globally: layer names, seeds, registrations, figures."""
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.chdir(ROOT)  # pages use paths relative to the repository root
    tf.keras.backend.clear_session()
    tf.random.set_seed(0)
    np.random.seed(0)
    overrides = dict(registry.GRADIENT_OVERRIDES)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pages warn on purpose (int sources, ...)
            yield
    finally:
        registry.GRADIENT_OVERRIDES.clear()
        registry.GRADIENT_OVERRIDES.update(overrides)
        tf.keras.backend.clear_session()
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")


def _doc_id(path):
    return str(path.relative_to(ROOT))


def test_docs_found():
    assert any(path.name == "basics.md" for path in DOC_FILES), DOC_FILES
    assert any(path.parent.name == "api" for path in DOC_FILES), DOC_FILES  # the API reference


def test_fence_parser():
    text = "x\n```python\na = 1\n```\n```text\nnot run\n```\n```bash\nls\n```\n```python\nb = a\n```\n"
    assert [src for _, src in python_blocks(text)] == ["a = 1\n", "b = a\n"]
    assert [line for line, _ in python_blocks(text)] == [3, 12]


@pytest.mark.parametrize("path", DOC_FILES, ids=_doc_id)
def test_doc_blocks_run(path, isolated_globals):
    blocks = python_blocks(path.read_text(encoding="utf-8"))
    if not blocks:
        pytest.skip(f"{_doc_id(path)} has no python blocks")
    for module, why in OPTIONAL_IMPORTS.items():
        if any(re.search(rf"^\s*(import|from)\s+{module}\b", src, re.MULTILINE) for _, src in blocks):
            pytest.importorskip(module, reason=f"{_doc_id(path)} {why}")
    namespace = {"__name__": "__main__"}
    has_numba = importlib.util.find_spec("numba") is not None
    for number, (line, source) in enumerate(blocks, start=1):
        if "jit=True" in source and not has_numba:
            continue  # compiled gradients need the jit extra (numba); tests/test_jit.py checks the page's source
        try:
            # Padded to the block's line, so tracebacks show the page's own lines.
            code = compile("\n" * (line - 1) + source, str(path), "exec")
            exec(code, namespace)  # noqa: S102 - running the docs is the point
        except Exception as error:
            raise AssertionError(
                f"{_doc_id(path)}: python block {number} (starting at line {line}) failed: "
                f"{type(error).__name__}: {error}") from error


def test_ci_runs_the_readme_test_command():
    """README's quickstart has two commands (the tour, the test suite); .ci/run is the second."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quickstart = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    commands = [src.strip() for lang, src in _FENCE.findall(quickstart) if lang == "bash"]
    assert len(commands) == 2, commands
    ci = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
          if line.strip() and not line.startswith(("#", "set ", "cd "))]
    assert ci == [commands[1]], (ci, commands)


def test_runtime_needs_only_numpy_and_gast():
    """README's dependency sentence: NumPy and gast at run time, nothing else."""
    import tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {re.split(r"[<>=!~\[; ]", dep, maxsplit=1)[0].lower() for dep in project["dependencies"]}
    assert names == {"numpy", "gast"}, names
