"""Which calls change their arguments: list/array mutator methods, NumPy functions that
write a value argument (`np.full`, ...), and, through user functions and their globals,
which parameters a call may mutate (`mutated_parameters`). The normalizer refuses such calls."""

import inspect

import numpy as np

from ..ir import syntax
from ..calls import opmap
from ..ir.syntax import nodes as n
from .parse import source_tree

MUTATORS = {"append", "extend", "insert", "pop", "remove", "sort", "reverse", "clear", "fill",
             "update", "setdefault", "__setitem__", "resize", "put", "itemset"}


# constructors of no derivative in the registry whose result holds (a function of) some arguments
_VALUE_PARAMETERS = {np.full: ((1, "fill_value"),), np.full_like: ((1, "fill_value"),),
                     np.linspace: ((0, "start"), (1, "stop")), np.arange: ((0, "start"), (1, "stop"), (2, "step"))}


# NumPy functions that write into their first argument and return None
_NUMPY_WRITERS = {np.put_along_axis: "dnp.put_along_axis(a, indices, values, axis)", np.put: None, np.place: None,
                  np.putmask: None, np.copyto: None, np.fill_diagonal: None}


def in_place_numpy(obj):
    """(what, fix) refusing a NumPy function that writes into its argument, or None."""
    if not opmap.hashable(obj) or obj not in _NUMPY_WRITERS:
        return None
    functional = _NUMPY_WRITERS[obj]
    return (f"`np.{obj.__name__}` writes into its first argument in place, which the transformer cannot "
            "differentiate (the write would be dropped from the derivative)",
            f"Rebind to dualtape's functional spelling, which returns a new array: `a = {functional}` "
            "(from dualtape import dnp)." if functional else
            "Build a new array instead (np.where, `a[index] = v` on a local array, np.concatenate).")


def changed_names(node, local_names, resolve):
    """The local names whose objects a statement changes in place: the receiver of a mutator
    method (`acc.append(v)`, `xs[0].sort()`; not `np.sort(v)`, a module's function) and the
    arguments a called user function changes (`push(acc, v)`: `mutated_parameters`)."""
    out = set()
    for call in syntax.walk(node):
        if not isinstance(call, n.Call):
            continue
        if isinstance(call.func, n.Attribute) and call.func.attr in MUTATORS and _root(call.func.value) in local_names:
            out.add(_root(call.func.value))
            continue
        obj = resolve(call.func)
        changed = mutated_parameters(obj) if obj is not None and opmap.is_user_function(obj) else {}
        if not changed:
            continue
        try:
            bound = inspect.signature(obj).bind_partial(*call.args, **{k.arg: k.value for k in call.keywords if k.arg})
        except (TypeError, ValueError):
            continue
        out |= {_root(arg) for name, arg in bound.arguments.items() if name in changed} & set(local_names)
    return out


def _root(node):
    while isinstance(node, (n.Subscript, n.Attribute)):
        node = node.value
    return node.id if isinstance(node, n.Name) else None


def value_arguments(obj, call):
    """The arguments of `call` whose values end up in the result of a constructor `obj`."""
    params = _VALUE_PARAMETERS.get(obj, ()) if opmap.hashable(obj) else ()
    out = [call.args[i] for i, _ in params if i < len(call.args)]
    return out + [k.value for k in call.keywords if k.arg in {name for _, name in params}]


def mutated_parameters(fn, depth=0):
    """{parameter: source line} of the parameters a user function changes in place
    (`xs.append(v)`, `xs[i] = v`, `xs += [v]`, or passing `xs` to a function that does)."""
    try:
        tree = source_tree(fn).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return {}
    if not isinstance(tree, n.FunctionDef):
        return {}
    params = [a.id for a in tree.args.posonlyargs + tree.args.args + tree.args.kwonlyargs]
    found, rebound = {}, {}  # rebound: the first line that binds the name to another object
    for node in syntax.walk(tree):
        if isinstance(node, n.Name) and isinstance(node.ctx, n.Store) and node.id in params:
            rebound[node.id] = min(rebound.get(node.id, node.lineno), node.lineno)

    def root(node):
        while isinstance(node, (n.Subscript, n.Attribute)):
            node = node.value
        return node.id if isinstance(node, n.Name) else None

    # local names that share a parameter's object (`a = acc`, `inner = pair[0]`): a change
    # through them changes the argument (`a = acc; a.append(v)` changes acc)
    alias, stored = {}, set()
    for node in syntax.walk(tree):
        if isinstance(node, n.Name) and isinstance(node.ctx, n.Store):
            stored.add(node.id)
    for _ in range(4):
        for node in syntax.walk(tree):
            if (isinstance(node, n.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], n.Name)
                    and node.targets[0].id not in params and (isinstance(node.value, n.Name) or (
                        isinstance(node.value, n.Subscript) and not isinstance(node.value.slice, n.Slice)))):
                source = root(node.value)
                source = alias.get(source, source)
                if source in params:
                    alias.setdefault(node.targets[0].id, source)

    def owner(name):
        """The parameter `name` changes in place, `global:<name>` for a module-level container
        the function does not bind itself, or None."""
        if name in alias:
            return alias[name]
        if name in params or name is None:
            return name
        if name not in stored and isinstance(fn.__globals__.get(name), (list, dict, set, np.ndarray)):
            return f"global:{name}"
        return None

    for node in syntax.walk(tree):
        hit = None
        if isinstance(node, n.Call) and isinstance(node.func, n.Attribute) and node.func.attr in MUTATORS:
            hit = root(node.func.value)
        elif isinstance(node, (n.Assign, n.AugAssign, n.AnnAssign)):
            targets = node.targets if isinstance(node, n.Assign) else [node.target]
            for t in targets:
                if isinstance(t, (n.Subscript, n.Attribute)):
                    hit = root(t)
                elif isinstance(node, n.AugAssign) and isinstance(node.value, (n.List, n.Tuple, n.ListComp)):
                    hit = root(t)  # `xs += [v]` extends the list in place
        elif isinstance(node, n.Call) and depth < 8:
            callee = opmap.resolve(node.func, set(params), fn.__globals__)
            if callee is not None and opmap.is_user_function(callee) and callee is not fn:
                inner = mutated_parameters(callee, depth + 1)
                try:
                    bound = inspect.signature(callee).bind_partial(*node.args, **{
                        k.arg: k.value for k in node.keywords if k.arg})
                except TypeError:
                    bound = None
                for name, arg in (bound.arguments.items() if bound else ()):
                    target = owner(root(arg)) if isinstance(arg, (n.Name, n.Subscript, n.Attribute)) else None
                    if name in inner and target is not None and node.lineno <= rebound.get(target, float("inf")):
                        found.setdefault(target, inner[name])
                for name, line in inner.items():
                    if name.startswith("global:"):
                        found.setdefault(name, line)
        hit = owner(hit)
        if hit is not None and getattr(node, "lineno", 0) <= rebound.get(hit, float("inf")):
            found.setdefault(hit, syntax.unparse(node).split("\n")[0])
    return {k: v for k, v in found.items() if k in params or k.startswith("global:")}
