"""List comprehensions over differentiated values, written as the loop that builds the list:

    ys = [x * w[i] for i in range(n) if i != 2]

becomes

    ys = []
    for i in range(n):
        if i != 2:
            ys.append(x * w[i])

which list_methods.py then writes as `ys = ys + [x * w[i]]`. A comprehension inside a larger
expression builds a list of its own first (`_items = []; ...; s = np.sum(np.stack(_items))`);
nested `for`s become nested loops and a comprehension in the item a loop of its own (a list of
lists). A comprehension's variable does not leak in Python: one whose name the function uses
elsewhere is renamed. A comprehension Python may not evaluate (inside `a if c else b`, `a and
b`, a lambda or a generator) stays as written, and so refused."""

from ..ir import syntax
from ..ir.syntax import nodes as n
from ..ir.naming import GENERATED_LOCALS, unused_name
from .desugar import located, stmt_at

_SCOPES = (n.ListComp, n.SetComp, n.DictComp, n.GeneratorExp, n.Lambda, n.IfExp, n.BoolOp)


def hoist_comprehensions(fn_node, varied, taken):
    """Write the differentiated list comprehensions of `fn_node` as loops (see the module
    docstring); `taken` (the function's names) gets the new ones. True if anything changed."""
    changed = False
    for node in list(syntax.walk(fn_node)):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], n.stmt):
                new = []
                for s in block:
                    new += _hoisted(s, varied, taken, fn_node)
                changed |= len(new) != len(block) or any(a is not b for a, b in zip(new, block))
                block[:] = new
    return changed


def _own_expressions(s):
    """The expressions a statement evaluates once, before any statement inside it."""
    if isinstance(s, (n.Assign, n.Expr, n.Return, n.AugAssign, n.AnnAssign)):
        return [s.value] if s.value is not None else []
    if isinstance(s, n.If):
        return [s.test]
    if isinstance(s, n.For):
        return [s.iter]
    return []


def _comprehensions(expr):
    """The list comprehensions of `expr` that Python evaluates whenever it evaluates `expr`."""
    out, stack = [], [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, n.ListComp):
            out.append(node)
            continue
        if isinstance(node, _SCOPES):
            continue
        stack.extend(reversed([c for c in _children(node)]))
    return out


def _children(node):
    for field in node._fields:
        value = getattr(node, field, None)
        if isinstance(value, list):
            yield from (v for v in value if isinstance(v, syntax.AST))
        elif isinstance(value, syntax.AST):
            yield value


def _hoisted(s, varied, taken, fn_node, outer=frozenset()):
    comps = [c for e in _own_expressions(s) for c in _comprehensions(e) if varied(c)]
    if not comps or any(g.is_async for c in comps for g in c.generators):
        return [s]
    out = []
    for comp in comps:
        reads = syntax.load_names(comp)
        whole = (isinstance(s, n.Assign) and s.value is comp and len(s.targets) == 1
                 and isinstance(s.targets[0], n.Name) and s.targets[0].id not in reads)
        name = s.targets[0].id if whole else unused_name("_items", taken)
        taken.add(name)
        inside = outer | {id(x) for x in syntax.walk(comp)}
        _rename_variables(comp, fn_node, taken, inside)
        out += _loop(comp, name, s, varied, taken, fn_node, inside)
        if whole:
            return out
        _replace(s, comp, syntax.name(name))
    return out + [s]


def _rename_variables(comp, fn_node, taken, inside):
    """Give the comprehension's variables names used nowhere else in the function (`inside`:
    the nodes of the comprehension being written out, this one's or the one around it)."""
    outside = {x.id for x in syntax.walk(fn_node) if isinstance(x, n.Name) and id(x) not in inside}
    for gen in comp.generators:
        for var in syntax.store_names(gen.target):
            if var in outside:
                new = unused_name("_" + var, taken | GENERATED_LOCALS)
                taken.add(new)
                for x in syntax.walk(comp):
                    if isinstance(x, n.Name) and x.id == var:
                        x.id = new


def _loop(comp, name, s, varied, taken, fn_node, inside):
    """`name = []` and the loop appending each item (nested comprehensions hoisted in it)."""
    body = [stmt_at("YS.append(ITEM)", s, YS=syntax.name(name), ITEM=comp.elt)]
    body = _hoisted(body[0], varied, taken, fn_node, inside)
    for gen in reversed(comp.generators):
        for test in reversed(gen.ifs):
            branch = stmt_at("if TEST:\n    pass", s, TEST=test)
            branch.body = body
            body = [branch]
        loop = stmt_at("for TARGET in ITER:\n    pass", s, TARGET=gen.target, ITER=gen.iter)
        loop.body = body
        body = [loop]
    return [stmt_at("YS = []", s, YS=syntax.name(name, store=True))] + body


def _replace(s, old, new):
    located(new, s)
    for node in syntax.walk(s):
        for field in node._fields:
            value = getattr(node, field, None)
            if value is old:
                setattr(node, field, new)
                return
            if isinstance(value, list):
                for i, v in enumerate(value):
                    if v is old:
                        value[i] = new
                        return
