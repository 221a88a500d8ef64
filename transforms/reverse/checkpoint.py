"""Checkpointed loops in the reverse transformer: `grad(f, checkpoint="sqrt" | ("binomial", s))`.

An outermost `for i in range(...)` loop normally pushes every iteration's overwritten
values on `_stack` and pops them in the backward sweep: memory grows with the trip count.
Checkpointed, the forward sweep keeps only the loop state (the variables the loop carries)
at a few iterations; the backward sweep reloads a kept state, runs the iterations after it
again with their pushes, and runs their adjoints at once. Which states and which segments
come from `revolve.Checkpoints` (the sqrt and binomial schedules); the generated code is
one small dispatch loop over its actions, so the scheme stays readable:

    for _action, _lo, _hi in _ckpt1.backward():
        if _action == 'load':
            x, = _ckpt1.load(_lo)
        ...
        else:  # 'reverse': iterations _lo.._hi-1 again, saving, then their adjoints
            for i in _range1[_lo:_hi]:
                <the loop body, with its pushes>
            for i in reversed(_range1[_lo:_hi]):
                <the adjoint of the loop body>

The per-iteration forward code and adjoint are exactly those of the unchecked loop, so the
gradients agree to rounding. Loops that are not checkpointed (while loops, loops with
`break`, loops over something else than `range(...)`, loops inside other loops) keep full
storage, and the generated source says so in a comment.
"""

import ast
import copy

from ..ir.code import Comment, bare_tuple, is_comment
from ..ir.syntax import nodes as n
from ..ir.analysis import walk_items
from ..ir.nodes import SetItem
from ..runtime.revolve import parse_spec
from ..templates.quote import code_expr, code_stmt


def spec_of(rev):
    """The `checkpoint=` option of the transform generating `rev` (None: store everything)."""
    return parse_spec(getattr(rev.module, "checkpoint", None))


def refusal(item):
    """Why this outermost loop keeps full storage although checkpointing was asked for (None: it
    is checkpointed). Loops inside a loop are stored per iteration of the outer one."""
    if getattr(item, "break_flag", None):
        return "it may exit early (`break` or `return`), so its trip count is not known in advance"
    if not hasattr(item, "var"):
        return "a while loop's trip count is not known in advance"
    it = item.iter
    if not (isinstance(it, n.Call) and isinstance(it.func, n.Name) and it.func.id == "range"):
        return "it does not iterate over range(...)"
    return None


def loop_state(rev, item):
    """The loop state: names the body writes that it reads, or that code after the loop reads,
    plus the arrays it writes into. Temporaries of un-nesting are made afresh each iteration."""
    inside = {id(x) for x in walk_items(item.body)}
    writes, reads, mutated = set(), set(), set()
    for s in walk_items(item.body):
        writes |= getattr(s, "writes", set())
        reads |= getattr(s, "reads", set())
        if isinstance(s, SetItem):
            mutated.add(s.target)
    outside = set(rev.ret_names)
    for x in walk_items(rev.items):
        if id(x) not in inside and x is not item:
            outside |= getattr(x, "reads", set())
    carried = {w for w in writes if w in outside or (w in reads and w not in rev.fir.temps)}
    return sorted((carried | mutated) - {item.var})


def fwd_for(rev, item, spec):
    """The forward sweep of a checkpointed loop: advance, keeping the schedule's states."""
    rev.enter_loop(0)
    rev.reads_before |= item.reads | {item.var}
    rev.uses_stack = True
    names = rev.namer
    item.ck = {"range": names.fresh("_range"), "ckpt": names.unique("_ckpt"), "action": names.unique("_action"),
               "lo": names.unique("_lo"), "hi": names.unique("_hi"), "kept": names.unique("_kept")}
    rev.in_branch += 1
    item.ck["body"] = rev.fwd_block(item.body, 1) or [ast.Pass()]
    rev.in_branch -= 1
    state = loop_state(rev, item)
    item.ck["state"] = state
    for name in state:
        if name not in rev.loop_entry_defined and name not in rev.preinit:
            rev.preinit.append(name)
    item.saved_after, item.count = [], None
    item.range_name = item.ck["range"]
    item.range_node = ast.Name(id=item.range_name, ctx=ast.Load())
    c = item.ck
    scheme = "sqrt" if spec[0] == "sqrt" else "binomial"
    advance = [Comment("'advance'", trailing=True),
               Comment("run the iterations, dropping what they push: the backward sweep redoes them")]
    return [Comment(f"{item.text}  (checkpointed, {scheme} schedule: the loop state is kept at checkpoints)"),
            code_stmt("R = ITER", R=c["range"], ITER=rev.code(item.iter)),
            code_stmt("CK = checkpoint_schedule(len(R), SPEC)", CK=c["ckpt"], R=c["range"], SPEC=spec_node(spec)),
            actions(c, "forward", ast.If(test=is_action(c, "save"), body=[save(c)], orelse=advance + run(c, item)))]


