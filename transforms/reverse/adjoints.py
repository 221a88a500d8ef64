"""Reverse mode, one statement: its adjoint lines, from the VJP rules of the primitive it calls
(instantiated as templates), a LINEAR op's transposition, or a call's generated adjoint;
mixed into `reverse.Reverse`, whose state (`active`, `namer`, `accumulate`, ...) it uses."""

import inspect

from ..ir import syntax
from ..optimize import tidy
from ..ir.syntax import nodes as n
from ..ir.analysis import call_wrt, diff_args
from ..frontend.normalize import Op, is_name
from ..calls.odeint import adjoint_lines as odeint_adjoint_lines
from .simplify import index_expr, rename
from ..templates.rules import instantiate


class _Adjoints:
    """The adjoint of one statement (see the module docstring)."""

    def adjoint(self, st, loads, stores, adj_names):
        """Adjoint lines of one statement, reading values through `loads` / `stores`."""
        if not isinstance(st, Op) or st.target not in self.active:
            return []
        g = adj_names.get(st.target) or self.namer.adjoint(st.target)
        if g not in self.nonzero:
            return []
        self.nonzero.discard(g)  # consumed: the value before this statement starts from zero
        val = lambda name: loads.get(name, name)  # noqa: E731
        ans = syntax.name(stores.get(st.target, st.target))
        lines = []

        def arg_adj(name):
            # the adjoint of the value this statement reads: a version made earlier in the
            # segment (`x = x + v` reads the previous `x`, never its own result), else the
            # value before the segment
            if name in loads:
                return self.version_adjoints[loads[name]]
            return self.namer.adjoint(name)

        def node(atom):
            return rename(atom, loads)

        if st.kind == "copy":
            name = st.args[0].id
            if name in self.active:
                self.accumulate(lines, arg_adj(name), g, name, val(name))
            return lines
        if st.kind == "getitem":
            name = st.args[0].id
            if name in self.active:
                adj = arg_adj(name)
                if adj not in self.nonzero:
                    lines.append(f"{adj} = zeros_like({val(name)})")
                    self.nonzero.add(adj)
                lines.append(f"{adj} = add_at({adj}, {self.src(index_expr(st.index), loads)}, {g})")
            return lines
        if st.kind == "pack":
            for k, a in enumerate(st.args):
                if is_name(a) and a.id in self.active:
                    self.accumulate(lines, arg_adj(a.id), f"{g}[{k}]", a.id, val(a.id))
            return lines
        if st.kind == "listop":  # `ys + [v]`, `[v] * 2`: list or NumPy operators, told apart at run time
            helper = "list_add_adjoint" if isinstance(st.expr.op, n.Add) else "list_mul_adjoint"
            if any(is_name(a) and arg_adj(a.id) == g for a in st.args):
                temp = self.namer.unique("_g")
                lines.append(f"{temp} = {g}")
                g = temp
            a, b = (self.src(x, loads) for x in st.args)
            for k, atom in enumerate(st.args):
                if is_name(atom) and atom.id in self.active:
                    self.accumulate(lines, arg_adj(atom.id), f"{helper}({g}, {a}, {b}, {k})", atom.id, val(atom.id))
            return lines
        if st.kind == "call":
            if getattr(st, "odeint", None) is not None:  # scipy.integrate.odeint: the adjoint ODE
                return odeint_adjoint_lines(self, st, g, loads, arg_adj, ans)
            return self.call_adjoint(st, g, loads, arg_adj)
        spec = st.spec
        prim = spec.prim
        order = sorted(diff_args(st), key=lambda kn: arg_adj(kn[1]) == g)
        own = [kn for kn in order if arg_adj(kn[1]) == g and kn[1] in self.active]
        if len(own) > 1:
            temp = self.namer.unique("_g")
            lines.append(f"{temp} = {g}")
            g = temp
        for k, name in order:
            if name not in self.active:
                continue
            rule = prim.vjp if prim.variadic else prim.vjp_rule(k)
            mapping = {"g": syntax.name(g), "ans": ans}
            for pname, atom in zip(spec.inputs, st.args):
                if atom is not None:
                    mapping[pname] = node(atom)
            if prim.variadic:
                star = [p for p in inspect.signature(rule).parameters.values() if p.kind == p.VAR_POSITIONAL]
                if star:
                    mapping[star[0].name] = n.Tuple(elts=[node(a) for a in st.args], ctx=n.Load())
                mapping["argnum"] = syntax.constant(k)
            for sname, snode in st.static.items():
                mapping[sname] = syntax.copy(snode)
            expr = tidy.simplify(instantiate(rule, mapping), self.kinds.is_scalar, self.optimize)
            text = syntax.unparse(expr)
            if prim.elementwise and self._needs_unbroadcast(st, k):
                text = f"unbroadcast({text}, np.shape({val(name)}))"
            self.accumulate(lines, arg_adj(name), text, name, val(name))
        return lines

    def _needs_unbroadcast(self, st, k):
        if not self.optimize:
            return True
        return any(j != k and a is not None and not self.kinds.is_scalar(a) for j, a in enumerate(st.args))

    def call_adjoint(self, st, g, loads, arg_adj):
        wrt, targets, kinds = call_wrt(st, self.active, self.kinds)
        if not wrt:
            return []
        name, seed = self.module.helper(st.fn, tuple(wrt), kinds, self.optimize, st)
        args = [self.src(a, loads) for a in st.args]
        args += [f"{k}={self.src(a, loads)}" for k, a in st.keywords.items()]
        args.append(f"{seed}={g}")
        temps = [self.namer.fresh("_b") for _ in wrt]
        lines = [f"{', '.join(temps)}{',' if len(temps) == 1 else ''} = {name}({', '.join(args)})"]
        for t, var in zip(temps, targets):
            self.accumulate(lines, arg_adj(var), t, var, loads.get(var, var))
        return lines
