"""The reverse transformer's control flow: branches, loops and subscript writes.

`ControlFlow` is mixed into `Reverse` (whose `__init__` makes the state it uses): the forward
sweep records branch decisions, trip counts and overwritten slices on `_stack`; the backward
sweep pops them and replays the branch taken, the loop reversed, the slice restored. Every
method returns generated statements (standard ast, with `Comment`s: ir/code.py).
"""

import ast

from ..ir import code
from ..ir.code import Comment
from . import checkpoint, symbolic_zeros
from ..ir.analysis import Segment, diff_args, needed_names, walk_items
from ..ir.nodes import Op, Primal, SetItem, is_name
from ..templates.quote import code_expr, code_stmt
from .simplify import index_expr, subscript


def name(identifier):
    return ast.Name(id=identifier, ctx=ast.Load())


def if_stmt(test, body, orelse=()):
    """`if test: body else: orelse`; an `if` alone in the `else` stays a nested block."""
    orelse = list(orelse)
    if len(orelse) == 1 and isinstance(orelse[0], ast.If):
        code.nested_else(orelse[0])
    return ast.If(test=test, body=list(body) or [ast.Pass()], orelse=orelse)


def for_stmt(var, iterable, body):
    target = ast.Name(id=var, ctx=ast.Store()) if isinstance(var, str) else var
    return ast.For(target=target, iter=iterable, body=list(body) or [ast.Pass()], orelse=[])


def break_if(flag):
    return if_stmt(name(flag), [ast.Break()])


def has_code(body):
    return any(not code.is_comment(st) for st in body)


