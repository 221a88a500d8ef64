"""The reverse transformer's control flow: branches, loops and subscript writes.

`ControlFlow` is mixed into `Reverse`: the forward sweep records branch decisions, trip
counts and overwritten slices on `_stack`; the backward sweep pops them and replays the
branch taken, the loop reversed, the slice restored.
"""

from ..ir import syntax
from . import checkpoint, symbolic_zeros
from ..ir.analysis import Segment, diff_args, needed_names, walk_items
from ..frontend.normalize import Op, Primal, SetItem, is_name
from .simplify import index_expr, subscript_src

IND = "    "


class ControlFlow:
    """Forward and backward sweeps of If, For, While and SetItem items (a mixin of Reverse)."""

    def fwd_if(self, item, depth):
        item.cond = self.namer.fresh("_cond")
        lines = [f"{item.cond} = {self.src(item.test)}"]
        self.reads_before |= item.reads
        # a name one branch overwrites gets `bv = zeros_like(v)` in the other branch's backward
        # (bwd_if), read where v holds its value before the `if`: saved like a value read
        written = set().union(*(getattr(s, "writes", set()) for s in walk_items(item.body + item.orelse)))
        zeroed = {v for v in written & self._touched(item.body + item.orelse) & self.written_before
                  if self.zero(v) != "0.0"}
        self.reads_before |= zeroed
        self.needed |= zeroed
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

    def _zeroed_in_backward(self, item):
        """Carried names whose adjoints the loop's backward sweep starts from `zeros_like(v)`
        (`_loop_body`): that reads v, so v is saved and restored like a value read, or the zero
        takes the shape of a later value (`y` rebound from a float to a matrix after the loop)."""
        return {v for v in self._carried(item) if self.zero(v) != "0.0"}

    def fwd_for(self, item, depth):
        note = self._checkpoint_note(item, depth)
        if note is None:
            return checkpoint.fwd_for(self, item, checkpoint.spec_of(self))
        return note + self._fwd_for(item, depth)

    def _checkpoint_note(self, item, depth):
        """None: checkpoint this loop (grad's `checkpoint=`); else the comment lines to emit."""
        if depth > 0 or checkpoint.spec_of(self) is None:
            return []
        why = checkpoint.refusal(item)
        return None if why is None else [checkpoint.fallback_comment(item, why)]

    def _fwd_for(self, item, depth):
        self._enter_loop(depth)
        self.reads_before |= item.reads | {item.var}
        zeroed = self._zeroed_in_backward(item)
        self.needed |= zeroed
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
        self.reads_before |= zeroed
        self.written_before |= zeroed
        return lines

    def fwd_while(self, item, depth):
        self._enter_loop(depth)
        self.reads_before |= item.reads
        zeroed = self._zeroed_in_backward(item)
        self.needed |= zeroed
        item.count = self.namer.fresh("_count")
        lines = self._checkpoint_note(item, depth) + [f"{item.count} = 0", f"while {self.src(item.test)}:"]
        self.in_branch += 1
        body = [f"{item.count} += 1"] + self.fwd_block(item.body, depth + 1)
        self.in_branch -= 1
        if item.break_flag:
            body += [f"if {item.break_flag}:", IND + "break"]
        lines += [IND + x for x in body]
        if depth > 0:
            lines.append(self.push([item.count]))
        self.reads_before |= zeroed
        self.written_before |= zeroed
        return lines

    def fwd_setitem(self, item, depth):
        self.reads_before |= item.reads
        self.uses_stack = True
        target = subscript_src(item.target, item.index)
        return [f"_stack.append(saved({target}))", f"{target} = {self.src(item.value)}"]

    # -- backward sweep --------------------------------------------------------------------------
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
        """The carried adjoints that may be nonzero in some backward iteration start from zeros
        before the loop and are zeroed again at the end of the body where it consumed them;
        the others are symbolic zeros all through the loop (symbolic_zeros.py)."""
        adjoints = self.namer._adjoints
        entry = {var for var, adj in adjoints.items() if adj in self.nonzero}
        may = symbolic_zeros.loop_entry(item, entry, self.active)
        touched = self._carried(item) & may
        pre = self._materialize(touched)
        body = self.bwd_block(item.body, depth + 1)
        missed = {var for var in self._carried(item) - may if adjoints.get(var) in self.nonzero}
        if missed:  # the analysis must over-approximate what the generated code writes
            raise AssertionError(f"symbolic zeros: adjoints of {sorted(missed)} written in `{item.text}`")
        body += self._materialize(touched)
        return pre, body

    def bwd_for(self, item, depth):
        if getattr(item, "ck", None):
            return checkpoint.bwd_for(self, item)
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
        return lines[:1] + pre + lines[1:] + [f"for {self._discard()} in range({item.count}):"] + [IND + x for x in body]

    def _discard(self):
        """The backward while loop's counter: `_`, unless the user's code uses that name."""
        if getattr(self, "_discard_name", None) is None:
            self._discard_name = self.namer.unique("_")
        return self._discard_name

    def bwd_setitem(self, item):
        lines = [f"# {item.text}"]
        target = subscript_src(item.target, item.index)
        adj = self.namer.adjoint(item.target)
        if item.target in self.active and adj in self.nonzero:
            if is_name(item.value) and item.value.id in self.active:
                v = item.value.id
                self.accumulate(lines, self.namer.adjoint(v),
                                f"unbroadcast(saved({subscript_src(adj, item.index)}), np.shape({v}))", v, v)
            lines.append(f"{target} = _stack.pop()")
            lines.append(f"{adj} = zero_slot({adj}, {syntax.unparse(index_expr(item.index))}, {item.target})")
            return lines
        lines.append(f"{target} = _stack.pop()")
        return lines

    # -- the whole function ----------------------------------------------------------------------
