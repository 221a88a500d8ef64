"""Forward mode by source transformation: each statement, then its tangent statement.

The tangent of `x` is `dx`. Each tangent statement is the sum of the op's JVP rules from the
registry (`mul_jvp_x(dx, ans, x, y): return dx * y`), instantiated like the reverse
templates: `z = x * y` gets `dz = dx * y + x * dy`. `LINEAR` ops apply themselves to the
tangents (`dz = np.sum(dx, axis=0)`). Control flow is kept as written: forward mode never
needs a stack, except to read adjoint code, whose `_stack` gets a tangent twin `_dstack`.

Vector tangents (`batch=True`): every tangent has a leading axis of k directions.
Elementwise rules run on all of them at once (`bt` lines the axes up); so do matmul, the
axis ops (sum, mean, concatenate, stack, ...: axes shifted by `batch_axis`), reshape,
transpose, broadcast_to and the batch-aware adjoint helpers (`rows(unbroadcast, ...)`);
other ops map their single-direction rule over the directions (`each`).

The generated function is a tree (`ast.FunctionDef`, ir/code.py): statements are built from
templates (templates/quote.py), comments are `Comment`s; codegen renders it once.
"""

import ast
import copy

from ..ir import syntax
from ..ir.code import Comment, nested_else, render
from ..reverse import symbolic_zeros
from ..ir.syntax import nodes as n
from ..ir.analysis import Kinds, activity, walk_items
from ..optimize.concrete import specialize
from .analysis import merge_split_copies, jvp_args
from .ops import OpTangents, assign
from .helper_rules import Pop, Push
from ..ir.naming import Namer
from ..frontend.normalize import For, If, Op, Primal, SetItem, While, is_name
from ..reverse.simplify import index_expr, live_body
from ..runtime.names import RUNTIME_NAMES
from ..templates.quote import as_code, code_expr, code_stmt

ZEROS = ("zeros_like", "zeros_batch")