def bwd_for(rev, item):
    """The backward sweep: the schedule's loads, advances and reversed segments."""
    c = item.ck
    pre, body = rev.loop_body(item, 0)
    if not any(not is_comment(st) for st in body):
        body = [ast.Pass()]
    segment = code_expr("R[LO:HI]", R=c["range"], LO=c["lo"], HI=c["hi"])
    reverse = [Comment("'reverse': these iterations again, saving their values, then their adjoints", trailing=True),
               loop(item.var, segment, copy.deepcopy(c["body"])),
               loop(item.var, code_expr("reversed(S)", S=segment), body)]
    dispatch = ast.If(test=is_action(c, "save"), body=[save(c)], orelse=[
        ast.If(test=is_action(c, "load"), body=[load(c)], orelse=[
            ast.If(test=is_action(c, "advance"), body=run(c, item), orelse=reverse)])])
    return [Comment(f"{item.text}  (checkpointed: segments run again from the states kept)")] + pre + [
        actions(c, "backward", dispatch)]


def fallback_comment(item, why):
    return Comment(f"{item.text}  (not checkpointed: {why}; every iteration's values are kept)")


def loop(var, iterable, body):
    target = ast.Name(id=var, ctx=ast.Store())
    return ast.For(target=target, iter=iterable, body=body, orelse=[])


def actions(c, sweep, dispatch):
    """`for _action, _lo, _hi in _ckpt.<sweep>():` around the dispatch on the action."""
    target = ast.Tuple(elts=[ast.Name(id=c[k], ctx=ast.Store()) for k in ("action", "lo", "hi")], ctx=ast.Store())
    schedule = code_expr("CK.forward()" if sweep == "forward" else "CK.backward()", CK=c["ckpt"])
    return ast.For(target=target, iter=schedule, body=[dispatch], orelse=[])


def is_action(c, action):
    return code_expr("ACTION == WHAT", ACTION=c["action"], WHAT=ast.Constant(value=action))


def run(c, item):
    """The iterations lo..hi-1 of the loop body with their pushes discarded."""
    return [bare_tuple(code_stmt("_stack, KEPT = CK.discard, _stack", KEPT=c["kept"], CK=c["ckpt"])),
            loop(item.var, code_expr("R[LO:HI]", R=c["range"], LO=c["lo"], HI=c["hi"]), copy.deepcopy(c["body"])),
            code_stmt("_stack = KEPT", KEPT=c["kept"])]


def state_tuple(c, ctx):
    return ast.Tuple(elts=[ast.Name(id=name, ctx=ctx()) for name in c["state"]], ctx=ctx())


def save(c):
    return code_stmt("CK.save(LO, STATE)", CK=c["ckpt"], LO=c["lo"], STATE=state_tuple(c, ast.Load))


def load(c):
    if not c["state"]:
        return ast.Pass()
    return code_stmt("STATE = CK.load(LO)", STATE=state_tuple(c, ast.Store), CK=c["ckpt"], LO=c["lo"])


def spec_node(spec):
    """The schedule's spelling: `'sqrt'`, or `('binomial', 4)`."""
    if len(spec) == 2 and spec[1] is None:
        return ast.Constant(value=spec[0])
    return ast.Tuple(elts=[ast.Constant(value=x) for x in spec], ctx=ast.Load())
