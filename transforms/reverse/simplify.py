"""Small pieces of the reverse transformer that work on source text and IR lists:
renaming, dead-code elimination, copy propagation, index spelling.

Shared by the reverse sweep (`reverse.py`, `reverse_control.py`) and forward mode.
"""

import re

from ..ir import syntax
from ..ir.syntax import nodes as n
from ..frontend.normalize import Op, Primal, is_name
from ..templates.rules import rule_uses

class _Rename(syntax.NodeTransformer):
    def __init__(self, loads, stores=None):
        self.loads, self.stores = loads, stores or {}

    def visit_Name(self, node):
        table = self.stores if isinstance(node.ctx, n.Store) else self.loads
        if node.id in table:
            return syntax.name(table[node.id], store=isinstance(node.ctx, n.Store))
        return node


def rename(node, loads, stores=None):
    if not loads and not stores:
        return node
    return _Rename(loads, stores).visit(syntax.copy(node))



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
        prune = None  # it calls itself through its cell: break that cycle (issue 13)
        if not changed:
            return block


_COPY = re.compile(r"(\w+) = (\w+)")


def live_body(fir, optimize):
    """The names `fir` returns, and its body (without dead code when optimizing): where both
    transformers start."""
    ret_names = [a.id for a in fir.ret if is_name(a)]
    body = eliminate_dead_code(fir.body, set(ret_names)) if optimize else fir.body
    return ret_names, body


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
    return syntax.unparse(n.Subscript(value=syntax.name(name), slice=syntax.copy(index), ctx=n.Load()))


class _SliceToCall(syntax.NodeTransformer):
    def visit_Slice(self, node):
        self.generic_visit(node)
        parts = [syntax.unparse(p) if p is not None else "None" for p in (node.lower, node.upper, node.step)]
        if parts[2] == "None":
            parts.pop()
            if parts == ["None", "None"]:
                parts = ["None"]
        return syntax.parse_expr(f"slice({', '.join(parts)})")


def index_expr(index):
    """An index as a plain expression: `0, :` -> `(0, slice(None))`."""
    return _SliceToCall().visit(syntax.copy(index))


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
