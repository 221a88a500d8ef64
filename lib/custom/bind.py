"""Outputs with user-given derivatives: the engine of `custom_gradient`, `custom_jvp`, `custom_vjp`.

A function with custom derivatives runs once, on its real arguments, so that every
enclosing transform sees its code; then its outputs are re-bound, so that the newest
level differentiates them with the user's rule instead of the function's code:

- at the tensor level, tapes record one op whose VJP is the user's (`Primitive.custom_vjp`)
  and forward accumulators get the outputs' tangents from the user's JVP, or from the
  user's VJP by transposition (the double-VJP trick of TF's ForwardAccumulator);
- at a dual-number level (`jvp`, `jacfwd`), the function runs on that level's primals and
  the outputs become dual numbers whose tangents come from the same rules.

Older levels differentiate the function and its rules as ordinary code (JAX's semantics
for nested transforms), which is exact whenever the rules are right and written with
dualtape ops.
"""

import numpy as np

from ..core import nest
from ..core import dnp
from ..forward.batching import stack, take
from ..reverse.dispatch import STATE, record_op
from ..forward.dual import Dual, level_of
from ..core.registry import Primitive, Traced
from ..functional import vjp
from ..reverse.tensor import Tensor, convert_to_tensor, wrap


def transpose(linear_fn, in_like, cotangents):
    """The transpose of a linear map applied to `cotangents`: d/du <linear_fn(u), cotangents>.

    in_like: one value per input of the map, giving its shape and dtype. linear_fn takes the
    list of inputs and returns a list of outputs (None: a zero output); cotangents has one
    entry per output (None: zero). Returns one value per input. The map runs once on traced
    inputs under a private tape, so enclosing transforms see (and differentiate) it.
    """
    zeros = [np.zeros(tuple(dnp.shape(x)), dtype=_float_dtype(x)) for x in in_like]
    kept = []

    def restricted(*inputs):
        outputs = list(linear_fn(list(inputs)))
        kept[:] = [i for i, (o, c) in enumerate(zip(outputs, cotangents))
                   if o is not None and c is not None]
        return [outputs[i] for i in kept]

    _, pullback = vjp(restricted, *zeros)
    if not kept:
        return zeros
    return list(pullback([cotangents[i] for i in kept]))


def _float_dtype(x):
    dtype = dnp.result_dtype(x)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def is_float(x):
    return dnp.result_dtype(x).kind in "fc"


# -- dual-number levels --------------------------------------------------------------------------

def dual_level(leaves):
    """(tag, batch) when the newest level among `leaves` is a dual-number level, else None."""
    tag, batch = 0, None
    for a in leaves:
        if type(a) is Dual and a.tag > tag:
            tag, batch = a.tag, a.batch
    if not tag:
        return None
    for a in leaves:
        if isinstance(a, Tensor) and level_of(a) >= tag:
            return None  # a functional grad inside this jvp: the tape is newer
    return tag, batch


def split_level(leaves, tag):
    """(primals, tangents) of the level `tag`: other values are constants (tangent None)."""
    primals = [a.primal if type(a) is Dual and a.tag == tag else a for a in leaves]
    tangents = [a.tangent if type(a) is Dual and a.tag == tag else None for a in leaves]
    return primals, tangents


def per_direction(jvp_fn, tangents, batch):
    """jvp_fn(tangents) -> one tangent (or None) per output, run once per direction of a batch."""
    if batch is None:
        return jvp_fn(tangents)
    rows = [jvp_fn([None if t is None else take(t, j, batch) for t in tangents])
            for j in range(batch)]
    result = []
    for column in zip(*rows):
        known = [c for c in column if c is not None]
        if not known:
            result.append(None)
            continue
        zero = np.zeros(tuple(dnp.shape(known[0])), dtype=dnp.result_dtype(known[0]))
        result.append(stack([zero if c is None else c for c in column]))
    return result


def as_duals(result, out_tangents, tag, batch):
    """`result` with each float leaf that has a tangent made a dual number of level `tag`."""
    flat = nest.flatten(result)
    out = []
    for leaf, t in zip(flat, out_tangents):
        if t is None or not is_float(leaf):
            out.append(leaf)
            continue
        value = leaf if isinstance(leaf, Traced) else np.asarray(leaf)
        dtype = dnp.result_dtype(value)
        if dnp.result_dtype(t) != dtype:
            t = dnp.cast(t, dtype)
        out.append(Dual(value, t, tag, batch))
    return nest.pack_sequence_as(result, out)


# -- the tensor level ------------------------------------------------------------------------------

