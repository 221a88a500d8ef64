"""Calls the normalizer writes out as the statements NumPy runs: `np.piecewise`, and `np.split`
and its kin when the call says how many pieces (a list display of the pieces).

`np.piecewise(x, condlist, funclist)` calls each function of `funclist` on the elements its
condition selects. A composition (compositions.py) cannot hold it: the functions are values,
and the transformer differentiates only calls it can name. At the call, though, funclist is
written out, so the call is written as NumPy's own loop, unrolled:

    _pw_masks = piecewise_masks(np.shape(x), [x < 0.0, x > 1.0], 3)
    _piecewise = np.zeros_like(x)
    _piecewise[_pw_masks[0]] = f(x[_pw_masks[0]])
    _piecewise[_pw_masks[1]] = 1.0
    _piecewise[_pw_masks[2]] = g(x[_pw_masks[2]])

(the last mask is 'otherwise' when funclist has one more entry than condlist; a later
condition overwrites an earlier one, as in NumPy). Each function is then an ordinary call,
differentiated by its own source or rules.
"""

import inspect

import numpy as np

from ..ir import syntax
from . import builtins as builtin_calls, compositions
from ..ir.syntax import nodes as n
from ..templates import quote


def rewrite(normalizer, obj, call, out, s):
    """The node holding the value of a call the normalizer writes out, after emitting its
    statements into `out`; None for any other call."""
    written = builtin_calls.rewrite(normalizer, obj, call, out, s)  # sum(xs), max(xs), sorted(xs), ...
    if written is not None:
        return written
    if obj is np.piecewise:
        return _piecewise(normalizer, call, out, s)
    if obj in _SPLITS:
        return _split(normalizer, obj, call, out, s)
    return None


_SPLITS = {compositions.split: (None, True), compositions.array_split: (None, False),
           compositions.hsplit: (1, True), compositions.vsplit: (0, True), compositions.dsplit: (2, True)}


def _split(normalizer, fn, call, out, s):
    """np.split(x, 2) as the list [x[_split[0]], x[_split[1]]] of its pieces when the number of
    pieces is written in the call (an int, or a list of split points): a list display, which
    every mode differentiates. Otherwise None: compositions.split builds the list in a loop."""
    try:
        bound = inspect.signature(fn).bind(*call.args, **{k.arg: k.value for k in call.keywords})
    except TypeError:
        return None
    sections = bound.arguments["indices_or_sections"]
    value = sections.value if syntax.is_constant(sections) else normalizer.resolve(sections) if isinstance(
        sections, n.Name) else None
    if isinstance(sections, (n.List, n.Tuple)) and not any(isinstance(e, n.Starred) for e in sections.elts):
        count = len(sections.elts) + 1
    elif type(value) is int and value > 0:
        count = value
    elif isinstance(value, (list, tuple)):
        count = len(value) + 1
    else:
        return None
    x = normalizer.expr(bound.arguments["ary"], out, s)
    axis, equal = _SPLITS[fn]
    if axis is None:
        axis_node = bound.arguments.get("axis", syntax.constant(0))
    else:
        axis_node = quote.expr("split_axis(np.ndim(X), AXIS, NAME)", X=x, AXIS=axis, NAME=syntax.constant(fn.__name__))
    index = normalizer.fresh(f"_{fn.__name__}_index")
    node = quote.stmt("INDEX = split_index(np.shape(X), SECTIONS, AXIS, EQUAL)", INDEX=index, X=x, SECTIONS=sections,
                      AXIS=axis_node, EQUAL=equal)
    _at_line(node, s)
    normalizer.stmt(node, out)
    return n.List(elts=[quote.expr("X[INDEX[K]]", X=x, INDEX=index, K=k) for k in range(count)], ctx=n.Load())


def _at_line(node, s):
    """Every statement and expression of `node` at the line of the user's statement `s`."""
    for sub in syntax.walk(node):
        if isinstance(sub, (n.stmt, n.expr)):
            sub.lineno = s.lineno


def _piecewise(normalizer, call, out, s):
    fix = ("Pass funclist as a list written out in the call, of function names (defined with def) and "
           "constants: np.piecewise(x, [x < 0], [f, 0.0]).")
    try:
        bound = inspect.signature(lambda x, condlist, funclist, *args, **kw: None).bind(
            *call.args, **{k.arg: k.value for k in call.keywords})
    except TypeError as exc:
        raise normalizer.fail(s, f"cannot bind the arguments of `np.piecewise`: {exc}", fix) from None
    funclist = bound.arguments["funclist"]
    if not isinstance(funclist, (n.List, n.Tuple)) or any(isinstance(f, n.Starred) for f in funclist.elts):
        raise normalizer.fail(s, "`np.piecewise` needs its funclist written out as a list to be differentiated", fix)
    if normalizer.expr_varied(bound.arguments["condlist"]):
        raise normalizer.fail(s, "the conditions of `np.piecewise` depend on differentiated values as numbers",
                              "Write them as comparisons (x > 0) or compute them outside the function.")
    x = normalizer.expr(bound.arguments["x"], out, s)
    extra = list(bound.arguments.get("args", ()))
    extra_keywords = list(bound.arguments.get("kw", {}).items())
    masks, result = normalizer.fresh("_pw_masks"), normalizer.fresh(f"_piecewise_{syntax.unparse(x)}"[:24])
    nodes = [quote.stmt("MASKS = piecewise_masks(np.shape(X), CONDLIST, COUNT)", MASKS=masks, X=x,
                        CONDLIST=bound.arguments["condlist"], COUNT=len(funclist.elts)),
             quote.stmt("RESULT = np.zeros_like(X)", RESULT=result, X=x)]
    for k, item in enumerate(funclist.elts):
        target = normalizer.resolve(item) if isinstance(item, (n.Name, n.Attribute)) else None
        if callable(target):
            value = n.Call(func=syntax.copy(item),
                           args=[quote.expr("X[MASKS[K]]", X=x, MASKS=masks, K=k)] + [syntax.copy(a) for a in extra],
                           keywords=[n.keyword(arg=key, value=syntax.copy(v)) for key, v in extra_keywords])
        else:  # a constant (or a value): broadcast over the selected elements, as NumPy's write
            value = item
        nodes.append(quote.stmt("RESULT[MASKS[K]] = VALUE", RESULT=result, MASKS=masks, K=k, VALUE=value))
    normalizer.varied.add(result)  # (the normalizer found the varied names before this rewrite)
    for node in nodes:
        _at_line(node, s)
        normalizer.stmt(node, out)
    return syntax.name(result)