class ControlFlow:
    """Forward and backward sweeps of If, For, While and SetItem items (a mixin of Reverse)."""

    def fwd_if(self, item, depth):
        item.cond = self.namer.fresh("_cond")
        out = [code_stmt("C = TEST", C=item.cond, TEST=self.code(item.test))]
        self.reads_before |= item.reads
        # a name one branch overwrites gets `bv = zeros_like(v)` in the other branch's backward
        # (bwd_if), read where v holds its value before the `if`: saved like a value read
        written = set().union(*(getattr(s, "writes", set()) for s in walk_items(item.body + item.orelse)))
        zeroed = {v for v in written & self.touched(item.body + item.orelse) & self.written_before
                  if not self.scalar(v)}
        self.reads_before |= zeroed
        self.needed |= zeroed
        self.in_branch += 1
        snapshot = (set(self.reads_before), set(self.written_before))
        body = self.fwd_block(item.body, depth)
        after = (self.reads_before, self.written_before)
        self.reads_before, self.written_before = set(snapshot[0]), set(snapshot[1])
        orelse = self.fwd_block(item.orelse, depth)
        self.reads_before |= after[0]
        self.written_before |= after[1]
        self.in_branch -= 1
        out.append(if_stmt(name(item.cond), body, orelse))
        if depth > 0:
            out.append(self.push([item.cond]))  # after the branch: popped before it
        return out

    def zeroed_in_backward(self, item):
        """Carried names whose adjoints the loop's backward sweep starts from `zeros_like(v)`
        (`loop_body`): that reads v, so v is saved and restored like a value read, or the zero
        takes the shape of a later value (`y` rebound from a float to a matrix after the loop)."""
        return {v for v in self.carried(item) if not self.scalar(v)}

    def fwd_for(self, item, depth):
        note = self.checkpoint_note(item, depth)
        if note is None:
            return checkpoint.fwd_for(self, item, checkpoint.spec_of(self))
        return note + self.fwd_stored_for(item, depth)

    def checkpoint_note(self, item, depth):
        """None: checkpoint this loop (grad's `checkpoint=`); else the comments to emit."""
        if depth > 0 or checkpoint.spec_of(self) is None:
            return []
        why = checkpoint.refusal(item)
        return None if why is None else [checkpoint.fallback_comment(item, why)]

    def fwd_stored_for(self, item, depth):
        """A loop whose iterations push what they overwrite."""
        self.enter_loop(depth)
        self.reads_before |= item.reads | {item.var}
        zeroed = self.zeroed_in_backward(item)
        self.needed |= zeroed
        item.ck = None  # (checkpoint.fwd_for's loops have their names there)
        out = []
        stable = item.reads <= (self.stable | {"range", "len", "min"}) or not (item.reads & self.fir.locals)
        item.count = None
        if item.break_flag:
            item.count = self.namer.fresh("_count")
            out.append(code_stmt("N = 0", N=item.count))
        item.range_name = None  # the name holding the iterable, when it is saved
        if stable:
            item.range_node = self.code(item.iter)
        else:
            item.range_name = self.namer.fresh("_range")
            out.append(code_stmt("R = ITER", R=item.range_name, ITER=self.code(item.iter)))
            item.range_node = name(item.range_name)
        self.in_branch += 1
        body = self.fwd_block(item.body, depth + 1)
        self.in_branch -= 1
        if item.count:
            body.insert(0, code_stmt("N += 1", N=item.count))
        if item.break_flag:
            body.append(break_if(item.break_flag))
        out.append(for_stmt(item.var, item.range_node, body))
        saved = ([item.range_name] if item.range_name else []) + ([item.count] if item.count else [])
        item.saved_after = saved if depth > 0 else []
        if item.saved_after:
            out.append(self.push(saved))
        self.reads_before |= zeroed
        self.written_before |= zeroed
        return out

    def fwd_while(self, item, depth):
        self.enter_loop(depth)
        self.reads_before |= item.reads
        zeroed = self.zeroed_in_backward(item)
        self.needed |= zeroed
        item.count = self.namer.fresh("_count")
        out = self.checkpoint_note(item, depth) + [code_stmt("N = 0", N=item.count)]
        test = self.code(item.test)
        self.in_branch += 1
        body = [code_stmt("N += 1", N=item.count)] + self.fwd_block(item.body, depth + 1)
        self.in_branch -= 1
        if item.break_flag:
            body.append(break_if(item.break_flag))
        out.append(ast.While(test=test, body=body, orelse=[]))
        if depth > 0:
            out.append(self.push([item.count]))
        self.reads_before |= zeroed
        self.written_before |= zeroed
        return out

    def fwd_setitem(self, item, depth):
        self.reads_before |= item.reads
        self.uses_stack = True
        target = self.code(subscript(item.target, item.index))
        return [code_stmt("_stack.append(saved(T))", T=target), code_stmt("T = V", T=target, V=self.code(item.value))]

    # -- backward sweep --------------------------------------------------------------------------
    def materialize(self, names):
        out = []
        for var in sorted(names):
            adj = self.adjoint_name(var)
            if adj not in self.nonzero:
                out.append(code_stmt("ADJ = ZERO", ADJ=adj, ZERO=self.zero(var)))
                self.nonzero.add(adj)
        return out

    def touched(self, items):
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
        body += [code_stmt("ADJ = ZERO", ADJ=a, ZERO=self.zero_for_adjoint(a)) for a in sorted(union - after_body)]
        orelse += [code_stmt("ADJ = ZERO", ADJ=a, ZERO=self.zero_for_adjoint(a)) for a in sorted(union - after_else)]
        self.nonzero = union
        out = [Comment(item.text)]
        if depth > 0:
            out.append(self.pop([item.cond]))
        if not body and not orelse:
            return out if depth > 0 else []
        out.append(if_stmt(name(item.cond), body, orelse))
        return out

    def zero_for_adjoint(self, adj):
        for var, adjoint in self.adjoint_names.items():
            if adjoint == adj:
                return self.zero(var)
        return ast.Constant(value=0.0)

    def carried(self, item):
        """Active names whose adjoints cross the loop-body boundary (so must exist as variables)."""
        inside = set(id(x) for x in walk_items(item.body))
        outside = set(self.ret_names)
        for x in walk_items(self.items):
            if id(x) not in inside and x is not item and not isinstance(x, Segment):
                outside |= getattr(x, "reads", set())
        return self.touched(item.body) & (needed_names(item.body, []) | outside)

    def loop_body(self, item, depth):
        """The carried adjoints that may be nonzero in some backward iteration start from zeros
        before the loop and are zeroed again at the end of the body where it consumed them;
        the others are symbolic zeros all through the loop (symbolic_zeros.py)."""
        adjoints = self.adjoint_names
        entry = {var for var, adj in adjoints.items() if adj in self.nonzero}
        may = symbolic_zeros.loop_entry(item, entry, self.active)
        touched = self.carried(item) & may
        pre = self.materialize(touched)
        body = self.bwd_block(item.body, depth + 1)
        missed = {var for var in self.carried(item) - may if adjoints.get(var) in self.nonzero}
        if missed:  # the analysis must over-approximate what the generated code writes
            raise AssertionError(f"symbolic zeros: adjoints of {sorted(missed)} written in `{item.text}`")
        body += self.materialize(touched)
        return pre, body

    def bwd_for(self, item, depth):
        if item.ck is not None:
            return checkpoint.bwd_for(self, item)
        pops = [self.pop(item.saved_after)] if item.saved_after else []
        pre, body = self.loop_body(item, depth)
        if not has_code(body):
            return pops
        rng = item.range_node
        if item.count:
            rng = code_expr("R[:N]", R=rng, N=item.count)
        return [Comment(item.text)] + pre + pops + [for_stmt(item.var, code_expr("reversed(R)", R=rng), body)]

    def bwd_while(self, item, depth):
        pops = [self.pop([item.count])] if depth > 0 else []
        pre, body = self.loop_body(item, depth)
        if not has_code(body):
            return pops
        return [Comment(item.text)] + pre + pops + [for_stmt(self.discard(), code_expr("range(N)", N=item.count), body)]

    def discard(self):
        """The backward while loop's counter: `_`, unless the user's code uses that name."""
        if self.discard_name is None:
            self.discard_name = self.namer.unique("_")
        return self.discard_name

    def bwd_setitem(self, item, depth):
        out = [Comment(item.text)]
        target = self.code(subscript(item.target, item.index))
        restore = code_stmt("T = _stack.pop()", T=target)
        adj = self.adjoint_name(item.target)
        if item.target in self.active and adj in self.nonzero:
            if is_name(item.value) and item.value.id in self.active:
                v = item.value.id
                self.accumulate(out, self.adjoint_name(v), code_expr(
                    "unbroadcast(saved(SLOT), np.shape(V))", SLOT=self.code(subscript(adj, item.index)), V=v), v, v)
            out.append(restore)
            out.append(code_stmt("ADJ = zero_slot(ADJ, INDEX, X)", ADJ=adj, INDEX=self.code(index_expr(item.index)),
                                 X=item.target))
            return out
        out.append(restore)
        return out
