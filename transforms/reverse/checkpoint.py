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

from ..ir.syntax import nodes as n
from ..ir.analysis import walk_items
from ..frontend.normalize import SetItem
from ..runtime.revolve import parse_spec

IND = "    "


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


def _state(rev, item):
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
    rev._enter_loop(0)
    rev.reads_before |= item.reads | {item.var}
    rev.uses_stack = True
    names = rev.namer
    item.ck = {"range": names.fresh("_range"), "ckpt": names.unique("_ckpt"), "action": names.unique("_action"),
               "lo": names.unique("_lo"), "hi": names.unique("_hi"), "kept": names.unique("_kept")}
    rev.in_branch += 1
    item.ck["body"] = rev.fwd_block(item.body, 1) or ["pass"]
    rev.in_branch -= 1
    state = _state(rev, item)
    item.ck["state"] = state
    for name in state:
        if name not in rev.loop_entry_defined and name not in rev.preinit:
            rev.preinit.append(name)
    item.saved_after, item.count, item.range_src = [], None, item.ck["range"]
    c = item.ck
    scheme = "sqrt" if spec[0] == "sqrt" else "binomial"
    lines = [f"# {item.text}  (checkpointed, {scheme} schedule: the loop state is kept at checkpoints)",
             f"{c['range']} = {rev.src(item.iter)}",
             f"{c['ckpt']} = checkpoint_schedule(len({c['range']}), {_spec_src(spec)})",
             f"for {c['action']}, {c['lo']}, {c['hi']} in {c['ckpt']}.forward():",
             f"{IND}if {c['action']} == 'save':",
             f"{IND}{IND}{_save(c)}",
             f"{IND}else:  # 'advance'"]
    lines += [IND + x for x in _advance(c, item)]
    return lines


def bwd_for(rev, item):
    """The backward sweep: the schedule's loads, advances and reversed segments."""
    c = item.ck
    pre, body = rev._loop_body(item, 0)
    if not any(not x.startswith("#") for x in body):
        body = ["pass"]
    seg = f"{c['range']}[{c['lo']}:{c['hi']}]"
    lines = [f"# {item.text}  (checkpointed: segments run again from the states kept)"] + pre
    lines += [f"for {c['action']}, {c['lo']}, {c['hi']} in {c['ckpt']}.backward():",
              f"{IND}if {c['action']} == 'save':",
              f"{IND}{IND}{_save(c)}",
              f"{IND}elif {c['action']} == 'load':",
              f"{IND}{IND}{_load(c)}",
              f"{IND}elif {c['action']} == 'advance':"]
    lines += [IND + x for x in _advance(c, item)[1:]]
    lines += [f"{IND}else:  # 'reverse': these iterations again, saving their values, then their adjoints",
              f"{IND}{IND}for {item.var} in {seg}:"]
    lines += [IND * 3 + x for x in c["body"]]
    lines += [f"{IND}{IND}for {item.var} in reversed({seg}):"]
    lines += [IND * 3 + x for x in body]
    return lines


def fallback_comment(item, why):
    return f"# {item.text}  (not checkpointed: {why}; every iteration's values are kept)"


def _advance(c, item):
    return ["    # run the iterations, dropping what they push: the backward sweep redoes them",
            f"    _stack, {c['kept']} = {c['ckpt']}.discard, _stack",
            f"    for {item.var} in {c['range']}[{c['lo']}:{c['hi']}]:"] + \
        [IND * 2 + x for x in c["body"]] + [f"    _stack = {c['kept']}"]


def _save(c):
    state = c["state"]
    return f"{c['ckpt']}.save({c['lo']}, ({', '.join(state)}{',' if len(state) == 1 else ''}))"


def _load(c):
    state = c["state"]
    if not state:
        return "pass"
    return f"{', '.join(state)}{',' if len(state) == 1 else ''} = {c['ckpt']}.load({c['lo']})"


def _spec_src(spec):
    return repr(spec[0]) if len(spec) == 2 and spec[1] is None else repr(spec)
