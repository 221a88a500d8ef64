"""Which registry primitive a call means, and how its arguments map to the rule's parameters.

`np.sin`, `math.sin`, `dnp.sin` and `x.sin`-free spellings all resolve to the `Sin`
primitive. A `dnp` wrapper (`dnp.sum(x, axis=None, dtype=None, out=None, keepdims=False)`)
is read once: the single primitive it calls is its op, its positional parameters feed the
rule's inputs in order, and parameters named like the rule's keyword-only ones are static.
"""

import builtins
import functools
import inspect
import math
import string

import numpy as np

from dualtape.core import dnp
from dualtape.core.dtypes import as_numpy_dtype
from dualtape.core.registry import NOT_DIFFERENTIABLE, Primitive

from ..ir import syntax
from ..runtime.lists import dict_keys, key_list, sorted_order
from . import compositions
from .checks import VariadicError, refuse_unread, refuse_unread_keywords
from ..ir.syntax import nodes as n
from .wrappers import wrapped_primitive
from ..templates import quote

MATH_TO_DNP = {
    "sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin", "acos": "arccos",
    "atan": "arctan", "atan2": "arctan2", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
    "exp": "exp", "log": "log", "log1p": "log1p", "expm1": "expm1", "sqrt": "sqrt",
    "fabs": "abs", "pow": "power", "floor": "floor", "ceil": "ceil",
    "log2": "log2", "log10": "log10", "exp2": "exp2", "cbrt": "cbrt", "hypot": "hypot",
    "copysign": "copysign", "fmod": "fmod",
    "erf": "erf", "erfc": "erfc", "gamma": "gamma", "lgamma": "gammaln",
}

# Calls whose result never carries a gradient (ints, bools, shapes, indices).
NONDIFF_BUILTINS = {len, range, int, bool, isinstance, type, round, print, id, str, repr,
                    any, all, hash}  # (not `sorted`: it returns the differentiated values themselves)
NONDIFF_NUMPY = {np.shape, np.ndim, np.size, np.argmax, np.argmin, np.argsort, np.zeros,
                 np.ones, np.zeros_like, np.ones_like, np.arange, np.linspace, np.eye,
                 np.empty, np.empty_like, np.full, np.sign, np.isnan, np.isfinite, np.floor,
                 np.ceil, np.round, np.greater, np.less, np.equal, np.nonzero, np.count_nonzero,
                 math.floor, math.ceil, math.trunc, math.isnan, math.isfinite, math.isinf, math.isclose, dnp.shape, dnp.ndim, dnp.size,
                 dnp.ones_like, dnp.zeros_like, sorted_order, dict_keys, key_list}
NONDIFF_ATTRS = {"shape", "ndim", "size", "dtype"}
_MATH_TO_DNP = MATH_TO_DNP  # (the old name, for codegen/emit until it reads `MATH_TO_DNP`)


