"""Applying one primitive's rules to concrete arguments: shared by every mode and the tests.

`vjp_parts` gives the cotangent of each requested input of one recorded op; `jvp_output`
gives the tangent of the op's output from the tangents of its inputs. Both handle the
registry's three states (rules, NOT_DIFFERENTIABLE, no rule), broadcasting of elementwise
ops, variadic ops and `RegisterGradient` overrides in one place.
"""

import numpy as np

from . import dnp
from . import rulekit
from .dtypes import is_complex_value
from .traced import RULES_ON_TENSORS, Traced
from .registry import GRADIENT_OVERRIDES, LINEAR, NOT_DIFFERENTIABLE


# Ops whose rules compute plain values (indices, orders) from their primals: under a vmap
# they run once per example (batching/rules.py fills both, and checks every op's rules).
PER_EXAMPLE = set()
per_example = [None]  # fn(rule(*args) -> list of parts, args, n_parts) -> parts, or None (nothing batched)


def no_gradient_error(op_name):
    return LookupError(f"gradient registry has no entry for: {op_name}")


def no_jvp_error(op_name):
    return LookupError(f"[{op_name}] has no JVP rule, so forward mode cannot differentiate "
                       f"through it. Declare jvp= in its defop, or use reverse mode.")


class OpInfo:
    """What a `RegisterGradient` function sees of the op: inputs, outputs and attributes."""

    __slots__ = ("type", "name", "inputs", "outputs", "_attrs")

    def __init__(self, op_name, inputs, output, static):
        self.type = self.name = op_name
        self.inputs = tuple(inputs)
        self.outputs = (output,)
        self._attrs = static

    def get_attr(self, name):
        return self._attrs[name]


def vjp_parts(op, g, ans, values, static, wanted, batch=0):
    """The cotangent of each input index in `wanted` (None where no gradient flows).

    batch: 0, or k when `g` carries a leading axis of k cotangents (vectorized jacobians);
    the parts then carry it too. Ops whose rules are not batch-aware are looped per row.
    """
    if op.name in PER_EXAMPLE and per_example[0] is not None:
        looped = per_example[0](lambda g, ans, *values: vjp_parts(op, g, ans, values, static, wanted, batch),
                                [g, ans, *values], len(wanted))
        if looped is not None:
            return looped
    if batch:
        if not op.batch_vjp or op.custom_vjp is not None or op.name in GRADIENT_OVERRIDES:
            return _looped_vjp_parts(op, g, ans, values, static, wanted, batch)
        saved, rulekit.BATCH_NDIM[0] = rulekit.BATCH_NDIM[0], 1
        try:
            return vjp_parts(op, g, ans, values, static, wanted)
        finally:
            rulekit.BATCH_NDIM[0] = saved
    rules = op.vjp
    if rules.__class__ is tuple and not GRADIENT_OVERRIDES and op.custom_vjp is None:
        # the hot path of every backward pass: one rule call per wanted input
        parts = []
        for i in wanted:
            rule = rules[i] if i < len(rules) else NOT_DIFFERENTIABLE
            if rule is NOT_DIFFERENTIABLE:
                parts.append(None)
                continue
            part = rule(g, ans, *values, **static) if static else rule(g, ans, *values)
            if op.elementwise and part is not None:
                part = unbroadcast_to(part, values[i])
            elif part is not None and (part.__class__ is not _ndarray or part.dtype.kind == "c"):
                part = real_for(part, values[i])
            parts.append(part)
        return parts
    custom = op.custom_vjp
    if custom is not None:
        grads = custom(g, values)
        return [grads[i] for i in wanted]
    if GRADIENT_OVERRIDES:
        override = GRADIENT_OVERRIDES.get(op.name)
        if override is not None:
            grads = override(OpInfo(op.name, values, ans, static), g)
            if not isinstance(grads, (tuple, list)):
                grads = (grads,)
            return [grads[i] if i < len(grads) else None for i in wanted]
    rules = op.vjp
    if rules is None:
        raise no_gradient_error(op.name)
    if rules is NOT_DIFFERENTIABLE:
        return [None] * len(wanted)
    parts = []
    variadic = op.variadic
    elementwise = op.elementwise
    for i in wanted:
        rule = rules if variadic else rules[i] if i < len(rules) else NOT_DIFFERENTIABLE
        if rule is NOT_DIFFERENTIABLE or i in op.nondiff_argnums:
            parts.append(None)
            continue
        if variadic:
            part = rule(g, ans, *values, argnum=i, **static)
        elif static:
            part = rule(g, ans, *values, **static)
        else:
            part = rule(g, ans, *values)
        if elementwise and part is not None:
            part = unbroadcast_to(part, values[i])
        elif part is not None:
            part = real_for(part, values[i])
        parts.append(part)
    return parts


def real_for(part, x):
    """The cotangent of a real input `x` is the real part of a complex `part`.

    A real x entering a complex computation (x * (1 + 2j)) is the map x -> x + 0i, whose
    transpose keeps the real part (JAX's convention, docs/numerics.md)."""
    if part is None or not is_complex_value(part) or is_complex_value(x):
        return part
    dtype = getattr(x, "dtype", None)
    if dtype is None and x.__class__ is not float:
        return part  # an integer or a bool: no gradient is read from it
    return dnp.real(part)


