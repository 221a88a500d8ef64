"""Adjoint statements of one source line folded into one, as a hand-written adjoint writes them.

The adjoint of `x = np.sin(x) * 1.0001 + 0.01 * x * x` is seven statements, each an array
operation: `b_t2 = b_mul_t2_x * x`, `bx = b_mul_t2_x * _t2`, `bx = bx + b_t2 * 0.01`, ... A
person writes `bx = bx * (0.02 * x + 1.0001 * np.cos(x))`: five operations per step of the
1000-step chain instead of nine. In a version compiled for known argument types
(concrete.py), this pass reads a run of consecutive adjoint assignments that are linear in the
adjoints (`b * e`, `e * b`, `b / e`, `b + b`, `b - b`, `-b`, with `e` free of adjoints, all
values NumPy or Python floats) as polynomials: each adjoint the run leaves for later code is a
sum over the adjoints it read of `adjoint * coefficient`, whose terms are collected (`_t2 + x *
0.01`, where `_t2 = 0.01 * x` above, is `0.02 * x`). The run is replaced by those sums where
that takes fewer operations. Reassociating changes rounding in the last bits, nothing else.
"""

import ast
import copy

from ..ir import syntax
from ..ir.code import is_comment
from ..templates.quote import code_stmt
from .concrete_infer import is_array
from .function import blocks, function

_MAX_TERMS = 8


def _numeric(value):
    return is_array(value) and (value[2] is float or not isinstance(value[2], type) and value[2].kind == "f")


class _Poly:
    """A sum of terms `const * atom * ... / atom`; terms: {key: [const, [(atom ast, power)]]}."""

    def __init__(self, terms=None):
        self.terms = terms or {}

    @staticmethod
    def const(c):
        return _Poly({(): [float(c), []]})

    @staticmethod
    def atom(node, power=1):
        return _Poly({((ast.dump(node), power),): [1.0, [(node, power)]]})

    def add(self, other, sign=1.0):
        out = {k: [c, a] for k, (c, a) in self.terms.items()}
        for k, (c, a) in other.terms.items():
            if k in out:
                out[k] = [out[k][0] + sign * c, a]
            else:
                out[k] = [sign * c, a]
        return _Poly({k: v for k, v in out.items() if v[0] != 0.0})

    def mul(self, other):
        out = _Poly()
        for c1, a1 in self.terms.values():
            for c2, a2 in other.terms.values():
                powers = {}
                nodes = {}
                for node, p in a1 + a2:
                    d = ast.dump(node)
                    powers[d] = powers.get(d, 0) + p
                    nodes.setdefault(d, node)
                atoms = [(nodes[d], p) for d, p in powers.items() if p]
                key = tuple(sorted((d, p) for d, p in powers.items() if p))
                out = out.add(_Poly({key: [c1 * c2, atoms]}))
        return out

    def ops(self):
        """Operations to evaluate it: one per atom factor and constant, plus the additions."""
        n = sum(sum(abs(p) for _, p in atoms) + (c not in (1.0, -1.0)) - 1 + _calls(atoms)
                for c, atoms in self.terms.values())
        return n + max(len(self.terms) - 1, 0)

    def to_ast(self):
        total = None
        for c, atoms in self.terms.values():
            num = [n for n, p in atoms for _ in range(p)]
            den = [n for n, p in atoms for _ in range(-p)]
            neg = c < 0
            term = None if abs(c) == 1.0 and num else ast.Constant(value=abs(c))
            for n in num:
                term = n if term is None else ast.BinOp(left=term, op=ast.Mult(), right=n)
            for n in den:
                term = ast.BinOp(left=term if term is not None else ast.Constant(value=1.0), op=ast.Div(), right=n)
            if total is None:
                total = ast.UnaryOp(op=ast.USub(), operand=term) if neg else term
            else:
                total = ast.BinOp(left=total, op=ast.Sub() if neg else ast.Add(), right=term)
        return total


