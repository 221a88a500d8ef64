"""Reverse mode by source transformation: a forward sweep that saves what it overwrites,
then a backward sweep of instantiated VJP rules, newest statement first.

Invariant: the backward code of an item (a straight-line segment, a branch, a loop, a
subscript write) turns adjoints of the values after the item into adjoints of the values
before it, and restores every needed variable to its value before the item.

- Code run once (not inside a loop) keeps its intermediate values; a reassigned name is
  pushed on `_stack` before it is overwritten and popped after its adjoint.
- A straight-line segment inside a loop pushes only the needed names it modifies, once
  per iteration; its backward pops them, recomputes the segment into fresh names
  (`theta_1`) and runs the adjoints: what a person writes by hand for an ODE solver.
- Branch decisions, trip counts and overwritten slices go on the same stack.

The generated function is a tree: an `ast.FunctionDef` whose bodies are standard-ast
statement lists with `Comment`s (ir/code.py), built from templates (templates/quote.py);
codegen/ renders it once.
"""

import ast

from ..ir import code, syntax
from ..ir.code import Comment
from ..optimize import tidy
from ..ir.analysis import Kinds, Segment, activity, needed_names, segmentize, walk_items
from ..optimize.liveness import free_dead_values
from ..ir.naming import Namer
from ..ir.nodes import For, If, Op, Primal, SetItem, While, is_name
from ..templates.quote import as_code, code_expr, code_stmt
from .adjoints import Adjoints
from .control import ControlFlow, if_stmt
from .simplify import drop_blank_comments, live_body, loaded_names, merge_split_copies, propagate_copies, rename, uses_ans
from ..runtime.names import RUNTIME_NAMES
from ..optimize.concrete import specialize
from ..optimize.shapes import drop_unbroadcasts


