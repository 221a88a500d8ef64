"""Flattening and rebuilding nested structures of lists, tuples, namedtuples and dicts.

Dict values come out in sorted-key order, as in `tf.nest`, so a gradient returned for
`{'w': w, 'b': b}` lines up with its sources whatever order the dict was written in.
"""

import dataclasses


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
    # gradient would wait for the cyclic collector.
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


# -- JAX-style pytrees (the functional API) ------------------------------------------------------
#
# The functional API (`dualtape.grad`, `jvp`, ...) walks its arguments as JAX does: besides
# lists, tuples, namedtuples and dicts, dataclasses (their fields) and classes registered with
# `register_pytree_node` are nodes, and None is an empty subtree (no leaves, kept as None).
# GradientTape and tf.nest keep TensorFlow's rules above (None is a leaf there).

_PYTREE_NODES = {}  # class -> (flatten(x) -> (children, aux_data), unflatten(aux_data, children) -> x)


def register_pytree_node(nodetype, flatten_func, unflatten_func):
    """Make instances of `nodetype` pytree nodes for the functional API (JAX's signature).

    `flatten_func(x)` returns `(children, aux_data)`; `unflatten_func(aux_data, children)`
    rebuilds an instance from (transformed) children.

    >>> register_pytree_node(Point, lambda p: ((p.x, p.y), None), lambda _, xy: Point(*xy))
    """
    if not isinstance(nodetype, type):
        raise TypeError(f"[register_pytree_node] expects a class, got {type(nodetype).__name__}.")
    _PYTREE_NODES[nodetype] = (flatten_func, unflatten_func)
    return nodetype


def register_pytree_node_class(cls):
    """Class decorator: `cls` defines `tree_flatten(self)` and classmethod `tree_unflatten(aux, children)`."""
    return register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)


def is_pytree_node(x):
    """True for what the functional API walks into (None included: an empty subtree)."""
    cls = x.__class__
    return (x is None or isinstance(x, (list, tuple, dict)) or cls in _PYTREE_NODES
            or (hasattr(cls, "__dataclass_fields__") and not isinstance(x, type)))


def _pytree_children(x):
    """(children, rebuild(children) -> node) of a pytree node other than list, tuple, dict."""
    cls = x.__class__
    if cls in _PYTREE_NODES:
        flatten_func, unflatten_func = _PYTREE_NODES[cls]
        children, aux = flatten_func(x)
        return list(children), lambda new: unflatten_func(aux, new)
    fields = dataclasses.fields(cls)
    names = [f.name for f in fields]
    init = [f.name for f in fields if f.init]
    return [getattr(x, name) for name in names], lambda new: _rebuild_dataclass(x, names, init, new)


def _rebuild_dataclass(x, names, init, new):
    values = dict(zip(names, new))
    out = dataclasses.replace(x, **{k: values[k] for k in init})
    for k in names:
        if k not in init:
            object.__setattr__(out, k, values[k])
    return out


def tree_flatten(structure):
    """The leaves of a pytree, depth first (None has none)."""
    out = []
    _tree_leaves(structure, out)
    return out


def _tree_leaves(x, out):
    if x is None:
        return
    if isinstance(x, (list, tuple, dict)):
        for child in _children(x):
            _tree_leaves(child, out)
    elif is_pytree_node(x):
        for child in _pytree_children(x)[0]:
            _tree_leaves(child, out)
    else:
        out.append(x)


def tree_unflatten(structure, flat):
    """Rebuild the pytree `structure` with its leaves replaced, in order, by `flat`."""
    return _tree_build(structure, iter(flat))


def _tree_build(s, it):
    if s is None:
        return None
    if isinstance(s, dict):
        built = {k: None for k in s}
        for k in sorted(s):
            built[k] = _tree_build(s[k], it)
        return type(s)(built) if type(s) is not dict else built
    if _is_namedtuple(s):
        return type(s)(*[_tree_build(c, it) for c in s])
    if isinstance(s, (list, tuple)):
        return type(s)(_tree_build(c, it) for c in s)
    if is_pytree_node(s):
        children, rebuild = _pytree_children(s)
        return rebuild([_tree_build(c, it) for c in children])
    return next(it)


def tree_map(fn, structure):
    return tree_unflatten(structure, [fn(x) for x in tree_flatten(structure)])