class OpSpec:
    """A resolved call: the primitive, its rule's input names, static names and the binder."""

    __slots__ = ("prim", "wrapper", "inputs", "statics", "math")

    def __init__(self, prim, wrapper, inputs, statics, is_math):
        self.prim, self.wrapper, self.inputs, self.statics, self.math = prim, wrapper, inputs, statics, is_math

    def bind(self, args, keywords):
        """Map call arguments (gast nodes) to ([input node or None], {static name: node})."""
        if self.wrapper is None:
            if self.prim.variadic:
                return list(args), {k: v for k, v in keywords.items() if k in self.statics}
            inputs = list(args) + [None] * (len(self.inputs) - len(args))
            statics = {k: v for k, v in keywords.items() if k in self.statics}
            extra = set(keywords) - set(self.statics)
            for k in extra:
                if k in self.inputs:
                    inputs[self.inputs.index(k)] = keywords[k]
            refuse_unread_keywords(self, {k: keywords[k] for k in sorted(extra) if k not in self.inputs})
            return inputs[:max(len(self.inputs), len(args))], statics
        if self.prim.variadic:
            return _bind_variadic(self, args, keywords)
        sig = inspect.signature(self.wrapper)
        bound = sig.bind(*args, **keywords)
        params = [p for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        inputs, read = [], set(self.statics) | {"dtype"}  # (dtype: refuse_non_float_dtype)
        for i, name in enumerate(self.inputs):
            if i < len(params):  # by name where the wrapper has it (np.average's weights), else in order
                p = sig.parameters[name] if name in sig.parameters and sig.parameters[name] in params else params[i]
                read.add(p.name)
                value = bound.arguments.get(p.name, p.default)
                inputs.append(value if isinstance(value, n.AST) else syntax.literal(value))
            else:
                inputs.append(None)
        statics = {}
        for name in self.statics:
            if name in bound.arguments:
                statics[name] = bound.arguments[name]
            elif name in sig.parameters and sig.parameters[name].default is not inspect.Parameter.empty:
                statics[name] = syntax.literal(sig.parameters[name].default)
        if self.prim.name == "EuclideanNorm" and "ord" in bound.arguments and not (  # np.linalg.norm
                syntax.is_constant(ord_ := bound.arguments["ord"]) and (ord_.value in (None, "fro") or ord_.value == 2
                and syntax.is_constant(axis_ := bound.arguments.get("axis")) and isinstance(axis_.value, int))):
            raise VariadicError("`np.linalg.norm` with an `ord` other than None or 'fro' (or 2 along one int "
                                "axis) cannot be differentiated by the transformer yet: it would not be the "
                                "Euclidean norm",
                                "Differentiate it with GradientTape or dualtape.grad, or write the norm out "
                                "(np.sum(np.abs(x)) for ord=1, np.max(np.abs(x)) for ord=inf).")
        refuse_unread(self, sig, bound, read)
        if self.prim.name == "ClipByValue":  # dnp.clip maps a None bound to -inf / inf
            for i, inf in ((1, "-np.inf"), (2, "np.inf")):
                if i < len(inputs) and syntax.is_constant(inputs[i]) and inputs[i].value is None:
                    inputs[i] = quote.expr(inf)
        return inputs, statics


def resolve(node, local_names, namespace):
    """The object a call target names (globals, closure, np, math, builtins); None for locals
    and for anything that is not a plain name or attribute chain."""
    obj = _resolve(node, local_names, namespace)
    composition = compositions.composed(obj)  # np.flip, np.cov, ...: read as the code in compositions.py
    return obj if composition is None else composition


def _resolve(node, local_names, namespace):
    if isinstance(node, n.Name):
        if node.id in local_names:
            return None
        if node.id in namespace:
            return namespace[node.id]
        return {"np": np, "math": math, "dnp": dnp}.get(node.id, getattr(builtins, node.id, None))
    if isinstance(node, n.Attribute):
        base = _resolve(node.value, local_names, namespace)
        return getattr(base, node.attr, None) if base is not None else None
    return None

def _bind_variadic(spec, args, keywords):
    """np.concatenate([a, b], axis=1) -> ([a, b], {axis: 1}); np.einsum('ij,j->i', a, b)
    -> ([a, b], {subscripts: 'ij,j->i'}). The inputs are the nodes inside the call, so
    the normalizer can replace each by its atom."""
    name = spec.wrapper.__name__
    if name in ("concatenate", "stack"):
        seq = args[0] if args else keywords.get("arrays")
        if not isinstance(seq, (n.List, n.Tuple)):
            raise VariadicError(f"`{name}` needs the sequence of arrays written out as a list to be differentiated",
                                f"Write it out: np.{name}([a, b], axis=0).")
        if any(isinstance(e, n.Starred) for e in seq.elts):
            raise VariadicError(f"`{name}` of a starred list (`[*xs]`) cannot be differentiated",
                                f"Write each array out: np.{name}([a, b], axis=0).")
        axis = args[1] if len(args) > 1 else keywords.get("axis", syntax.constant(0))
        if name == "concatenate" and syntax.is_constant(axis) and axis.value is None:
            raise VariadicError("`concatenate(..., axis=None)` cannot be differentiated",
                                "Flatten the arrays first: np.concatenate([np.ravel(a), np.ravel(b)]).")
        return list(seq.elts), {"axis": axis}
    if name == "einsum":
        sub = args[0] if args else None
        if (isinstance(sub, n.Call) and isinstance(sub.func, n.Name)
                and sub.func.id in ("einsum_subscripts", "tensordot_subscripts", "diagonal_subscripts")):
            # explicit subscripts computed from the operands' shapes (the normalizer's spelling
            # of '...', np.tensordot, np.trace, ...; transforms/runtime/)
            return list(args[1:]), {"subscripts": sub}
        if not (syntax.is_constant(sub) and isinstance(sub.value, str)):
            return _bind_einsum_sublists(args, keywords)
        spec_text = sub.value.replace(" ", "")
        if "..." in spec_text:
            raise VariadicError("`einsum` with '...' cannot be differentiated by the transformer yet",
                                "Name every axis: np.einsum('bij,bjk->bik', a, b).")
        if "->" not in spec_text:  # NumPy's implicit output: the letters used once, sorted
            letters = spec_text.replace(",", "")
            spec_text += "->" + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
        return list(args[1:]), {"subscripts": syntax.constant(spec_text)}
    if getattr(spec.wrapper, "sequence_wrapper", False):  # np.hstack([a, b]) (dualtape.ops.assembly)
        seq = args[0] if args else None
        if not isinstance(seq, (n.List, n.Tuple)) or any(isinstance(e, n.Starred) for e in seq.elts):
            raise VariadicError(f"`{name}` needs the sequence of arrays written out as a list to be differentiated",
                                f"Write it out: np.{name}([a, b]).")
        return list(seq.elts), {}
    raise VariadicError(f"`np.{name}` cannot be differentiated by the transformer yet",
                        "Write it with np.einsum (e.g. np.outer(a, b) is np.einsum('i,j->ij', a, b), "
                        "np.trace(m) is np.einsum('ii->', m)), or use GradientTape.")


def _bind_einsum_sublists(args, keywords):
    """np.einsum(a, [0, 1], b, [1, 2], [0, 2]) -> ([a, b], {subscripts: 'ab,bc->ac'}): the sublist
    form, its labels (ints, and `...`) written literally; NumPy's implicit output is the labels
    used once, in increasing order (of the ints, not of the letters they become)."""
    fix = "Write the labels as literal lists (np.einsum(a, [0, 1], b, [1, 2], [0, 2])) or the subscripts as a string."
    sublists = []
    for node in args[1::2] + (args[-1:] if len(args) % 2 else []):
        labels = [Ellipsis if isinstance(x, n.Name) and x.id == "Ellipsis" else x.value if syntax.is_constant(x)
                  else None for x in node.elts] if isinstance(node, (n.List, n.Tuple)) else [None]
        if not all(x is Ellipsis or type(x) is int and 0 <= x < 52 for x in labels):
            raise VariadicError("`einsum` needs its subscripts as a string literal, or the sublist form with "
                                "literal lists of axis labels (ints 0-51 and ...), to be differentiated", fix)
        sublists.append(labels)
    if len(args) < 2 or keywords:
        raise VariadicError("`einsum` in the sublist form takes operands and label lists only", fix)
    operands = args[0:len(args) - len(args) % 2:2]
    if len(args) % 2:
        *inputs, output = sublists
    else:
        inputs = sublists
        flat = [x for sub in inputs for x in sub if x is not Ellipsis]
        output = ([Ellipsis] if any(Ellipsis in sub for sub in inputs) else []) + sorted(
            x for x in set(flat) if flat.count(x) == 1)
    terms = ["".join("..." if x is Ellipsis else string.ascii_letters[x] for x in sub) for sub in inputs + [output]]
    spec = ",".join(terms[:-1]) + "->" + terms[-1]
    if "..." in spec:
        if not all(isinstance(a, n.Name) for a in operands):
            raise VariadicError("`einsum` in the sublist form with `...` needs each operand as a name",
                                "Assign the operands to names first: a2 = a * 2; np.einsum(a2, [..., 0], ...).")
        shapes = [quote.expr("np.shape(A)", A=a.id) for a in operands]
        subscripts = n.Call(func=syntax.name("einsum_subscripts"), args=[syntax.constant(spec)] + shapes, keywords=[])
        return list(operands), {"subscripts": subscripts}
    return list(operands), {"subscripts": syntax.constant(spec)}


def refuse_non_float_dtype(spec, args, keywords, local_names, namespace):
    """Refuse `np.sum(x, dtype=int)` and the like on differentiated values (VariadicError): a
    cast to a non-float dtype drops the derivative, as the runtime modes say. The dtype must be
    None or name a float dtype: a literal, or a global / closure name the transformer can read."""
    if spec.wrapper is None or "dtype" in spec.statics:
        return  # (a dtype the op's rules read, as Cast's, is theirs to handle)
    sig = inspect.signature(spec.wrapper)
    if "dtype" not in sig.parameters:
        return
    node = sig.bind_partial(*args, **keywords).arguments.get("dtype")  # (spec.bind took these arguments)
    if node is None or (syntax.is_constant(node) and node.value is None) or (
            isinstance(node, n.Name) and node.id not in local_names and node.id in namespace
            and namespace[node.id] is None):  # dtype=None, also from a closure or global
        return
    value = node.value if syntax.is_constant(node) else _resolve(node, local_names, namespace)
    try:
        is_float = as_numpy_dtype(value).kind == "f"
    except TypeError:  # None (an unreadable name) or not a dtype
        is_float = False
    if not is_float:
        raise VariadicError(f"`np.{spec.wrapper.__name__}(..., dtype={syntax.unparse(node)})` on differentiated values: "
                            "the transformer differentiates a cast to a float dtype only (an integer or bool dtype "
                            "drops the derivative; a dtype held in a local variable cannot be read)",
                            "Pass a float dtype (np.float64, np.float32, or a global naming one), or none.")


def rule_params(prim):
    """(input parameter names, static keyword names) of a primitive's VJP rules."""
    rules = prim.vjp if isinstance(prim.vjp, tuple) else (prim.vjp,)
    for rule in rules:
        if callable(rule):
            params = list(inspect.signature(rule).parameters.values())
            inputs = [p.name for p in params[2:] if p.kind == p.POSITIONAL_OR_KEYWORD]
            statics = [p.name for p in params if p.kind == p.KEYWORD_ONLY]
            return inputs, statics
    try:
        sig = inspect.signature(prim.impl)
        params = list(sig.parameters.values())
        return ([p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)],
                [p.name for p in params if p.kind == p.KEYWORD_ONLY])
    except (TypeError, ValueError):
        return ["x"], []


