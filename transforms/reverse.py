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

import re

from . import _gast, tidy
from ._gast import nodes as n
from .analysis import Kinds, Segment, activity, diff_args, needed_names, segmentize, walk_items
from .naming import Namer
from .normalize import For, If, Op, Primal, SetItem, While, is_name
from .templates import instantiate, rule_uses

IND = "    "


class _Rename(_gast.NodeTransformer):
    def __init__(self, loads, stores=None):
        self.loads, self.stores = loads, stores or {}

    def visit_Name(self, node):
        table = self.stores if isinstance(node.ctx, n.Store) else self.loads
        if node.id in table:
            return _gast.name(table[node.id], store=isinstance(node.ctx, n.Store))
        return node


def rename(node, loads, stores=None):
    if not loads and not stores:
        return node
    return _Rename(loads, stores).visit(_gast.copy(node))


class Reverse:
    """Generates one adjoint function from a normalized function."""

    def __init__(self, fir, wrt_names, param_kinds, module, optimize):
        self.fir, self.module, self.optimize = fir, module, optimize
        self.ret_names = [a.id for a in fir.ret if is_name(a)]
        body = fir.body
        if optimize:
            body = eliminate_dead_code(body, set(self.ret_names))
        self.items = segmentize(body)
        self.active = activity(self.items, wrt_names, self.ret_names, optimize)
        self.kinds = Kinds(self.items, param_kinds, fir.info.namespace, fir.locals)
        self.needed = needed_names(self.items, self.ret_names)
        self.namer = Namer(fir.used)
        self.mutable = set()
        for s in walk_items(self.items):
            if isinstance(s, Op) and s.kind == "getitem" and is_name(s.args[0]):
                self.mutable.add(s.args[0].id)
            elif isinstance(s, SetItem):
                self.mutable.add(s.target)
        self.uses_stack = False
        self.preinit = []
        self.reads_before = set()
        self.defined = set(fir.params)
        self.written_before = set(fir.params)
        self.stable = set(fir.params) - {w for s in walk_items(self.items) for w in getattr(s, "writes", ())}
        self.nonzero = set()

    # -- small helpers -------------------------------------------------------------------------
    def src(self, node, loads=None, stores=None):
        return _gast.unparse(rename(node, loads or {}, stores))

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
                lines.append(self.push(mods))
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
                lines.append(self.push(st.saved))
            lines += self._stmt_src(st).split("\n")
            if isinstance(st, Op) and st.target in self.active and uses_ans(st):
                self.reads_before.add(st.target)
            self.written_before |= st.writes
            if self.in_branch == 0:
                self.defined |= st.writes
        return lines

    def _enter_loop(self, depth):
        if depth == 0:
            self.loop_entry_defined = set(self.defined)

    def fwd_if(self, item, depth):
        item.cond = self.namer.fresh("_cond")
        lines = [f"{item.cond} = {self.src(item.test)}"]
        self.reads_before |= item.reads
        self.in_branch += 1
        snapshot = (set(self.reads_before), set(self.written_before))
        body = self.fwd_block(item.body, depth) or ["pass"]
        after = (self.reads_before, self.written_before)
        self.reads_before, self.written_before = set(snapshot[0]), set(snapshot[1])
        orelse = self.fwd_block(item.orelse, depth)
        self.reads_before |= after[0]
        self.written_before |= after[1]
        self.in_branch -= 1
        lines.append(f"if {item.cond}:")
        lines += [IND + x for x in body]
        if orelse:
            lines.append("else:")
            lines += [IND + x for x in orelse]
        if depth > 0:
            lines.append(self.push([item.cond]))  # after the branch: popped before it
        return lines

    def fwd_for(self, item, depth):
        self._enter_loop(depth)
        self.reads_before |= item.reads | {item.var}
        lines = []
        iter_src = self.src(item.iter)
        stable = item.reads <= (self.stable | {"range", "len", "min"}) or not (item.reads & self.fir.locals)
        item.count = None
        if item.break_flag:
            item.count = self.namer.fresh("_count")
            lines.append(f"{item.count} = 0")
        if stable:
            item.range_src = iter_src
            lines.append(f"for {item.var} in {iter_src}:")
        else:
            rng = self.namer.fresh("_range")
            lines.append(f"{rng} = {iter_src}")
            item.range_src = rng
            lines.append(f"for {item.var} in {rng}:")
        self.in_branch += 1
        body = self.fwd_block(item.body, depth + 1)
        self.in_branch -= 1
        if item.count:
            body.insert(0, f"{item.count} += 1")
        if item.break_flag:
            body.append(f"if {item.break_flag}:")
            body.append(IND + "break")
        lines += [IND + x for x in (body or ["pass"])]
        saved = ([item.range_src] if item.range_src.startswith("_range") else []) + (
            [item.count] if item.count else [])
        item.saved_after = saved if depth > 0 else []
        if item.saved_after:
            lines.append(self.push(saved))
        return lines

    def fwd_while(self, item, depth):
        self._enter_loop(depth)
        self.reads_before |= item.reads
        item.count = self.namer.fresh("_count")
        lines = [f"{item.count} = 0", f"while {self.src(item.test)}:"]
        self.in_branch += 1
        body = [f"{item.count} += 1"] + self.fwd_block(item.body, depth + 1)
        self.in_branch -= 1
        if item.break_flag:
            body += [f"if {item.break_flag}:", IND + "break"]
        lines += [IND + x for x in body]
        if depth > 0:
            lines.append(self.push([item.count]))
        return lines

    def fwd_setitem(self, item, depth):
        self.reads_before |= item.reads
        self.uses_stack = True
        target = subscript_src(item.target, item.index)
        return [f"_stack.append(saved({target}))", f"{target} = {self.src(item.value)}"]

    # -- backward sweep --------------------------------------------------------------------------
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
        seen, cur, plan = {}, {}, []
        for st in seg.stmts:
            loads = dict(cur)
            stores, adj_names = {}, {}
            for w in st.writes:
                seen[w] = seen.get(w, 0) + 1
                last = seen[w] == count[w]
                if w in self.needed or not last:
                    stores[w] = self.namer.version(w)
                adj_names[w] = self.namer.adjoint(w) if last else "b" + stores[w]
            plan.append((st, loads, stores, adj_names))
            cur.update(stores)
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
                        reads |= _gast.load_names(_gast.parse(line.strip()))
        # dead-code elimination of the recomputation: keep what the adjoints read
        keep, wanted = [], set(reads)
        for st, loads, stores, _ in reversed(plan):
            outs = {stores.get(w, w) for w in st.writes}
            if (outs & wanted) and not (isinstance(st, Primal) and not st.pure):
                keep.append((st, loads, stores))
                wanted |= {loads.get(r, r) for r in st.reads}
        adj_lines = propagate_copies(adj_lines, self._local_adjoints(plan))
        lines = [self.pop(seg.saved)] if seg.saved else []
        for st, loads, stores in reversed(keep):
            lines += self._stmt_src(st, loads, stores).split("\n")
        return lines + adj_lines

    def _local_adjoints(self, plan):
        """Adjoints of temporaries made and consumed inside one segment: safe to rename."""
        out = set()
        for st, _, stores, adj_names in plan:
            for w in st.writes:
                if w.startswith("_") and w not in self.ret_names:
                    out.add(adj_names.get(w) or self.namer.adjoint(w))
        return out

    def adjoint(self, st, loads, stores, adj_names):
        """Adjoint lines of one statement, reading values through `loads` / `stores`."""
        if not isinstance(st, Op) or st.target not in self.active:
            return []
        g = adj_names.get(st.target) or self.namer.adjoint(st.target)
        if g not in self.nonzero:
            return []
        self.nonzero.discard(g)  # consumed: the value before this statement starts from zero
        val = lambda name: loads.get(name, name)  # noqa: E731
        ans = _gast.name(stores.get(st.target, st.target))
        lines = []

        def arg_adj(name):
            return adj_names.get(name) if name in adj_names and name == st.target else self.namer.adjoint(name)

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
        if st.kind == "call":
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
            mapping = {"g": _gast.name(g), "ans": ans}
            for pname, atom in zip(spec.inputs, st.args):
                if atom is not None:
                    mapping[pname] = node(atom)
            if prim.variadic:
                import inspect
                star = [p for p in inspect.signature(rule).parameters.values() if p.kind == p.VAR_POSITIONAL]
                if star:
                    mapping[star[0].name] = n.Tuple(elts=[node(a) for a in st.args], ctx=n.Load())
                mapping["argnum"] = _gast.constant(k)
            for sname, snode in st.static.items():
                mapping[sname] = _gast.copy(snode)
            expr = tidy.simplify(instantiate(rule, mapping), self.kinds.is_scalar, self.optimize)
            text = _gast.unparse(expr)
            if prim.elementwise and self._needs_unbroadcast(st, k):
                text = f"unbroadcast({text}, np.shape({val(name)}))"
            self.accumulate(lines, arg_adj(name), text, name, val(name))
        return lines

    def _needs_unbroadcast(self, st, k):
        if not self.optimize:
            return True
        return any(j != k and a is not None and not self.kinds.is_scalar(a) for j, a in enumerate(st.args))

    def call_adjoint(self, st, g, loads, arg_adj):
        fn = st.fn
        import inspect
        params = list(inspect.signature(fn).parameters)
        wrt, targets = [], []
        for k, a in enumerate(st.args):
            if is_name(a) and a.id in self.active and k < len(params):
                wrt.append(params[k])
                targets.append(a.id)
        for key, a in st.keywords.items():
            if is_name(a) and a.id in self.active:
                wrt.append(key)
                targets.append(a.id)
        if not wrt:
            return []
        kinds = {}
        for k, a in enumerate(st.args):
            if k < len(params):
                kinds[params[k]] = self.kinds.expr_kind(a)
        for key, a in st.keywords.items():
            kinds[key] = self.kinds.expr_kind(a)
        name, seed = self.module.helper(fn, tuple(wrt), kinds, self.optimize, st)
        args = [self.src(a, loads) for a in st.args]
        args += [f"{k}={self.src(a, loads)}" for k, a in st.keywords.items()]
        args.append(f"{seed}={g}")
        temps = [self.namer.fresh("_b") for _ in wrt]
        lines = [f"{', '.join(temps)}{',' if len(temps) == 1 else ''} = {name}({', '.join(args)})"]
        for t, var in zip(temps, targets):
            self.accumulate(lines, arg_adj(var), t, var, loads.get(var, var))
        return lines

    def _materialize(self, names):
        lines = []
        for var in sorted(names):
            adj = self.namer.adjoint(var)
            if adj not in self.nonzero:
                lines.append(f"{adj} = {self.zero(var)}")
                self.nonzero.add(adj)
        return lines

    def _touched(self, items):
        out = set()
        for s in walk_items(items):
            if isinstance(s, Op) and s.target in self.active:
                out.add(s.target)
                out |= {name for _, name in diff_args(s) if name in self.active}
            elif isinstance(s, SetItem) and s.target in self.active:
                out.add(s.target)
                if is_name(s.value) and s.value.id in self.active:
                    out.add(s.value.id)
            elif isinstance(s, Primal):
                out |= s.writes & self.active
        return out

    def bwd_if(self, item, depth):
        before = set(self.nonzero)
        body = self.bwd_block(item.body, depth)
        after_body = self.nonzero
        self.nonzero = set(before)
        orelse = self.bwd_block(item.orelse, depth)
        after_else = self.nonzero
        union = after_body | after_else
        body += [f"{a} = {self._zero_for_adj(a)}" for a in sorted(union - after_body)]
        orelse += [f"{a} = {self._zero_for_adj(a)}" for a in sorted(union - after_else)]
        self.nonzero = union
        lines = [f"# {item.text}"]
        if depth > 0:
            lines.append(self.pop([item.cond]))
        if not body and not orelse:
            return lines if depth > 0 else []
        lines.append(f"if {item.cond}:")
        lines += [IND + x for x in (body or ["pass"])]
        if orelse:
            lines.append("else:")
            lines += [IND + x for x in orelse]
        return lines

    def _zero_for_adj(self, adj):
        for var, name in self.namer._adjoints.items():
            if name == adj:
                return self.zero(var)
        return "0.0"

    def _carried(self, item):
        """Active names whose adjoints cross the loop-body boundary (so must exist as variables)."""
        inside = set(id(x) for x in walk_items(item.body))
        outside = set(self.ret_names)
        for x in walk_items(self.items):
            if id(x) not in inside and x is not item and not isinstance(x, Segment):
                outside |= getattr(x, "reads", set())
        return self._touched(item.body) & (needed_names(item.body, []) | outside)

    def _loop_body(self, item, depth):
        touched = self._carried(item)
        pre = self._materialize(touched)
        body = self.bwd_block(item.body, depth + 1)
        body += self._materialize(touched)
        return pre, body

    def bwd_for(self, item, depth):
        lines = [f"# {item.text}"]
        if item.saved_after:
            lines.append(self.pop(item.saved_after))
        rng = item.range_src
        pre, body = self._loop_body(item, depth)
        if item.count:
            rng = f"{rng}[:{item.count}]"
        header = [f"for {item.var} in reversed({rng}):"]
        if not any(not x.startswith("#") for x in body):
            return lines[1:]
        return lines[:1] + pre + lines[1:] + header + [IND + x for x in body]

    def bwd_while(self, item, depth):
        lines = [f"# {item.text}"]
        if depth > 0:
            lines.append(self.pop([item.count]))
        pre, body = self._loop_body(item, depth)
        if not any(not x.startswith("#") for x in body):
            return lines[1:]
        return lines[:1] + pre + lines[1:] + [f"for _ in range({item.count}):"] + [IND + x for x in body]

    def bwd_setitem(self, item):
        lines = [f"# {item.text}"]
        target = subscript_src(item.target, item.index)
        adj = self.namer.adjoint(item.target)
        if item.target in self.active and adj in self.nonzero:
            if is_name(item.value) and item.value.id in self.active:
                v = item.value.id
                self.accumulate(lines, self.namer.adjoint(v),
                                f"unbroadcast(saved({subscript_src(adj, item.index)}), np.shape({v}))", v, v)
            lines.append(f"{subscript_src(adj, item.index)} = 0.0")
        lines.append(f"{target} = _stack.pop()")
        return lines

    # -- the whole function ----------------------------------------------------------------------
    def generate(self, name, seed_default, returns, preserve_result, tuple_out=False):
        """Source of `def name(...)`; `returns` lists the parameters whose adjoints are returned."""
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
        elif len(fir.ret) > 1:
            seed = self.namer.unique("b" + fir.ret_name)
            for k, a in enumerate(fir.ret):
                if is_name(a) and a.id in self.active:
                    self.accumulate(seed_lines, self.namer.adjoint(a.id), f"{seed}[{k}]", a.id, a.id)
        result_lines = []
        if preserve_result:
            value = ", ".join(self.src(a) for a in fir.ret) if len(fir.ret) > 1 else self.src(fir.ret[0])
            result_name = self.namer.unique("_result")
            result_lines = [f"{result_name} = {value}"]
        bwd = seed_lines + self.bwd_block(self.items, 0)
        outs = []
        for p in returns:
            adj = self.namer.adjoint(p)
            outs.append(adj if adj in self.nonzero else self.zero(p, p))
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
        body += ["# forward"] + fwd + result_lines + ["# backward"] + bwd + [f"return {ret}"]
        lines += [IND + x for x in body]
        return "\n".join(_drop_blank_comments(lines)), seed

    def signature(self, seed, seed_default):
        fir = self.fir
        args = fir.info.node.args
        positional = args.posonlyargs + args.args
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        parts = []
        for a, d in zip(positional, defaults):
            parts.append(a.id if d is None else f"{a.id}={_gast.unparse(d)}")
        has_default = any(d is not None for d in defaults)
        kwonly = [a.id if d is None else f"{a.id}={_gast.unparse(d)}" for a, d in zip(args.kwonlyargs, args.kw_defaults)]
        seed_part = seed if seed_default is None else f"{seed}={seed_default}"
        if kwonly or (has_default and seed_default is None):
            return ", ".join(parts + ["*"] + kwonly + [seed_part])
        return ", ".join(parts + [seed_part])


