"""The documentation site (mkdocs.yml: the guides and the API reference) builds with
warnings as errors, and the API reference names public import paths only.

The build needs the site extra (`pip install -e ".[test,site]"`, what CI installs). Where
mkdocs is missing the build test is skipped, except under CI (CI=true), where a skip would
hide a broken site: there it fails.
"""

import importlib
import importlib.util
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
API_PAGES = sorted((ROOT / "docs" / "api").glob("*.md"))
HOOKS = ROOT / "docs" / "hooks"

# The modules an API page may name objects in: the public ones. Everything else in lib/
# and transforms/ is an implementation detail that may move.
PUBLIC_MODULES = {"dualtape", "dualtape.autodiff", "dualtape.testing", "dualtape.transforms",
                  "dualtape.optimizers", "dualtape.optimizers.schedules"}

_DIRECTIVE = re.compile(r"^:::\s*(\S+)", re.MULTILINE)


def _identifiers():
    return [(page.name, ident) for page in API_PAGES
            for ident in _DIRECTIVE.findall(page.read_text(encoding="utf-8"))]


_RENDERED = re.compile(r'doc doc-object doc-(\w+)">\s*<h\d[^>]*id="([^"]+)"')


def _runtime_kind(identifier):
    """What the API reference should show `identifier` as: what importing it gives."""
    parts = identifier.split(".")
    cut = max(n for n in range(1, len(parts) + 1) if ".".join(parts[:n]) in PUBLIC_MODULES)
    obj = importlib.import_module(".".join(parts[:cut]))
    for attribute in parts[cut:]:
        obj = getattr(obj, attribute)
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "class"
    return "function" if inspect.isroutine(obj) else "attribute"


def _load_hook(name):
    spec = importlib.util.spec_from_file_location(f"_docs_hook_{name}", HOOKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_pages_found():
    names = {page.stem for page in API_PAGES}
    assert {"functional", "tape", "forward", "transforms", "testing", "optimizers"} <= names, names
    assert len(_identifiers()) > 50


@pytest.mark.parametrize("page, identifier", _identifiers(), ids=lambda v: str(v))
def test_api_reference_names_public_paths(page, identifier):
    """`::: dualtape.x.y`: module `dualtape.x` is public and `y` is an attribute of it."""
    parts = identifier.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:cut])
        if module_name in PUBLIC_MODULES:
            break
    else:
        raise AssertionError(f"{page}: {identifier} is not under a public module {sorted(PUBLIC_MODULES)}")
    obj = importlib.import_module(module_name)
    for attribute in parts[cut:]:
        assert hasattr(obj, attribute), f"{page}: {identifier}: no attribute {attribute!r}"
        obj = getattr(obj, attribute)


def test_doctest_fences():
    fence = _load_hook("doctest_fences").fence_doctests
    text = "Intro.\n>>> a = [1] * 2\n... b\nout\n\nmore\n```\n>>> kept <x>\n```\n"
    assert fence(text) == ("Intro.\n\n```pycon\n>>> a = [1] * 2\n... b\nout\n```\n\nmore\n"
                           "```\n>>> kept <x>\n```\n")
    # plain text is escaped for Markdown, code (spans, indented blocks) and Args items are not
    text = "<v, J u> for *args, `x * y`, x ** 2\n\n    def f(*args): return x ** 2\n\nArgs:\n    *xs: the <x>\n"
    assert fence(text) == ("&lt;v, J u> for \\*args, `x * y`, x \\*\\* 2\n\n"
                           "    def f(*args): return x ** 2\n\nArgs:\n    *xs: the &lt;x>\n")


def test_source_tree_follows_package_dir(tmp_path):
    """The hook lays out lib/ as dualtape/ and transforms/ as dualtape/transforms/."""
    tree = _load_hook("source_tree").link_tree(tmp_path)
    assert (tree / "dualtape" / "__init__.py").resolve() == ROOT / "lib" / "__init__.py"
    assert (tree / "dualtape" / "transforms" / "__init__.py").resolve() == ROOT / "transforms" / "__init__.py"


def test_site_builds_strict(tmp_path):
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        try:
            importlib.import_module(module)
        except ImportError:
            if os.environ.get("CI"):
                pytest.fail(f"{module} is not installed: CI installs the docs extra "
                            "(pip install -e \".[test,site]\") so the site build is checked")
            pytest.skip(f"{module} is not installed (pip install -e \".[site]\")")
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(site)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    log = result.stdout + result.stderr
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{log[-6000:]}"
    assert "WARNING" not in log, log[-6000:]
    functional = (site / "api" / "functional" / "index.html").read_text(encoding="utf-8")
    for name in ("dualtape.grad", "dualtape.value_and_grad", "dualtape.linearize", "dualtape.hvp"):
        assert f'id="{name}"' in functional, name
    testing = (site / "api" / "testing" / "index.html").read_text(encoding="utf-8")
    assert 'id="dualtape.testing.check_grads"' in testing
    transforms = (site / "api" / "transforms" / "index.html").read_text(encoding="utf-8")
    assert 'id="dualtape.transforms.grad"' in transforms
    rendered = {}  # id -> kind ("function", "class", "module", "attribute") on the API pages
    for page in API_PAGES:
        html_path = site / "api" / ("" if page.stem == "index" else page.stem) / "index.html"
        html = html_path.read_text(encoding="utf-8")
        rendered.update((ident, kind) for kind, ident in _RENDERED.findall(html))
    for page, identifier in _identifiers():
        assert rendered.get(identifier) == _runtime_kind(identifier), (
            f"{page}: {identifier} is documented as a {rendered.get(identifier)}, "
            f"but importing it gives a {_runtime_kind(identifier)}")
    for guide in ("basics", "forward_mode", "transforms", "testing"):
        assert (site / guide / "index.html").exists(), guide
    assert (site / "plots" / "hessian.png").exists()
