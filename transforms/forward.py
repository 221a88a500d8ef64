"""Forward mode by source transformation: each statement, then its tangent statement.

The tangent of `x` is `dx`. Each tangent line is the sum of the op's JVP rules from the
registry (`mul_jvp_x(dx, ans, x, y): return dx * y`), instantiated like the reverse
templates: `z = x * y` gets `dz = dx * y + x * dy`. `LINEAR` ops apply themselves to the
tangents (`dz = np.sum(dx, axis=0)`). Control flow is kept as written: forward mode never
needs a stack, except to read adjoint code, whose `_stack` gets a tangent twin `_dstack`.

Vector tangents (`batch=True`): every tangent has a leading axis of k directions.
Elementwise rules run on all of them at once (`bt` lines the axes up); so do matmul, the
axis ops (sum, mean, concatenate, stack, ...: axes shifted by `batch_axis`), reshape,
transpose, broadcast_to and the batch-aware adjoint helpers (`rows(unbroadcast, ...)`);
other ops map their single-direction rule over the directions (`each`).
"""

import re

from dualtape.core.registry import LINEAR

from . import _gast, tidy
from ._gast import nodes as n
from .analysis import Kinds, activity, call_wrt, walk_items
from .forward_analysis import _merge_split_copies, jvp_args
from .fwd_rules import Pop, Push
from .naming import Namer
from .normalize import For, If, Op, Primal, SetItem, While, is_name
from .parse import TransformError
from .reverse_util import index_expr, live_body
from .runtime_names import RUNTIME_NAMES
from .templates import instantiate, rule_template, rule_uses

IND = "    "


class _ById(_gast.NodeTransformer):
    """Replace nodes by identity (the inputs of one call), not by name."""

    def __init__(self, mapping):
        self.mapping = mapping

    def visit(self, node):
        if id(node) in self.mapping:
            return _gast.copy(self.mapping[id(node)])
        return super().visit(node)


# LINEAR ops whose vector tangent is the op itself with its axis arguments shifted past the
# batch axis (as dualtape.batching does at run time); ops in neither set loop over the
# directions with `each`.
BATCH_AXIS_OPS = {"Sum", "Mean", "ConcatV2", "Pack", "ExpandDims", "Swapaxes"}
# Adjoint helpers whose rule for the cotangent g accepts leading batch axes (rulekit.BATCH_NDIM).
BATCH_AWARE_HELPERS = {"unbroadcast", "unreduce", "keepdims_shape", "matmul_cotangent_x", "matmul_cotangent_y",
                       "matmul_vjp_left", "matmul_vjp_right", "einsum_vjp_rows"}


def _star_param(rule):
    import inspect
    star = [p.name for p in inspect.signature(rule).parameters.values() if p.kind == p.VAR_POSITIONAL]
    return star[0] if star else None


