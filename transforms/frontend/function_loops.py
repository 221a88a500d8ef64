"""Loops over functions, written out before frontend/functions.py reads the functions:

    for act in (np.tanh, relu):          h = np.tanh(h)           (the loop unrolled: one copy
        h = act(h)                 ->    h = relu(h)               of the body per function)
    acts = (np.tanh, relu); acts[1](h)   relu(h)                   (a constant index)
    for y in map(g, xs): ...             for y_arg in xs: y = g(y_arg); ...
    ys = list(map(g, xs))                ys = []; for ys_arg in xs: ys = ys + [g(ys_arg)]
    ys = list(map(g, [a, b]))            ys = [g(a), g(b)]
    np.stack(list(map(g, xs, ys)))       np.stack([g(a, b) for a, b in zip(xs, ys)])  (elsewhere)

A loop over functions that breaks or continues, or writes its loop variable, is refused.
"""

import builtins
import functools

from ..calls.opmap import resolve
from ..ir import syntax
from ..ir.naming import unused_name
from ..ir.syntax import nodes as n


class FunctionLoops:
    """Rewrites the loops over functions of `values` (a functions.FunctionValues)'s function."""

    def __init__(self, values):
        self.values = values
        node = values.node
        self.defined = {x.name for x in syntax.walk(node) if isinstance(x, n.FunctionDef) and x is not node} | {
            x.targets[0].id for x in syntax.walk(node) if isinstance(x, n.Assign) and len(x.targets) == 1
            and isinstance(x.targets[0], n.Name) and isinstance(x.value, n.Lambda)}
        self.generators = {x.name for x in syntax.walk(node) if isinstance(x, n.FunctionDef) and x is not node
                           and any(isinstance(y, n.Yield) for y in syntax.walk(x))}  # (lifted to return lists)
        counts = values._binding_counts(node)
        self.sequences = {}  # name -> the function expressions of the tuple it is bound to (once)
        for x in syntax.walk(node):
            if (isinstance(x, n.Assign) and len(x.targets) == 1 and isinstance(x.targets[0], n.Name)
                    and counts.get(x.targets[0].id) == 1 and isinstance(x.value, (n.Tuple, n.List))
                    and x.value.elts and all(map(self.is_function, x.value.elts))):
                self.sequences[x.targets[0].id] = x.value.elts
                x._dualtape_function_alias = True  # (read from here; other uses are refused)

    def is_function(self, e):
        """Whether `e` surely names a function (known before the nested ones are lifted)."""
        if isinstance(e, n.Lambda):
            return True
        if isinstance(e, n.Name) and (e.id in self.defined or e.id in self.values.bindings):
            return True
        if isinstance(e, n.Name) and e.id in self.values.locals:
            return False
        return self.values._known(e) is not None

    def rewrite(self, body):
        out = []
        for s in body:
            if isinstance(s, (n.If, n.While)):
                s.body, s.orelse = self.rewrite(s.body), self.rewrite(s.orelse)
            if isinstance(s, n.For):
                s.body = self.rewrite(s.body)
                elements = self.elements(s.iter)
                if elements is not None and isinstance(s.target, n.Name) and not s.orelse:
                    out.extend(self.unrolled(s, elements))
                    continue
                mapped = self.mapped(s.iter)
                if mapped is not None and isinstance(s.target, n.Name):
                    fn, items = mapped
                    var = self.fresh(f"{s.target.id}_arg")
                    s.body = [self.assign(s, s.target.id, n.Call(func=fn, args=[syntax.name(var)], keywords=[]))] + s.body
                    s.target, s.iter = syntax.name(var, store=True), items
            if (isinstance(s, n.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], n.Name)
                    and isinstance(s.value, n.Call) and len(s.value.args) == 1 and not s.value.keywords
                    and resolve(s.value.func, self.values.locals, self.values.info.namespace) is builtins.list):
                mapped = self.mapped(s.value.args[0])
                if mapped is not None:
                    out.extend(self.list_of_map(s, s.targets[0].id, *mapped))
                    continue
            out.append(self.comprehended(s))
        return out

    def comprehended(self, node):
        """`node` with each `map(g, xs, ...)` left in it (an argument, `list(map(...))`, `sum(map(...))`)
        written as the list comprehension `[g(v) for v in xs]` (several iterables: over their zip),
        which the normalizer writes out as a loop (frontend/comprehensions.py); `list(gen(x))` of a
        nested generator is the call (lifted, it returns a new list)."""
        for field, value in _fields(node):
            if isinstance(value, n.AST):
                setattr(node, field, self.comprehended(value))
            elif isinstance(value, list):
                value[:] = [self.comprehended(v) if isinstance(v, n.AST) else v for v in value]
        if not isinstance(node, n.Call) or node.keywords:
            return node
        listed = node.args[0] if len(node.args) == 1 else None
        if ((getattr(listed, "_dualtape_map", False) or (isinstance(listed, n.Call) and isinstance(listed.func, n.Name)
                                                        and listed.func.id in self.generators))
                and resolve(node.func, self.values.locals, self.values.info.namespace) is builtins.list):
            return node.args[0]  # (list(map(...)), list(gen(x)): a new list already)
        if (len(node.args) < 2 or any(isinstance(a, n.Starred) for a in node.args)
                or resolve(node.func, self.values.locals, self.values.info.namespace) is not builtins.map):
            return node
        fn, iterables = node.args[0], node.args[1:]
        fn, first, keywords = self.partial_parts(fn)
        if not self.is_function(fn):
            return node
        if len(iterables) > 1 and resolve(syntax.name("zip"), self.values.locals,
                                          self.values.info.namespace) is not builtins.zip:
            return node  # (zip shadowed)
        if len(iterables) == 1 and isinstance(iterables[0], (n.List, n.Tuple)) \
                and not any(isinstance(e, n.Starred) for e in iterables[0].elts):
            written = n.List(elts=[n.Call(func=syntax.copy(fn), args=[*map(syntax.copy, first), e],
                                          keywords=[syntax.copy(k) for k in keywords]) for e in iterables[0].elts],
                             ctx=n.Load())  # (a display: the calls written out)
            return _located(written, node)
        names = [self.fresh("_mapped") for _ in iterables]
        if len(iterables) == 1:
            target, iterable = syntax.name(names[0], store=True), iterables[0]
        else:
            target = n.Tuple(elts=[syntax.name(v, store=True) for v in names], ctx=n.Store())
            iterable = n.Call(func=syntax.name("zip"), args=list(iterables), keywords=[])
        call = n.Call(func=fn, args=first + [syntax.name(v) for v in names], keywords=keywords)
        comprehension = n.ListComp(elt=call, generators=[n.comprehension(target=target, iter=iterable, ifs=[],
                                                                           is_async=0)])
        return _located(comprehension, node)

    def elements(self, e):
        if isinstance(e, (n.Tuple, n.List)) and e.elts and all(map(self.is_function, e.elts)):
            return e.elts
        if isinstance(e, n.Name) and e.id in self.sequences:
            return self.sequences[e.id]
        return None

    def partial_parts(self, fn):
        """(function, first arguments, keywords) of `functools.partial(g, a, k=b)` whose arguments
        are names or constants (read at each call as at the partial's making), else (fn, [], [])."""
        if (isinstance(fn, n.Call) and fn.args and not any(isinstance(a, n.Starred) for a in fn.args)
                and all(k.arg is not None for k in fn.keywords)
                and all(isinstance(a, (n.Name, n.Constant)) for a in fn.args[1:] + [k.value for k in fn.keywords])
                and resolve(fn.func, self.values.locals, self.values.info.namespace) is functools.partial):
            return fn.args[0], list(fn.args[1:]), list(fn.keywords)
        return fn, [], []

    def mapped(self, e):
        """(function, items) of `map(function, items)`, or None."""
        if (isinstance(e, n.Call) and len(e.args) == 2 and not e.keywords and self.is_function(e.args[0])
                and resolve(e.func, self.values.locals, self.values.info.namespace) is builtins.map):
            return e.args[0], e.args[1]
        return None

    def unrolled(self, s, elements):
        var = s.target.id
        for x in syntax.walk(n.Module(body=s.body, type_ignores=[])):
            if isinstance(x, (n.Break, n.Continue)):
                raise self.values.fail(x, "`break` / `continue` in a loop over functions is not supported",
                                       "Call the functions one after the other, or test a flag in the loop.")
            if (isinstance(x, n.Name) and isinstance(x.ctx, n.Store) and x.id == var) or (
                    isinstance(x, n.FunctionDef) and x.name == var):
                raise self.values.fail(x, f"the loop over functions writes its variable `{var}`",
                                       "Use another name for the value written.")
        out = []
        for element in elements:
            for statement in s.body:
                copy = syntax.copy(statement)
                for x in syntax.walk(copy):
                    syntax.replace_children(x, lambda v: syntax.copy(element) if isinstance(v, n.Name) and v.id == var
                                            and isinstance(v.ctx, n.Load) else None)
                out.append(copy)
        out.append(self.assign(s, var, syntax.copy(elements[-1])))  # (bound after the loop, as Python leaves it)
        return out

    def list_of_map(self, s, target, fn, items):
        if isinstance(items, (n.List, n.Tuple)) and not any(isinstance(e, n.Starred) for e in items.elts):
            calls = [n.Call(func=syntax.copy(fn), args=[e], keywords=[]) for e in items.elts]
            return [self.assign(s, target, n.List(elts=calls, ctx=n.Load()))]  # (written out)
        var = self.fresh(f"{target}_arg")
        item = n.Call(func=fn, args=[syntax.name(var)], keywords=[])
        append = self.assign(s, target, n.BinOp(left=syntax.name(target), op=n.Add(), right=n.List(elts=[item],
                                                                                                  ctx=n.Load())))
        loop = n.For(target=syntax.name(var, store=True), iter=items, body=[append], orelse=[], type_comment=None)
        loop.lineno, loop.col_offset = s.lineno, getattr(s, "col_offset", 0)
        return [self.assign(s, target, n.List(elts=[], ctx=n.Load())), loop]

    def fresh(self, base):
        values = self.values
        name = unused_name(base, values.locals | set(values.info.namespace) | values._temps)
        values._temps.add(name)
        values.locals.add(name)
        return name

    def assign(self, where, target, value):
        assign = n.Assign(targets=[syntax.name(target, store=True)], value=value, type_comment=None)
        assign.lineno, assign.col_offset = where.lineno, getattr(where, "col_offset", 0)
        return assign


