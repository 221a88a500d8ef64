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

from ..ir import syntax
from ..reverse import symbolic_zeros
from ..ir.syntax import nodes as n
from ..ir.analysis import Kinds, activity, walk_items
from ..optimize.concrete import specialize
from .analysis import _merge_split_copies, jvp_args
from .ops import IND, _OpTangents
from .helper_rules import Pop, Push
from ..ir.naming import Namer
from ..frontend.normalize import For, If, Op, Primal, SetItem, While, is_name
from ..reverse.simplify import index_expr, live_body
from ..runtime.names import RUNTIME_NAMES


class Forward(_OpTangents):
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
        # static_active: the names that get a tangent variable; active: those whose tangents may
        # be nonzero at the statement being generated (symbolic_zeros.py), the only ones read
        self.static_active = activity(self.body, wrt_names, tangent_rets, optimize, args_of=jvp_args)
        self.active = set(self.wrt) & self.static_active
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
            return f"zeros_batch({var}, _k, items=True)" if var in self.mutable else f"zeros_batch({var}, _k)"
        if self.kinds.kinds.get(var) == "scalar":
            return "0.0"
        return f"zeros_like({var})"

    def zero_of(self, atom):
        """A zero tangent for an inactive atom (a name or an expression)."""
        if is_name(atom):
            return self.zero(atom.id)
        if self.kinds.is_scalar(atom) and not self.batch:
            return "0.0"
        src = syntax.unparse(atom)
        return self.zero(f"({src})") if self.batch else f"zeros_like({src})"

    def src(self, node):
        return syntax.unparse(node)

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
                or (syntax.is_constant(a) and isinstance(a.value, int)) for a in st.args):
            return d
        return f"batch_array({d})"

    def tangent_sub(self, var, index):
        """`dx[index]` (or `dx[:, index]` for vector tangents) as source."""
        node = n.Subscript(value=syntax.name(self.d(var)), slice=syntax.copy(index), ctx=n.Load())
        if self.batch:
            elts = index.elts if isinstance(index, n.Tuple) else [index]
            node.slice = n.Tuple(elts=[n.Slice(lower=None, upper=None, step=None)] + [syntax.copy(e) for e in elts],
                                 ctx=n.Load())
        return syntax.unparse(node)

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
            symbolic_zeros.tangent_step(st, self.active, self.static_active)
            return self._comment(st, body[0], last) + body if body else []
        last[0] = None
        if isinstance(st, If):
            entry = self.active
            self.active = set(entry)
            body = self.block(st.body) or ["pass"]
            after_body, self.active = self.active, set(entry)
            orelse = self.block(st.orelse)
            self.active |= after_body
            lines = [f"if {self.src(st.test)}:"] + [IND + x for x in body]
            if orelse:
                lines += ["else:"] + [IND + x for x in orelse]
            return lines
        if isinstance(st, For):
            targets = symbolic_zeros.loop_targets(st, self.static_active)
            body = self._loop_body(st, targets)
            if targets:
                # a loop over an inactive sequence, kept as written: its targets take inactive values
                # each pass: zero tangents, in case the body makes them active (issue 9: `for t, b in
                # enumerate(c): (x, b) = (x, b)` read an unbound `db`)
                body = [self.define(w, self.zero(w)) for w in sorted(targets)] + body
            if st.break_flag:
                body += [f"if {st.break_flag}:", IND + "break"]
            return [f"for {st.var} in {self.src(st.iter)}:"] + [IND + x for x in (body or ["pass"])]
        if isinstance(st, While):
            body = self._loop_body(st, set())
            if st.break_flag:
                body += [f"if {st.break_flag}:", IND + "break"]
            return [f"while {self.src(st.test)}:"] + [IND + x for x in (body or ["pass"])]
        raise AssertionError(f"unknown statement {type(st).__name__}")

    def _loop_body(self, st, targets):
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
            lines = self.src(st.node).split("\n")
            if st.pure:
                lines += [self.define(w, self.zero(w)) for w in sorted(st.writes & self.static_active)]
            return lines
        if isinstance(st, SetItem):
            target = syntax.unparse(n.Subscript(value=syntax.name(st.target), slice=syntax.copy(st.index), ctx=n.Load()))
            lines = [f"{target} = {self.src(st.value)}"]
            if st.target in self.static_active:
                value = self.d(st.value.id) if is_name(st.value) and st.value.id in self.active else "0.0"
                if self.batch:  # a list's tangent item, or (k, *v) lined up with (k, *y[i]): `y[[1]] = a`
                    index = self.src(index_expr(st.index))
                    self.uses_k = True
                    lines.append(f"set_tangent_item({self.d(st.target)}, {index}, {value}, {st.target}, _k)")
                else:
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
            if is_name(e) and e.id in self.static_active:
                out.append(self.d(e.id))
            elif isinstance(e, n.Subscript) and is_name(e.value) and e.value.id in self.static_active:
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
            if is_name(a) and a.id in self.static_active:
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
            value, tangent = outs[0], douts[0]
        elif len(outs) == 1:
            value, tangent = f"({outs[0]},)", f"({douts[0]},)"
        else:
            value, tangent = f"({', '.join(outs)})", f"({', '.join(douts)})"
        spec = getattr(self.module, "param_shapes", {}).get(name)  # (a specialization's: see concrete.py)
        if spec is not None and spec.get("<tangent only>"):
            value = "None"  # hvp's caller drops the gradient: not computed (concrete.py removes it)
        ret = f"{value}, {tangent}"
        zeros = [self.define(p, self.zero(p)) for p in self.fir.params  # parameters that later hold varied values
                 if p in self.static_active and p not in self.wrt]
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
        body = pre + body + checks + [f"return {ret}"]
        if spec is not None and self.optimize:
            values = {k: v for k, v in spec.items() if not k.startswith("<")}
            values.update(zip(tparams, spec.get("<tangents>", ())))
            body = specialize(body, self.signature(tparams), values)
        lines += [IND + x for x in body]
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
        parts = [a.id if d is None else f"{a.id}={syntax.unparse(d)}" for a, d in zip(positional, defaults)]
        kwonly = [a.id if d is None else f"{a.id}={syntax.unparse(d)}" for a, d in zip(args.kwonlyargs, args.kw_defaults)]
        if kwonly or any(d is not None for d in defaults):
            return ", ".join(parts + ["*"] + kwonly + tparams)
        return ", ".join(parts + tparams)
