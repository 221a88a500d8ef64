"""Reverse mode, one statement: its adjoint statements, from the VJP rules of the primitive it
calls (instantiated as templates), a LINEAR op's transposition, or a call's generated adjoint;
mixed into `reverse.Reverse`, whose state (`active`, `namer`, `accumulate`, ...) it uses.

`ADJOINTS` chooses the adjoint of a statement by its IR type and, for an `Op`, its kind;
a statement with no entry (a `Primal`: no derivative) has no adjoint code.
"""

import ast
import inspect

from ..ir import syntax
from ..optimize import tidy
from ..ir.syntax import nodes as n
from ..ir.analysis import call_wrt, diff_args
from ..ir.nodes import Op, is_name
from ..calls.odeint import adjoint_stmts as odeint_adjoint
from ..templates.quote import code_expr, code_stmt
from ..templates.rules import instantiate
from .simplify import index_expr, rename


class Reads:
    """How one statement's adjoint reads values: through `loads` (the versions a loop's
    recomputed body made; see `Reverse.bwd_segment`), names otherwise."""

    def __init__(self, rev, loads, stores):
        self.rev, self.loads, self.stores = rev, loads, stores

    def value(self, name):
        return self.loads.get(name, name)

    def adjoint(self, name):
        """The adjoint of the value this statement reads: a version made earlier in the segment
        (`x = x + v` reads the previous `x`, never its own result), else the value before it."""
        if name in self.loads:
            return self.rev.version_adjoints[self.loads[name]]
        return self.rev.adjoint_name(name)

    def code(self, atom):
        """An argument of the statement as generated code (standard ast)."""
        return self.rev.code(atom, self.loads)

    def node(self, atom):
        """An argument of the statement as IR (gast), for rule templates."""
        return rename(atom, self.loads)


