"""`vmap`: a function of one example made a function of a batch, with JAX's semantics.

`vmap(f, in_axes, out_axes)(*args)` runs `f` once, on `Batched` values (batching/): each op
runs for the whole batch through its batching rule, so `vmap(grad(loss), in_axes=(None, 0, 0))`
gives per-example gradients at the cost of one batched pass. It nests with itself and with
every other transform in any order, by level (forward/dual.py's router).
"""

import inspect

import numpy as np

from ..batching import Batched
from ..core import dnp, nest
from ..core.rulekit.shapes import shape_of
from ..core.traced import Traced
from ..reverse.dispatch import new_tag
from ..reverse.tensor import Tensor
from . import values


def vmap(f, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """`f` mapped over the axis `in_axes` of its arguments, the results stacked on `out_axes`.

    Args:
        f: a function of arrays (or pytrees of them: tuples, lists, dicts, dataclasses).
        in_axes: an int (the axis mapped in every argument), None (an argument that is the
            same for every example), or a tuple with one entry per positional argument, each
            an int, None or a pytree of them matching that argument. Keyword arguments are
            mapped over axis 0, as in JAX.
        out_axes: where the batch axis goes in each output, likewise (None: an output that is
            the same for every example).
        axis_name: JAX's name for collectives across the batch; dualtape has none, so it is
            accepted and names nothing.
        axis_size: the batch size when no argument is mapped.
        spmd_axis_name: accepted, as `axis_name`.

    >>> vmap(lambda x, y: x @ y, in_axes=(0, None))(np.ones((5, 3)), np.ones(3)).shape
    (5,)
    """
    if not callable(f):
        raise TypeError(f"[vmap] f must be a function, got {type(f).__name__}.")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)  # as JAX reads a list: one entry per positional argument
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")

    def batched(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(f"[vmap] in_axes has {len(in_axes)} entries but f was called with {len(args)} "
                             "positional arguments; give one entry per argument (None for an argument "
                             "that is the same for every example).")
        leaves, axes, owners, counts = [], [], [], []
        for i, arg in enumerate(args):
            spec = in_axes[i] if isinstance(in_axes, tuple) else in_axes
            arg_leaves = flatten(arg)
            counts.append(len(arg_leaves))
            leaves += arg_leaves
            axes += _prefix_axes(spec, arg, f"in_axes[{i}]" if isinstance(in_axes, tuple) else "in_axes",
                                 len(arg_leaves))
            owners += [i] * len(arg_leaves)
        kw_leaves = nest.tree_flatten(kwargs) if kwargs else []
        leaves += kw_leaves
        axes += [0] * len(kw_leaves)
        owners += [k for k in sorted(kwargs) for _ in nest.tree_flatten(kwargs[k])]
        size = _batch_size(leaves, axes, owners, axis_size, f, len(args))
        level = new_tag()
        mapped = [_enter(leaf, axis, size, level) for leaf, axis in zip(leaves, axes)]
        new_args = []
        start = 0
        for arg, n in zip(args, counts):
            new_args.append(pack(arg, mapped[start:start + n]))
            start += n
        new_kwargs = nest.tree_unflatten(kwargs, mapped[start:]) if kwargs else {}
        out = f(*new_args, **new_kwargs)
        out_leaves = flatten(out)
        spec = _prefix_axes(out_axes, out, "out_axes", len(out_leaves))
        return pack(out, [_leave(leaf, axis, size, level) for leaf, axis in zip(out_leaves, spec)])

    batched.__name__ = f"vmap_{getattr(f, '__name__', 'f')}"
    batched.__doc__ = getattr(f, "__doc__", None)
    batched.__wrapped__ = f
    return batched


def _check_axes_spec(spec, what):
    for leaf in nest.tree_flatten(spec):
        if not isinstance(leaf, (int, np.integer)) or isinstance(leaf, bool):
            raise TypeError(f"[vmap] {what} must hold ints or None (an axis, or no axis), got {leaf!r}.")


def _argument_names(f, n):
    try:
        params = [p.name for p in inspect.signature(f).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [f"argument {i}" + (f" ({params[i]})" if i < len(params) else "") for i in range(n)]


def _prefix_axes(spec, tree, what, count=None):
    """One axis (or None) per leaf of `tree` (`count` of them, when known), from `spec`, a
    prefix of its structure."""
    if spec is None or isinstance(spec, (int, np.integer)):
        return [spec] * (len(nest.tree_flatten(tree)) if count is None else count)
    if isinstance(spec, dict):
        if not isinstance(tree, dict) or set(spec) != set(tree):
            raise ValueError(f"[vmap] {what} is a dict with keys {sorted(spec)}, but the value it "
                             f"describes is {_kind(tree)}: give {what} the value's structure, or one axis.")
        return [a for k in sorted(tree) for a in _prefix_axes(spec[k], tree[k], f"{what}[{k!r}]")]
    if isinstance(spec, (list, tuple)):
        if not isinstance(tree, (list, tuple)) or len(spec) != len(tree):
            raise ValueError(f"[vmap] {what} is a {type(spec).__name__} of {len(spec)} entries, but the "
                             f"value it describes is {_kind(tree)}: give {what} the value's structure, "
                             "or one axis.")
        return [a for i, (s, t) in enumerate(zip(spec, tree)) for a in _prefix_axes(s, t, f"{what}[{i}]")]
    if nest.is_pytree_node(spec) and type(spec) is type(tree):
        specs = nest.tree_flatten(spec)  # a dataclass of axes: one per field leaf
        if len(specs) == len(nest.tree_flatten(tree)):
            return specs
    raise ValueError(f"[vmap] {what} = {spec!r} does not match the structure of the value it "
                     f"describes ({_kind(tree)}).")


def _kind(tree):
    if isinstance(tree, (list, tuple, dict)):
        return f"a {type(tree).__name__} of {len(tree)} entries"
    return f"a {type(tree).__name__}"


def flatten(tree):
    """nest.tree_flatten, without its walk for an array (values.flatten's fast paths)."""
    if tree.__class__ is np.ndarray:
        return [tree]
    return values.flatten(tree)


def pack(tree, leaves):
    """nest.tree_unflatten, without its walk for an array."""
    if tree.__class__ is np.ndarray:
        return leaves[0]
    return values.pack(tree, leaves)


def _batch_size(leaves, axes, owners, axis_size, f, n_args):
    """The batch size, or an error naming the arguments (`owners`: each leaf's argument
    index or keyword; their names are looked up only for an error)."""
    def name(owner):
        return (_argument_names(f, n_args)[owner] if isinstance(owner, int)
                else f"keyword argument {owner!r}")

    sizes = []
    for leaf, axis, owner in zip(leaves, axes, owners):
        if axis is None:
            continue
        shape = shape_of(leaf)
        if not -len(shape) <= axis < len(shape):
            raise ValueError(f"[vmap] was asked to map {name(owner)} along axis {axis}, which needs at "
                             f"least {axis + 1 if axis >= 0 else -axis} axes, but it has shape {shape}. "
                             "Give in_axes an axis it has, or None for an argument that is the same for "
                             "every example.")
        sizes.append((shape[axis], owner, axis, shape))
    if not sizes:
        if axis_size is None:
            raise ValueError("[vmap] must map at least one argument: every in_axes entry is None. Map "
                             "an argument (in_axes=0), or give axis_size.")
        return int(axis_size)
    if len({s[0] for s in sizes}) > 1 or (axis_size is not None and sizes[0][0] != axis_size):
        listed = "; ".join(f"{name(owner)} has size {n} along axis {axis} (shape {shape})"
                           for n, owner, axis, shape in sizes)
        raise ValueError(f"[vmap] got inconsistent sizes for the axes to be mapped: {listed}"
                         + (f"; axis_size is {axis_size}" if axis_size is not None else "")
                         + ". Every mapped axis must have the batch size; give in_axes=None for "
                         "an argument that is the same for every example.")
    return sizes[0][0]


def _enter(leaf, axis, size, level):
    if axis is None:
        return leaf
    if not isinstance(leaf, Traced):
        leaf = np.asarray(leaf)
    axis = axis % len(shape_of(leaf))
    if axis:
        leaf = np.moveaxis(leaf, axis, 0) if leaf.__class__ is np.ndarray else dnp.moveaxis(leaf, axis, 0)
    return Batched(leaf, level, size)


def _leave(leaf, axis, size, level):
    if isinstance(leaf, Tensor) and leaf._value.__class__ is Batched and leaf._value.level == level:
        leaf = leaf._value  # a tensor made inside f (tf.convert_to_tensor, a tape's gradient)
    if leaf.__class__ is Batched and leaf.level == level:
        value = leaf._value
        if axis is None:
            raise ValueError("[vmap] f returned a value that differs between the examples, but out_axes "
                             "is None for it (None means the same value for every example). Give "
                             "out_axes an axis for it.")
    else:
        if axis is None:
            return leaf
        if not isinstance(leaf, Traced):
            if not isinstance(leaf, (np.ndarray, np.generic, int, float, complex, bool)):
                raise TypeError(f"[vmap] f returned {type(leaf).__name__} {leaf!r}: vmap's outputs must "
                                "be arrays or numbers (or pytrees of them).")
            leaf = np.asarray(leaf)
        value = dnp.broadcast_to(leaf, (size,) + tuple(shape_of(leaf)))
    ndim = len(shape_of(value))
    if not -ndim <= axis < ndim:
        raise ValueError(f"[vmap] out_axes={axis} is out of range for an output of {ndim - 1} axes "
                         f"(with the batch axis, {ndim}).")
    axis %= ndim
    if axis:
        value = np.moveaxis(value, 0, axis) if value.__class__ is np.ndarray else dnp.moveaxis(value, 0, axis)
    return value
