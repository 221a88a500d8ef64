"""Flow-insensitive facts the reverse pass needs: activity, scalar kinds, what bwd re-reads.

- varied: depends differentiably on a `wrt` input; useful: reaches the output. Only
  active (varied and useful) values get adjoint code. Forward mode uses the same analysis
  with its own argument filter (`forward_analysis.jvp_args`).
- kind: "scalar" for Python/NumPy scalars (no broadcasting possible, math.* is fine),
  else "array" (anything else). Decided per call from the argument types.
- needed: names whose values some backward code reads (upward-exposed reads of every
  straight-line segment, control-flow headers, subscript writes); only they are saved.
"""

import inspect
import numbers
from dataclasses import dataclass

import numpy as np

from dualtape.core.registry import NOT_DIFFERENTIABLE, Traced
from dualtape.core.traced import number_argument

from . import syntax
from .syntax import nodes as n
from ..frontend.function_values import LIBRARIES, FunctionKind, ObjectKind, is_function_value, is_user_object
from .nodes import For, If, Op, Primal, SetItem, While, is_name


@dataclass(eq=False)
class Segment:
    """A maximal run of straight-line statements (Op and Primal)."""

    stmts: list
    saved: list = None  # the names the reverse sweep saves before it (reverse/sweeps.py)


def segmentize(block):
    items, run = [], []
    for st in block:
        if isinstance(st, (Op, Primal)):
            run.append(st)
            continue
        if run:
            items.append(Segment(run))
            run = []
        if isinstance(st, If):
            st.body, st.orelse = segmentize(st.body), segmentize(st.orelse)
        elif isinstance(st, (For, While)):
            st.body = segmentize(st.body)
        items.append(st)
    if run:
        items.append(Segment(run))
    return items


def walk_items(items):
    for item in items:
        yield item
        if isinstance(item, Segment):
            yield from item.stmts
        elif isinstance(item, If):
            yield from walk_items(item.body)
            yield from walk_items(item.orelse)
        elif isinstance(item, (For, While)):
            yield from walk_items(item.body)


def flow_args(op, blocked):
    """(position or keyword, name) of the named arguments of `op`, less those of a primitive
    that `blocked(prim, position)` rules out."""
    out = []
    for k, a in enumerate(op.args):
        if not is_name(a):
            continue
        if op.kind == "prim" and blocked(op.spec.prim, k):
            continue
        out.append((k, a.id))
    if op.kind == "call":
        out += [(key, a.id) for key, a in op.keywords.items() if is_name(a)]
    return out


def _no_vjp(prim, k):
    rule = prim.vjp if prim.variadic else prim.vjp_rule(k)
    return rule is None or rule is NOT_DIFFERENTIABLE or (prim.variadic and k in prim.nondiff_argnums)


def diff_args(op):
    """(position, name) of the arguments a gradient can flow to."""
    return flow_args(op, _no_vjp)


def call_wrt(st, active, kinds):
    """For a call of a user function: the parameters its active arguments are passed to, those
    arguments' names, and the kind of every parameter passed (what its helper is made for)."""
    params = list(inspect.signature(st.fn).parameters)
    wrt, names = [], []
    for k, a in enumerate(st.args):
        if is_name(a) and a.id in active and k < len(params):
            wrt.append(params[k])
            names.append(a.id)
    for key, a in st.keywords.items():
        if is_name(a) and a.id in active:
            wrt.append(key)
            names.append(a.id)
    arg_kinds = {params[k]: kinds.expr_kind(a) for k, a in enumerate(st.args) if k < len(params)}
    arg_kinds.update((key, kinds.expr_kind(a)) for key, a in st.keywords.items())
    return wrt, names, arg_kinds


def activity(items, wrt_names, ret_names, optimize, args_of=diff_args):
    """Names that are varied (depend on a `wrt` name through the arguments `args_of(op)` names)
    and, with optimize, useful (reach a returned name the same way): the active names.

    Shared by both modes: reverse passes `diff_args`, forward `jvp_args`.
    """
    stmts = [s for s in walk_items(items) if isinstance(s, (Op, SetItem))]

    def sources(s):
        if isinstance(s, Op):
            return [name for _, name in args_of(s)]
        return [s.value.id] if is_name(s.value) else []

    varied = set(wrt_names)
    changed = True
    while changed:
        changed = False
        for s in stmts:
            if s.target not in varied and any(name in varied for name in sources(s)):
                varied.add(s.target)
                changed = True
    if not optimize:
        return varied
    useful = set(ret_names)
    changed = True
    while changed:
        changed = False
        for s in stmts:
            if s.target not in useful:
                continue
            for name in sources(s):
                if name not in useful:
                    useful.add(name)
                    changed = True
    return varied & useful


class TracedNumber(str):
    """The kind of a traced number argument once code generation reads it: equal to "array" (np.*
    everywhere, emit.traced_kinds), but immutable for the aliasing check, as the number it stands
    for (`c += v` rebinds it: lib/forward/inplace.py)."""


TRACED_NUMBER = TracedNumber("array")


def value_kind(value):
    """"scalar", "array", or "traced" (a tensor or dual number: an array that must see np.* calls);
    "traced number" for one that a functional transform made from a Python number argument."""
    if isinstance(value, Traced):
        return "traced number" if number_argument(value) else "traced"
    if is_function_value(value):  # not differentiated: a version per function (frontend/functions.py)
        return FunctionKind(value)
    if is_user_object(value):  # a model object: its methods are read (frontend/functions.py)
        return ObjectKind(type(value))
    if isinstance(value, (bool, numbers.Number, np.generic)) and not isinstance(value, complex):
        return "scalar"
    return "array"


