"""What the aliasing pass (`aliasing.py`) knows about values: which calls return new memory
(`_FRESH_*`, `fresh_numpy`), the bindings it tracks (`Binding`), and the small helpers it
reads trees and bindings with."""

import builtins
import inspect
import numbers

import numpy as np

from ..ir import syntax
from ..calls import opmap
from ..ir.analysis import TracedNumber
from ..ir.syntax import nodes as n


# NumPy functions that always return new memory (or an immutable scalar).
_FRESH_NUMPY_NAMES = (
    "array copy zeros ones full empty zeros_like ones_like full_like empty_like arange linspace "
    "logspace eye identity sum mean prod max min amax amin nansum nanmean std var cumsum cumprod "
    "dot vdot inner outer tensordot matmul kron cross concatenate stack hstack vstack dstack "
    "column_stack where clip sort diff pad tile repeat take trace argmax argmin argsort all any "
    "count_nonzero around round round_ polyval interp convolve correlate cov corrcoef tri tril "
    "triu vander average median percentile quantile ptp histogram logsumexp softmax "
    "sigmoid relu".split())
_FRESH_LINALG_NAMES = "norm inv solve det slogdet cholesky eigh eigvalsh qr svd pinv lstsq".split()
FRESH_METHODS = {"copy", "astype", "sum", "mean", "max", "min", "prod", "dot", "var", "std",
                  "cumsum", "cumprod", "round", "tolist", "item", "argmax", "argmin", "all", "any",
                  "trace", "clip", "conj", "conjugate", "__copy__", "__deepcopy__"}
_SCALAR_REDUCTIONS = {"sum", "mean", "prod", "max", "min", "amax", "amin", "std", "var", "nansum",
                      "nanmean", "trace", "logsumexp", "vdot"}
FRESH_BUILTINS = {builtins.float, builtins.int, builtins.bool, builtins.len, builtins.abs,
                   builtins.round, builtins.range, builtins.sum, builtins.complex, builtins.str,
                   builtins.isinstance}
CONTAINER_BUILTINS = {builtins.list, builtins.tuple, builtins.dict, builtins.set,
                       builtins.zip, builtins.enumerate, builtins.reversed, builtins.sorted}


def fresh_numpy(obj):
    """True for NumPy (or dualtape.numpy_api) functions that always return new memory."""
    if isinstance(obj, np.ufunc):
        return True
    name = getattr(obj, "__name__", None)
    module = getattr(obj, "__module__", None) or ""
    if name is None:
        return False
    if opmap.in_package(obj, "numpy", "dualtape") or getattr(np, name, None) is obj:
        if "linalg" in module or getattr(np.linalg, name, None) is obj:
            return name in _FRESH_LINALG_NAMES
        if name in _FRESH_NUMPY_NAMES:
            return True
    spec = opmap.lookup(obj)
    return spec is not None and (spec.math or spec.prim.elementwise)


class Binding:
    """One assignment of a name: where it is, whether it is fresh, what it may share."""

    def __init__(self, name, line, text, fresh, why, refs, container=False, scalar=False):
        self.name, self.line, self.text = name, line, text
        self.fresh, self.why, self.refs, self.container = fresh, why, set(refs), container
        self.scalar = scalar  # surely an immutable Python/NumPy scalar (never written in place)


class Value:
    def __init__(self, fresh, why="", refs=(), container=False, scalar=False):
        self.fresh, self.why, self.refs, self.container = fresh, why, set(refs), container
        self.scalar = scalar


