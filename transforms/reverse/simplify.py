"""Small pieces of the reverse transformer: renaming IR nodes, dead-code elimination of the IR,
copy propagation and blank comments of the generated statements, index spelling.

The IR is gast (`rename`, `index_expr`, `subscript`); generated code is standard-ast statement
lists with `Comment`s (ir/code.py): `propagate_copies`, `drop_blank_comments`, `loaded_names`.
Shared by the reverse sweep (sweeps.py, control.py, adjoints.py), forward mode and codegen.
"""

import ast

from ..ir import syntax
from ..ir.code import Comment
from ..ir.code import Rename as RenameCode
from ..ir.syntax import nodes as n
from ..frontend.normalize import Op, Primal, is_name
from ..templates.rules import rule_uses


class Rename(syntax.NodeTransformer):
    """Names read looked up in `loads`, names written in `stores` (gast)."""

    def __init__(self, loads, stores=None, scoped=frozenset()):
        self.loads, self.stores, self.scoped = loads, stores or {}, scoped

    def visit_Name(self, node):
        if id(node) in self.scoped:  # a comprehension's own variable
            return node
        table = self.stores if isinstance(node.ctx, n.Store) else self.loads
        if node.id in table:
            return syntax.name(table[node.id], store=isinstance(node.ctx, n.Store))
        return node


def rename(node, loads, stores=None):
    if not loads and not stores:
        return node
    node = syntax.copy(node)
    return Rename(loads, stores, syntax.comprehension_scoped(node)).visit(node)


def all_stmts(block):
    for st in block:
        yield st
        for sub in ("body", "orelse"):
            yield from all_stmts(getattr(st, sub, []) or [])


def eliminate_dead_code(block, live_out):
    """Drop pure assignments whose values nothing reads (not the output, no statement)."""
    while True:
        reads = set(live_out)
        for st in all_stmts(block):
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
        prune = None  # it calls itself through its cell: break that cycle, or each call leaks a frame
        if not changed:
            return block


def live_body(fir, optimize):
    """The names `fir` returns, and its body (without dead code when optimizing): where both
    transformers start."""
    ret_names = [a.id for a in fir.ret if is_name(a)]
    body = eliminate_dead_code(fir.body, set(ret_names)) if optimize else fir.body
    return ret_names, body


# -- generated statements (standard ast) -------------------------------------------------------

def loaded_names(stmts):
    """Names the generated statements read."""
    return {x.id for st in stmts for x in syntax.walk(st) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)}


def copy_of(st):
    """(a, b) for a copy `a = b` between two names, else None."""
    if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) \
            and isinstance(st.value, ast.Name):
        return st.targets[0].id, st.value.id
    return None


def assigns(st, name):
    """Whether `st` is `name = ...`."""
    return isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) \
        and st.targets[0].id == name


def mentions(st, name):
    return any(isinstance(x, ast.Name) and x.id == name for x in syntax.walk(st))


def propagate_copies(stmts, local):
    """Drop `b_t = bx` copies of segment-local adjoints, reading `bx` where `b_t` was read."""
    stmts = list(stmts)
    i = 0
    while i < len(stmts):
        pair = copy_of(stmts[i])
        if pair and pair[0] in local and pair[0] != pair[1]:
            a, b = pair
            later = stmts[i + 1:]
            uses = [j for j, st in enumerate(later) if mentions(st, a)]
            if not any(assigns(st, a) for st in later):
                last = max(uses) if uses else -1
                if not any(assigns(st, b) for st in later[:last]):
                    for j in uses:
                        later[j] = RenameCode(a, b).visit(later[j])
                    stmts = stmts[:i] + later
                    continue
        i += 1
    return stmts


def drop_blank_comments(stmts):
    """The statements without the comments that end a block (a statement's comment whose
    statement left no code), in nested blocks too; `# forward`, `# backward` and comments at
    the end of a line stay."""
    out = []
    for k, st in enumerate(stmts):
        if isinstance(st, Comment) and not getattr(st, "trailing", False) and k == len(stmts) - 1 \
                and ("# " + st.text).strip().startswith("# ") and st.text.strip() not in ("forward", "backward"):
            continue
        for sub in ("body", "orelse", "finalbody"):
            if getattr(st, sub, None):
                setattr(st, sub, drop_blank_comments(getattr(st, sub)))
        out.append(st)
    return out


# -- indices (IR, gast) --------------------------------------------------------------------------

def subscript(name, index):
    """`name[index]` (gast)."""
    return n.Subscript(value=syntax.name(name), slice=syntax.copy(index), ctx=n.Load())


def is_none(node):
    return node is None or syntax.is_constant(node) and node.value is None


class SliceToCall(syntax.NodeTransformer):
    def visit_Slice(self, node):
        self.generic_visit(node)
        parts = [syntax.constant(None) if is_none(p) else p for p in (node.lower, node.upper, node.step)]
        if is_none(node.step):
            parts.pop()
            if is_none(node.lower) and is_none(node.upper):
                parts = parts[:1]
        return n.Call(func=syntax.name("slice"), args=parts, keywords=[])


def index_expr(index):
    """An index as a plain expression: `0, :` -> `(0, slice(None))`."""
    return SliceToCall().visit(syntax.copy(index))


def uses_ans(op):
    """True when the op's adjoint reads its own result (`ans`), e.g. exp, tanh, divide."""
    if op.kind != "prim":
        return False
    prim = op.spec.prim
    rules = prim.vjp if isinstance(prim.vjp, tuple) else (prim.vjp,)
    return any(callable(r) and "ans" in rule_uses(r) for r in rules)


def merge_split_copies(stmts):
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
