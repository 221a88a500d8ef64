"""`append`, `extend`, `insert` and `pop` on a list the function creates, written as the list
operations the transformer differentiates: `ys.append(v)` is `ys = ys + [v]`, `ys.extend([a, b])`
is `ys = ys + [a, b]`, `ys.insert(i, v)` is `ys = ys[:i] + [v] + ys[i:]`, `v = ys.pop()` is
`v = ys[-1]` then `ys = ys[:-1]` (`ys.pop(i)`: `ys[:i] + ys[i:][1:]`).

The rebinding gives the same values as the change in place only while no other name or
container holds the list: a list is rewritten only if every binding of its name makes a new
list (a display, a comprehension, `a + b`, a slice, `list(...)`) and every read of it only
reads (an item, a slice, a loop over it that does not change it, an operand, an argument of a
NumPy or builtin function, the returned value). A list passed to a user function, stored in
another name or container, or a parameter (the caller's list) keeps the normalizer's refusal.

Only lists whose items are differentiated are rewritten (the normalizer refuses those); others
keep their methods (cheap in place, no derivative). A loop appending n items copies O(n^2)
references in all: cheap next to the arrays' arithmetic for the lengths such code has."""

import ast
import builtins

from ..ir import syntax
from ..ir.syntax import nodes as n
from ..calls import opmap
from .desugar import stmt_at

REWRITTEN = ("append", "extend", "insert", "pop")
READERS = ("index", "count", "copy")  # methods that leave the list as it is
_FRESH_CALLS = (builtins.list, builtins.sorted)


def rewrite_list_methods(fn_node, params, varied, resolve):
    """Rewrite the methods of the lists that qualify (see the module docstring) and whose
    items or receiver are differentiated (`varied(expr)`); True if anything changed."""
    parents = {}
    for node in syntax.walk(fn_node):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    names = _candidates(fn_node, params, parents, resolve)
    chosen = set()
    for name, sites in names.items():
        if any(varied(call.func.value) or any(varied(a) for a in call.args) for call, _ in sites):
            chosen.add(name)
    if not chosen:
        return False
    _rewrite(fn_node, chosen)
    return True


def _candidates(fn_node, params, parents, resolve):
    """{name: [(mutating call, its statement)]} of the lists that may be rewritten."""
    uses = {}
    excluded = set(params)
    for node in syntax.walk(fn_node):
        if isinstance(node, (n.Global, n.Nonlocal)):
            excluded |= set(node.names)
        elif isinstance(node, (n.FunctionDef, n.Lambda, n.ClassDef)) and node is not fn_node:
            excluded |= {x.id for x in syntax.walk(node) if isinstance(x, n.Name)}
        elif isinstance(node, n.Name):
            uses.setdefault(node.id, []).append(node)
    sites = {}
    for name, occurrences in uses.items():
        if name in excluded:
            continue
        found, captures = [], []
        if (all(_use_ok(x, parents, resolve, found, captures) for x in occurrences) and found
                and _captured_when_done(name, occurrences, found, captures, parents)):
            sites[name] = found
    changed = True
    while changed:  # `ys.extend(zs)`: zs must be a list that qualifies too
        changed = False
        for name, found in list(sites.items()):
            for call, _ in found:
                items = call.args[0] if call.func.attr == "extend" else None
                items = items.value if _list_slice(items) else items
                if isinstance(items, n.Name) and items.id not in sites:
                    del sites[name]
                    changed = True
                    break
    return sites


def _fresh(value, resolve):
    if isinstance(value, (n.List, n.ListComp, n.BinOp)):
        return True
    if isinstance(value, n.Subscript) and isinstance(value.slice, n.Slice):
        return True
    return isinstance(value, n.Call) and resolve(value.func) in _FRESH_CALLS


def _list_slice(node):
    """`ys[a:b]` of a name (a list when the name is one that qualifies)."""
    return isinstance(node, n.Subscript) and isinstance(node.slice, n.Slice) and isinstance(node.value, n.Name)


def _simple_index(node):
    if isinstance(node, n.UnaryOp) and isinstance(node.op, n.USub):
        node = node.operand
    return isinstance(node, n.Name) or (syntax.is_constant(node) and type(node.value) is int)


def _captured_when_done(name, occurrences, found, captures, parents):
    """Whether the list is put into another list or name (`rows.append(row)`, `ys = row`)
    only once it is built: every change and binding of it lies in the same block as the
    statement that does, between it and the last statement before it that binds the list anew
    (`row = []`): a list of lists built row by row, a comprehension's list given its name."""
    changes = [call for call, _ in found] + [x for x in occurrences if not isinstance(x.ctx, n.Load)]
    for stmt in captures:
        block = next((b for b in (getattr(parents.get(stmt), f, None) for f in ("body", "orelse"))
                      if isinstance(b, list) and any(x is stmt for x in b)), None)
        if block is None:
            return False
        end = next(k for k, x in enumerate(block) if x is stmt)
        starts = [k for k, x in enumerate(block[:end]) if isinstance(x, n.Assign) and len(x.targets) == 1
                  and isinstance(x.targets[0], n.Name) and x.targets[0].id == name]
        if not starts:
            return False
        window = {id(x) for s in block[starts[-1]:end] for x in syntax.walk(s)}
        if not all(id(x) in window for x in changes):
            return False
    return True