def _all_stmts(block):
    for st in block:
        yield st
        for sub in ("body", "orelse"):
            yield from _all_stmts(getattr(st, sub, []) or [])


def eliminate_dead_code(block, live_out):
    """Drop pure assignments whose values nothing reads (not the output, no statement)."""
    while True:
        reads = set(live_out)
        for st in _all_stmts(block):
            reads |= getattr(st, "reads", set())
            if getattr(st, "break_flag", None):
                reads.add(st.break_flag)

        def keep(st):
            if isinstance(st, Primal) and st.pure or isinstance(st, Op) and st.kind != "call":
                return bool(st.writes & reads)
            return True

        changed = False

        def prune(items):
            nonlocal changed
            out = []
            for st in items:
                if not keep(st):
                    changed = True
                    continue
                for sub in ("body", "orelse"):
                    if getattr(st, sub, None):
                        setattr(st, sub, prune(getattr(st, sub)))
                out.append(st)
            return out

        block = prune(block)
        if not changed:
            return block


_COPY = re.compile(r"(\w+) = (\w+)")


def propagate_copies(lines, local):
    """Drop `b_t = bx` copies of segment-local adjoints, reading `bx` where `b_t` was read."""
    lines = list(lines)
    i = 0
    while i < len(lines):
        m = _COPY.fullmatch(lines[i])
        if m and m.group(1) in local and m.group(1) != m.group(2):
            a, b = m.group(1), m.group(2)
            use = re.compile(rf"\b{a}\b")
            later = lines[i + 1:]
            uses = [j for j, x in enumerate(later) if use.search(x)]
            if not any(x.startswith(f"{a} = ") for x in later):
                last = max(uses) if uses else -1
                if not any(x.startswith(f"{b} = ") for x in later[:last]):
                    for j in uses:
                        later[j] = use.sub(b, later[j])
                    lines = lines[:i] + later
                    continue
        i += 1
    return lines


