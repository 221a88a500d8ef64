"""TF's functional control flow, run eagerly: `while_loop`, `cond`, `scan`, `foldl`, `foldr`.

Each runs the Python functions it is given, as TF 2 does outside a `tf.function`, so every op
inside is recorded by the tapes that watch its inputs: gradients flow through the loop or
branch taken, with nothing to declare. Structures follow TF: `while_loop`'s body returns the
loop variables' structure; `scan` stacks each component of `fn`'s output along a new axis 0.
"""

from ..core import nest as _nest
from ..core.registry import Traced as _Traced
from ..reverse.tensor import Tensor as _Tensor, convert_to_tensor as _convert, wrap as _wrap

__all__ = ["while_loop", "cond", "scan", "foldl", "foldr"]


def _tensor(x):
    if isinstance(x, _Tensor):
        return x
    if isinstance(x, _Traced):
        return _wrap(x)
    return _convert(x)


def _skeleton(structure):
    return _nest.map_structure(lambda _: 0, structure)


def _check_structure(expected, got):
    """TF's assert_same_structure on the loop variables (their outer sequences as lists)."""
    try:
        same = _skeleton(list(expected)) == _skeleton(list(got))
    except (TypeError, ValueError):
        same = False
    if not same:
        raise ValueError(f"[while_loop] body's result does not have the structure of loop_vars: expected "
                         f"{_skeleton(list(expected))}, got {_skeleton(list(got))} (0 marks a value). Return one "
                         "value per loop variable, in the same nesting.")


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, maximum_iterations=None, name=None):
    """Repeat `loop_vars = body(*loop_vars)` while `cond(*loop_vars)`, at most
    `maximum_iterations` times; returns the final loop variables as tensors (TF 2's
    tf.while_loop: the body returns a list or tuple with loop_vars' structure)."""
    if not callable(cond) or not callable(body):
        raise TypeError("[while_loop] cond and body must be callables taking the loop variables.")
    if not isinstance(loop_vars, (list, tuple)) or not loop_vars:
        raise ValueError(f"[while_loop] loop_vars must be a non-empty list or tuple (one entry per argument of "
                         f"cond and body), got {type(loop_vars).__name__}. Write [x] for a single variable.")
    limit = None
    if maximum_iterations is not None:
        limit = int(maximum_iterations.numpy() if hasattr(maximum_iterations, "numpy") else maximum_iterations)
    expected = list(loop_vars)
    count = 0
    while (limit is None or count < limit) and cond(*loop_vars):
        out = body(*loop_vars)
        if not isinstance(out, (list, tuple)):
            raise TypeError(f"[while_loop] body returned {'a tensor' if isinstance(out, _Traced) else type(out).__name__}; it must return a list or tuple "
                            f"with one entry per loop variable ({len(expected)}), e.g. `return [i + 1]`.")
        _check_structure(expected, out)
        loop_vars = out
        count += 1
    return _nest.map_structure(_tensor, loop_vars)


def cond(pred, true_fn=None, false_fn=None, name=None):
    """`true_fn()` if `pred` (a Python bool or a scalar bool tensor) else `false_fn()`, as
    TF 2's eager tf.cond (the result is returned as the branch gave it)."""
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("[cond] true_fn and false_fn must both be callables with no arguments.")
    if isinstance(pred, _Tensor) and pred.shape != ():
        raise ValueError(f"[cond] pred must be a scalar, got a tensor of shape {tuple(pred.shape)}. Reduce it "
                         "(tf.reduce_all / tf.reduce_any), or use tf.where for an elementwise choice.")
    return true_fn() if bool(pred) else false_fn()


def _rows(api, elems):
    """The slices of every tensor in `elems` along axis 0, one structure per row."""
    flat = [_tensor(e) for e in _nest.flatten(elems)]
    if not flat:
        raise ValueError(f"[{api}] elems must hold at least one tensor.")
    lengths = {t.shape[0] if t.ndim else None for t in flat}
    if None in lengths or len(lengths) != 1:
        raise ValueError(f"[{api}] every tensor in elems needs the same leading dimension (the one iterated "
                         f"over); got shapes {[tuple(t.shape) for t in flat]}.")
    n = lengths.pop()
    return n, [_nest.pack_sequence_as(elems, [t[i] for t in flat]) if _nest.is_nested(elems) else flat[0][i]
               for i in range(n)]


def _stack(values):
    from .tf_ops import stack
    return stack(values, axis=0)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
         infer_shape=True, reverse=False, name=None):
    """The successive accumulators `a = fn(a, x)` over the rows `x` of `elems`, stacked along a
    new axis 0 (each component of a structured accumulator stacked on its own). Without an
    initializer the first row is the first accumulator, and is the output's first row."""
    n, rows = _rows("scan", elems)
    order = list(range(n))[::-1] if reverse else list(range(n))
    if initializer is None:
        if n == 0:
            raise ValueError("[scan] elems is empty and there is no initializer; pass initializer=.")
        acc = rows[order[0]]
        outputs = {order[0]: acc}
        order = order[1:]
    else:
        acc = _nest.map_structure(_tensor, initializer)
        outputs = {}
    for i in order:
        acc = fn(acc, rows[i])
        outputs[i] = acc
    if not outputs:
        raise ValueError("[scan] elems is empty: there is nothing to stack.")
    ordered = [outputs[i] for i in sorted(outputs)]
    flat = [_nest.flatten(o) for o in ordered]
    stacked = [_stack([_tensor(f[k]) for f in flat]) for k in range(len(flat[0]))]
    return _nest.pack_sequence_as(ordered[0], stacked) if _nest.is_nested(ordered[0]) else stacked[0]


def _fold(api, fn, elems, initializer, reverse):
    n, rows = _rows(api, elems)
    order = list(range(n))[::-1] if reverse else list(range(n))
    if initializer is None:
        if n == 0:
            raise ValueError(f"[{api}] elems is empty and there is no initializer; pass initializer=.")
        acc, order = rows[order[0]], order[1:]
    else:
        acc = initializer
    for i in order:
        acc = fn(acc, rows[i])
    return _nest.map_structure(_tensor, acc)


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """fn(...fn(fn(initializer, x0), x1)..., x_last): the last accumulator of a left fold."""
    return _fold("foldl", fn, elems, initializer, reverse=False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """The fold from the last row of elems to the first."""
    return _fold("foldr", fn, elems, initializer, reverse=True)
