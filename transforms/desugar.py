"""Rewrite early returns, break and continue into flags, and array methods into NumPy calls.

After this pass a function has one `return`, at the end of its body, and a loop body
never jumps: `break` sets `_break1` (the loop tests it at the end of the body) and the
statements after a possible jump are guarded by `if not _break1:`. The backward sweep
then only has to replay straight-line code, branches and counted loops.
"""

from . import _gast
from .naming import all_names
from ._gast import nodes as n

_METHODS = {"sum", "mean", "max", "min", "prod", "dot", "reshape", "transpose", "copy",
            "flatten", "ravel", "item", "astype", "var", "std", "cumsum", "squeeze"}


def _stmt(source, like):
    node = _gast.parse(source).body[0]
    for sub in _gast.walk(node):
        if hasattr(sub, "lineno") or isinstance(sub, (n.stmt, n.expr)):
            sub.lineno = getattr(like, "lineno", 1)
            sub.col_offset = 0
    return node


def _contains(node, kinds, stop_at_loops=False):
    stack = list(node) if isinstance(node, list) else [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, kinds):
            return True
        if stop_at_loops and isinstance(cur, (n.For, n.While)):
            continue
        stack.extend(child for child in _gast.iter_child_nodes(cur) if isinstance(child, n.stmt))
    return False


def desugar_returns(fn):
    """One final return: `return e` elsewhere becomes `_retval = e` plus a `_returned` flag."""
    body = fn.body
    returns = [node for node in _gast.walk(fn) if isinstance(node, n.Return)]
    if len(returns) == 1 and body and body[-1] is returns[0]:
        return
    if not returns:
        fn.body = body + [_stmt("return None", body[-1] if body else fn)]
        return

    taken = all_names(fn)
    retval, returned = _fresh("_retval", taken), _fresh("_returned", taken)

    def block(stmts, in_loop):
        out = []
        for i, s in enumerate(stmts):
            if isinstance(s, n.Return):
                value = _gast.unparse(s.value) if s.value is not None else "None"
                out.append(_stmt(f"{retval} = {value}", s))
                out.append(_stmt(f"{returned} = True", s))
                if in_loop:
                    out.append(_stmt("break", s))
                return out
            returns_here = _contains(s, n.Return)
            if isinstance(s, n.If):
                s.body = block(s.body, in_loop)
                s.orelse = block(s.orelse, in_loop)
            elif isinstance(s, (n.For, n.While)):
                s.body = block(s.body, True)
            out.append(s)
            if returns_here and in_loop and isinstance(s, (n.For, n.While)):
                # a return in a nested loop breaks that loop only: leave this one too (issue 9)
                out.append(_stmt(f"if {returned}:\n    break", s))
            if returns_here and i < len(stmts) - 1:
                rest = block(stmts[i + 1:], in_loop)
                guard = _stmt(f"if not {returned}:\n    pass", stmts[i + 1])
                guard.body = rest
                out.append(guard)
                return out
        return out

    new_body = [_stmt(f"{returned} = False", body[0]), _stmt(f"{retval} = None", body[0])]
    new_body += block(body, False)
    new_body.append(_stmt(f"return {retval}", body[-1]))
    fn.body = new_body


class _Loops:
    def __init__(self):
        self.count = 0