class Adjoints:
    """The adjoint of one statement (see the module docstring)."""

    def adjoint(self, st, loads, stores, adj_names):
        """Adjoint statements of one statement, reading values through `loads` / `stores`."""
        make = ADJOINTS.get((type(st), getattr(st, "kind", None)))
        if make is None or st.target not in self.active:
            return []
        g = adj_names.get(st.target) or self.adjoint_name(st.target)
        if g not in self.nonzero:
            return []
        self.nonzero.discard(g)  # consumed: the value before this statement starts from zero
        return make(self, st, g, Reads(self, loads, stores))

    def copy_adjoint(self, st, g, r):
        body = []
        name = st.args[0].id
        if name in self.active:
            self.accumulate(body, r.adjoint(name), g, name, r.value(name))
        return body

    def getitem_adjoint(self, st, g, r):
        body = []
        name = st.args[0].id
        if name in self.active:
            adj = r.adjoint(name)
            if adj not in self.nonzero:
                body.append(code_stmt("ADJ = zeros_like(X)", ADJ=adj, X=r.value(name)))
                self.nonzero.add(adj)
            body.append(code_stmt("ADJ = add_at(ADJ, INDEX, G)", ADJ=adj, INDEX=r.code(index_expr(st.index)), G=g))
        return body

    def pack_adjoint(self, st, g, r):
        body = []
        for k, a in enumerate(st.args):
            if is_name(a) and a.id in self.active:
                key = ast.Constant(value=st.index[k] if st.container == "dict" else k)  # {"a": x}: a dict adjoint
                self.accumulate(body, r.adjoint(a.id), code_expr("G[K]", G=g, K=key), a.id, r.value(a.id))
        return body

    def listop_adjoint(self, st, g, r):
        """`ys + [v]`, `[v] * 2`: list or NumPy operators, told apart at run time."""
        body = []
        helper = "list_add_adjoint" if isinstance(st.expr.op, n.Add) else "list_mul_adjoint"
        if any(is_name(a) and r.adjoint(a.id) == g for a in st.args):
            g = self.copy_seed(body, g)
        a, b = (r.code(x) for x in st.args)
        for k, atom in enumerate(st.args):
            if is_name(atom) and atom.id in self.active:
                self.accumulate(body, r.adjoint(atom.id), code_expr("HELPER(G, A, B, K)", HELPER=helper, G=g, A=a, B=b, K=k),
                                atom.id, r.value(atom.id))
        return body

    def sequence_adjoint(self, st, g, r):
        """`np.stack(ys, axis)`, `np.concatenate(ys, axis)`: one piece of g per item of ys."""
        body = []
        name = st.args[0].id
        if name in self.active:
            expr = code_expr("sequence_adjoint(G, YS, AXIS, KIND)", G=g, YS=r.value(name),
                             AXIS=r.code(st.static["axis"]), KIND=ast.Constant(value=st.container))
            self.accumulate(body, r.adjoint(name), expr, name, r.value(name))
        return body

    def dict_adjoint(self, st, g, r):
        """`dict(zip(keys, values))`: the values' adjoints, one per item, read by key from g."""
        body = []
        name = st.args[0].id
        if name in self.active:
            expr = code_expr("dict_adjoint(G, KEYS, VALUES)", G=g, KEYS=r.code(st.index), VALUES=r.value(name))
            self.accumulate(body, r.adjoint(name), expr, name, r.value(name))
        return body

    def copy_seed(self, body, g):
        """A copy of the incoming adjoint `g`, read after `g` itself is accumulated into."""
        temp = self.namer.unique("_g")
        body.append(code_stmt("T = G", T=temp, G=g))
        return temp

    def call_adjoint(self, st, g, r):
        if getattr(st, "odeint", None) is not None:  # scipy.integrate.odeint: the adjoint ODE
            ans = syntax.name(r.stores.get(st.target, st.target))
            return odeint_adjoint(self, st, g, r.loads, r.adjoint, ans)
        wrt, targets, kinds = call_wrt(st, self.active, self.kinds)
        if not wrt:
            return []
        name, seed = self.module.helper(st.fn, tuple(wrt), kinds, self.optimize, st)
        keywords = [ast.keyword(arg=k, value=r.code(a)) for k, a in st.keywords.items()]
        keywords.append(ast.keyword(arg=seed, value=ast.Name(id=g, ctx=ast.Load())))
        call = ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=[r.code(a) for a in st.args], keywords=keywords)
        temps = [self.namer.fresh("_b") for _ in wrt]
        body = [code_stmt("TEMPS = CALL", TEMPS=ast.Tuple(elts=[ast.Name(id=t, ctx=ast.Store()) for t in temps],
                                                          ctx=ast.Store()), CALL=call)]
        containers = self.module.container_adjoints.get(name, ())
        for t, var, param in zip(temps, targets, wrt):
            if param in containers:  # a list's (dict's) adjoint: two calls' add item by item, not `+`
                self.mutable.add(var)
            self.accumulate(body, r.adjoint(var), t, var, r.value(var))
        return body

    def prim_adjoint(self, st, g, r):
        """The VJP rules of the primitive, one per differentiable argument."""
        body = []
        spec = st.spec
        prim = spec.prim
        ans = syntax.name(r.stores.get(st.target, st.target))
        order = sorted(diff_args(st), key=lambda kn: r.adjoint(kn[1]) == g)
        own = [kn for kn in order if r.adjoint(kn[1]) == g and kn[1] in self.active]
        if len(own) > 1:
            g = self.copy_seed(body, g)
        for k, name in order:
            if name not in self.active:
                continue
            rule = prim.vjp if prim.variadic else prim.vjp_rule(k)
            mapping = {"g": syntax.name(g), "ans": ans}
            for pname, atom in zip(spec.inputs, st.args):
                if atom is not None:
                    mapping[pname] = r.node(atom)
            if prim.variadic:
                star = [p for p in inspect.signature(rule).parameters.values() if p.kind == p.VAR_POSITIONAL]
                if star:
                    mapping[star[0].name] = n.Tuple(elts=[r.node(a) for a in st.args], ctx=n.Load())
                mapping["argnum"] = syntax.constant(k)
            for sname, snode in st.static.items():
                mapping[sname] = syntax.copy(snode)
            expr = syntax.to_ast(tidy.simplify(instantiate(rule, mapping), self.kinds.is_scalar, self.optimize))
            if prim.elementwise and self.needs_unbroadcast(st, k):
                expr = code_expr("unbroadcast(E, np.shape(X))", E=expr, X=r.value(name))
            self.accumulate(body, r.adjoint(name), expr, name, r.value(name))
        return body

    def needs_unbroadcast(self, st, k):
        if not self.optimize:
            return True
        return any(j != k and a is not None and not self.kinds.is_scalar(a) for j, a in enumerate(st.args))


ADJOINTS = {
    (Op, "copy"): Adjoints.copy_adjoint,
    (Op, "getitem"): Adjoints.getitem_adjoint,
    (Op, "pack"): Adjoints.pack_adjoint,
    (Op, "listop"): Adjoints.listop_adjoint,
    (Op, "sequence"): Adjoints.sequence_adjoint,
    (Op, "dict"): Adjoints.dict_adjoint,
    (Op, "call"): Adjoints.call_adjoint,
    (Op, "prim"): Adjoints.prim_adjoint,
}