def constant_indices(loops, body):
    """`acts[1]` of a tuple of functions `acts` read as the function it holds."""
    for statement in body:
        for x in syntax.walk(statement):
            syntax.replace_children(x, lambda v: _indexed(loops, v))


def _indexed(loops, e):
    if isinstance(e, n.Subscript) and isinstance(e.value, n.Name) and e.value.id in loops.sequences:
        index, sign = e.slice, 1
        if isinstance(index, n.UnaryOp) and isinstance(index.op, n.USub):
            index, sign = index.operand, -1
        elements = loops.sequences[e.value.id]
        if syntax.is_constant(index) and type(index.value) is int and -len(elements) <= sign * index.value < len(elements):
            return syntax.copy(elements[sign * index.value])
    return None


def _located(new, where):
    """`new` (a list made from a map call) at `where`'s place in the source, marked as a new list."""
    for x in syntax.walk(new):
        if "lineno" in x._attributes and not hasattr(x, "lineno"):
            x.lineno, x.col_offset = where.lineno, getattr(where, "col_offset", 0)
            x.end_lineno, x.end_col_offset = getattr(where, "end_lineno", None), getattr(where, "end_col_offset", None)
    new._dualtape_map = True
    return new


def _fields(node):
    return [(field, getattr(node, field, None)) for field in node._fields]