class Forward(OpTangents):
    """Generates one tangent function (value and J @ tangents) from a normalized function."""

    def __init__(self, fir, wrt_names, param_kinds, module, optimize, batch=False, value_only=0):
        self.fir, self.module, self.optimize, self.batch = fir, module, optimize, batch
        self.wrt = list(wrt_names)
        self.ret_names, body = live_body(fir, optimize)
        self.body = merge_split_copies(body)
        # hvp reads an adjoint that also returns f's value (its last output): the tangent code
        # checks that it is a scalar instead of returning it (a Hessian is of a scalar function)
        self.value_only = value_only
        tangent_rets = [a.id for a in fir.ret[:len(fir.ret) - value_only] if is_name(a)]
        # static_active: the names that get a tangent variable; active: those whose tangents may
        # be nonzero at the statement being generated (symbolic_zeros.py), the only ones read
        self.static_active = activity(self.body, wrt_names, tangent_rets, optimize, args_of=jvp_args)
        self.active = set(self.wrt) & self.static_active
        self.kinds = Kinds(self.body, param_kinds, fir.info.namespace, fir.locals)
        self.namer = Namer(fir.used | RUNTIME_NAMES)  # never shadow a helper (`bt`, `rows`)
        self.tangents = {}  # name -> the name of its tangent
        self.mutable = {s.target for s in walk_items(self.body) if isinstance(s, SetItem)}
        self.packs = {s.target for s in walk_items(self.body) if isinstance(s, Op) and s.kind == "pack"}
        self.uses_k = False
        self.uses_dstack = False

    # -- names and small pieces ----------------------------------------------------------------
    def d(self, var):
        """The tangent of `var`: `d` + var (suffixed if the user already uses that name)."""
        if var not in self.tangents:
            self.tangents[var] = self.namer.unique("d" + var)
        return self.tangents[var]

    def zero(self, var):
        """A zero tangent for the name `var`."""
        if self.batch:
            self.uses_k = True
            if var in self.mutable:
                return code_expr("zeros_batch(V, _k, items=True)", V=var)
            return code_expr("zeros_batch(V, _k)", V=var)
        if self.kinds.kinds.get(var) == "scalar":
            return ast.Constant(value=0.0)
        return code_expr("zeros_like(V)", V=var)

    def zero_of(self, atom):
        """A zero tangent for an inactive atom (a name or an expression)."""
        if is_name(atom):
            return self.zero(atom.id)
        if self.kinds.is_scalar(atom) and not self.batch:
            return ast.Constant(value=0.0)
        if self.batch:
            self.uses_k = True
            return code_expr("zeros_batch(A, _k)", A=atom)
        return code_expr("zeros_like(A)", A=atom)

    def define(self, var, value):
        """`dvar = value`, copied first where the tangent is later written into (`dx[i] = ...`).

        A tangent that is another tangent itself (`v = np.copy(u)` or `v = u + 1.0` give
        `dv = du`) is copied too when that other one is written into: the primal `v` holds
        new memory, so `u[i] = ...` must not change `dv` (explicit schemes)."""
        value = as_code(value)
        source = next((v for v, d in self.tangents.items() if d == value.id), None) \
            if isinstance(value, ast.Name) else None
        if ((var in self.mutable or (source in self.mutable and source != var))
                and not starts_with_call(value, ZEROS)):
            value = code_expr("owned(V)", V=value)
        return assign(self.d(var), value)

    def array_tangent(self, name, st):
        """The tangent (gast) of `name` as an op's array operand. A list `y = [a, b]` has the list
        of its items' tangents; NumPy reads the list as an array, so with vector tangents the
        batch axis must come first: `batch_array(dy)`, (k, n, ...). Not where `+`/`*` may be
        Python's list concatenation or repetition (the other operand a list or an int)."""
        d = syntax.name(self.d(name))
        if not self.batch or name not in self.packs:
            return d
        if st.spec.prim.name in ("AddV2", "Mul") and isinstance(st.expr, n.BinOp) and any(
                (is_name(a) and a.id != name and a.id in self.packs) or isinstance(a, (n.List, n.Tuple))
                or (syntax.is_constant(a) and isinstance(a.value, int)) for a in st.args):
            return d
        return n.Call(func=syntax.name("batch_array"), args=[d], keywords=[])

    def tangent_sub(self, var, index):
        """`dx[index]` (or `dx[:, index]` for vector tangents), standard ast."""
        node = n.Subscript(value=syntax.name(self.d(var)), slice=syntax.copy(index), ctx=n.Load())
        if self.batch:
            elts = index.elts if isinstance(index, n.Tuple) else [index]
            node.slice = n.Tuple(elts=[n.Slice(lower=None, upper=None, step=None)] + [syntax.copy(e) for e in elts],
                                 ctx=n.Load())
        return syntax.to_ast(node)

    # -- statements --------------------------------------------------------------------------------
    def block(self, items):
        out = []
        last = [None]
        for st in items:
            out += self.stmt(st, last)
        return out

    @staticmethod
    def comment(st, first, last):
        """`# text` of the statement's source line before its code: once for the statements of one
        line, and not where the code's first line is the same text."""
        text = getattr(st, "text", "")
        if text and text != last[0]:
            last[0] = text
            if render(first).split("\n", 1)[0].strip() != text:
                return [Comment(text)]
        return []

    def stmt(self, st, last):
        if isinstance(st, (Op, Primal, SetItem, Push, Pop)):
            body = self.simple(st)
            symbolic_zeros.tangent_step(st, self.active, self.static_active)
            return self.comment(st, body[0], last) + body if body else []
        last[0] = None
        if isinstance(st, If):
            entry = self.active
            self.active = set(entry)
            body = self.block(st.body) or [ast.Pass()]
            after_body, self.active = self.active, set(entry)
            orelse = self.block(st.orelse)
            self.active |= after_body
            if len(orelse) == 1 and isinstance(orelse[0], ast.If):
                nested_else(orelse[0])  # `else:` then the `if`, a block, as the IR has it
            return [ast.If(test=as_code(st.test), body=body, orelse=orelse)]
        if isinstance(st, For):
            targets = symbolic_zeros.loop_targets(st, self.static_active)
            body = self.loop_body(st, targets)
            if targets:
                # a loop over an inactive sequence, kept as written: its targets take inactive values
                # each pass: zero tangents, in case the body makes them active (`for t, b in
                # enumerate(c): (x, b) = (x, b)` would read an unbound `db`)
                body = [self.define(w, self.zero(w)) for w in sorted(targets)] + body
            body += self.break_test(st)
            target = ast.Name(id=st.var, ctx=ast.Store()) if st.target_node is None else syntax.to_ast(st.target_node)
            return [ast.For(target=target, iter=as_code(st.iter), body=body or [ast.Pass()], orelse=[])]
        if isinstance(st, While):
            body = self.loop_body(st, set()) + self.break_test(st)
            return [ast.While(test=as_code(st.test), body=body or [ast.Pass()], orelse=[])]
        raise AssertionError(f"unknown statement {type(st).__name__}")

    @staticmethod
    def break_test(st):
        return [code_stmt("if FLAG:\n    break", FLAG=st.break_flag)] if st.break_flag else []

    def loop_body(self, st, targets):
        """The body's tangent code, reading the tangents that may be nonzero at the head of some
        pass (a fixed point: symbolic_zeros.tangent_loop_entry); the others stay zero all through."""
        entry = symbolic_zeros.tangent_loop_entry(st, self.active, self.static_active)
        self.active = entry - targets
        body = self.block(st.body)
        if not self.active <= entry:  # the analysis must cover what the generated code reads
            raise AssertionError(f"symbolic zeros: tangents of {sorted(self.active - entry)} in `{st.text}`")
        self.active = entry
        return body

    def simple(self, st):
        if isinstance(st, Primal):
            out = [syntax.to_ast(st.node)]
            if st.pure:
                out += [self.define(w, self.zero(w)) for w in sorted(st.writes & self.static_active)]
            return out
        if isinstance(st, SetItem):
            target = n.Subscript(value=syntax.name(st.target), slice=syntax.copy(st.index), ctx=n.Load())
            out = [assign(target, st.value)]
            if st.target in self.static_active:
                value = self.d(st.value.id) if is_name(st.value) and st.value.id in self.active else 0.0
                if self.batch:  # a list's tangent item, or (k, *v) lined up with (k, *y[i]): `y[[1]] = a`
                    self.uses_k = True
                    out.append(code_stmt("set_tangent_item(D, I, V, T, _k)", D=self.d(st.target),
                                         I=index_expr(st.index), V=value, T=st.target))
                else:
                    out.append(assign(self.tangent_sub(st.target, st.index), value))
            return out
        if isinstance(st, Push):
            return [syntax.to_ast(st.node)] + self.push(st)
        if isinstance(st, Pop):
            return [syntax.to_ast(st.node)] + self.pop(st)
        return self.op(st)

    # -- the tangent stack ----------------------------------------------------------------------
    def stack_items(self, node):
        """Tangents (standard ast) of the active values in a pushed value or popped target."""
        elts = node.elts if isinstance(node, (n.Tuple, n.List)) else [node]
        out = []
        for e in elts:
            if isinstance(e, n.Call) and e.args:  # saved(x[i])
                e = e.args[0]
            if is_name(e) and e.id in self.static_active:
                out.append(ast.Name(id=self.d(e.id), ctx=ast.Load()))
            elif isinstance(e, n.Subscript) and is_name(e.value) and e.value.id in self.static_active:
                out.append(self.tangent_sub(e.value.id, e.slice))
        return out

    def push(self, st):
        items = self.stack_items(st.value)
        if not items:
            return []
        self.uses_dstack = True
        value = items[0] if len(items) == 1 else ast.Tuple(elts=items, ctx=ast.Load())
        if isinstance(st.value, n.Call):
            value = code_expr("saved(V)", V=value)
        return [code_stmt("_dstack.append(V)", V=value)]

    def pop(self, st):
        items = self.stack_items(st.target)
        if not items:
            return []
        self.uses_dstack = True
        return [assign(items if len(items) > 1 else items[0], code_expr("_dstack.pop()"))]

    # -- the whole function ---------------------------------------------------------------------
    def generate(self, name):
        """`def name(*params, *, d<wrt>...)` returning (value, tangent), built as an
        `ast.FunctionDef` and rendered once, and the names of its tangent parameters."""
        fir = self.fir
        tparams = [self.d(w) for w in self.wrt]
        body = self.block(self.body)
        outs, douts = [], []
        fname = ast.Constant(value=fir.info.name.rsplit('_', 1)[0])
        checks = [code_stmt("check_scalar_output(A, NAME)", A=a, NAME=fname)
                  for a in fir.ret[len(fir.ret) - self.value_only:]]
        for a in fir.ret[:len(fir.ret) - self.value_only]:
            outs.append(as_code(a))
            if is_name(a) and a.id in self.static_active:
                douts.append(as_code(self.d(a.id)))
            elif self.batch:
                self.uses_k = True
                douts.append(code_expr("zeros_batch(A, _k)", A=a))
            else:
                douts.append(ast.Constant(value=0.0) if self.kinds.is_scalar(a) else code_expr("zeros_like(A)", A=a))
        if self.value_only and len(outs) == 1:  # `_t2 = (bx, by)` built only to be returned: return it
            outs, douts, body = self.inline_packed(outs, douts, body)
        ret_node = fir.info.node.body[-1].value if fir.info.node.body else None
        if len(outs) == 1 and (self.value_only or not isinstance(ret_node, n.Tuple)):
            value, tangent = outs[0], douts[0]
        else:
            value, tangent = (ast.Tuple(elts=x, ctx=ast.Load()) for x in (outs, douts))
        spec = getattr(self.module, "param_shapes", {}).get(name)  # (a specialization's: see concrete.py)
        if spec is not None and spec.get("<tangent only>"):
            value = ast.Constant(value=None)  # hvp's caller drops the gradient: not computed (concrete.py removes it)
        zeros = [self.define(p, self.zero(p)) for p in self.fir.params  # parameters that later hold varied values
                 if p in self.static_active and p not in self.wrt]
        pre = []
        if self.batch and self.uses_k:
            pre.append(code_stmt("_k = batch_size(D)", D=tparams[0]))
        if self.uses_dstack:
            pre.append(code_stmt("_dstack = []"))
        pre += zeros
        for w in self.wrt:
            if w in self.mutable:
                pre.append(code_stmt("D = owned(D)", D=self.d(w)))
        body = pre + body + checks + [ast.Return(value=ast.Tuple(elts=[value, tangent], ctx=ast.Load()))]
        arguments = self.arguments(tparams)
        if spec is not None and self.optimize:
            values = {k: v for k, v in spec.items() if not k.startswith("<")}
            values.update(zip(tparams, spec.get("<tangents>", ())))
            namespace = fir.info.namespace
            body = specialize(body, copy.deepcopy(arguments), values,
                              global_int=lambda k: namespace[k] if type(namespace.get(k)) is int else None)
        doc = [ast.Expr(value=ast.Constant(value=f"Tangent of {fir.info.name}: generated by dualtape.transforms."))]
        function = ast.FunctionDef(name=name, args=arguments, body=(doc if fir.doc else []) + list(body),
                                   decorator_list=[], returns=None, type_comment=None)
        return function, tparams

    @staticmethod
    def inline_packed(outs, douts, body):
        """`_t2 = (bx, by)`, `d_t2 = (dbx, dby)`, `return _t2, d_t2` as `return (bx, by), (dbx, dby)`."""
        found = {}
        for out in (outs[0], douts[0]):
            if not isinstance(out, ast.Name):
                return outs, douts, body
            defs = [j for j, st in enumerate(body) if isinstance(st, ast.Assign) and len(st.targets) == 1
                    and isinstance(st.targets[0], ast.Name) and st.targets[0].id == out.id
                    and isinstance(st.value, ast.Tuple)]
            if len(defs) != 1 or any(mentions(st, out.id) for j, st in enumerate(body) if j != defs[0]):
                return outs, douts, body
            found[out.id] = defs[0]
        values = [body[j].value for j in found.values()]
        body = [st for j, st in enumerate(body) if j not in found.values()]
        while body and isinstance(body[-1], Comment) and not body[-1].trailing:
            body.pop()
        return [values[0]], [values[1]], body

    def arguments(self, tparams):
        """f's parameters (defaults kept), then the tangent parameters: keyword-only after f's
        keyword-only parameters or its defaults."""
        args = self.fir.info.node.args
        positional = [ast.arg(arg=a.id) for a in args.posonlyargs + args.args]
        defaults = [syntax.to_ast(d) for d in args.defaults]
        kwonly = [ast.arg(arg=a.id) for a in args.kwonlyargs]
        kw_defaults = [None if d is None else syntax.to_ast(d) for d in args.kw_defaults]
        tangents = [ast.arg(arg=p) for p in tparams]
        if kwonly or defaults:
            return ast.arguments(posonlyargs=[], args=positional, vararg=None, kwonlyargs=kwonly + tangents,
                                 kw_defaults=kw_defaults + [None] * len(tangents), kwarg=None, defaults=defaults)
        return ast.arguments(posonlyargs=[], args=positional + tangents, vararg=None, kwonlyargs=[],
                             kw_defaults=[], kwarg=None, defaults=[])