def _use_ok(name, parents, resolve, found, captures):
    """Whether one occurrence of a list's name keeps it unshared; mutating calls go to `found`,
    statements putting it into another list (`rows.append(row)`) to `captures`."""
    p = parents.get(name)
    if isinstance(name.ctx, n.Store):
        if isinstance(p, n.Assign) and p.targets == [name]:
            return _fresh(p.value, resolve)
        return (isinstance(p, n.AugAssign) and isinstance(p.op, n.Add)
                and isinstance(p.value, (n.List, n.ListComp)))
    if isinstance(name.ctx, n.Del) or p is None:
        return False
    if isinstance(p, n.Attribute):
        call = parents.get(p)
        if p.attr in READERS:
            return isinstance(call, n.Call) and call.func is p
        if p.attr not in REWRITTEN or not (isinstance(call, n.Call) and call.func is p) or call.keywords:
            return False
        stmt = parents.get(call)
        if p.attr == "pop" and isinstance(stmt, n.Assign) and len(stmt.targets) == 1 and stmt.value is call:
            ok = len(call.args) == 0 or (len(call.args) == 1 and _simple_index(call.args[0]))
        elif isinstance(stmt, n.Expr) and stmt.value is call:
            ok = {"append": len(call.args) == 1 and not isinstance(call.args[0], n.Starred),
                  "extend": len(call.args) == 1 and (isinstance(call.args[0], (n.List, n.Tuple, n.ListComp, n.Name))
                                                     or _list_slice(call.args[0]))
                  and not any(isinstance(e, n.Starred) for e in getattr(call.args[0], "elts", ())),
                  "insert": len(call.args) == 2 and _simple_index(call.args[0])
                  and not isinstance(call.args[1], n.Starred),
                  "pop": len(call.args) == 0 or (len(call.args) == 1 and _simple_index(call.args[0]))}[p.attr]
        else:
            ok = False
        if ok:
            found.append((call, stmt))
        return ok
    if isinstance(p, n.Subscript):
        return p.value is name
    if isinstance(p, (n.BinOp, n.Compare, n.UnaryOp, n.comprehension)):
        return True
    if isinstance(p, n.For):
        return p.iter is name and not any(
            isinstance(x, n.Attribute) and isinstance(x.value, n.Name) and x.value.id == name.id
            and x.attr in REWRITTEN for x in syntax.walk(p))
    if isinstance(p, (n.Return, n.Expr)):
        return True
    if isinstance(p, n.Assign) and p.value is name:  # unpacking reads the items: `a, b = ys`
        if all(isinstance(t, n.Name) for t in p.targets):
            captures.append(p)
            return True
        return all(isinstance(t, (n.Tuple, n.List)) for t in p.targets)
    if isinstance(p, n.Tuple) and isinstance(parents.get(p), n.Return):
        return True
    if (isinstance(p, n.Call) and isinstance(p.func, n.Attribute) and p.func.attr == "append"
            and p.args == [name] and isinstance(parents.get(p), n.Expr)):
        captures.append(parents[p])
        return True
    if isinstance(p, n.keyword):
        p = parents.get(p)
    if isinstance(p, n.Call) and p.func is not name:
        obj = resolve(p.func)
        return obj is not None and not opmap.is_user_function(obj)
    return False


def _rewrite(fn_node, chosen):
    for node in syntax.walk(fn_node):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], n.stmt):
                new = []
                for s in block:
                    new += _statements(s, chosen)
                block[:] = new


def _mutation(s, chosen):
    value = s.value if isinstance(s, (n.Expr, n.Assign)) else None
    if (isinstance(value, n.Call) and isinstance(value.func, n.Attribute) and value.func.attr in REWRITTEN
            and isinstance(value.func.value, n.Name) and value.func.value.id in chosen):
        return value
    return None


def _statements(s, chosen):
    """The statements that replace `s` (a mutating call of a chosen list), else [s]."""
    call = _mutation(s, chosen)
    if call is None:
        return [s]
    ys, method, args = call.func.value, call.func.attr, call.args
    subs = {"YS": syntax.name(ys.id)}
    if method == "append":
        return [stmt_at("YS = YS + [V]", s, V=args[0], **subs)]
    if method == "extend":
        items = args[0]
        if isinstance(items, n.Tuple):
            items = n.List(elts=items.elts, ctx=n.Load())
        return [stmt_at("YS = YS + ITEMS", s, ITEMS=items, **subs)]
    if method == "insert":
        return [stmt_at("YS = YS[:I] + [V] + YS[I:]", s, I=args[0], V=args[1], **subs)]
    index = args[0] if args else syntax.constant(-1)
    out = []
    if isinstance(s, n.Assign):
        out.append(stmt_at("T = YS[I]", s, I=syntax.copy(index), **subs))
        out[0].targets = s.targets
    if syntax.is_constant(index) and index.value == -1 or _is_minus_one(index):
        out.append(stmt_at("YS = YS[:-1]", s, **subs))
    elif syntax.is_constant(index) and index.value >= 0:
        out.append(stmt_at("YS = YS[:I] + YS[J:]", s, I=index, J=syntax.constant(index.value + 1), **subs))
    else:
        out.append(stmt_at("YS = YS[:I] + YS[I:][1:]", s, I=index, **subs))
    return out


def _is_minus_one(node):
    return (isinstance(node, n.UnaryOp) and isinstance(node.op, n.USub) and syntax.is_constant(node.operand)
            and node.operand.value == 1)