def surely_scalar(check, e, state):
    """True when `e` surely evaluates to an immutable scalar (a float, int, np.float64...);
    `check` is the AliasCheck, for the bindings of its locals and its name resolution."""
    if isinstance(e, n.Constant):
        return True
    if isinstance(e, n.Name):
        if e.id in check.locals:
            bs = state.get(e.id, frozenset())
            return bool(bs) and all(b.scalar for b in bs)
        value = check.info.namespace.get(e.id, getattr(builtins, e.id, None))
        return isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, np.ndarray)
    if isinstance(e, n.BinOp):
        return surely_scalar(check, e.left, state) and surely_scalar(check, e.right, state)
    if isinstance(e, n.UnaryOp):
        return surely_scalar(check, e.operand, state)
    if isinstance(e, n.Compare):
        return all(surely_scalar(check, x, state) for x in [e.left] + e.comparators)
    if isinstance(e, n.BoolOp):
        return all(surely_scalar(check, x, state) for x in e.values)
    if isinstance(e, n.IfExp):
        return surely_scalar(check, e.body, state) and surely_scalar(check, e.orelse, state)
    if isinstance(e, n.Attribute):
        return e.attr in ("ndim", "size", "shape", "itemsize", "nbytes")
    if isinstance(e, n.Call) and not any(k.arg == "out" for k in e.keywords):
        obj = check.resolve(e.func)
        args_scalar = all(surely_scalar(check, a, state) for a in e.args) and all(
            surely_scalar(check, k.value, state) for k in e.keywords)
        if obj is None:  # a method: `.item()`, or a whole-array reduction `x.sum()`
            return isinstance(e.func, n.Attribute) and (e.func.attr == "item" or (
                e.func.attr in _SCALAR_REDUCTIONS and not e.args and not e.keywords))
        if (fresh_numpy(obj) and getattr(obj, "__name__", None) in _SCALAR_REDUCTIONS
                and len(e.args) == 1 and not e.keywords):
            return True  # np.sum(x): no axis, a NumPy scalar
        if getattr(obj, "__module__", None) == "math" or obj in (builtins.float, builtins.int, builtins.bool,
                                                               builtins.len, builtins.complex):
            return True
        if obj in (builtins.abs, builtins.round, builtins.min, builtins.max, builtins.pow):
            return args_scalar
        if isinstance(obj, np.ufunc) or (opmap.hashable(obj) and opmap.lookup(obj) is not None
                                         and (opmap.lookup(obj).math or opmap.lookup(obj).prim.elementwise)):
            return args_scalar
    return False


# -- helpers ---------------------------------------------------------------------------------------
def param_kinds(info, params, kinds):
    """"scalar" or "array" per parameter: the specialisation's kinds, else the default's type."""
    out = {}
    try:
        defaults = {k: p.default for k, p in inspect.signature(info.fn).parameters.items()
                    if p.default is not inspect.Parameter.empty}
    except (TypeError, ValueError):
        defaults = {}
    for p in params:
        kind = (kinds or {}).get(p)
        if kind is None and p in defaults:
            d = defaults[p]
            kind = "scalar" if isinstance(d, (numbers.Number, np.generic)) and not isinstance(d, complex) else "array"
        # a tensor or dual number counts as an array, unless it stands for a Python number argument
        out[p] = "scalar" if kind in ("scalar", "traced number") or isinstance(kind, TracedNumber) else "array"
    return out


def walk(node):
    return syntax.walk(node)


def source_text(node):
    return syntax.unparse(node)


def target_root(target):
    while isinstance(target, (n.Subscript, n.Attribute)):
        target = target.value
    return target


def is_container(e):
    return any(isinstance(x, (n.List, n.Tuple, n.ListComp)) for x in (e.left, e.right)) if isinstance(
        e, n.BinOp) else False


def join_values(a, b):
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, frozenset()) | v
    return out


def same_value(a, b):
    return a.keys() == b.keys() and all(a[k] == b[k] for k in a)


def reaches(binding, targets, seen=None):
    """True when `binding` may share memory with one of `targets` (following refs)."""
    seen = set() if seen is None else seen
    for r in binding.refs:
        if r in targets:
            return True
        if id(r) not in seen:
            seen.add(id(r))
            if reaches(r, targets, seen):
                return True
    return False


def copy_source(binding):
    text = binding.text
    if "=" in text and text.split("=", 1)[0].strip() == binding.name:  # `name = rhs`
        rhs = text.split("=", 1)[1].strip()
        if rhs and "\n" not in rhs:
            return f"({rhs}).copy()" if " " in _strip_brackets(rhs) else f"{rhs}.copy()"
    return f"{binding.name}.copy()"


def copy_fix(name, binding):
    if not binding.text:  # a parameter
        return f"{name}_copy = {name}.copy()"
    return f"{name} = {copy_source(binding)}"


def _strip_brackets(text):
    out, depth = [], 0
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)
