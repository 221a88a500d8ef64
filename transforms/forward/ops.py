"""Forward mode, one operation: the tangent statements of a primitive call (its JVP rules
inlined), of a LINEAR op, of a call to a user function, single or batched over k directions
(`sweep.Forward` writes the whole function).

Expressions that go into JVP rule templates and `tidy.simplify` are the IR's gast nodes
(`templates.quote.expr`); the statements made of them are generated code, standard `ast`
(`templates.quote.code_stmt`, `code_expr`: gast values are converted there).
"""

import ast
import inspect

from dualtape.core.registry import LINEAR

from ..ir import syntax
from ..optimize import tidy
from ..ir.syntax import nodes as n
from ..ir.analysis import call_wrt
from .analysis import jvp_args
from ..frontend.normalize import is_name
from ..calls.odeint import tangent_stmts as odeint_tangent
from ..frontend.parse import TransformError
from ..reverse.simplify import index_expr
from ..templates.quote import as_code, code_expr, code_stmt, expr
from ..templates.rules import instantiate, rule_template, rule_uses


class ById(syntax.NodeTransformer):
    """Replace nodes by identity (the inputs of one call), not by name."""

    def __init__(self, mapping):
        self.mapping = mapping

    def visit(self, node):
        if id(node) in self.mapping:
            return syntax.copy(self.mapping[id(node)])
        return super().visit(node)


# LINEAR ops whose vector tangent is the op itself with its axis arguments shifted past the
# batch axis (as dualtape.batching does at run time); ops in neither set loop over the
# directions with `each`.
BATCH_AXIS_OPS = {"Sum", "Mean", "ConcatV2", "Pack", "ExpandDims", "Swapaxes"}
# Adjoint helpers whose rule for the cotangent g accepts leading batch axes (rulekit.BATCH_NDIM).
BATCH_AWARE_HELPERS = {"unbroadcast", "unreduce", "keepdims_shape", "matmul_cotangent_x", "matmul_cotangent_y",
                       "matmul_vjp_left", "matmul_vjp_right", "einsum_vjp_rows"}


def star_param(rule):
    star = [p.name for p in inspect.signature(rule).parameters.values() if p.kind == p.VAR_POSITIONAL]
    return star[0] if star else None


def call_of(func, args, keywords=()):
    """`func(*args, **keywords)` (standard ast): `func` a name, the values as `as_code` takes them."""
    return ast.Call(func=as_code(func), args=[as_code(a) for a in args],
                    keywords=[ast.keyword(arg=k, value=as_code(v)) for k, v in keywords])


def assign(target, value):
    """`target = value` (standard ast): the target a name, a node (stored), or a list of them
    (a tuple target)."""
    if isinstance(target, list):
        target = ast.Tuple(elts=[as_code(t) for t in target], ctx=ast.Load())
    return code_stmt("T = V", T=target, V=value)


def read_names(node):
    """The names an expression of generated code reads."""
    return {x.id for x in syntax.walk(node) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)}


