"""Rewrite early returns, break and continue into flags, and array methods into NumPy calls.

After this pass a function has one `return`, at the end of its body, and a loop body
never jumps: `break` sets `_break1` (the loop tests it at the end of the body) and the
statements after a possible jump are guarded by `if not _break1:`. The backward sweep
then only has to replay straight-line code, branches and counted loops.
"""

from ..ir import syntax
from ..ir.naming import all_names, unused_name
from ..ir.syntax import nodes as n
from ..templates import quote

_METHODS = {"sum", "mean", "max", "min", "prod", "dot", "reshape", "transpose", "copy",
            "flatten", "ravel", "item", "astype", "var", "std", "cumsum", "squeeze", "clip",
            "swapaxes", "any", "all", "cumprod", "diagonal", "trace", "round", "conj", "conjugate",
            "argsort", "argmax", "argmin", "repeat"}
_DTYPE_METHODS = {"sum", "mean", "prod", "var", "std", "cumsum"}  # dtype=: cast, then reduce


def stmt_at(template, like, **subs):
    """The statement of a template (templates/quote.py), every node of it at the line of `like`."""
    return located(quote.stmt(template, **subs), like)


def located(node, like):
    """`node` with each of its nodes at the line of `like`, column 0; returns `node`."""
    for sub in syntax.walk(node):
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
        stack.extend(child for child in syntax.iter_child_nodes(cur) if isinstance(child, n.stmt))
    return False


def desugar_returns(fn):
    """One final return: `return e` elsewhere becomes `_retval = e` plus a `_returned` flag."""
    body = fn.body
    returns = [node for node in syntax.walk(fn) if isinstance(node, n.Return)]
    if len(returns) == 1 and body and body[-1] is returns[0]:
        return
    if not returns:
        fn.body = body + [stmt_at("return None", body[-1] if body else fn)]
        return

    taken = all_names(fn)
    retval, returned = _fresh("_retval", taken), _fresh("_returned", taken)

    def block(stmts, in_loop):
        out = []
        for i, s in enumerate(stmts):
            if isinstance(s, n.Return):
                out.append(stmt_at("RETVAL = VALUE", s, RETVAL=retval, VALUE=s.value))
                out.append(stmt_at("RETURNED = True", s, RETURNED=returned))
                if in_loop:
                    out.append(stmt_at("break", s))
                return out
            returns_here = _contains(s, n.Return)
            if isinstance(s, n.If):
                s.body = block(s.body, in_loop)
                s.orelse = block(s.orelse, in_loop)
            elif isinstance(s, (n.For, n.While)):
                s.body = block(s.body, True)
            out.append(s)
            if returns_here and in_loop and isinstance(s, (n.For, n.While)):
                # a return in a nested loop breaks that loop only: leave this one too
                out.append(stmt_at("if RETURNED:\n    break", s, RETURNED=returned))
            if returns_here and i < len(stmts) - 1:
                rest = block(stmts[i + 1:], in_loop)
                guard = stmt_at("if not RETURNED:\n    pass", stmts[i + 1], RETURNED=returned)
                guard.body = rest
                out.append(guard)
                return out
        return out

    new_body = [stmt_at("RETURNED = False", body[0], RETURNED=returned), stmt_at("RETVAL = None", body[0], RETVAL=retval)]
    new_body += block(body, False)
    new_body.append(stmt_at("return RETVAL", body[-1], RETVAL=retval))
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
        test = syntax.name(flags[0]) if len(flags) == 1 else n.BoolOp(op=n.Or(), values=[syntax.name(f) for f in flags])

        def block(stmts):
            out = []
            for i, s in enumerate(stmts):
                if isinstance(s, n.Break):
                    out.append(stmt_at("BREAK = True", s, BREAK=brk))
                    return out
                if isinstance(s, n.Continue):
                    out.append(stmt_at("CONTINUE = True", s, CONTINUE=cont))
                    return out
                jumps = _has_jump([s], (n.Break, n.Continue))
                if isinstance(s, n.If):
                    s.body = block(s.body)
                    s.orelse = block(s.orelse)
                out.append(s)
                if jumps and i < len(stmts) - 1:
                    guard = stmt_at("if not TEST:\n    pass", stmts[i + 1], TEST=test)
                    guard.body = block(stmts[i + 1:])
                    out.append(guard)
                    return out
            return out

        body = block(loop.body)
        block = None  # it calls itself through its cell: break that cycle
        if conts:
            body.insert(0, stmt_at("CONTINUE = False", loop, CONTINUE=cont))
        loop.body = body
        loop._dualtape_break = brk if breaks else None
        return ([stmt_at("BREAK = False", loop, BREAK=brk)] if breaks else []) + [loop]

    try:
        fn.body = visit_block(fn.body)
    finally:  # they call each other through their cells: break that cycle
        visit_block = _loop = None


def _fresh(base, taken):
    """`base`, or `base_2`, ... when the user's code already uses it: a flag must never
    overwrite a user variable."""
    name = unused_name(base, taken)
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