def subscript_src(name, index):
    return _gast.unparse(n.Subscript(value=_gast.name(name), slice=_gast.copy(index), ctx=n.Load()))


class _SliceToCall(_gast.NodeTransformer):
    def visit_Slice(self, node):
        self.generic_visit(node)
        parts = [_gast.unparse(p) if p is not None else "None" for p in (node.lower, node.upper, node.step)]
        if parts[2] == "None":
            parts.pop()
            if parts == ["None", "None"]:
                parts = ["None"]
        return _gast.parse_expr(f"slice({', '.join(parts)})")


def index_expr(index):
    """An index as a plain expression: `0, :` -> `(0, slice(None))`."""
    return _SliceToCall().visit(_gast.copy(index))


def uses_ans(op):
    """True when the op's adjoint reads its own result (`ans`), e.g. exp, tanh, divide."""
    if op.kind != "prim":
        return False
    prim = op.spec.prim
    rules = prim.vjp if isinstance(prim.vjp, tuple) else (prim.vjp,)
    return any(callable(r) and "ans" in rule_uses(r) for r in rules)


def _merge_split_copies(stmts):
    """Inside loops, `_t = E; x = _t` (made so `x = x * 2` never reads its target) is `x = E`:
    the recomputation gives every value its own name anyway."""
    out = []
    for st in stmts:
        prev = out[-1] if out else None
        if (isinstance(st, Op) and st.kind == "copy" and getattr(st, "split", False) and isinstance(prev, Op)
                and prev.kind == "prim"
                and is_name(st.args[0]) and prev.target == st.args[0].id
                and not any(st.args[0].id in o.reads for o in stmts if o is not st)):
            prev.target = st.target
            prev.writes = {st.target}
            continue
        out.append(st)
    return out


def _drop_blank_comments(lines):
    out = []
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("# ") and stripped not in ("# forward", "# backward"):
            nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
            indent = len(line) - len(line.lstrip())
            nxt_indent = len(lines[i + 1]) - len(lines[i + 1].lstrip()) if i + 1 < len(lines) else -1
            if not nxt or nxt_indent < indent or (nxt.startswith("# ") and nxt_indent == indent and
                                                 nxt not in ("# backward",) and False):
                continue
        out.append(line)
    return out
