"""MkDocs hook: let mkdocstrings read dualtape's sources where pyproject.toml maps them.

The package `dualtape` lives in `lib/` and `dualtape.transforms` in `transforms/`
(`[tool.setuptools.package-dir]`), so no folder on disk is named `dualtape` and griffe,
which reads sources statically, cannot find the package by its import name. This hook
builds, for each build, a throwaway folder `<tmp>/dualtape/` whose entries are links to
the mapped folders' contents, read from pyproject.toml at build time (so moving modules
inside `lib/` needs no change here), and hands that folder to the python handler as its
search path. The API pages name public import paths only (`dualtape.grad`,
`dualtape.transforms.grad`, `dualtape.testing.check_grads`).
"""

import atexit
import shutil
import tempfile
import tomllib
from pathlib import Path

from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parents[2]


def package_dirs(root=ROOT):
    """{package name: source folder} from pyproject.toml's package-dir, parents first."""
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    mapping = pyproject["tool"]["setuptools"]["package-dir"]
    return {name: root / folder for name, folder in sorted(mapping.items(), key=lambda kv: kv[0].count("."))}


def link_tree(target, root=ROOT):
    """Make `target/<package path>` link to each mapped folder's entries; return `target`."""
    for name, source in package_dirs(root).items():
        dest = target.joinpath(*name.split("."))
        if dest.is_symlink():  # a parent's entry of the same name: the mapping wins
            dest.unlink()
        dest.mkdir(parents=True, exist_ok=True)
        for entry in source.iterdir():
            if entry.name == "__pycache__":
                continue
            link = dest / entry.name
            if link.is_symlink() or link.exists():
                continue
            link.symlink_to(entry, target_is_directory=entry.is_dir())
    return target


@event_priority(100)  # before mkdocstrings reads its handlers' configuration
def on_config(config):
    target = Path(tempfile.mkdtemp(prefix="dualtape-docs-src-"))
    atexit.register(shutil.rmtree, target, ignore_errors=True)
    link_tree(target)
    handlers = config.plugins["mkdocstrings"].config.setdefault("handlers", {})
    python = handlers.setdefault("python", {})
    python["paths"] = [str(target)]
    return config
