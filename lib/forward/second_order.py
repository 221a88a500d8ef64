"""Forward-over-reverse on a recorded tape: the engine of `hvp` and `hessian`.

The primal function runs once, recorded with plain arrays. One sweep over the records
pushes the tangents through them with the JVP rules (no dual numbers, no dispatch), then
the backward pass is replayed on dual numbers (value, tangent) of a fresh level: the VJP
rules run on duals, so the tangent of each input's gradient comes out of their own
products. A Hessian's chunks of directions share the one recording.

Only the tangents the backward pass reads are computed: a VJP rule that looks at an input
only through `np.shape(x)` (as `sum_vjp` does) leaves that input's tangent, and everything
feeding only it, out of the sweep. The rules say so themselves (see `_vjp_reads`).
"""

import ast
import inspect
import textwrap

import numpy as np

from ..core.apply_rules import jvp_output
from .batching import batched_jvp
from ..reverse.dispatch import STATE
from .dual import Dual, new_tag
from ..core.registry import GRADIENT_OVERRIDES, NOT_DIFFERENTIABLE, Traced
from ..reverse.tape import GradientTape, replay
from ..reverse.tensor import Tensor


def gradient_tangents(tape, inputs, out, tangents, batch=None):
    """d(gradient of `out` w.r.t. `inputs`) along `tangents`, one per input.

    tape: a persistent tape that recorded `out` from the watched `inputs` with plain values.
    batch: None, or k when every tangent carries a leading axis of k directions.
    Returns one array per input, or None when the tape holds traced values (f ran another
    transform inside), which this engine does not replay.
    """
    tag = new_tag()
    entries = _tangent_sweep(tape._entries, inputs, tangents, tag, batch)
    if entries is None:
        return None
    keep = {t._id for t in inputs}
    value = getattr(out, "_value", None)
    if (isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "fc"
            and out._id in tape._watched and not (STATE.tapes or STATE.accumulators)):
        # nobody records this backward pass: replay the records directly, releasing each
        grads = replay(entries, tape._watched, {out._id: np.ones(value.shape, value.dtype)}, keep,
                       release=True, traced=False)
    else:  # the general case: GradientTape's own backward pass
        sweep = GradientTape(watch_accessed_variables=False)  # not persistent: releases records
        sweep._entries, sweep._watched = entries, tape._watched
        del entries
        grads = sweep._backward([out], [None], keep) if isinstance(out, Tensor) else {}
    results = []
    for t in inputs:
        g = grads.get(t._id)
        if type(g) is Dual and g.tag == tag:
            results.append(g.tangent)
        else:  # the gradient does not depend on the inputs (or f does not)
            shape = tuple(np.shape(t._value))
            results.append(np.zeros(shape if batch is None else (batch,) + shape, t._value.dtype))
    return results


def _tangent_sweep(records, inputs, tangents, tag, batch):
    """The records with each input value (and output) that has a tangent as a dual number."""
    needed, reads = _needed_tangents(records)
    dots = {t._id: d for t, d in zip(inputs, tangents)}
    entries = []
    for entry, read in zip(records, reads):
        op, in_ids, values, out_id, ans, static = entry
        ins = [None if i is None else dots.get(i) for i in in_ids]
        for d in ins:
            if d is not None:
                break
        else:  # no input carries a tangent: the record stays as it is
            entries.append(entry)
            continue
        if isinstance(ans, Traced) or op.custom_vjp is not None:
            return None  # (a custom gradient's grad_fn closes over values this replay cannot see)
        for v in values:
            if isinstance(v, Traced):
                return None
        if out_id in needed:
            if batch is None:
                dans = jvp_output(op, ins, ans, values, static)
            else:
                dans = batched_jvp(op, ins, ans, values, static, batch)
            if dans is not None:
                dots[out_id] = dans
                if read is None or read[0]:
                    ans = Dual(ans, dans, tag, batch)
        if read is None:
            values = [v if d is None else Dual(v, d, tag, batch) for v, d in zip(values, ins)]
        else:  # an input its rules only look at through its shape stays a plain value
            positions = read[1]
            values = [v if d is None or j not in positions else Dual(v, d, tag, batch)
                      for j, (v, d) in enumerate(zip(values, ins))]
        entries.append((op, in_ids, values, out_id, ans, static))
    return entries


