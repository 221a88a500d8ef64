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
"""

from ..ir import syntax
from ..optimize import tidy
from ..ir.syntax import nodes as n
from ..ir.analysis import Kinds, Segment, activity, needed_names, segmentize, walk_items
from ..optimize.liveness import free_dead_values
from ..ir.naming import Namer
from ..frontend.normalize import For, If, Op, Primal, SetItem, While, is_name
from .adjoints import _Adjoints
from .control import ControlFlow
from .simplify import _drop_blank_comments, _merge_split_copies, eliminate_dead_code, index_expr, live_body, propagate_copies, rename, subscript_src, uses_ans  # noqa: F401 (re-exported: the helpers used to live here)
from ..runtime.names import RUNTIME_NAMES
from ..optimize.concrete import specialize
from ..optimize.shapes import drop_unbroadcasts

IND = "    "


class Reverse(ControlFlow, _Adjoints):
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
        self.uses_stack = False
        self.preinit = []
        self.reads_before = set()
        self.defined = set(fir.params)
        self.written_before = set(fir.params)
        self.stable = set(fir.params) - {w for s in walk_items(self.items) for w in getattr(s, "writes", ())}
        self.nonzero = set()
        self.version_adjoints = {}  # a value's version inside a recomputed loop body -> its adjoint

    # -- small helpers -------------------------------------------------------------------------
    def src(self, node, loads=None, stores=None):
        return syntax.unparse(rename(node, loads or {}, stores))

    def push(self, names):
        self.uses_stack = True
        if len(names) == 1:
            return f"_stack.append({names[0]})"
        return f"_stack.append(({', '.join(names)}))"

    def pop(self, names):
        self.uses_stack = True
        return f"{', '.join(names)} = _stack.pop()"

    def zero(self, var, value_name=None):
        if self.kinds.kinds.get(var) == "scalar":
            return "0.0"
        return f"zeros_like({value_name or var})"

    def accumulate(self, lines, adj, expr, var, value_name):
        """`adj = expr` on the first write, `adj = adj + expr` after."""
        if var in self.mutable:
            if adj not in self.nonzero:
                lines.append(f"{adj} = owned({expr})")
            else:
                lines.append(f"{adj} = accumulate({adj}, {expr})")
        elif adj not in self.nonzero:
            if expr != adj:
                lines.append(f"{adj} = {expr}")
        else:
            lines.append(f"{adj} = {tidy.accumulate_source(adj, expr, self.optimize)}")
        self.nonzero.add(adj)

    # -- forward sweep ---------------------------------------------------------------------------
    def fwd_block(self, items, depth):
        lines = []
        for item in items:
            if isinstance(item, Segment):
                lines += self.fwd_segment(item, depth)
            elif isinstance(item, If):
                lines += self.fwd_if(item, depth)
            elif isinstance(item, For):
                lines += self.fwd_for(item, depth)
            elif isinstance(item, While):
                lines += self.fwd_while(item, depth)
            elif isinstance(item, SetItem):
                lines += self.fwd_setitem(item, depth)
        return lines

    def _stmt_src(self, st, loads=None, stores=None):
        if isinstance(st, Primal):
            return self.src(st.node, loads, stores)
        target = (stores or {}).get(st.target, st.target)
        return f"{target} = {self.src(st.expr, loads)}"

    def fwd_segment(self, seg, depth):
        lines = []
        if depth > 0:
            seg.stmts = _merge_split_copies(seg.stmts)
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
                lines.append(self.push(self._saved(mods, seg.stmts)))
            for st in seg.stmts:
                lines += self._stmt_src(st).split("\n")
                self.reads_before |= st.reads
            return lines
        for st in seg.stmts:
            st.saved = []
            self.reads_before |= st.reads
            for w in sorted(st.writes):
                if w in self.reads_before and w in self.written_before:
                    if w not in self.defined and w not in self.preinit:
                        self.preinit.append(w)
                    st.saved.append(w)
            if st.saved:
                lines.append(self.push(self._saved(st.saved, [st])))
            lines += self._stmt_src(st).split("\n")
            if isinstance(st, Op) and st.target in self.active and uses_ans(st):
                self.reads_before.add(st.target)
            self.written_before |= st.writes
            if self.in_branch == 0:
                self.defined |= st.writes
        return lines

    @staticmethod
    def _saved(names, stmts):
        """What to push for `names`: a copy (`saved(acc)`) of a value the statements change in
        place (`acc.append(v)`), else the value itself."""
        mutated = set().union(*(getattr(st, "mutates", ()) for st in stmts))
        return [f"saved({w})" if w in mutated else w for w in names]

    def _enter_loop(self, depth):
        if depth == 0:
            self.loop_entry_defined = set(self.defined)

    def bwd_block(self, items, depth):
        lines = []
        for item in reversed(items):
            if isinstance(item, Segment):
                lines += self.bwd_segment(item, depth)
            elif isinstance(item, If):
                lines += self.bwd_if(item, depth)
            elif isinstance(item, For):
                lines += self.bwd_for(item, depth)
            elif isinstance(item, While):
                lines += self.bwd_while(item, depth)
            elif isinstance(item, SetItem):
                lines += self.bwd_setitem(item)
        return lines

    def bwd_segment(self, seg, depth):
        if depth == 0:
            lines, last = [], None
            for st in reversed(seg.stmts):
                body = self.adjoint(st, {}, {}, {})
                if not (isinstance(st, Op) and st.target in self.active):
                    for w in st.writes:
                        self.nonzero.discard(self.namer.adjoint(w))
                if st.saved:
                    body.append(self.pop(st.saved))
                if body:
                    if st.text != last:
                        lines.append(f"# {st.text}")
                        last = st.text
                    lines += body
            return propagate_copies(lines, self._local_adjoints([(st, {}, {}, {}) for st in seg.stmts]))
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
                adj_names[w] = self.namer.adjoint(w)
            for w in st.writes - set(stores):
                seen[w] = seen.get(w, 0) + 1
                last = seen[w] == count[w]
                if w in self.needed or not last:
                    stores[w] = self.namer.version(w)
                adj_names[w] = self.namer.adjoint(w) if last else self.namer.unique("b" + stores[w])
                if w in stores:
                    self.version_adjoints[stores[w]] = adj_names[w]
            plan.append((st, loads, stores, adj_names))
            for w in st.writes:  # a later read sees this write: its version, or the name itself
                if w in stores:
                    cur[w] = stores[w]
                else:
                    cur.pop(w, None)
        adj_lines, last_text, reads = [], None, set()
        for st, loads, stores, adj_names in reversed(plan):
            body = self.adjoint(st, loads, stores, adj_names)
            if not (isinstance(st, Op) and st.target in self.active):
                for w in st.writes:
                    self.nonzero.discard(adj_names[w])
            if body:
                if st.text != last_text:
                    adj_lines.append(f"# {st.text}")
                    last_text = st.text
                adj_lines += body
                for line in body:
                    if not line.startswith("#"):
                        reads |= syntax.load_names(syntax.parse(line.strip()))
        # dead-code elimination of the recomputation: keep what the adjoints read
        keep, wanted = [], set(reads)
        for st, loads, stores, _ in reversed(plan):
            outs = {stores.get(w, w) for w in st.writes}
            if (outs & wanted) and not (isinstance(st, Primal) and not st.pure and not st.mutates):
                keep.append((st, loads, stores))
                wanted |= {loads.get(r, r) for r in st.reads} | {w for _, w in copies.get(id(st), ())}
        adj_lines = propagate_copies(adj_lines, self._local_adjoints(plan))
        lines = [self.pop(seg.saved)] if seg.saved else []
        for st, loads, stores in reversed(keep):
            lines += [f"{copy} = saved({w})" for copy, w in copies.get(id(st), ())]
            lines += self._stmt_src(st, loads, stores).split("\n")
        return lines + adj_lines

    def _local_adjoints(self, plan):
        """Adjoints of temporaries made and consumed inside one segment: safe to rename."""
        out = set()
        for st, _, stores, adj_names in plan:
            for w in st.writes:
                if w in self.fir.temps and w not in self.ret_names:
                    out.add(adj_names.get(w) or self.namer.adjoint(w))
        return out

    def generate(self, name, seed_default, returns, preserve_result, tuple_out=False):
        """Source of `def name(...)`; `returns` lists the parameters whose adjoints are returned;
        `preserve_result` returns f's value too ("check": at once, with no gradient, when it is
        not a scalar)."""
        fir = self.fir
        self.in_branch = 0
        self.loop_entry_defined = set(self.defined)
        fwd = self.fwd_block(self.items, 0)
        # seed the adjoints of the outputs
        seed = self.namer.unique("b" + fir.ret_name) if len(fir.ret) == 1 and not is_name(fir.ret[0]) else None
        seed_lines = []
        if len(fir.ret) == 1 and is_name(fir.ret[0]):
            seed = self.namer.adjoint(fir.ret[0].id)
            if fir.ret[0].id in self.active:
                self.nonzero.add(seed)
                if fir.ret[0].id in self.mutable:  # its adjoint is updated in place: never the caller's dy
                    seed_lines.append(f"{seed} = owned({seed})")
        elif len(fir.ret) > 1:
            seed = self.namer.unique("b" + fir.ret_name)
            for k, a in enumerate(fir.ret):
                if is_name(a) and a.id in self.active:
                    self.accumulate(seed_lines, self.namer.adjoint(a.id), f"{seed}[{k}]", a.id, a.id)
        result_lines = []
        if preserve_result:
            writes_slices = any(isinstance(s, SetItem) for s in walk_items(self.items))

            def result(a):  # the backward sweep restores written slices, in the value returned too
                return f"saved({a.id})" if is_name(a) and writes_slices else self.src(a)  # (or a view of it)
            value = ", ".join(result(a) for a in fir.ret) if len(fir.ret) > 1 else result(fir.ret[0])
            result_name = self.namer.unique("_result")
            result_lines = [f"{result_name} = {value}"]
            if preserve_result == "check":  # grad's own check: a non-scalar value returns before the backward sweep
                result_lines += [f"if shape_of({result_name}) != ():", f"{IND}return None, {result_name}"]
        bwd = seed_lines + self.bwd_block(self.items, 0)
        outs, entry_lines = [], []
        for p in returns:
            adj = self.namer.adjoint(p)
            if adj in self.nonzero:
                outs.append(adj)
            elif p in self.stable or self.zero(p) == "0.0":
                outs.append(self.zero(p, p))
            else:  # `x` is rebound (`x = y`): its zero adjoint has the shape of the argument passed
                entry = self.namer.unique(f"{p}_arg")
                entry_lines.append(f"{entry} = {p}")
                outs.append(self.zero(p, entry))
        ret = ", ".join(outs) if len(outs) != 1 else outs[0]
        if len(outs) == 1 and tuple_out:
            ret = f"({ret},)" if preserve_result else f"{ret},"
        elif len(outs) > 1 and preserve_result:
            ret = f"({ret})"
        if preserve_result:
            ret = f"{ret}, {result_name}"
        sig = self.signature(seed, seed_default)
        lines = [f"def {name}({sig}):"]
        if fir.doc:
            lines.append(IND + f'"""Adjoint of {fir.info.name}: generated by dualtape.transforms."""')
        body = []
        if self.uses_stack:
            body.append("_stack = []")
        body += [f"{v} = None" for v in self.preinit]
        body += entry_lines + ["# forward"] + fwd + result_lines + ["# backward"] + bwd + [f"return {ret}"]
        if self.optimize:
            spec = getattr(self.module, "param_shapes", {}).get(name)  # (a specialization's: see concrete.py)
            if spec is not None:
                values = {k: v for k, v in spec.items() if not k.startswith("<")}
                if spec.get("<seed>"):  # grad's seed: the default 1.0
                    values[seed] = ("a", (), float)
                probe = fir.ret[0].id if len(fir.ret) == 1 and is_name(fir.ret[0]) else None
                namespace = self.module.namespace
                body, self.scalar_result = specialize(body, sig, values, probe, lambda k: type(namespace.get(k)) in (
                    int, float), set(self.namer._adjoints.values()))
            roots = getattr(self.module, "ndarray_params", {}).get(name, ())  # (a specialization's)
            body = drop_unbroadcasts(body, sig, roots, set(self.namer._adjoints.values()))
            body = free_dead_values(body, fir.params, self._freeable, self.namer.taken)
        lines += [IND + x for x in body]
        return "\n".join(_drop_blank_comments(lines)), seed

    def _freeable(self, name):
        """A temporary of un-nesting (`_matmul_x_w1`) or its adjoint, that may hold an array:
        Python frees the intermediate values of `np.tanh(x @ w1 + b1)` at once, so the
        generated code frees them too. User variables live as long as in the user's code."""
        primal = {adj: var for var, adj in self.namer._adjoints.items()}.get(name, name)
        temps = {s.target for s in walk_items(self.items) if isinstance(s, Op) and s.kind != "copy"}
        return primal in self.fir.temps and primal in temps and self.kinds.kinds.get(primal) == "array"

    def signature(self, seed, seed_default):
        fir = self.fir
        args = fir.info.node.args
        positional = args.posonlyargs + args.args
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        parts = []
        for a, d in zip(positional, defaults):
            parts.append(a.id if d is None else f"{a.id}={syntax.unparse(d)}")
        has_default = any(d is not None for d in defaults)
        kwonly = [a.id if d is None else f"{a.id}={syntax.unparse(d)}" for a, d in zip(args.kwonlyargs, args.kw_defaults)]
        seed_part = seed if seed_default is None else f"{seed}={seed_default}"
        if kwonly or (has_default and seed_default is None):
            return ", ".join(parts + ["*"] + kwonly + [seed_part])
        return ", ".join(parts + [seed_part])