def hashable(obj):
    """Whether `obj` can be a dict key or set member (a function can; a bound list method cannot)."""
    try:
        hash(obj)
        return True
    except TypeError:
        return False


_hashable = hashable  # (the old name, for forward/helper_rules until it reads `hashable`)


def lookup(obj):
    """An OpSpec for a callable (np.sin, math.sin, dnp.sum, a Primitive), or None. Cached for
    the libraries' callables only: a cache holding user and generated functions would keep
    each program's functions, globals and generated code alive for the whole process."""
    if not hashable(obj):
        return None
    return _lookup(obj) if _from_a_library(obj) else _lookup.__wrapped__(obj)


def _from_a_library(obj):
    """Whether `obj` (a callable, a Primitive: its implementation) is defined by a library."""
    defined = obj.impl if isinstance(obj, Primitive) else obj
    module = str(getattr(defined, "__module__", None))
    return module.split(".")[0] in ("numpy", "scipy", "dualtape", "math", "builtins")


@functools.lru_cache(maxsize=None)
def _lookup(obj):
    opaque = _opaque_spec(obj)
    if opaque is not None:
        return opaque
    is_math = False
    if getattr(obj, "__module__", None) == "math" or (
            inspect.isbuiltin(obj) and getattr(obj, "__self__", None) is math):
        name = MATH_TO_DNP.get(obj.__name__)
        if name is None or not hasattr(dnp, name):
            return None
        obj, is_math = getattr(dnp, name), True
    elif obj is builtins.abs:
        obj = dnp.abs
    elif obj is builtins.pow:
        obj = dnp.power
    elif obj is builtins.max:
        obj = dnp.maximum
    elif obj is builtins.min:
        obj = dnp.minimum
    if inspect.ismethod(obj) and in_package(type(obj.__self__), "scipy"):  # scipy.stats.norm.logpdf
        obj = dnp.METHOD_DISPATCH.get((type(obj.__self__).__name__, obj.__name__), obj)
    elif inspect.isfunction(obj) and in_package(obj, "scipy"):  # scipy.linalg.expm, by name
        obj = dnp.METHOD_DISPATCH.get((".".join(obj.__module__.split(".")[:2]), obj.__name__), obj)
    obj = dnp.NUMPY_DISPATCH.get(obj, obj)
    if isinstance(obj, Primitive):
        inputs, statics = rule_params(obj)
        return OpSpec(obj, None, inputs, statics, is_math)
    if inspect.isfunction(obj) and (obj.__module__ or "").startswith("dualtape.ops"):
        prim = wrapped_primitive(obj)
        if prim is None:
            return None
        inputs, statics = rule_params(prim)
        return OpSpec(prim, obj, inputs, statics, is_math)
    return None