def _needed_tangents(records):
    """(ids of the recorded tensors whose tangents the replayed backward pass reads, and
    per record what its VJP rules read: `_op_reads`'s answer, None for unknown).

    Backwards over the records: an output is needed when a later VJP rule reads it (as an
    input value, or as its `ans`), and a needed output needs every input's tangent.
    """
    needed = set()
    per_record = []
    for op, in_ids, values, out_id, ans, static in reversed(records):
        reads = _op_reads(op, in_ids)
        per_record.append(reads)
        if reads is None:  # unknown: everything
            needed.add(out_id)
            needed.update(i for i in in_ids if i is not None)
        else:
            reads_ans, positions = reads
            if reads_ans:
                needed.add(out_id)
            for j in positions:
                if j < len(in_ids) and in_ids[j] is not None:
                    needed.add(in_ids[j])
        if out_id in needed:
            needed.update(i for i in in_ids if i is not None)
    per_record.reverse()
    return needed, per_record


def _op_reads(op, in_ids):
    """(reads ans, input positions read) over the VJP rules of the differentiated inputs."""
    if op.custom_vjp is not None:
        # a custom gradient's op lives for one call: a cache entry would keep it (and the
        # values its grad_fn closes over) alive for good
        return None
    key = (op, tuple(i is None for i in in_ids))
    if key not in _OP_READS or op.name in GRADIENT_OVERRIDES:
        _OP_READS[key] = _rules_read(op, in_ids)
    return _OP_READS[key]


def _rules_read(op, in_ids):
    rules = op.vjp
    if (rules.__class__ is not tuple or op.custom_vjp is not None or op.variadic
            or op.name in GRADIENT_OVERRIDES):
        return None
    reads_ans = False
    positions = set()
    for i, tid in enumerate(in_ids):
        if tid is None or i >= len(rules) or rules[i] is NOT_DIFFERENTIABLE:
            continue
        reads = _vjp_reads(rules[i])
        if reads is None:
            return None
        reads_ans = reads_ans or reads[0]
        positions.update(reads[1])
    return reads_ans, positions


_OP_READS = {}  # (op, which inputs are constants) -> _op_reads(...)
_READS = {}  # rule -> (reads ans, positions of the inputs it reads), or None: unknown
_SHAPE_ONLY = frozenset(("shape", "ndim", "size", "shape_of", "result_dtype"))


def _vjp_reads(rule):
    """Which of `rule(g, ans, *inputs)`'s arguments it reads beyond their shape and dtype.

    A parameter counts as unread when it only appears as the single argument of
    `np.shape`, `np.ndim`, `shape_of`, ... or as `x.shape` / `x.ndim` / `x.dtype`.
    """
    if rule in _READS:
        return _READS[rule]
    reads = None
    try:
        func = ast.parse(textwrap.dedent(inspect.getsource(rule))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        func = None
    if isinstance(func, ast.FunctionDef) and func.args.vararg is None and len(func.args.args) >= 2:
        params = [a.arg for a in func.args.args]
        used = set()
        parents = {child: node for node in ast.walk(func) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(func):
            if isinstance(node, ast.Name) and node.id in params and not _shape_only(node, parents):
                used.add(node.id)
        reads = (params[1] in used, {j for j, name in enumerate(params[2:]) if name in used})
    _READS[rule] = reads
    return reads


def _shape_only(name, parents):
    parent = parents.get(name)
    if isinstance(parent, ast.Attribute):
        return parent.attr in ("shape", "ndim", "dtype", "size")
    if isinstance(parent, ast.Call) and parent.args == [name] and not parent.keywords:
        func = parent.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        return called in _SHAPE_ONLY
    return False