def _calls(atoms):
    return sum(1 for n, _ in atoms for s in syntax.walk(n) if isinstance(s, (ast.Call, ast.BinOp, ast.UnaryOp)))


def _count(node):
    return sum(1 for s in syntax.walk(node) if isinstance(s, (ast.BinOp, ast.UnaryOp, ast.Call)))


class _Reader:
    def __init__(self, adjoints, infer_, defs):
        self.adjoints, self.infer, self.defs = adjoints, infer_, defs

    def poly(self, node, depth=0):
        """An adjoint-free expression as a polynomial, or None."""
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return _Poly.const(node.value)
        if isinstance(node, ast.Name):
            if node.id in self.adjoints or not _numeric(self.infer.name(node.id)):
                return None
            if node.id in self.defs and depth < 3:
                expanded = self.poly(self.defs[node.id], depth + 1)
                if expanded is not None and len(expanded.terms) == 1:
                    return expanded
            return _Poly.atom(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            p = self.poly(node.operand, depth)
            return None if p is None else _Poly.const(-1.0).mul(p)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            left, right = self.poly(node.left, depth), self.poly(node.right, depth)
            if left is None or right is None:
                return None
            if isinstance(node.op, ast.Div):
                if len(right.terms) != 1:
                    return left.mul(_Poly.atom(node.right, -1))
                (c, atoms), = right.terms.values()
                if c == 0.0:
                    return None
                inverse = _Poly({tuple(sorted((ast.dump(n), -p) for n, p in atoms)): [1.0 / c, [(n, -p) for n, p in atoms]]})
                return left.mul(inverse)
            return left.add(right, -1.0 if isinstance(node.op, ast.Sub) else 1.0) if not isinstance(
                node.op, ast.Mult) else left.mul(right)
        if isinstance(node, ast.Call) and not any(isinstance(s, ast.Name) and s.id in self.adjoints
                                                   for s in syntax.walk(node)):
            return _Poly.atom(node) if _numeric(self.infer(node)) else None
        return None

    def linear(self, node, state):
        """An expression linear in the adjoints: {base adjoint: polynomial}, or None."""
        if isinstance(node, ast.Name) and node.id in self.adjoints:
            return dict(state.get(node.id, {node.id: _Poly.const(1.0)})) if _numeric(self.infer.name(node.id)) else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self.linear(node.operand, state)
            return None if inner is None else {b: _Poly.const(-1.0).mul(p) for b, p in inner.items()}
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            left, right = self.linear(node.left, state), self.linear(node.right, state)
            if left is None or right is None:
                return None
            out = dict(left)
            for b, p in right.items():
                out[b] = out[b].add(p, -1.0 if isinstance(node.op, ast.Sub) else 1.0) if b in out else (
                    _Poly.const(-1.0).mul(p) if isinstance(node.op, ast.Sub) else p)
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
            for lin, other, ok in ((node.left, node.right, True), (node.right, node.left, isinstance(node.op, ast.Mult))):
                form = self.linear(lin, state) if ok else None
                if form is not None:
                    factor = self.poly(other) if isinstance(node.op, ast.Mult) else self.poly(
                        ast.BinOp(left=ast.Constant(value=1.0), op=ast.Div(), right=other))
                    if factor is None:
                        return None
                    return {b: p.mul(factor) for b, p in form.items()}
            return None
        return None


def preaccumulate(body, signature, infer_, adjoints):
    """The `body` (lines or statements: function.py) of `def f(signature)` with runs of linear
    adjoint statements folded (see the module docstring); `infer_`: concrete_infer's values,
    `adjoints`: the adjoint names, `signature`: the parameters (`ast.arguments`, names, or
    their text)."""
    tree = body
    fn = function(tree, signature)
    changed = False
    for _ in range(64):
        if not _fold_one(fn, infer_, adjoints):
            break
        changed = True
    return fn.body if changed else body


def _fold_one(fn, infer_, adjoints):
    """Fold the first run that folds (True), or nothing (False)."""
    loads = [n for n in syntax.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    for block in list(blocks(fn)):
        code = [st for st in block if not is_comment(st)]
        start = 0
        while start < len(code):
            run = _run(code, start, adjoints)
            if len(run) >= 2:
                new = _fold(code, start, run, infer_, adjoints, loads)
                if new is not None:
                    _replace(block, *new)
                    return True
            start += max(len(run), 1)
    return False


def _run(block, start, adjoints):
    run = []
    for st in block[start:]:
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                and st.targets[0].id in adjoints):
            break
        run.append(st)
    return run


def _fold(block, start, run, infer_, adjoints, loads):
    """(the statements folded: `run` or its start, the statements replacing them), or None."""
    defs = {}  # names defined above in the block as a product, unchanged up to the run's end
    for st in block[:start]:
        for n in syntax.walk(st):
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                defs.pop(n.id, None)
                for k in [k for k, v in defs.items() if any(isinstance(m, ast.Name) and m.id == n.id
                                                              for m in syntax.walk(v))]:
                    defs.pop(k)
        if (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                and all(isinstance(n, (ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.operator, ast.unaryop,
                                       ast.expr_context)) for n in syntax.walk(st.value))):
            defs[st.targets[0].id] = st.value  # (arithmetic only: a call may have effects, `_stack.pop()`)
    reader = _Reader(adjoints, infer_, defs)
    state, exposed = {}, set()
    for i, st in enumerate(run):
        form = reader.linear(st.value, state)
        if form is None or any(len(p.terms) > _MAX_TERMS for p in form.values()):
            if i < 2:
                return None
            run = run[:i]  # (the statements before a nonlinear one)
            break
        for n in syntax.walk(st.value):
            if isinstance(n, ast.Name) and n.id in adjoints and n.id not in state:
                exposed.add(n.id)
        state[st.targets[0].id] = form
    inside = {id(n) for st in run for n in syntax.walk(st)}
    stored = list(dict.fromkeys(st.targets[0].id for st in run))  # (in order: the source is deterministic)
    live = [name for name in stored if name in exposed or any(
        n.id == name and id(n) not in inside for n in loads)]
    if not live or any(not state[name] for name in live):
        return None
    values = [_sum(state[name]) for name in live]
    if any(v is None for v in values):  # (every term cancelled: `x - x`)
        return None
    for name, value in zip(live, values):  # (terms that cancel must not take a broadcast shape with them)
        got, want = infer_(value), infer_.name(name)
        if not (_numeric(got) and _numeric(want) and got[1] == want[1] and got[2] == want[2]):
            return None
    old = sum(_count(st.value) for st in run)
    new = sum(_count(v) for v in values)
    if new > old or new == old and len(live) >= len(run):
        return None
    values = copy.deepcopy(values)  # (their atoms are nodes of statements that stay)
    if len(live) == 1:
        return run, [code_stmt("NAME = VALUE", NAME=live[0], VALUE=values[0])]
    return run, [code_stmt("NAMES = VALUES", NAMES=ast.Tuple(elts=[ast.Name(id=k, ctx=ast.Store()) for k in live],
                                                            ctx=ast.Store()),
                           VALUES=ast.Tuple(elts=values, ctx=ast.Load()))]


def _sum(form):
    total = None
    for base, poly in form.items():
        if not poly.terms:
            continue
        if list(poly.terms) == [()] and poly.terms[()][0] == 1.0:
            term = ast.Name(id=base, ctx=ast.Load())
        else:
            term = ast.BinOp(left=ast.Name(id=base, ctx=ast.Load()), op=ast.Mult(), right=poly.to_ast())
        total = term if total is None else ast.BinOp(left=total, op=ast.Add(), right=term)
    return total


def _replace(block, run, new):
    """`block` with the statements of `run` removed and `new` where the last of them was (the
    comments between them stay where they are)."""
    last, doomed = run[-1], {id(st) for st in run}
    out = []
    for st in block:
        if st is last:
            out += new
        elif id(st) not in doomed:
            out.append(st)
    block[:] = out