class Reverse(ControlFlow, Adjoints):
    """Generates one adjoint function from a normalized function."""

    def __init__(self, fir, wrt_names, param_kinds, module, optimize):
        self.fir, self.module, self.optimize = fir, module, optimize
        self.ret_names, body = live_body(fir, optimize)
        self.items = segmentize(body)
        self.active = activity(self.items, wrt_names, self.ret_names, optimize)
        self.kinds = Kinds(self.items, param_kinds, fir.info.namespace, fir.locals)
        self.needed = needed_names(self.items, self.ret_names)
        self.namer = Namer(fir.used | RUNTIME_NAMES)  # never shadow a helper (`bt`, `rows`)
        self.mutable = set()
        for s in walk_items(self.items):
            if isinstance(s, Op) and s.kind == "getitem" and is_name(s.args[0]):
                self.mutable.add(s.args[0].id)
            elif isinstance(s, SetItem):
                self.mutable.add(s.target)
            elif isinstance(s, Op) and s.kind == "listop":  # adjoints that may be lists add item by item
                self.mutable |= {s.target} | {a.id for a in s.args if is_name(a)}
            elif isinstance(s, Op) and s.kind in ("sequence", "dict"):  # the list's adjoint: one piece per item
                self.mutable.add(s.args[0].id)
        self.uses_stack = False
        self.preinit = []
        self.reads_before = set()
        self.defined = set(fir.params)
        self.written_before = set(fir.params)
        self.stable = set(fir.params) - {w for s in walk_items(self.items) for w in getattr(s, "writes", ())}
        self.nonzero = set()
        self.adjoint_names = {}  # a value's name -> its adjoint's (adjoint_name)
        self.version_adjoints = {}  # a value's version inside a recomputed loop body -> its adjoint
        self.in_branch = 0  # how many branches or loops the forward sweep is inside
        self.loop_entry_defined = set(self.defined)  # names defined where the outermost loop starts
        self.discard_name = None  # the backward while loops' counter (`_`)
        self.scalar_result = False  # optimize/concrete proved f's value a scalar

    # -- small helpers -------------------------------------------------------------------------
    def code(self, node, loads=None, stores=None):
        """An IR (gast) node as generated code (standard ast), names renamed by loads / stores."""
        return syntax.to_ast(rename(node, loads or {}, stores))

    def adjoint_name(self, var):
        """The adjoint of `var`: `b` + var, suffixed if the name is taken (`bx_2`)."""
        if var not in self.adjoint_names:
            self.adjoint_names[var] = self.namer.unique("b" + var)
        return self.adjoint_names[var]

    def push(self, values):
        """`_stack.append(v)` or `_stack.append((v, w))`: values are names or nodes."""
        self.uses_stack = True
        value = values[0] if len(values) == 1 else ast.Tuple(elts=[as_code(v) for v in values], ctx=ast.Load())
        return code_stmt("_stack.append(V)", V=value)

    def pop(self, names):
        self.uses_stack = True
        target = names[0] if len(names) == 1 else ast.Tuple(elts=[as_code(v) for v in names], ctx=ast.Store())
        return code_stmt("T = _stack.pop()", T=target)

    def scalar(self, var):
        return self.kinds.kinds.get(var) == "scalar"

    def zero(self, var, value_name=None):
        if self.scalar(var):
            return ast.Constant(value=0.0)
        return code_expr("zeros_like(V)", V=value_name or var)

    def accumulate(self, body, adj, expr, var, value_name):
        """`adj = expr` on the first write, `adj = adj + expr` after; `expr` is a name or a node."""
        expr = expr_node(expr)
        if var in self.mutable:
            if adj not in self.nonzero:
                body.append(code_stmt("ADJ = owned(E)", ADJ=adj, E=expr))
            else:
                body.append(code_stmt("ADJ = accumulate(ADJ, E)", ADJ=adj, E=expr))
        elif adj not in self.nonzero:
            if not (isinstance(expr, ast.Name) and expr.id == adj):
                body.append(code_stmt("ADJ = E", ADJ=adj, E=expr))
        else:
            body.append(code_stmt("ADJ = E", ADJ=adj, E=tidy.accumulate_expr(adj, expr, self.optimize)))
        self.nonzero.add(adj)

    # -- forward sweep ---------------------------------------------------------------------------
    def fwd_block(self, items, depth):
        out = []
        for item in items:
            out += FORWARD[type(item)](self, item, depth)
        return out

    def primal(self, st, loads=None, stores=None):
        """The statement itself, reading through `loads` and writing through `stores`."""
        if isinstance(st, Primal):
            return self.code(st.node, loads, stores)
        target = (stores or {}).get(st.target, st.target)
        return code_stmt("T = E", T=target, E=self.code(st.expr, loads))

    def fwd_segment(self, seg, depth):
        out = []
        if depth > 0:
            seg.stmts = merge_split_copies(seg.stmts)
            mods = []
            for st in seg.stmts:
                for w in sorted(st.writes):
                    if w in self.needed and w not in mods:
                        mods.append(w)
            seg.saved = mods
            for w in mods:
                if w not in self.loop_entry_defined and w not in self.preinit:
                    self.preinit.append(w)
            if mods:
                out.append(self.push(self.saved(mods, seg.stmts)))
            for st in seg.stmts:
                out.append(self.primal(st))
                self.reads_before |= st.reads
            return out
        for st in seg.stmts:
            st.saved = []
            self.reads_before |= st.reads
            for w in sorted(st.writes):
                if w in self.reads_before and w in self.written_before:
                    if w not in self.defined and w not in self.preinit:
                        self.preinit.append(w)
                    st.saved.append(w)
            if st.saved:
                out.append(self.push(self.saved(st.saved, [st])))
            out.append(self.primal(st))
            if isinstance(st, Op) and st.target in self.active and uses_ans(st):
                self.reads_before.add(st.target)
            self.written_before |= st.writes
            if self.in_branch == 0:
                self.defined |= st.writes
        return out

    @staticmethod
    def saved(names, stmts):
        """What to push for `names`: a copy (`saved(acc)`) of a value the statements change in
        place (`acc.append(v)`), else the value itself."""
        mutated = set().union(*(getattr(st, "mutates", ()) for st in stmts))
        return [code_expr("saved(W)", W=w) if w in mutated else w for w in names]

    def enter_loop(self, depth):
        if depth == 0:
            self.loop_entry_defined = set(self.defined)

    # -- backward sweep --------------------------------------------------------------------------
    def bwd_block(self, items, depth):
        out = []
        for item in reversed(items):
            out += BACKWARD[type(item)](self, item, depth)
        return out

    def bwd_segment(self, seg, depth):
        if depth == 0:
            out, last = [], None
            for st in reversed(seg.stmts):
                body = self.adjoint(st, {}, {}, {})
                if not (isinstance(st, Op) and st.target in self.active):
                    for w in st.writes:
                        self.nonzero.discard(self.adjoint_name(w))
                if st.saved:
                    body.append(self.pop(st.saved))
                if body:
                    if st.text != last:
                        out.append(Comment(st.text))
                        last = st.text
                    out += body
            return propagate_copies(out, self.local_adjoints([(st, {}, {}, {}) for st in seg.stmts]))
        # inside a loop: restore the entry values, recompute into fresh names, then adjoints
        count = {}
        for st in seg.stmts:
            for w in st.writes:
                count[w] = count.get(w, 0) + 1
        seen, cur, plan, copies = {}, {}, [], {}
        for st in seg.stmts:
            loads = dict(cur)
            stores, adj_names = {}, {}
            for w in sorted(getattr(st, "mutates", ())):  # `acc.append(v)` replayed on a version of acc:
                seen[w] = seen.get(w, 0) + 1             # the one made above, else a copy of the value
                if w not in cur:                          # before the segment (restored, kept as it is)
                    cur[w] = self.namer.version(w)
                    copies.setdefault(id(st), []).append((cur[w], w))
                loads[w] = stores[w] = cur[w]
                adj_names[w] = self.adjoint_name(w)
            for w in st.writes - set(stores):
                seen[w] = seen.get(w, 0) + 1
                last = seen[w] == count[w]
                if w in self.needed or not last:
                    stores[w] = self.namer.version(w)
                adj_names[w] = self.adjoint_name(w) if last else self.namer.unique("b" + stores[w])
                if w in stores:
                    self.version_adjoints[stores[w]] = adj_names[w]
            plan.append((st, loads, stores, adj_names))
            for w in st.writes:  # a later read sees this write: its version, or the name itself
                if w in stores:
                    cur[w] = stores[w]
                else:
                    cur.pop(w, None)
        adjoints, last_text, reads = [], None, set()
        for st, loads, stores, adj_names in reversed(plan):
            body = self.adjoint(st, loads, stores, adj_names)
            if not (isinstance(st, Op) and st.target in self.active):
                for w in st.writes:
                    self.nonzero.discard(adj_names[w])
            if body:
                if st.text != last_text:
                    adjoints.append(Comment(st.text))
                    last_text = st.text
                adjoints += body
                reads |= loaded_names(body)
        # dead-code elimination of the recomputation: keep what the adjoints read
        keep, wanted = [], set(reads)
        for st, loads, stores, _ in reversed(plan):
            outs = {stores.get(w, w) for w in st.writes}
            if (outs & wanted) and not (isinstance(st, Primal) and not st.pure and not st.mutates):
                keep.append((st, loads, stores))
                wanted |= {loads.get(r, r) for r in st.reads} | {w for _, w in copies.get(id(st), ())}
        adjoints = propagate_copies(adjoints, self.local_adjoints(plan))
        out = [self.pop(seg.saved)] if seg.saved else []
        for st, loads, stores in reversed(keep):
            out += [code_stmt("C = saved(W)", C=copy, W=w) for copy, w in copies.get(id(st), ())]
            out.append(self.primal(st, loads, stores))
        return out + adjoints

    def local_adjoints(self, plan):
        """Adjoints of temporaries made and consumed inside one segment: safe to rename."""
        out = set()
        for st, _, stores, adj_names in plan:
            for w in st.writes:
                if w in self.fir.temps and w not in self.ret_names:
                    out.add(adj_names.get(w) or self.adjoint_name(w))
        return out

    # -- the whole function ----------------------------------------------------------------------
    def generate(self, name, seed_default, returns, preserve_result, tuple_out=False):
        """`def name(...)` (an `ast.FunctionDef`) and its seed parameter; `returns` lists the
        parameters whose adjoints are returned; `preserve_result` returns f's value too
        ("check": at once, with no gradient, when it is not a scalar)."""
        fir = self.fir
        fwd = self.fwd_block(self.items, 0)
        # seed the adjoints of the outputs
        seed = self.namer.unique("b" + fir.ret_name) if len(fir.ret) == 1 and not is_name(fir.ret[0]) else None
        seeding = []
        if len(fir.ret) == 1 and is_name(fir.ret[0]):
            seed = self.adjoint_name(fir.ret[0].id)
            if fir.ret[0].id in self.active:
                self.nonzero.add(seed)
                if fir.ret[0].id in self.mutable:  # its adjoint is updated in place: never the caller's dy
                    seeding.append(code_stmt("S = owned(S)", S=seed))
        elif len(fir.ret) > 1:
            seed = self.namer.unique("b" + fir.ret_name)
            for k, a in enumerate(fir.ret):
                if is_name(a) and a.id in self.active:
                    self.accumulate(seeding, self.adjoint_name(a.id), code_expr("S[K]", S=seed, K=k), a.id, a.id)
        result = []
        if preserve_result:
            writes_slices = any(isinstance(s, SetItem) for s in walk_items(self.items))

            def value_of(a):  # the backward sweep restores written slices, in the value returned too
                return code_expr("saved(A)", A=a.id) if is_name(a) and writes_slices else self.code(a)  # (or a view of it)
            values = [value_of(a) for a in fir.ret]
            value = ast.Tuple(elts=values, ctx=ast.Load()) if len(fir.ret) > 1 else values[0]
            result_name = self.namer.unique("_result")
            result = [code.bare_tuple(code_stmt("R = V", R=result_name, V=value))]
            if preserve_result == "check":  # grad's own check: a non-scalar value returns before the backward sweep
                result.append(if_stmt(code_expr("shape_of(R) != ()", R=result_name),
                                      [code_stmt("return (None, R)", R=result_name)]))
        bwd = seeding + self.bwd_block(self.items, 0)
        outs, entry = [], []
        for p in returns:
            adj = self.adjoint_name(p)
            if adj in self.nonzero:
                outs.append(ast.Name(id=adj, ctx=ast.Load()))
            elif p in self.stable or self.scalar(p):
                outs.append(self.zero(p, p))
            else:  # `x` is rebound (`x = y`): its zero adjoint has the shape of the argument passed
                entry_name = self.namer.unique(f"{p}_arg")
                entry.append(code_stmt("E = P", E=entry_name, P=p))
                outs.append(self.zero(p, entry_name))
        ret = outs[0] if len(outs) == 1 and not tuple_out else ast.Tuple(elts=outs, ctx=ast.Load())
        if preserve_result:
            ret = ast.Tuple(elts=[ret, ast.Name(id=result_name, ctx=ast.Load())], ctx=ast.Load())
        arguments = self.arguments(seed, seed_default)
        body = [code_stmt("_stack = []")] if self.uses_stack else []
        body += [code_stmt("V = None", V=v) for v in self.preinit]
        body += entry + [Comment("forward")] + fwd + result + [Comment("backward")] + bwd
        body.append(ast.Return(value=ret) if outs or preserve_result else ast.Return(value=None))
        body = drop_blank_comments(self.optimize_body(body, name, arguments, seed))
        if fir.doc:
            doc = f"Adjoint of {fir.info.name}: generated by dualtape.transforms."
            body.insert(0, ast.Expr(value=ast.Constant(value=doc)))
        return ast.FunctionDef(name=name, args=arguments, body=body, decorator_list=[], returns=None,
                               type_comment=None), seed

    def optimize_body(self, body, name, arguments, seed):
        """The optimize/ passes over the function's body (when optimizing): specialization to
        the arguments' shapes, unbroadcasts that do nothing, values freed after their last use."""
        if not self.optimize:
            return body
        fir = self.fir
        spec = getattr(self.module, "param_shapes", {}).get(name)  # (a specialization's: see concrete.py)
        adjoints = set(self.adjoint_names.values())
        if spec is not None:
            values = {k: v for k, v in spec.items() if not k.startswith("<")}
            if spec.get("<seed>"):  # grad's seed: the default 1.0
                values[seed] = ("a", (), float)
            probe = fir.ret[0].id if len(fir.ret) == 1 and is_name(fir.ret[0]) else None
            namespace = self.module.namespace
            body, self.scalar_result = specialize(body, arguments, values, probe, lambda k: type(namespace.get(k)) in (
                int, float), adjoints, lambda k: namespace[k] if type(namespace.get(k)) is int else None,
                final=not spec.get("<read back>"))
        roots = getattr(self.module, "ndarray_params", {}).get(name, ())  # (a specialization's)
        body = drop_unbroadcasts(body, arguments, roots, adjoints)
        return free_dead_values(body, fir.params, self.freeable, self.namer.taken)

    def freeable(self, name):
        """A temporary of un-nesting (`_matmul_x_w1`) or its adjoint, that may hold an array:
        Python frees the intermediate values of `np.tanh(x @ w1 + b1)` at once, so the
        generated code frees them too. User variables live as long as in the user's code."""
        primal = {adj: var for var, adj in self.adjoint_names.items()}.get(name, name)
        temps = {s.target for s in walk_items(self.items) if isinstance(s, Op) and s.kind != "copy"}
        return primal in self.fir.temps and primal in temps and self.kinds.kinds.get(primal) == "array"

    def arguments(self, seed, seed_default):
        """The parameters: f's (defaults kept), then the seed; keyword-only after f's keyword-only
        parameters, or when f's defaults leave the seed without one."""
        args = self.fir.info.node.args
        positional = args.posonlyargs + args.args
        defaults = [syntax.to_ast(d) for d in args.defaults]
        kwonly = [ast.arg(arg=a.id) for a in args.kwonlyargs]
        kw_defaults = [None if d is None else syntax.to_ast(d) for d in args.kw_defaults]
        seed_value = None if seed_default is None else ast.Constant(value=float(seed_default))
        if kwonly or (defaults and seed_default is None):
            kwonly.append(ast.arg(arg=seed))
            kw_defaults.append(seed_value)
        else:
            positional = positional + [seed]
            defaults += [seed_value] if seed_value is not None else []
        return ast.arguments(posonlyargs=[], args=[ast.arg(arg=a if isinstance(a, str) else a.id) for a in positional],
                             vararg=None, kwonlyargs=kwonly, kw_defaults=kw_defaults, kwarg=None, defaults=defaults)


def expr_node(expr):
    """An adjoint's expression as a node: a name (`str`) or a node as it is."""
    return ast.Name(id=expr, ctx=ast.Load()) if isinstance(expr, str) else expr


FORWARD = {Segment: Reverse.fwd_segment, If: Reverse.fwd_if, For: Reverse.fwd_for, While: Reverse.fwd_while,
           SetItem: Reverse.fwd_setitem}
BACKWARD = {Segment: Reverse.bwd_segment, If: Reverse.bwd_if, For: Reverse.bwd_for, While: Reverse.bwd_while,
            SetItem: Reverse.bwd_setitem}