def unbroadcast_to(part, x):
    """Sum an elementwise op's cotangent down to the shape and dtype of its input `x`.

    A float32 input combined with float64 data (through NumPy's own promotion) still gets
    a float32 gradient, as every source's gradient has the source's dtype.
    """
    if part.__class__ is _ndarray and x.__class__ is _ndarray and part.dtype is x.dtype:
        if not rulekit.BATCH_NDIM[0]:
            shape = x.shape
            lead = part.ndim - len(shape)
            if not lead and part.shape == shape:
                return part  # the common case: nothing to sum, nothing to cast
            if lead > 0 and part.shape[lead:] == shape:  # a bias's: sum the leading axes only
                return _add_reduce(part, axis=tuple(range(lead)))
    else:
        try:
            if part.shape == x.shape and part.dtype is x.dtype and not rulekit.BATCH_NDIM[0]:
                return part  # nothing to sum, nothing to cast
        except AttributeError:
            pass
    x_dtype = getattr(x, "dtype", None)
    if x_dtype is not None:
        part_dtype = getattr(part, "dtype", None)
        if part_dtype is not None and part_dtype is not x_dtype and part_dtype != x_dtype:
            x_np = dnp.result_dtype(x)
            if x_np.kind == "f" and is_complex_value(part):
                part = dnp.real(part)  # a real input's cotangent: the real part (real_for)
            if x_np.kind in "fc" and dnp.result_dtype(part) != x_np:
                part = dnp.cast(part, x_np)
    part_shape = getattr(part, "shape", ())
    x_shape = getattr(x, "shape", None)
    if x_shape is None:
        x_shape = () if x.__class__ in (float, int, bool, complex) else np.shape(x)
    if part_shape == x_shape and not rulekit.BATCH_NDIM[0]:
        return part
    return rulekit.unbroadcast(part, tuple(x_shape))


def _looped_vjp_parts(op, g, ans, values, static, wanted, batch):
    rows = [vjp_parts(op, g[k], ans, values, static, wanted) for k in range(batch)]
    return [None if rows[0][j] is None else dnp.stack([row[j] for row in rows])
            for j in range(len(wanted))]


def jvp_output(op, tangents, ans, values, static, batch=None):
    """The output tangent, given one tangent (or None) per input; None if all are None.

    batch: None, or k when every tangent carries a leading axis of k directions. Callers
    only pass it for elementwise ops and ops declared `batch_jvp=True` (see batching.py).
    """
    if op.name in PER_EXAMPLE and per_example[0] is not None:
        n = len(tangents)
        looped = per_example[0](lambda *a: [jvp_output(op, list(a[:n]), a[n], a[n + 1:], static, batch)],
                                [*tangents, ans, *values], 1)
        if looped is not None:
            return looped[0]
    if ans.__class__ is _ndarray or not isinstance(ans, Traced):
        return _jvp_output(op, tangents, ans, values, static, batch)
    RULES_ON_TENSORS[0] += 1  # rules on tensors: NumPy's promotion in their operators (traced.py)
    try:
        return _jvp_output(op, tangents, ans, values, static, batch)
    finally:
        RULES_ON_TENSORS[0] -= 1


def _jvp_output(op, tangents, ans, values, static, batch=None):
    rules = op.jvp
    if rules is None:
        raise no_jvp_error(op.name)
    if rules is NOT_DIFFERENTIABLE:
        return None
    elementwise = op.elementwise
    if batch is not None and elementwise:
        # (k, *x.shape) -> (k, 1, ..., *x.shape): broadcasting against `ans` then lines
        # the directions up with axis 0 instead of with x's leading axes.
        out_ndim = len(_shape(ans))
        tangents = [t if t is None else _align_batch(t, batch, _shape(values[i]), out_ndim)
                    for i, t in enumerate(tangents)]
    if rules is LINEAR:
        for t in tangents:
            if t.__class__ is not _ndarray:
                break
        else:  # every input has a plain tangent: the op itself on them, as op(...) would run
            if tangents and batch is None and not op.nondiff_argnums:
                total = op.impl(*tangents, **static) if static else op.impl(*tangents)
                return _fit_elementwise(total, ans) if elementwise else total
        for t in tangents:
            if t is not None:
                break
        else:
            return None  # no tangent at all: not even a zero one
        if batch is None and op.name in SUM_OPS:
            total = linear_sum_tangent(op, tangents, ans)
            if total is not None:
                return total
        total = op(*_linear_args(op, tangents, values), **static)
    else:
        total = None
        simple = rules.__class__ is tuple and not op.nondiff_argnums
        for i, t in enumerate(tangents):
            if t is None:
                continue
            if simple:
                rule = rules[i] if i < len(rules) else NOT_DIFFERENTIABLE
            else:
                rule = op.jvp_rule(i)
            if rule is NOT_DIFFERENTIABLE:
                continue
            if op.variadic:
                part = rule(t, ans, *values, argnum=i, **static)
            elif static:
                part = rule(t, ans, *values, **static)
            else:
                part = rule(t, ans, *values)
            if total is None:
                total = part
            elif _owned_temporary(total, part, tangents, values, ans):
                total = _np_add(total, part, out=total)  # a rule's fresh result: add in place
            else:
                total = dnp.add(total, part)
    if total is not None and elementwise:
        if (batch is None and total.__class__ is _ndarray and ans.__class__ is _ndarray
                and total.dtype is ans.dtype and total.shape == ans.shape):
            return total  # the common case: already the output's shape and dtype
        shape = _shape(ans)
        if batch is not None:
            shape = (batch,) + shape
        if _shape(total) != shape:
            total = dnp.broadcast_to(total, shape)
        total = _in_dtype_of(total, ans)
    return total