def starts_with_call(node, names):
    """Whether the code of `node` begins with a call of one of `names` (`zeros_like(x) * c`):
    down the left operands that are written without parentheses."""
    while True:
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                return node.func.id in names
            node = node.func
        elif isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif isinstance(node, ast.BinOp) and not (
                isinstance(node.left, ast.BinOp) and binding(node.left) < binding(node)
                or isinstance(node.op, ast.Pow) and isinstance(node.left, ast.BinOp)
                or isinstance(node.left, (ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Lambda))):
            node = node.left
        else:
            return False


def binding(node):
    """How tightly a binary operator binds (Python's precedence, lowest first)."""
    order = ((ast.BitOr,), (ast.BitXor,), (ast.BitAnd,), (ast.LShift, ast.RShift), (ast.Add, ast.Sub),
             (ast.Mult, ast.MatMult, ast.Div, ast.FloorDiv, ast.Mod), (ast.Pow,))
    return next(k for k, ops in enumerate(order) if isinstance(node.op, ops))


def mentions(st, name):
    """Whether a statement of generated code (or a comment) mentions the identifier `name`."""
    if isinstance(st, Comment):
        return name in words(st.text)
    for x in syntax.walk(st):
        if isinstance(x, Comment):
            if mentions(x, name):
                return True
        elif name in (getattr(x, "id", None), getattr(x, "arg", None), getattr(x, "attr", None),
                      getattr(x, "name", None)) or isinstance(x, ast.Constant) and isinstance(x.value, str) \
                and name in words(x.value):
            return True
    return False


def words(text):
    """The identifier-like words of a text (what `\\b` delimits)."""
    return "".join(c if c.isalnum() or c == "_" else " " for c in text).split()
