"""Flattening and rebuilding nested structures of lists, tuples, namedtuples and dicts.

Dict values come out in sorted-key order, as in `tf.nest`, so a gradient returned for
`{'w': w, 'b': b}` lines up with its sources whatever order the dict was written in.
"""


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _children(x):
    if isinstance(x, dict):
        return [x[k] for k in sorted(x)]
    return list(x)


def is_nested(x):
    return isinstance(x, (list, tuple, dict))


def flatten(structure):
    """The leaves of `structure`, depth first (None is a leaf)."""
    if not is_nested(structure):
        return [structure]
    out = []
    stack = [structure]
    # iterative depth-first walk keeping left-to-right order
    while stack:
        item = stack.pop()
        if is_nested(item):
            stack.extend(reversed(_children(item)))
        else:
            out.append(item)
    return out


def pack_sequence_as(structure, flat):
    """Rebuild `structure` with its leaves replaced, in order, by `flat`."""
    return _build(structure, iter(flat))


def _build(s, it):
    # A module-level function, not a closure: a nested `build` calling itself would sit in
    # a reference cycle (function -> cell -> function) holding `flat`, so every returned
    # gradient would wait for the cyclic collector (issue 13).
    if isinstance(s, dict):
        built = {k: None for k in s}
        for k in sorted(s):
            built[k] = _build(s[k], it)
        return type(s)(built) if type(s) is not dict else built
    if _is_namedtuple(s):
        return type(s)(*[_build(c, it) for c in s])
    if isinstance(s, (list, tuple)):
        return type(s)(_build(c, it) for c in s)
    return next(it)


def map_structure(fn, structure):
    return pack_sequence_as(structure, [fn(x) for x in flatten(structure)])