def _fit_elementwise(total, ans):
    """An elementwise op's tangent in its output's shape and float dtype (jvp_output's end)."""
    if (total.__class__ is _ndarray and ans.__class__ is _ndarray and total.dtype is ans.dtype
            and total.shape == ans.shape):
        return total
    if _shape(total) != _shape(ans):
        total = dnp.broadcast_to(total, _shape(ans))
    return _in_dtype_of(total, ans)


def _in_dtype_of(total, ans):
    """An elementwise op's tangent in its float output's dtype: a rule that met a NumPy
    float64 scalar (`log(2.0)` in `2.0 ** x`) must not turn a float32 tangent into float64,
    as `unbroadcast_to` keeps each cotangent in its input's dtype."""
    if total.__class__ in _PLAIN and ans.__class__ in _PLAIN:
        if total.dtype is ans.dtype or ans.dtype.kind != "f" or total.dtype == ans.dtype:
            return total
        return total.astype(ans.dtype)
    dtype = dnp.result_dtype(ans)
    if dtype.kind == "f" and dnp.result_dtype(total) != dtype:
        return dnp.cast(total, dtype)
    return total


def _shape(x):
    if x.__class__ in _PLAIN:
        return x.shape
    return tuple(dnp.shape(x))


def linear_sum_tangent(op, tangents, ans):
    """The tangent of `x + y` or `x - y` when only one side has one: that tangent (negated
    for the right side of a subtraction), as `_linear_args`'s zero would give, without the
    zero and the op call. None when it does not apply: a tangent that is not a float64
    array of the output's shape and dtype (broadcasting or promotion then matter)."""
    if len(tangents) != 2:
        return None
    t, other = tangents
    right = t is None
    if right:
        t = other
    elif other is not None:
        return None
    if (t.__class__ is not _ndarray or ans.__class__ is not _ndarray or t.dtype != _float64
            or t.shape != ans.shape or ans.dtype != _float64):
        return None
    return _np_negative(t) if right and op.name == "Sub" else t


def _linear_args(op, tangents, values):
    """The arguments of a LINEAR op applied to the tangents: zeros for missing tangents
    (a 0-d zero of the input's dtype for elementwise ops: it broadcasts, costing nothing)."""
    args = []
    nondiff = op.nondiff_argnums
    for i, t in enumerate(tangents):
        if nondiff and i in nondiff:
            args.append(values[i])
        elif t is not None:
            args.append(t)
        elif op.elementwise:
            value = values[i]
            if value.__class__ in _PYTHON_SCALARS:
                # a Python zero, weak as the Python number was: `x32 + 1.5` keeps a float32
                # tangent (a 0-d float64 array would promote it, NumPy's rule)
                args.append(value.__class__(0))
            else:
                args.append(np.zeros((), dtype=dnp.result_dtype(value)))
        else:
            args.append(rulekit.zeros_like(values[i]))
    return args


def _owned_temporary(total, part, tangents, values, ans):
    """True when `total` is a plain array a rule just made (not an input, not a view) that
    can take `part` in place without changing its shape or dtype."""
    if total.__class__ is not _ndarray or part.__class__ is not _ndarray:
        return False
    if total.base is not None or not total.flags.writeable or total is ans:
        return False
    if total.shape != part.shape or total.dtype != part.dtype:
        return False
    for x in tangents:
        if x is total:
            return False
    for x in values:
        if x is total:
            return False
    return True


_ndarray = np.ndarray
_add_reduce = np.add.reduce
_PLAIN = (np.ndarray, np.float64, np.float32)  # have .shape, .dtype and .astype
_np_add = np.add
_np_negative = np.negative
_float64 = np.dtype(np.float64)
_PYTHON_SCALARS = (float, int, bool, complex)
SUM_OPS = frozenset(("AddV2", "Sub"))  # linear ops whose one-sided tangent is itself (by name:
                                    # the ops are declared above this module, in dualtape.ops)


def _align_batch(t, batch, shape, out_ndim):
    shape = tuple(shape)
    if len(shape) >= out_ndim:
        return t
    return dnp.reshape(t, (batch,) + (1,) * (out_ndim - len(shape)) + shape)