class Forward:
    """Generates one tangent function (value and J @ tangents) from a normalized function."""

    def __init__(self, fir, wrt_names, param_kinds, module, optimize, batch=False, value_only=0):
        self.fir, self.module, self.optimize, self.batch = fir, module, optimize, batch
        self.wrt = list(wrt_names)
        self.ret_names, body = live_body(fir, optimize)
        self.body = _merge_split_copies(body)
        # hvp reads an adjoint that also returns f's value (its last output): the tangent code
        # checks that it is a scalar instead of returning it (a Hessian is of a scalar function)
        self.value_only = value_only
        tangent_rets = [a.id for a in fir.ret[:len(fir.ret) - value_only] if is_name(a)]
        self.active = activity(self.body, wrt_names, tangent_rets, optimize, args_of=jvp_args)
        self.kinds = Kinds(self.body, param_kinds, fir.info.namespace, fir.locals)
        self.namer = Namer(fir.used | RUNTIME_NAMES)  # never shadow a helper (`bt`, `rows`)
        self.mutable = {s.target for s in walk_items(self.body) if isinstance(s, SetItem)}
        self.packs = {s.target for s in walk_items(self.body) if isinstance(s, Op) and s.kind == "pack"}
        self.uses_k = False
        self.uses_dstack = False

    # -- names and small pieces ----------------------------------------------------------------
    def d(self, var):
        """The tangent of `var`: `d` + var (suffixed if the user already uses that name)."""
        if var not in self.namer._adjoints:
            self.namer._adjoints[var] = self.namer.unique("d" + var)
        return self.namer._adjoints[var]

    def zero(self, var):
        if self.batch:
            self.uses_k = True
            return f"zeros_batch({var}, _k)"
        if self.kinds.kinds.get(var) == "scalar":
            return "0.0"
        return f"zeros_like({var})"

    def zero_of(self, atom):
        """A zero tangent for an inactive atom (a name or an expression)."""
        if is_name(atom):
            return self.zero(atom.id)
        if self.kinds.is_scalar(atom) and not self.batch:
            return "0.0"
        src = _gast.unparse(atom)
        return self.zero(f"({src})") if self.batch else f"zeros_like({src})"

    def src(self, node):
        return _gast.unparse(node)

    def define(self, var, expr):
        """`dvar = expr`, copied first where the tangent is later written into (`dx[i] = ...`).

        A tangent that is another tangent itself (`v = np.copy(u)` or `v = u + 1.0` give
        `dv = du`) is copied too when that other one is written into: the primal `v` holds
        new memory, so `u[i] = ...` must not change `dv` (issue 9, explicit schemes)."""
        source = next((v for v, d in self.namer._adjoints.items() if d == expr), None) if expr.isidentifier() else None
        if ((var in self.mutable or (source in self.mutable and source != var))
                and not expr.startswith(("zeros_like(", "zeros_batch("))):
            expr = f"owned({expr})"
        return f"{self.d(var)} = {expr}"

    def array_tangent(self, name, st):
        """The tangent of `name` as an op's array operand. A list `y = [a, b]` has the list of its
        items' tangents; NumPy reads the list as an array, so with vector tangents the batch axis
        must come first: `batch_array(dy)`, (k, n, ...) (issue 9). Not where `+`/`*` may be
        Python's list concatenation or repetition (the other operand a list or an int)."""
        d = self.d(name)
        if not self.batch or name not in self.packs:
            return d
        if st.spec.prim.name in ("AddV2", "Mul") and isinstance(st.expr, n.BinOp) and any(
                (is_name(a) and a.id != name and a.id in self.packs) or isinstance(a, (n.List, n.Tuple))
                or (_gast.is_constant(a) and isinstance(a.value, int)) for a in st.args):
            return d
        return f"batch_array({d})"

    def tangent_sub(self, var, index):
        """`dx[index]` (or `dx[:, index]` for vector tangents) as source."""
        node = n.Subscript(value=_gast.name(self.d(var)), slice=_gast.copy(index), ctx=n.Load())
        if self.batch:
            elts = index.elts if isinstance(index, n.Tuple) else [index]
            node.slice = n.Tuple(elts=[n.Slice(lower=None, upper=None, step=None)] + [_gast.copy(e) for e in elts],
                                 ctx=n.Load())
        return _gast.unparse(node)

    # -- statements --------------------------------------------------------------------------------
    def block(self, items):
        lines = []
        last = [None]
        for st in items:
            lines += self.stmt(st, last)
        return lines

    def _comment(self, st, first_line, last):
        text = getattr(st, "text", "")
        if text and text != last[0]:
            last[0] = text
            if first_line.strip() != text:
                return [f"# {text}"]
        return []

    def stmt(self, st, last):
        if isinstance(st, (Op, Primal, SetItem, Push, Pop)):
            body = self.simple(st)
            return self._comment(st, body[0], last) + body if body else []
        last[0] = None
        if isinstance(st, If):
            body = self.block(st.body) or ["pass"]
            orelse = self.block(st.orelse)
            lines = [f"if {self.src(st.test)}:"] + [IND + x for x in body]
            if orelse:
                lines += ["else:"] + [IND + x for x in orelse]
            return lines
        if isinstance(st, For):
            body = self.block(st.body)
            target = getattr(st, "target_node", None)  # a loop over an inactive sequence, kept as written
            if target is not None:
                # its targets take inactive values each pass: zero tangents, in case the body makes
                # them active (issue 9: `for t, b in enumerate(c): (x, b) = (x, b)` read an unbound `db`)
                body = [self.define(w, self.zero(w)) for w in sorted(_gast.store_names(target) & self.active)] + body
            if st.break_flag:
                body += [f"if {st.break_flag}:", IND + "break"]
            return [f"for {st.var} in {self.src(st.iter)}:"] + [IND + x for x in (body or ["pass"])]
        if isinstance(st, While):
            body = self.block(st.body)
            if st.break_flag:
                body += [f"if {st.break_flag}:", IND + "break"]
            return [f"while {self.src(st.test)}:"] + [IND + x for x in (body or ["pass"])]
        raise AssertionError(f"unknown statement {type(st).__name__}")

    def simple(self, st):
        if isinstance(st, Primal):
            lines = self.src(st.node).split("\n")
            if st.pure:
                lines += [self.define(w, self.zero(w)) for w in sorted(st.writes & self.active)]
            return lines
        if isinstance(st, SetItem):
            target = _gast.unparse(n.Subscript(value=_gast.name(st.target), slice=_gast.copy(st.index), ctx=n.Load()))
            lines = [f"{target} = {self.src(st.value)}"]
            if st.target in self.active:
                value = self.d(st.value.id) if is_name(st.value) and st.value.id in self.active else "0.0"
                if self.batch and value != "0.0":  # (k, *v) lined up with (k, *y[i]): `y[[1]] = a`
                    value = f"bt({value}, {target})"
                lines.append(f"{self.tangent_sub(st.target, st.index)} = {value}")
            return lines
        if isinstance(st, Push):
            return [self.src(st.node)] + self.push(st)
        if isinstance(st, Pop):
            return [self.src(st.node)] + self.pop(st)
        return self.op(st)

    # -- the tangent stack ----------------------------------------------------------------------
    def _stack_items(self, node):
        """Tangent sources of the active values in a pushed value or popped target."""
        elts = node.elts if isinstance(node, (n.Tuple, n.List)) else [node]
        out = []
        for e in elts:
            if isinstance(e, n.Call) and e.args:  # saved(x[i])
                e = e.args[0]
            if is_name(e) and e.id in self.active:
                out.append(self.d(e.id))
            elif isinstance(e, n.Subscript) and is_name(e.value) and e.value.id in self.active:
                out.append(self.tangent_sub(e.value.id, e.slice))
        return out

    def push(self, st):
        items = self._stack_items(st.value)
        if not items:
            return []
        self.uses_dstack = True
        value = items[0] if len(items) == 1 else f"({', '.join(items)})"
        if isinstance(st.value, n.Call):
            value = f"saved({value})"
        return [f"_dstack.append({value})"]

    def pop(self, st):
        items = self._stack_items(st.target)
        if not items:
            return []
        self.uses_dstack = True
        return [f"{', '.join(items)} = _dstack.pop()"]

    # -- one operation ------------------------------------------------------------------------------
    def op(self, st):
        primal = f"{st.target} = {self.src(st.expr)}"
        if st.target not in self.active:
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
        if st.kind == "call":
            return self.call(st)
        if not any(name in self.active for _, name in jvp_args(st)):
            # an active name rebound to a value of inactive operands (`x0 = w @ w`, w a constant)
            return [primal, self.define(t, self.zero(t))]
        expr = self.prim_tangent(st)
        if getattr(st, "tangent_first", False):
            if t not in _gast.load_names(_gast.parse_expr(expr)):
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
        ans = _gast.name(t)
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
                mapping = {params[0]: _gast.parse_expr(d), params[1]: ans}
                star = _star_param(rule) if prim.variadic else None
                if star:  # einsum_jvp_rule(dx, ans, *operands, argnum, subscripts)
                    mapping[star] = n.Tuple(elts=[_gast.copy(a) for a in st.args], ctx=n.Load())
                else:
                    for pname, atom in zip(params[2:], st.args):
                        if atom is not None:
                            mapping[pname] = _gast.copy(atom)
                if prim.variadic:
                    mapping["argnum"] = _gast.constant(k)
                for sname, snode in st.static.items():
                    mapping[sname] = _gast.copy(snode)
                if self.batch and prim.elementwise and len(st.args) > 1 and not self.kinds.is_scalar(ans):
                    mapping[params[0]] = _gast.parse_expr(f"bt({self.array_tangent(name, st)}, {t})")
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
            expr = _gast.unparse(tidy.simplify(total, self._is_scalar, self.optimize))
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
            if self.batch and len(active_names) == 2 and not self.kinds.is_scalar(_gast.name(st.target)):
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
        e = _gast.copy(e)
        inputs, statics = self._bound(st, e)
        mapping = {}
        for k, a in enumerate(inputs):
            if a is None or k in prim.nondiff_argnums:
                continue
            if is_name(a) and a.id in active_names:
                mapping[id(a)] = _gast.parse_expr(self.array_tangent(a.id, st) if batch else self.d(a.id))
            elif batch:
                self.uses_k = True
                mapping[id(a)] = _gast.parse_expr(f"zeros_batch({self.src(a)}, _k)")
            else:
                mapping[id(a)] = _gast.parse_expr(self.zero_single(a))
        if batch:
            self._batch_statics(st, e, inputs, statics, mapping)
        node = _ById(mapping).visit(e)
        return _gast.unparse(tidy.simplify(node, self._is_scalar, self.optimize)), True

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
                _, statics = self._bound(st, _gast.copy(st.expr))
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
            mapping = {params[0]: _gast.name(ds[active[0][1]]), params[1]: _gast.name(t)}
            for pname, atom in zip(params[2:], st.args):
                if atom is not None:
                    mapping[pname] = _gast.copy(atom)
            call = instantiate(rule, mapping)
            if isinstance(call, n.Call):
                call.args = [_gast.copy(call.func)] + call.args
                call.func = _gast.name("rows")
                return _gast.unparse(call)
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
                mapping[id(node)] = _gast.parse_expr(f"batch_axis({self.src(node)}, {ref})")
            else:
                default = self.src(node) if node is not None else "None"
                call.keywords.append(n.keyword(arg=key, value=_gast.parse_expr(f"batch_axis({default}, {ref})")))

    def _is_scalar(self, node):
        if is_name(node) and node.id in self.namer._adjoints.values():
            return False
        return self.kinds.is_scalar(node)

    def call(self, st):
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

    # -- the whole function ---------------------------------------------------------------------
    def generate(self, name):
        """Source of `def name(*params, *, d<wrt>...)` returning (value, tangent)."""
        fir = self.fir
        tparams = [self.d(w) for w in self.wrt]
        body = self.block(self.body)
        outs, douts = [], []
        checks = [f"check_scalar_output({self.src(a)}, {fir.info.name.rsplit('_', 1)[0]!r})"
                  for a in fir.ret[len(fir.ret) - self.value_only:]]
        for a in fir.ret[:len(fir.ret) - self.value_only]:
            outs.append(self.src(a))
            if is_name(a) and a.id in self.active:
                douts.append(self.d(a.id))
            elif self.batch:
                self.uses_k = True
                douts.append(f"zeros_batch({self.src(a)}, _k)")
            else:
                douts.append("0.0" if self.kinds.is_scalar(a) else f"zeros_like({self.src(a)})")
        if self.value_only and len(outs) == 1:  # `_t2 = (bx, by)` built only to be returned: return it
            outs, douts, body = self._inline_packed(outs, douts, body)
        ret_node = fir.info.node.body[-1].value if fir.info.node.body else None
        if len(outs) == 1 and (self.value_only or not isinstance(ret_node, n.Tuple)):
            ret = f"{outs[0]}, {douts[0]}"
        elif len(outs) == 1:
            ret = f"({outs[0]},), ({douts[0]},)"
        else:
            ret = f"({', '.join(outs)}), ({', '.join(douts)})"
        zeros = [self.define(p, self.zero(p)) for p in self.fir.params  # parameters that later hold varied values
                 if p in self.active and p not in self.wrt]
        pre = []
        if self.batch and self.uses_k:
            pre.append(f"_k = batch_size({tparams[0]})")
        if self.uses_dstack:
            pre.append("_dstack = []")
        pre += zeros
        for w in self.wrt:
            if w in self.mutable:
                pre.append(f"{self.d(w)} = owned({self.d(w)})")
        lines = [f"def {name}({self.signature(tparams)}):"]
        if fir.doc:
            lines.append(IND + f'"""Tangent of {fir.info.name}: generated by dualtape.transforms."""')
        lines += [IND + x for x in pre + body + checks + [f"return {ret}"]]
        return "\n".join(lines), tparams

    @staticmethod
    def _inline_packed(outs, douts, body):
        """`_t2 = (bx, by)`, `d_t2 = (dbx, dby)`, `return _t2, d_t2` as `return (bx, by), (dbx, dby)`."""
        found = {}
        for name in (outs[0], douts[0]):
            lines = [j for j, x in enumerate(body) if x.startswith(f"{name} = (")]
            uses = [x for x in body if re.search(rf"\b{re.escape(name)}\b", x)]
            if len(lines) != 1 or len(uses) != 1:
                return outs, douts, body
            found[name] = lines[0]
        values = [body[found[name]].split(" = ", 1)[1] for name in (outs[0], douts[0])]
        body = [x for j, x in enumerate(body) if j not in found.values()]
        while body and body[-1].startswith("# "):
            body.pop()
        return [values[0]], [values[1]], body

    def signature(self, tparams):
        args = self.fir.info.node.args
        positional = args.posonlyargs + args.args
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        parts = [a.id if d is None else f"{a.id}={_gast.unparse(d)}" for a, d in zip(positional, defaults)]
        kwonly = [a.id if d is None else f"{a.id}={_gast.unparse(d)}" for a, d in zip(args.kwonlyargs, args.kw_defaults)]
        if kwonly or any(d is not None for d in defaults):
            return ", ".join(parts + ["*"] + kwonly + tparams)
        return ", ".join(parts + tparams)