class OpTangents:
    """The tangent statements of one operation (a primitive, a LINEAR op, a call), single or
    batched; mixed into `sweep.Forward`, whose state (`active`, `d`, ...) they use."""

    def op(self, st):
        primal = assign(st.target, st.expr)
        if st.target not in self.static_active:
            return [primal]
        t = st.target
        if st.kind == "copy":
            name = st.args[0].id
            return [primal, self.define(t, as_code(self.d(name)) if name in self.active else self.zero(t))]
        if st.kind == "getitem":
            name = st.args[0].id
            if name not in self.active:
                return [primal, self.define(t, self.zero(t))]
            if self.batch:
                return [primal, self.define(t, code_expr("tangent_item(D, I)", D=self.d(name),
                                                         I=index_expr(st.index)))]
            return [primal, self.define(t, self.tangent_sub(name, st.index))]
        if st.kind == "pack":
            parts = [as_code(self.d(a.id)) if is_name(a) and a.id in self.active else self.zero_of(a)
                     for a in st.args]
            if st.container == "dict":  # {"a": x}: a dict of tangents
                keys = [ast.Constant(value=k) for k in st.index]
                return [primal, self.define(t, ast.Dict(keys=keys, values=parts))]
            kind = ast.Tuple if st.container == "tuple" else ast.List
            return [primal, self.define(t, kind(elts=parts, ctx=ast.Load()))]
        if st.kind == "listop":  # `ys + [v]`, `[v] * 2`: list or NumPy operators, told apart at run time
            parts = [as_code(self.d(a.id)) if is_name(a) and a.id in self.active else self.zero_of(a)
                     for a in st.args]
            symbol = "+" if isinstance(st.expr.op, n.Add) else "*"
            return [primal, self.define(t, code_expr("list_op_tangent(P, Q, A, B, T, S, BATCH)", P=parts[0],
                                                     Q=parts[1], A=st.args[0], B=st.args[1], T=t,
                                                     S=ast.Constant(value=symbol), BATCH=bool(self.batch)))]
        if st.kind == "sequence":  # np.stack(ys, axis) of a list held by a name
            name = st.args[0].id
            if name not in self.active:
                return [primal, self.define(t, self.zero(t))]
            return [primal, self.define(t, code_expr("sequence_tangent(D, YS, AXIS, KIND, BATCH)", D=self.d(name),
                                                     YS=st.args[0], AXIS=st.static["axis"],
                                                     KIND=ast.Constant(value=st.container), BATCH=bool(self.batch)))]
        if st.kind == "dict":  # dict(zip(keys, values)): the dict of the values' tangents
            if st.args[0].id not in self.active:
                return [primal, self.define(t, self.zero(t))]
            return [primal, self.define(t, code_expr("dict_tangent(D, KEYS, VALUES, BATCH)", D=self.d(st.args[0].id),
                                                     KEYS=st.index, VALUES=st.args[0], BATCH=bool(self.batch)))]
        if st.kind == "call":
            return self.call(st)
        if not any(name in self.active for _, name in jvp_args(st)):
            # an active name rebound to a value of inactive operands (`x0 = w @ w`, w a constant)
            return [primal, self.define(t, self.zero(t))]
        tangent = self.prim_tangent(st)
        if getattr(st, "tangent_first", False):
            if t not in read_names(tangent):
                return [self.define(t, tangent), primal]
            temp = self.namer.unique("_" + t)  # the tangent reads the new value: keep a temporary
            self.kinds.kinds[temp] = self.kinds.kinds.get(t, "array")
            st.target = temp
            tangent = self.prim_tangent(st)
            st.target = t
            return [assign(temp, st.expr), assign(self.d(temp), tangent), assign(t, temp),
                    self.define(t, as_code(self.d(temp)))]
        return [primal, self.define(t, tangent)]

    def prim_tangent(self, st):
        """The op's tangent expression (standard ast)."""
        prim, t = st.spec.prim, st.target
        if prim.jvp is None:
            raise TransformError(f"[{self.module.api}] {st.text!r}: `{prim.name}` has no JVP rule in the "
                                 "registry, so forward mode cannot differentiate it.\n  Declare jvp= in its "
                                 "defop, or use reverse mode (dualtape.transforms.grad).")
        active = [(k, name) for k, name in jvp_args(st) if name in self.active]
        ans = syntax.name(t)
        if self.batch and not prim.elementwise:
            vectorized = self.batch_tangent(st, active)
            if vectorized is not None:
                return vectorized
        if prim.jvp is LINEAR:
            tangent, covers = self.linear(st, active)
            tangents = [self.d(name) for _, name in active]
        else:
            terms, covers, tangents = [], False, []
            for k, name in active:
                rule = prim.jvp if prim.variadic else prim.jvp_rule(k)
                params = rule_template(rule)[0]
                # (a non-elementwise op's rule runs per direction inside `each`: lists stay lists)
                d = self.array_tangent(name, st) if prim.elementwise else syntax.name(self.d(name))
                mapping = {params[0]: d, params[1]: ans}
                star = star_param(rule) if prim.variadic else None
                if star:  # einsum_jvp_rule(dx, ans, *operands, argnum, subscripts)
                    mapping[star] = n.Tuple(elts=[syntax.copy(a) for a in st.args], ctx=n.Load())
                else:
                    for pname, atom in zip(params[2:], st.args):
                        if atom is not None:
                            mapping[pname] = syntax.copy(atom)
                if prim.variadic:
                    mapping["argnum"] = syntax.constant(k)
                for sname, snode in st.static.items():
                    mapping[sname] = syntax.copy(snode)
                if self.batch and prim.elementwise and len(st.args) > 1 and not self.kinds.is_scalar(ans):
                    mapping[params[0]] = expr("bt(D, T)", D=self.array_tangent(name, st), T=t)
                terms.append(tidy.simplify(instantiate(rule, mapping), self.is_scalar, self.optimize))
                tangents.append(self.d(name))
                uses = rule_uses(rule)
                others = [p for j, (p, a) in enumerate(zip(params[2:], st.args))
                          if j != k and a is not None and not self.kinds.is_scalar(a)]
                covers = covers or "ans" in uses or params[1] in uses or all(p in uses for p in others)
            if square(st, active, terms):  # x * x: dx * x + x * dx is 2 * (dx * x), the same bits in one op less
                terms = [n.BinOp(left=syntax.constant(2), op=n.Mult(), right=terms[0])]
            total = terms[0]
            for term in terms[1:]:
                total = n.BinOp(left=total, op=n.Add(), right=term)
            tangent = tidy.simplify(total, self.is_scalar, self.optimize)
        tangent = as_code(tangent)
        if self.batch and not prim.elementwise:
            ds = sorted(set(tangents))
            each = ast.Lambda(args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=d) for d in ds], vararg=None,
                                                 kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
                              body=tangent)
            tangent = call_of("each", [each] + ds)
        elif prim.elementwise and not covers and not self.kinds.is_scalar(ans):
            if self.batch:
                self.uses_k = True
                tangent = code_expr("broadcast_batch(E, T, _k)", E=tangent, T=t)
            else:
                tangent = code_expr("broadcast_tangent(E, T)", E=tangent, T=t)
        return tangent

    def linear(self, st, active, batch=False):
        """A LINEAR op applied to the tangents: (gast expression, covers the full output shape).

        Every differentiable input that is not an active name (a constant, a literal, an
        inactive array) gets a zero tangent, never its own value: `np.add(x, 1.5)` gives
        `dx`, `np.concatenate([x, c])` gives `np.concatenate([dx, zeros_like(c)])`.
        batch: the op on (k, ...) tangents with its axes shifted past the batch axis (see
        `batch_statics`); callers only ask for ops in BATCH_AXIS_OPS.
        """
        prim = st.spec.prim
        active_names = {name for _, name in active}
        e = st.expr
        if prim.name in ("AddV2", "Sub") and len(st.args) == 2:  # `x + c`, or np.add(x, c)
            left, right = st.args
            lname = left.id if is_name(left) and left.id in active_names else None
            rname = right.id if is_name(right) and right.id in active_names else None
            if self.batch and len(active_names) == 2 and not self.kinds.is_scalar(syntax.name(st.target)):
                a, b = (expr("bt(D, T)", D=self.d(x), T=st.target) for x in (lname, rname))
            else:
                a, b = (syntax.name(self.d(x)) if x else None for x in (lname, rname))
            op = n.Add() if prim.name == "AddV2" else n.Sub()
            if a and b:
                return n.BinOp(left=a, op=op, right=b), True
            if a:
                return a, self.kinds.is_scalar(right)
            return (b if isinstance(op, n.Add) else n.UnaryOp(op=n.USub(), operand=b)), self.kinds.is_scalar(left)
        if isinstance(e, n.UnaryOp):
            return n.UnaryOp(op=n.USub(), operand=syntax.name(self.d(active[0][1]))), True
        e = syntax.copy(e)
        inputs, statics = self.bound(st, e)
        mapping = {}
        for k, a in enumerate(inputs):
            if a is None or k in prim.nondiff_argnums:
                continue
            if is_name(a) and a.id in active_names:
                mapping[id(a)] = self.array_tangent(a.id, st) if batch else syntax.name(self.d(a.id))
            elif batch:
                self.uses_k = True
                mapping[id(a)] = expr("zeros_batch(A, _k)", A=a)
            else:
                mapping[id(a)] = self.zero_single(a)
        if batch:
            self.batch_statics(st, e, inputs, statics, mapping)
        node = ById(mapping).visit(e)
        return tidy.simplify(node, self.is_scalar, self.optimize), True

    def batch_tangent(self, st, active):
        """The vector tangent (standard ast) of a non-elementwise op in one call, or None (then `each`)."""
        prim, t = st.spec.prim, st.target
        ds = {name: self.array_tangent(name, st) for _, name in active}
        if prim.jvp is LINEAR and prim.name in BATCH_AXIS_OPS and isinstance(st.expr, n.Call):
            return as_code(self.linear(st, active, batch=True)[0])
        if prim.jvp is LINEAR and len(active) == 1 and active[0][0] == 0:
            d = ds[active[0][1]]
            if prim.name == "Reshape":
                self.uses_k = True
                return code_expr("np.reshape(D, (_k,) + np.shape(T))", D=d, T=t)
            if prim.name == "Transpose":
                _, statics = self.bound(st, syntax.copy(st.expr))
                return code_expr("np.transpose(D, batch_axes(AXES, X))", D=d, AXES=statics.get("axes"),
                                 X=st.args[0])
            if prim.name == "BroadcastTo":
                self.uses_k = True
                return code_expr("broadcast_batch(D, T, _k)", D=d, T=t)
        if prim.name == "MatMul" and len(st.args) == 2:
            dx = ds.get(st.args[0].id) if is_name(st.args[0]) else None
            dy = ds.get(st.args[1].id) if is_name(st.args[1]) else None
            return code_expr("matmul_batch(X, Y, DX, DY)", X=st.args[0], Y=st.args[1], DX=dx, DY=dy)
        if prim.name in BATCH_AWARE_HELPERS and [k for k, _ in active] == [0] and callable(prim.jvp_rule(0)):
            rule = prim.jvp_rule(0)  # `unbroadcast(dg, shape)`: the helper, told that dg has rows
            params = rule_template(rule)[0]
            mapping = {params[0]: ds[active[0][1]], params[1]: syntax.name(t)}
            for pname, atom in zip(params[2:], st.args):
                if atom is not None:
                    mapping[pname] = syntax.copy(atom)
            helper = instantiate(rule, mapping)
            if isinstance(helper, n.Call):
                helper.args = [syntax.copy(helper.func)] + helper.args
                helper.func = syntax.name("rows")
                return as_code(helper)
        return None

    def zero_single(self, atom):
        """The zero tangent (gast) of one direction (inside `each`, or without vector tangents)."""
        if self.kinds.is_scalar(atom):
            return syntax.constant(0.0)
        return expr("zeros_like(A)", A=atom)

    def bound(self, st, call):
        """(input nodes, {static name: node}) inside this copy of the op's call."""
        if not isinstance(call, n.Call):
            return [], {}
        keywords = {k.arg: k.value for k in call.keywords}
        inputs, statics = st.spec.bind(list(call.args), keywords)
        if st.spec.prim.variadic and st.spec.wrapper is None:
            inputs = list(call.args)
        return inputs, statics

    def batch_statics(self, st, call, inputs, statics, mapping):
        """Shift the op's axis arguments past the batch axis: `np.sum(x, axis=0)` on (k, ...)
        tangents is `np.sum(dx, axis=batch_axis(0, x))`; an absent axis is added by keyword."""
        name = st.spec.prim.name
        ref = st.target if name in ("ExpandDims", "Pack") else inputs[0]
        for key in (("axis1", "axis2") if name == "Swapaxes" else ("axis",)):
            node = statics.get(key)
            if node is not None and (any(node is a for a in call.args) or any(node is k.value for k in call.keywords)):
                mapping[id(node)] = expr("batch_axis(A, R)", A=node, R=ref)
            else:
                call.keywords.append(n.keyword(arg=key, value=expr("batch_axis(A, R)", A=node, R=ref)))

    def is_scalar(self, node):
        if is_name(node) and node.id in self.tangents.values():
            return False
        return self.kinds.is_scalar(node)

    def call(self, st):
        if getattr(st, "odeint", None) is not None:  # scipy.integrate.odeint: forward sensitivities
            return odeint_tangent(self, st)
        wrt, names, kinds = call_wrt(st, self.active, self.kinds)
        if not wrt:
            return [assign(st.target, st.expr), self.define(st.target, self.zero(st.target))]
        name, tparams = self.module.forward_helper(st.fn, tuple(wrt), kinds, self.optimize, self.batch, st)
        dargs = [self.d(x) for x in names]
        keywords = list(st.keywords.items()) + list(zip(tparams, dargs))
        target = self.d(st.target)
        out = [assign([st.target, target], call_of(name, st.args, keywords))]
        if st.target in self.mutable:
            out.append(code_stmt("D = owned(D)", D=target))
        return out


def square(st, active, terms):
    """Whether `st` is `x * x` (both operands one active name) whose two tangent terms are one
    product with its operands swapped (`dx * x`, `x * dx`): their sum is `2 * (dx * x)`, the
    same bits (a product commutes, and a + a is 2 * a exactly)."""
    if st.spec.prim.name != "Mul" or len(st.args) != 2 or len(active) != 2 or len(terms) != 2:
        return False
    a, b = st.args
    if not (is_name(a) and is_name(b) and a.id == b.id):
        return False
    first, second = terms
    return (isinstance(first, n.BinOp) and isinstance(first.op, n.Mult) and isinstance(second, n.BinOp)
            and isinstance(second.op, n.Mult) and syntax.unparse(first.left) == syntax.unparse(second.right)
            and syntax.unparse(first.right) == syntax.unparse(second.left))
