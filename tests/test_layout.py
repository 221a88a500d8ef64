"""The repository layout (README "Layout", docs/internals.md): every import runs downward.

Reads every module of `lib/` (the package `dualtape`) and `transforms/` (`dualtape.transforms`)
with `ast`, collects all of its imports, at module top and inside functions alike, and checks
that the module graph has no cycle, that the floors of `lib/` only import the floors below
them, and that the source transformer uses the registry, never an engine's internals
(module sizes and names: tests/test_hygiene.py).
"""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = {"dualtape": ROOT / "lib", "dualtape.transforms": ROOT / "transforms"}

# The floors of lib/, bottom up: a module may import its own floor and the floors below.
# (`dualtape/__init__.py` and `__main__.py` sit above them all; transforms/ beside testing.)
FLOORS = ["core", "ops", "reverse", "forward", "batching", "sparsity", "functional", "custom", "surface", "optimizers",
          "keras", "testing"]
ENGINES = ("dualtape.reverse", "dualtape.forward")


def _modules():
    """{module name: (path, is a package)} for every .py file of the two packages."""
    found = {}
    for package, base in PACKAGES.items():
        for path in sorted(base.rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if package == "dualtape" and parts[0] == "transforms":
                continue  # an editable checkout's link to transforms/
            is_package = parts[-1] == "__init__"
            name = ".".join([package] + (parts[:-1] if is_package else parts))
            found[name] = (path, is_package)
    return found


MODULES = _modules()


def _known(name):
    """The longest prefix of `name` that is one of our modules, or None."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _targets(module, is_package, node):
    """The modules an import statement runs (the package itself for `from pkg import attr`)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - node.level + 1]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module
    return [f"{source}.{alias.name}" if f"{source}.{alias.name}" in MODULES else source
            for alias in node.names]


def import_graph():
    """{module: {imported module: line}}, over every import statement in the module."""
    graph = {}
    for module, (path, is_package) in MODULES.items():
        edges = {}
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _targets(module, is_package, node):
                    known = _known(target)
                    if known and known != module:
                        edges.setdefault(known, node.lineno)
                        # importing a.b.c runs a/b/__init__ first: an edge to each package on
                        # the way that is not one of the importer's own (the root is run first
                        # by every import, and imports everything: it is the top)
                        parts = known.split(".")
                        for n in range(2, len(parts)):
                            package = ".".join(parts[:n])
                            if package != module and package in MODULES and not module.startswith(package + "."):
                                edges.setdefault(package, node.lineno)
        graph[module] = edges
    return graph


def _cycle(graph):
    """One import cycle as a list of modules, or None."""
    state = {}

    def visit(module, stack):
        state[module] = "open"
        stack.append(module)
        for target in graph[module]:
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state:
                found = visit(target, stack)
                if found:
                    return found
        stack.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module, [])
            if found:
                return found
    return None


def _floor(module):
    parts = module.split(".")
    if parts[:2] == ["dualtape", "transforms"]:
        return "transforms"
    return parts[1] if len(parts) > 1 and parts[1] in FLOORS else None


def test_the_import_graph_has_no_cycle():
    cycle = _cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_floors_import_only_downward():
    wrong = []
    for module, edges in import_graph().items():
        floor = _floor(module)
        if floor is None or floor == "transforms":
            continue
        for target, line in edges.items():
            target_floor = _floor(target)
            if target == "dualtape" or target_floor == "transforms" and floor != "testing":
                wrong.append(f"{module}:{line} imports {target}")
            elif target_floor in FLOORS and FLOORS.index(target_floor) > FLOORS.index(floor):
                wrong.append(f"{module}:{line} ({floor}) imports {target} ({target_floor}), a floor above")
    assert not wrong, "\n".join(wrong)


def test_transforms_use_the_registry_not_the_engines():
    wrong = [f"{module}:{line} imports {target}"
             for module, edges in import_graph().items() if _floor(module) == "transforms"
             for target, line in edges.items()
             if target.startswith(ENGINES) or target == "dualtape" or _floor(target) == "testing"]
    assert not wrong, "\n".join(wrong)


def test_the_graph_sees_imports_inside_functions():
    graph = import_graph()
    assert "dualtape.core.dnp" in graph["dualtape.core.rulekit"]
    assert "dualtape.transforms.runtime" in graph["dualtape.transforms.ir.naming"]  # in a function
    assert graph["dualtape.reverse.tape"], "the reverse engine imports its floor"
    # `from ..core.errors import ...` also runs core/__init__: the package is an edge too
    assert "dualtape.core" in graph["dualtape.reverse.tensor"]
    cycle = _cycle({"a": {"b": 1}, "b": {"a": 2}})
    assert cycle == ["a", "b", "a"]