class Kinds:
    """Scalar-or-array inference: a name is scalar only if every definition of it is."""

    def __init__(self, items, param_kinds, namespace, locals_):
        self.kinds = dict(param_kinds)
        self.namespace, self.locals = namespace, locals_
        defs = {}
        for s in walk_items(items):
            if isinstance(s, (Op, Primal, SetItem)):
                for w in s.writes:
                    defs.setdefault(w, []).append(s)
            elif isinstance(s, For):
                defs.setdefault(s.var, []).append(s)
        for name in defs:
            if name not in self.kinds:
                self.kinds[name] = "scalar"
        changed = True
        while changed:
            changed = False
            for name, sts in defs.items():
                if self.kinds.get(name) == "array":
                    continue
                if any(self._def_kind(s, name) == "array" for s in sts):
                    self.kinds[name] = "array"
                    changed = True
        for name, sts in defs.items():  # a model object made in the function (frontend/functions.py)
            if len(sts) == 1 and name not in param_kinds and isinstance(self._def_kind(sts[0], name), ObjectKind):
                self.kinds[name] = self._def_kind(sts[0], name)

    def _def_kind(self, s, name):
        if isinstance(s, For):
            return "scalar" if _is_range(s.iter) else "array"
        if isinstance(s, SetItem):
            return "array"
        if isinstance(s, Primal):
            node = s.node
            if isinstance(node, n.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], n.Name):
                return self.expr_kind(node.value)
            if isinstance(node, n.AugAssign) and isinstance(node.target, n.Name):
                return "scalar" if self.expr_kind(node.value) == "scalar" and self.kinds.get(name) == "scalar" else "array"
            return "array"
        if s.kind == "copy":
            return self.expr_kind(s.args[0])
        if s.kind == "prim":
            if s.spec.math:
                return "scalar"
            prim = s.spec.prim
            if prim.elementwise:
                return "scalar" if all(a is None or self.expr_kind(a) == "scalar" for a in s.args) else "array"
            if prim.name in ("Sum", "Mean", "Prod", "Max", "Min"):
                axis = s.static.get("axis")
                keep = s.static.get("keepdims")
                if (axis is None or (syntax.is_constant(axis) and axis.value is None)) and (
                        keep is None or (syntax.is_constant(keep) and not keep.value)):
                    return "scalar"
            return "array"
        return "array"

    def expr_kind(self, e):
        if e is None:
            return "scalar"
        if isinstance(e, n.Constant):
            return "scalar" if isinstance(e.value, (int, float, bool)) else "array"
        if isinstance(e, n.Name):
            if e.id in self.kinds:
                return self.kinds[e.id]
            if e.id in self.locals:
                return "array"
            return value_kind(self.namespace.get(e.id, None)) if e.id in self.namespace else "array"
        if isinstance(e, n.BinOp):
            return "scalar" if self.expr_kind(e.left) == "scalar" and self.expr_kind(e.right) == "scalar" else "array"
        if isinstance(e, n.UnaryOp):
            return self.expr_kind(e.operand)
        if isinstance(e, n.Attribute) and isinstance(e.value, n.Name) and e.value.id == "math":
            return "scalar"
        if isinstance(e, n.Attribute) and isinstance(e.value, n.Name) and e.value.id not in self.locals:
            obj = getattr(self.namespace.get(e.value.id, np if e.value.id == "np" else None), e.attr, None)
            if is_function_value(obj):  # np.tanh passed to a user function
                return FunctionKind(obj)
        if isinstance(e, n.Call):
            f = e.func
            made = self.namespace.get(f.id) if isinstance(f, n.Name) and f.id not in self.locals else None
            if (isinstance(made, type) and (made.__module__ or "").split(".")[0] not in LIBRARIES
                    and not syntax.load_names(e) & self.locals):  # a model object made of constants
                return ObjectKind(made)
            if isinstance(f, n.Attribute) and isinstance(f.value, n.Name) and f.value.id == "math":
                return "scalar"
            if isinstance(f, n.Name) and f.id in ("len", "float", "int", "abs", "min", "max") and f.id not in self.locals:
                if f.id in ("len", "float", "int"):
                    return "scalar"
                return "scalar" if all(self.expr_kind(a) == "scalar" for a in e.args) else "array"
        if isinstance(e, n.IfExp):
            return "scalar" if self.expr_kind(e.body) == "scalar" and self.expr_kind(e.orelse) == "scalar" else "array"
        if isinstance(e, n.Compare):
            return "scalar" if all(self.expr_kind(x) == "scalar" for x in [e.left] + e.comparators) else "array"
        return "array"

    def is_scalar(self, e):
        return self.expr_kind(e) == "scalar"


def _is_range(node):
    return isinstance(node, n.Call) and isinstance(node.func, n.Name) and node.func.id == "range"


def needed_names(items, ret_names):
    """Names whose values backward code may read: saved when overwritten, never otherwise."""
    needed = set(ret_names)
    for item in walk_items(items):
        if isinstance(item, Segment):
            defined = set()
            for s in item.stmts:
                needed |= s.reads - defined
                defined |= s.writes
        elif isinstance(item, (For, SetItem)):  # branch tests are saved as decisions instead
            needed |= item.reads
    return needed

