"""The house rules of lib/ and transforms/ that a reader relies on (docs/internals.md, "Layout").

- Modules are split by meaning: none over 600 lines, none named for being left over
  (`*_more`, `*_util(s)`, `*_helpers`).
- A module's underscore names are its own: no module imports another module's underscore
  name (nor reads one as `module._name`), and no module has an underscore name itself.
- The transformer is a pipeline of stage sub-packages under a short top level.
- The transformer works on trees: outside the front end and the templates, at most two
  calls parse text, and at most one module imports `re` (the jit, reading numba's messages).
- Comments explain the rule, not its history: no "issue N" in code.
"""

import ast
import re

from test_layout import MODULES, ROOT

MAX_LINES = 600
TRANSFORMS = ROOT / "transforms"
PARSERS = {"parse", "parse_expr", "parse_stmt", "parse_stmts", "literal_eval"}
PARSING_STAGES = ("dualtape.transforms.frontend", "dualtape.transforms.templates")


def _trees():
    return {name: (path, ast.parse(path.read_text(), str(path))) for name, (path, _) in MODULES.items()}


TREES = _trees()


def _resolve(module, is_package, node):
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def underscore_imports():
    """`from .x import _name`, `from . import _module`, and `x._name` of an imported module x."""
    found = []
    for module, (path, tree) in TREES.items():
        is_package = MODULES[module][1]
        imported_modules = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _resolve(module, is_package, node)
                if not source.startswith("dualtape"):
                    continue
                for alias in node.names:
                    if _private(alias.name):
                        found.append(f"{module}:{node.lineno} imports {source}.{alias.name}")
                    if f"{source}.{alias.name}" in MODULES:
                        imported_modules.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("dualtape") and any(_private(p) for p in alias.name.split(".")):
                        found.append(f"{module}:{node.lineno} imports {alias.name}")
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in imported_modules and _private(node.attr)):
                found.append(f"{module}:{node.lineno} reads {node.value.id}.{node.attr}")
    return found


def test_no_module_over_the_line_limit():
    long = {name: n for name, (path, _) in MODULES.items() if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by meaning): {long}"


def test_no_module_is_named_for_being_left_over():
    bad = [name for name in MODULES if re.search(r"(_more|_utils?|_helpers)$", name.rpartition(".")[2])
           or _private(name.rpartition(".")[2])]
    assert not bad, bad


def test_no_module_imports_another_modules_underscore_names():
    found = underscore_imports()
    assert not found, f"{len(found)} imports of underscore names:\n" + "\n".join(found)


def test_the_transformer_is_a_pipeline_of_stage_packages():
    top = sorted(p.name for p in TRANSFORMS.glob("*.py"))
    packages = sorted(p.name for p in TRANSFORMS.iterdir() if (p / "__init__.py").exists())
    assert len(top) <= 6, top
    assert len(packages) >= 5, packages


def test_passes_work_on_trees():
    parses, regexes = [], []
    for module, (path, tree) in TREES.items():
        if not module.startswith("dualtape.transforms"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
                if "re" in names:
                    regexes.append(module)
            if isinstance(node, ast.Call) and not module.startswith(PARSING_STAGES):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in PARSERS:
                    parses.append(f"{module}:{node.lineno}")
    assert len(parses) <= 2, f"{len(parses)} calls parse text outside the front end and templates:\n" + "\n".join(parses)
    assert len(set(regexes)) <= 1, f"modules importing re: {sorted(set(regexes))}"


def test_comments_explain_rules_not_history():
    found = [f"{module}:{i}" for module, (path, _) in MODULES.items()
             for i, line in enumerate(path.read_text().splitlines(), 1) if re.search(r"\bissues? \d+", line)]
    assert not found, f"{len(found)} lines name an issue:\n" + "\n".join(found[:40])