class MethodRewriter(syntax.NodeTransformer):
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
            receiver = func.value
            args, kws = list(node.args), list(node.keywords)
            name = func.attr
            dtype = next((k.value for k in node.keywords if k.arg == "dtype"), None)
            if name == "astype" and node.args:
                dtype, args = node.args[0], args[1:]
            if dtype is not None and name in _DTYPE_METHODS | {"astype"}:
                # x.astype(t), x.sum(dtype=t): NumPy computes on x cast to t
                kws = [k for k in kws if k.arg != "dtype"]
                receiver = quote.expr("dnp.cast(X, DTYPE)", X=receiver, DTYPE=dtype)
            if name in ("copy", "astype"):  # a new array (aliasing.py lets code write into it)
                return located(quote.expr("np.copy(X)", X=receiver), node)
            if name == "item":  # a Python number, differentiated as float() is
                if not args:
                    new = quote.expr("np.reshape(X, ())", X=receiver)
                elif len(args) == 1:
                    new = quote.expr("np.reshape(X, (-1,))[INDEX]", X=receiver, INDEX=args[0])
                else:
                    new = quote.expr("X[INDEX]", X=receiver, INDEX=n.Tuple(elts=args, ctx=n.Load()))
                return located(new, node)
            if name == "clip":  # x.clip(min=lo), x.clip(a_max=hi): np.clip(x, lo, hi), a None bound open
                bounds = dict(zip(("min", "max"), args))
                bounds.update({k.arg[-3:]: k.value for k in kws if k.arg in ("min", "max", "a_min", "a_max")})
                args = [bounds.get("min", syntax.constant(None)), bounds.get("max", syntax.constant(None))]
                kws = [k for k in kws if k.arg not in ("min", "max", "a_min", "a_max")]
            if name in ("flatten", "ravel"):
                args, name = [quote.expr("(-1,)")], "reshape"
            elif name in ("reshape", "transpose") and len(args) > 1:
                args = [n.Tuple(elts=args, ctx=n.Load())]
            new = n.Call(func=syntax.attribute("np", name), args=[syntax.copy(receiver)] + syntax.copy(args),
                         keywords=syntax.copy(kws))
            return located(new, node)
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if node.attr == "T" and isinstance(node.ctx, n.Load) and self._is_local(node.value):
            return located(quote.expr("np.transpose(X)", X=node.value), node)
        return node


class _Walrus(syntax.NodeTransformer):
    """Hoists each `(name := value)` of one statement's expressions into `name = value`,
    in evaluation order; refuses one that may not run (`a or (y := b)`, a branch of a
    conditional expression, a comprehension) or that a read of `name` precedes."""

    def __init__(self, fail, stmt):
        self.fail, self.stmt = fail, stmt
        self.hoisted, self.loaded, self.maybe = [], set(), 0

    def visit_Name(self, node):
        if isinstance(node.ctx, n.Load):
            self.loaded.add(node.id)
        return node

    def visit_NamedExpr(self, node):
        node.value = self.visit(node.value)
        name = node.target.id
        if self.maybe:
            raise self.fail(self.stmt, f"the assignment expression `{name} := ...` may not run (it sits in a "
                            "later operand of `and`/`or`, a branch of `... if ... else ...`, or a comprehension)",
                            f"Assign `{name}` in a statement of its own before this line.")
        if name in self.loaded:
            raise self.fail(self.stmt, f"`{name}` is read before the assignment expression `{name} := ...` "
                            "of the same line", f"Assign `{name}` in a statement of its own.")
        assign = n.Assign(targets=[syntax.name(name, store=True)], value=node.value, type_comment=None)
        assign.lineno, assign.col_offset = getattr(self.stmt, "lineno", 1), 0
        self.hoisted.append(assign)
        self.loaded.add(name)
        return syntax.name(name)

    def _maybe(self, nodes):
        self.maybe += 1
        out = [self.visit(x) for x in nodes]
        self.maybe -= 1
        return out

    def visit_BoolOp(self, node):
        node.values = [self.visit(node.values[0])] + self._maybe(node.values[1:])
        return node

    def visit_IfExp(self, node):
        node.test = self.visit(node.test)
        node.body, node.orelse = self._maybe([node.body, node.orelse])
        return node

    def _scope(self, node):
        self.maybe += 1
        self.generic_visit(node)
        self.maybe -= 1
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_Lambda = _scope


def desugar_walrus(fn, fail):
    """`if (y := x * 2) > 1:` becomes `y = x * 2` and `if y > 1:`: one assignment per
    statement, which every later pass (aliasing, activity, the sweeps) sees. Without it the
    condition would be read as an inactive comparison and `y` would get no adjoint.
    `fail(node, what, fix)` makes the refusal of a walrus that cannot be hoisted."""
    def block(stmts):
        out = []
        for s in stmts:
            for field in ("body", "orelse"):
                if isinstance(getattr(s, field, None), list):
                    setattr(s, field, block(getattr(s, field)))
            if not any(isinstance(x, n.NamedExpr) for x in syntax.walk(_own_expressions(s))):
                out.append(s)
                continue
            if isinstance(s, n.While):
                raise fail(s, "an assignment expression (`:=`) in a `while` test is not supported",
                           "Assign the value before the loop and again at the end of its body.")
            walrus = _Walrus(fail, s)
            if isinstance(s, n.Assign):  # Python evaluates the value, then the targets
                s.value = walrus.visit(s.value)
                s.targets = [walrus.visit(t) for t in s.targets]
            else:
                for field in ("test", "iter", "value", "target", "msg", "exc"):
                    if isinstance(getattr(s, field, None), n.AST):
                        setattr(s, field, walrus.visit(getattr(s, field)))
            out += walrus.hoisted + [s]
        return out

    try:
        fn.body = block(fn.body)
    finally:  # it calls itself through its cell: break that cycle
        block = None


def _own_expressions(s):
    """A statement's expressions, without the statements nested in it."""
    return n.Tuple(elts=[getattr(s, f) for f in ("test", "iter", "value", "target", "msg", "exc")
                         if isinstance(getattr(s, f, None), n.expr)] + list(getattr(s, "targets", [])), ctx=n.Load())