def rebind(name, inputs, result, vjp_fn, jvp_fn=None, forward_error=None):
    """`result`'s leaves as new tensors whose derivatives, for tapes and accumulators, are
    the user's.

    inputs: the flat inputs (tensors are recorded, other values are constants).
    vjp_fn(upstreams) -> one cotangent (or None) per input, given one upstream per flat
    output leaf (None for integer leaves). jvp_fn(tangents) -> one tangent per output leaf,
    given one tangent (or None) per input; without it, accumulators transpose vjp_fn.
    forward_error: raised instead when an accumulator differentiates the outputs and no tape
    records them (custom_vjp); under a tape, accumulators see the function's own code.
    """
    flat = nest.flatten(result)
    values = [_leaf_value(x) for x in flat]
    outs = [wrap(v) for v in values]
    diff = [j for j, v in enumerate(values) if is_float(v)]
    if not diff:
        return nest.pack_sequence_as(result, outs)
    layout = _Layout([values[j] for j in diff])
    packed = wrap(values[diff[0]] if len(diff) == 1 else layout.pack([values[j] for j in diff]))
    in_values = [t._value if isinstance(t, Tensor) else t for t in inputs]
    ids = [t._id if isinstance(t, Tensor) else None for t in inputs]

    def full_upstreams(parts):
        upstreams = [None] * len(flat)
        for j, part in zip(diff, parts):
            upstreams[j] = part
        return upstreams

    def packed_vjp(g, _values):
        return vjp_fn(full_upstreams([g] if len(diff) == 1 else layout.unpack(g)))

    op = Primitive(name=f"CustomGradient:{name}", impl=None, vjp=None, jvp=None, elementwise=False, variadic=True,
                   domain={}, samples=(), nondiff_argnums=(), batch_jvp=False)
    op.custom_vjp = packed_vjp
    if STATE.tapes:
        record_op(STATE.tapes, op, ids, in_values, packed, packed._value, {})
    recorded = any(packed._id in tape._watched for tape in STATE.tapes)
    for acc in list(STATE.accumulators):
        if acc._paused:
            continue
        tangents = [None if i is None else acc._tangents.get(i) for i in ids]
        if all(t is None for t in tangents):
            continue
        if forward_error is not None:
            if not recorded:
                try:
                    raise forward_error
                finally:  # the traceback holds this frame: no cycle through its local
                    forward_error = None
            own = [acc._tangents.get(x._id) if isinstance(x, Tensor) else None for x in flat]
            out_tangents = [own[j] for j in diff]
        else:
            out_tangents = _paused(acc, lambda: _forward_tangents(
                tangents, jvp_fn, vjp_fn, [values[j] for j in diff], diff, full_upstreams))
        if any(t is not None for t in out_tangents):
            acc._tangents[packed._id] = (out_tangents[0] if len(diff) == 1 else
                                         layout.pack_tangents(out_tangents))
    if len(diff) == 1:
        outs[diff[0]] = packed
    else:
        for slot, j in enumerate(diff):
            outs[j] = layout.unpack_one(packed, slot)
    return nest.pack_sequence_as(result, outs)


def _forward_tangents(tangents, jvp_fn, vjp_fn, diff_values, diff, full_upstreams):
    if jvp_fn is not None:
        out = jvp_fn(tangents)
        return [out[j] for j in diff]
    return transpose(lambda us: vjp_fn(full_upstreams(us)), diff_values, tangents)


def _paused(acc, compute):
    """Run `compute` with `acc` and the accumulators inside it paused (as `_propagate` does)."""
    stack_ = STATE.accumulators
    inner = stack_[stack_.index(acc):] if acc in stack_ else [acc]
    for a in inner:
        a._paused += 1
    try:
        return compute()
    finally:
        for a in inner:
            a._paused -= 1


def _leaf_value(x):
    if isinstance(x, Tensor):
        return x._value
    if isinstance(x, Traced):
        return x
    return convert_to_tensor(x)._value


class _Layout:
    """Several float outputs packed into one flat vector: a tape record has one output."""

    def __init__(self, values):
        self.shapes = [tuple(dnp.shape(v)) for v in values]
        self.dtypes = [dnp.result_dtype(v) for v in values]
        self.sizes = [int(np.prod(s)) for s in self.shapes]
        self.offsets = np.cumsum([0] + self.sizes).tolist()
        self.dtype = np.result_type(*self.dtypes)

    def pack(self, parts):
        flat = [dnp.reshape(dnp.cast(p, self.dtype) if dnp.result_dtype(p) != self.dtype else p, (-1,))
                for p in parts]
        if all(not isinstance(p, Traced) for p in flat):
            return np.concatenate(flat)
        return dnp.concatenate(flat)

    def pack_tangents(self, tangents):
        return self.pack([np.zeros(s, self.dtype) if t is None else t
                          for t, s in zip(tangents, self.shapes)])

    def unpack_one(self, packed, slot):
        start, stop = self.offsets[slot], self.offsets[slot + 1]
        part = dnp.reshape(dnp.getitem(packed, slice(start, stop)), self.shapes[slot])
        if self.dtypes[slot] != self.dtype:
            part = dnp.cast(part, self.dtypes[slot])
        return part

    def unpack(self, packed):
        return [self.unpack_one(packed, slot) for slot in range(len(self.shapes))]