def desugar_jumps(fn):
    """Replace break/continue in every loop by flags; mark loops that break with `_dualtape_break`."""
    counter = _Loops()
    taken = all_names(fn)

    def visit_block(stmts):
        out = []
        for s in stmts:
            if isinstance(s, (n.For, n.While)):
                s.body = visit_block(s.body)
                out.extend(_loop(s))
            elif isinstance(s, n.If):
                s.body = visit_block(s.body)
                s.orelse = visit_block(s.orelse)
                out.append(s)
            else:
                out.append(s)
        return out

    def _loop(loop):
        breaks = _has_jump(loop.body, n.Break)
        conts = _has_jump(loop.body, n.Continue)
        loop._dualtape_break = None
        if not breaks and not conts:
            return [loop]
        counter.count += 1
        k = counter.count
        brk, cont = _fresh(f"_break{k}", taken), _fresh(f"_continue{k}", taken)
        flags = ([brk] if breaks else []) + ([cont] if conts else [])
        test = " or ".join(flags)

        def block(stmts):
            out = []
            for i, s in enumerate(stmts):
                if isinstance(s, n.Break):
                    out.append(_stmt(f"{brk} = True", s))
                    return out
                if isinstance(s, n.Continue):
                    out.append(_stmt(f"{cont} = True", s))
                    return out
                jumps = _has_jump([s], (n.Break, n.Continue))
                if isinstance(s, n.If):
                    s.body = block(s.body)
                    s.orelse = block(s.orelse)
                out.append(s)
                if jumps and i < len(stmts) - 1:
                    guard = _stmt(f"if not ({test}):\n    pass", stmts[i + 1])
                    guard.body = block(stmts[i + 1:])
                    out.append(guard)
                    return out
            return out

        body = block(loop.body)
        if conts:
            body.insert(0, _stmt(f"{cont} = False", loop))
        loop.body = body
        loop._dualtape_break = brk if breaks else None
        return ([_stmt(f"{brk} = False", loop)] if breaks else []) + [loop]

    fn.body = visit_block(fn.body)


def _fresh(base, taken):
    """`base`, or `base_2`, ... when the user's code already uses it: a flag must never
    overwrite a user variable."""
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


def _has_jump(stmts, kinds):
    """True when a break/continue in `stmts` belongs to the enclosing loop (not a nested one)."""
    for s in stmts:
        if isinstance(s, kinds):
            return True
        if isinstance(s, n.If) and (_has_jump(s.body, kinds) or _has_jump(s.orelse, kinds)):
            return True
    return False


class MethodRewriter(_gast.NodeTransformer):
    """`x.sum(axis=0)` -> `np.sum(x, axis=0)`, `x.T` -> `np.transpose(x)` for local arrays."""

    def __init__(self, local_names):
        self.local_names = local_names

    def _is_local(self, node):
        """True unless `node` is a module or global object (np.linalg, a module-level name)."""
        while isinstance(node, (n.Attribute, n.Subscript)):
            node = node.value
        if isinstance(node, n.Name):
            return node.id in self.local_names
        return not isinstance(node, n.Constant)

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if isinstance(func, n.Attribute) and func.attr in _METHODS and self._is_local(func.value):
            receiver = _gast.unparse(func.value)
            args = [_gast.unparse(a) for a in node.args]
            kws = [f"{k.arg}={_gast.unparse(k.value)}" for k in node.keywords]
            name = func.attr
            if name in ("copy", "astype"):  # a new array (aliasing.py lets code write into it)
                new = _gast.parse_expr(f"np.copy({receiver})")
                for sub in _gast.walk(new):
                    sub.lineno = getattr(node, "lineno", 1)
                    sub.col_offset = 0
                return new
            if name == "item":
                return _gast.copy(func.value)
            if name in ("flatten", "ravel"):
                args, name = ["(-1,)"], "reshape"
            elif name == "reshape" and len(args) > 1:
                args = ["(" + ", ".join(args) + ")"]
            elif name == "transpose" and len(args) > 1:
                args = ["(" + ", ".join(args) + ")"]
            src = f"np.{name}({', '.join([receiver] + args + kws)})"
            new = _gast.parse_expr(src)
            for sub in _gast.walk(new):
                sub.lineno = getattr(node, "lineno", 1)
                sub.col_offset = 0
            return new
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if node.attr == "T" and isinstance(node.ctx, n.Load) and self._is_local(node.value):
            new = _gast.parse_expr(f"np.transpose({_gast.unparse(node.value)})")
            for sub in _gast.walk(new):
                sub.lineno = getattr(node, "lineno", 1)
                sub.col_offset = 0
            return new
        return node
