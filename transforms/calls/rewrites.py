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
from . import compositions
from ..ir.syntax import nodes as n


def rewrite(normalizer, obj, call, out, s):
    """The node holding the value of a call the normalizer writes out, after emitting its
    statements into `out`; None for any other call."""
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
    x_src, sections_src = syntax.unparse(x), syntax.unparse(sections)
    axis, equal = _SPLITS[fn]
    if axis is None:
        axis_src = syntax.unparse(bound.arguments.get("axis", syntax.constant(0)))
    else:
        axis_src = f"split_axis(np.ndim({x_src}), {axis}, {fn.__name__!r})"
    index = normalizer.fresh(f"_{fn.__name__}_index")
    node = syntax.parse(f"{index} = split_index(np.shape({x_src}), {sections_src}, {axis_src}, {equal})").body[0]
    for sub in syntax.walk(node):
        if isinstance(sub, (n.stmt, n.expr)):
            sub.lineno = s.lineno
    normalizer.stmt(node, out)
    return syntax.parse_expr(f"[{', '.join(f'{x_src}[{index}[{k}]]' for k in range(count))}]")


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
    extra = [syntax.unparse(a) for a in bound.arguments.get("args", ())]
    extra += [f"{k}={syntax.unparse(v)}" for k, v in bound.arguments.get("kw", {}).items()]
    x_src = syntax.unparse(x)
    masks, result = normalizer.fresh("_pw_masks"), normalizer.fresh(f"_piecewise_{x_src}"[:24])
    lines = [f"{masks} = piecewise_masks(np.shape({x_src}), {syntax.unparse(bound.arguments['condlist'])}, "
             f"{len(funclist.elts)})", f"{result} = np.zeros_like({x_src})"]
    for k, item in enumerate(funclist.elts):
        target = normalizer.resolve(item) if isinstance(item, (n.Name, n.Attribute)) else None
        if callable(target):
            value = f"{syntax.unparse(item)}({', '.join([f'{x_src}[{masks}[{k}]]'] + extra)})"
        else:  # a constant (or a value): broadcast over the selected elements, as NumPy's write
            value = syntax.unparse(item)
        lines.append(f"{result}[{masks}[{k}]] = {value}")
    normalizer.varied.add(result)  # (the normalizer found the varied names before this rewrite)
    for line in lines:
        node = syntax.parse(line).body[0]
        for sub in syntax.walk(node):
            if isinstance(sub, (n.stmt, n.expr)):
                sub.lineno = s.lineno
        normalizer.stmt(node, out)
    return syntax.name(result)
