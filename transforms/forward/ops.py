"""Forward mode, one operation: the tangent lines of a primitive call (its JVP rules inlined),
of a LINEAR op, of a call to a user function, single or batched over k directions
(`Forward` in forward.py writes the whole function)."""

import inspect

from dualtape.core.registry import LINEAR

from ..ir import syntax
from ..optimize import tidy
from ..ir.syntax import nodes as n
from ..ir.analysis import call_wrt
from .analysis import jvp_args
from ..frontend.normalize import is_name
from ..calls.odeint import tangent_lines as odeint_tangent_lines
from ..frontend.parse import TransformError
from ..reverse.simplify import index_expr
from ..templates.rules import instantiate, rule_template, rule_uses

IND = "    "


class _ById(syntax.NodeTransformer):
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


def _star_param(rule):
    star = [p.name for p in inspect.signature(rule).parameters.values() if p.kind == p.VAR_POSITIONAL]
    return star[0] if star else None


class _OpTangents:
    """The tangent lines of one operation (a primitive, a LINEAR op, a call), single or batched;
    mixed into `forward.Forward`, whose state (`active`, `d`, `src`, ...) they use."""

    def op(self, st):
        primal = f"{st.target} = {self.src(st.expr)}"
        if st.target not in self.static_active:
            return [primal]
        t = st.target
        if st.kind == "copy":
            name = st.args[0].id
            return [primal, self.define(t, self.d(name) if name in self.active else self.zero(t))]
        if st.kind == "getitem":
            name = st.args[0].id
            if name not in self.active:
                return [primal, self.define(t, self.zero(t))]
            if self.batch:
                return [primal, self.define(t, f"tangent_item({self.d(name)}, {self.src(index_expr(st.index))})")]
            return [primal, self.define(t, self.tangent_sub(name, st.index))]
        if st.kind == "pack":
            parts = [self.d(a.id) if is_name(a) and a.id in self.active else self.zero_of(a) for a in st.args]
            expr = f"({', '.join(parts)}{',' if len(parts) == 1 else ''})" if st.container == "tuple" else f"[{', '.join(parts)}]"
            return [primal, self.define(t, expr)]
        if st.kind == "listop":  # `ys + [v]`, `[v] * 2`: list or NumPy operators, told apart at run time
            parts = [self.d(a.id) if is_name(a) and a.id in self.active else self.zero_of(a) for a in st.args]
            a, b = (self.src(x) for x in st.args)
            symbol = "+" if isinstance(st.expr.op, n.Add) else "*"
            return [primal, self.define(t, f"list_op_tangent({parts[0]}, {parts[1]}, {a}, {b}, {t}, "
                                           f"{symbol!r}, {bool(self.batch)})")]
        if st.kind == "call":
            return self.call(st)
        if not any(name in self.active for _, name in jvp_args(st)):
            # an active name rebound to a value of inactive operands (`x0 = w @ w`, w a constant)
            return [primal, self.define(t, self.zero(t))]
        expr = self.prim_tangent(st)
        if getattr(st, "tangent_first", False):
            if t not in syntax.load_names(syntax.parse_expr(expr)):
                return [self.define(t, expr), primal]
            temp = self.namer.unique("_" + t)  # the tangent reads the new value: keep a temporary
            self.kinds.kinds[temp] = self.kinds.kinds.get(t, "array")
            st.target = temp
            expr = self.prim_tangent(st)
            st.target = t
            return [f"{temp} = {self.src(st.expr)}", f"{self.d(temp)} = {expr}", f"{t} = {temp}",
                    self.define(t, self.d(temp))]
        return [primal, self.define(t, expr)]

    def prim_tangent(self, st):
        prim, spec, t = st.spec.prim, st.spec, st.target
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
            expr, covers = self.linear(st, active)
            tangents = [self.d(name) for _, name in active]
        else:
            terms, covers, tangents = [], False, []
            for k, name in active:
                rule = prim.jvp if prim.variadic else prim.jvp_rule(k)
                params = rule_template(rule)[0]
                # (a non-elementwise op's rule runs per direction inside `each`: lists stay lists)
                d = self.array_tangent(name, st) if prim.elementwise else self.d(name)
                mapping = {params[0]: syntax.parse_expr(d), params[1]: ans}
                star = _star_param(rule) if prim.variadic else None
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
                    mapping[params[0]] = syntax.parse_expr(f"bt({self.array_tangent(name, st)}, {t})")
                expr_node = tidy.simplify(instantiate(rule, mapping), self._is_scalar, self.optimize)
                terms.append(expr_node)
                tangents.append(self.d(name))
                uses = rule_uses(rule)
                others = [p for j, (p, a) in enumerate(zip(params[2:], st.args))
                          if j != k and a is not None and not self.kinds.is_scalar(a)]
                covers = covers or "ans" in uses or params[1] in uses or all(p in uses for p in others)
            total = terms[0]
            for term in terms[1:]:
                total = n.BinOp(left=total, op=n.Add(), right=term)
            expr = syntax.unparse(tidy.simplify(total, self._is_scalar, self.optimize))
        if self.batch and not prim.elementwise:
            ds = sorted(set(t for t in tangents if t.isidentifier()))
            expr = f"each(lambda {', '.join(ds)}: {expr}, {', '.join(ds)})"
        elif prim.elementwise and not covers and not self.kinds.is_scalar(ans):
            if self.batch:
                self.uses_k = True
                expr = f"broadcast_batch({expr}, {t}, _k)"
            else:
                expr = f"broadcast_tangent({expr}, {t})"
        return expr

    def linear(self, st, active, batch=False):
        """A LINEAR op applied to the tangents: (source, covers the full output shape).

        Every differentiable input that is not an active name (a constant, a literal, an
        inactive array) gets a zero tangent, never its own value: `np.add(x, 1.5)` gives
        `dx`, `np.concatenate([x, c])` gives `np.concatenate([dx, zeros_like(c)])`.
        batch: the op on (k, ...) tangents with its axes shifted past the batch axis (see
        `_batch_statics`); callers only ask for ops in BATCH_LINEAR.
        """
        prim = st.spec.prim
        active_names = {name for _, name in active}
        e = st.expr
        if prim.name in ("AddV2", "Sub") and len(st.args) == 2:  # `x + c`, or np.add(x, c)
            left, right = st.args
            lname = left.id if is_name(left) and left.id in active_names else None
            rname = right.id if is_name(right) and right.id in active_names else None
            if self.batch and len(active_names) == 2 and not self.kinds.is_scalar(syntax.name(st.target)):
                a, b = f"bt({self.d(lname)}, {st.target})", f"bt({self.d(rname)}, {st.target})"
            else:
                a, b = (self.d(lname) if lname else None), (self.d(rname) if rname else None)
            sign = "+" if prim.name == "AddV2" else "-"
            if a and b:
                return f"{a} {sign} {b}", True
            if a:
                return a, self.kinds.is_scalar(right)
            return (b if sign == "+" else f"-{b}"), self.kinds.is_scalar(left)
        if isinstance(e, n.UnaryOp):
            return f"-{self.d(active[0][1])}", True
        e = syntax.copy(e)
        inputs, statics = self._bound(st, e)
        mapping = {}
        for k, a in enumerate(inputs):
            if a is None or k in prim.nondiff_argnums:
                continue
            if is_name(a) and a.id in active_names:
                mapping[id(a)] = syntax.parse_expr(self.array_tangent(a.id, st) if batch else self.d(a.id))
            elif batch:
                self.uses_k = True
                mapping[id(a)] = syntax.parse_expr(f"zeros_batch({self.src(a)}, _k)")
            else:
                mapping[id(a)] = syntax.parse_expr(self.zero_single(a))
        if batch:
            self._batch_statics(st, e, inputs, statics, mapping)
        node = _ById(mapping).visit(e)
        return syntax.unparse(tidy.simplify(node, self._is_scalar, self.optimize)), True

    def batch_tangent(self, st, active):
        """The vector tangent of a non-elementwise op in one call, or None (then `each`)."""
        prim, t = st.spec.prim, st.target
        ds = {name: self.array_tangent(name, st) for _, name in active}
        if prim.jvp is LINEAR and prim.name in BATCH_AXIS_OPS and isinstance(st.expr, n.Call):
            return self.linear(st, active, batch=True)[0]
        if prim.jvp is LINEAR and len(active) == 1 and active[0][0] == 0:
            d = ds[active[0][1]]
            x = self.src(st.args[0])
            if prim.name == "Reshape":
                self.uses_k = True
                return f"np.reshape({d}, (_k,) + np.shape({t}))"
            if prim.name == "Transpose":
                _, statics = self._bound(st, syntax.copy(st.expr))
                axes = self.src(statics["axes"]) if statics.get("axes") is not None else "None"
                return f"np.transpose({d}, batch_axes({axes}, {x}))"
            if prim.name == "BroadcastTo":
                self.uses_k = True
                return f"broadcast_batch({d}, {t}, _k)"
        if prim.name == "MatMul" and len(st.args) == 2:
            x, y = (self.src(a) for a in st.args)
            dx = ds.get(st.args[0].id) if is_name(st.args[0]) else None
            dy = ds.get(st.args[1].id) if is_name(st.args[1]) else None
            return f"matmul_batch({x}, {y}, {dx or 'None'}, {dy or 'None'})"
        if prim.name in BATCH_AWARE_HELPERS and [k for k, _ in active] == [0] and callable(prim.jvp_rule(0)):
            rule = prim.jvp_rule(0)  # `unbroadcast(dg, shape)`: the helper, told that dg has rows
            params = rule_template(rule)[0]
            mapping = {params[0]: syntax.name(ds[active[0][1]]), params[1]: syntax.name(t)}
            for pname, atom in zip(params[2:], st.args):
                if atom is not None:
                    mapping[pname] = syntax.copy(atom)
            call = instantiate(rule, mapping)
            if isinstance(call, n.Call):
                call.args = [syntax.copy(call.func)] + call.args
                call.func = syntax.name("rows")
                return syntax.unparse(call)
        return None

    def zero_single(self, atom):
        """The zero tangent of one direction (inside `each`, or without vector tangents)."""
        if self.kinds.is_scalar(atom):
            return "0.0"
        return f"zeros_like({self.src(atom)})"

    def _bound(self, st, call):
        """(input nodes, {static name: node}) inside this copy of the op's call."""
        if not isinstance(call, n.Call):
            return [], {}
        keywords = {k.arg: k.value for k in call.keywords}
        inputs, statics = st.spec.bind(list(call.args), keywords)
        if st.spec.prim.variadic and st.spec.wrapper is None:
            inputs = list(call.args)
        return inputs, statics

    def _batch_statics(self, st, call, inputs, statics, mapping):
        """Shift the op's axis arguments past the batch axis: `np.sum(x, axis=0)` on (k, ...)
        tangents is `np.sum(dx, axis=batch_axis(0, x))`; an absent axis is added by keyword."""
        name = st.spec.prim.name
        ref = st.target if name in ("ExpandDims", "Pack") else self.src(inputs[0])
        for key in (("axis1", "axis2") if name == "Swapaxes" else ("axis",)):
            node = statics.get(key)
            if node is not None and (any(node is a for a in call.args) or any(node is k.value for k in call.keywords)):
                mapping[id(node)] = syntax.parse_expr(f"batch_axis({self.src(node)}, {ref})")
            else:
                default = self.src(node) if node is not None else "None"
                call.keywords.append(n.keyword(arg=key, value=syntax.parse_expr(f"batch_axis({default}, {ref})")))

    def _is_scalar(self, node):
        if is_name(node) and node.id in self.namer._adjoints.values():
            return False
        return self.kinds.is_scalar(node)

    def call(self, st):
        if getattr(st, "odeint", None) is not None:  # scipy.integrate.odeint: forward sensitivities
            return odeint_tangent_lines(self, st)
        wrt, names, kinds = call_wrt(st, self.active, self.kinds)
        dargs = [self.d(name) for name in names]
        primal = f"{st.target} = {self.src(st.expr)}"
        if not wrt:
            return [primal, self.define(st.target, self.zero(st.target))]
        name, tparams = self.module.forward_helper(st.fn, tuple(wrt), kinds, self.optimize, self.batch, st)
        args = [self.src(a) for a in st.args] + [f"{k}={self.src(a)}" for k, a in st.keywords.items()]
        args += [f"{p}={d}" for p, d in zip(tparams, dargs)]
        target = self.d(st.target)
        if st.target in self.mutable:
            return [f"{st.target}, {target} = {name}({', '.join(args)})", f"{target} = owned({target})"]
        return [f"{st.target}, {target} = {name}({', '.join(args)})"]