class _OpaqueSpec(OpSpec):
    """A callable whose derivative rules are runtime-only Python (a `dualtape.primitive`, a
    custom_gradient / custom_jvp / custom_vjp function): binding it is refused, with why."""

    def bind(self, args, keywords):
        raise VariadicError(
            f"`{self.prim.name}` is {self.wrapper} whose derivative rules are Python code the "
            "transformer cannot inline",
            "Differentiate the code that calls it with GradientTape or dualtape.grad / jvp (they "
            "use its rules), or declare the op with defop and single-return template rules.")


def _opaque_spec(obj):
    if isinstance(obj, Primitive):
        if not getattr(obj, "opaque", False):
            return None
        what = "a user-defined primitive (dualtape.primitive)"
    else:
        what = getattr(obj, "__dualtape_opaque__", None)
        if not isinstance(what, str):
            return None
    name = getattr(obj, "__name__", None) or getattr(obj, "name", "?")
    return _OpaqueSpec(Primitive(name=name, impl=obj, vjp=(), jvp=()), what, [], [], False)


def tf_call(obj, call):
    """`tf.reduce_sum(x, axis=0)`, `tf.sin(x)`, `tf.add(x, y)` as the NumPy-style call they make
    (`np.sum(x, axis=0)`, ...), or None: dualtape's TF-named functions are thin wrappers that
    convert their arguments to tensors around one dnp function, which the transformer reads."""
    if getattr(obj, "__module__", None) != "dualtape.surface.tf_ops" or not getattr(obj, "__closure__", None):
        return None
    cells = dict(zip(obj.__code__.co_freevars, obj.__closure__))
    fn = cells["fn"].cell_contents if "fn" in cells else None
    if getattr(fn, "__name__", None) == "<lambda>":  # reductions: `lambda x, **kw: dnp.sum(x, **kw)`
        names = fn.__code__.co_names
        fn = getattr(dnp, names[1], None) if len(names) == 2 and names[0] == "dnp" else None
    spelled = _dnp_spelling(fn)
    if spelled is None or any(isinstance(a, n.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    try:
        bound = inspect.signature(obj).bind(*call.args, **{k.arg: k.value for k in call.keywords})
    except TypeError:
        return None
    params = list(inspect.signature(obj).parameters)
    inputs = [bound.arguments[p] for p in params if p in bound.arguments and p not in ("axis", "keepdims", "name")]
    keywords = [n.keyword(arg=p, value=bound.arguments[p]) for p in ("axis", "keepdims") if p in bound.arguments]
    return n.Call(func=spelled, args=inputs, keywords=keywords)


def _dnp_spelling(fn):
    """`np.sin` for the dnp function NumPy's np.sin dispatches to, else `dnp.<name>`, or None."""
    if fn is None or not hashable(fn):
        return None
    for name in sorted(vars(dnp)):
        if getattr(dnp, name) is fn and not name.startswith("_"):
            np_fn = getattr(np, name, None)
            if np_fn is not None and hashable(np_fn) and dnp.NUMPY_DISPATCH.get(np_fn) is fn:
                return syntax.attribute("np", name)
            return syntax.attribute("dnp", name)
    return None


def is_nondiff(obj):
    """True for calls whose result carries no gradient (len, np.shape, comparisons, argmax)."""
    if not hashable(obj):
        return False
    if obj in NONDIFF_BUILTINS or obj in NONDIFF_NUMPY:
        return True
    spec = lookup(obj)
    return spec is not None and spec.prim.vjp is NOT_DIFFERENTIABLE


def in_package(obj, *packages):
    """True when `obj` is defined in one of `packages` or their submodules: `numpy.linalg` is in
    numpy, but a user module named `dualtape_models` or `numpy_utils` is in neither (a prefix
    test would take such modules' helpers for library code, skipping their checks)."""
    module = getattr(obj, "__module__", None) or ""
    return any(module == p or module.startswith(p + ".") for p in packages)


def is_user_function(obj):
    """A plain Python function the transformer can read and differentiate recursively: a user's,
    or the definition of a composed NumPy function (transforms/calls/compositions.py)."""
    return inspect.isfunction(obj) and (not in_package(obj, "dualtape", "numpy") or compositions.is_composition(obj))
