"""Forward mode: dual numbers carrying a primal, a tangent and the tag of their level.

`jvp(f, primals, tangents)` wraps each input in a `Dual` with a fresh tag; every registry
op on a dual runs on the primals (re-dispatched, so lower levels and tapes still see it)
and gets its tangent from the op's JVP rules. Nested levels never mix: an op works on the
highest tag among its arguments only, and a dual of a lower tag is a constant to it, so
`jvp(lambda x: x * jvp(lambda y: x + y, (1.0,), (1.0,))[1], (1.0,), (1.0,))` is 1, not 2.

A tangent may carry a leading batch axis of k directions (`Dual.batch == k`): k JVPs for
the price of one pass, as in ForwardDiff.jl's chunk mode (see `batching.py`).
"""

import math

import numpy as np

from ..reverse import dispatch
from ..core import registry
from ..core import dnp
from ..core.apply_rules import SUM_OPS, jvp_output, linear_sum_tangent
from .batching import batched_jvp
from ..core.dtypes import any_complex, refuse_complex_op
from ..core.duck import is_duck_array
from ..core.errors import RefusalError
from ..core.registry import LINEAR, NOT_DIFFERENTIABLE, Traced
from ..core.array_like import ArrayLike
from ..reverse.dispatch import new_tag  # noqa: F401  (levels are shared with tapes: see there)
from ..reverse.tensor import Tensor, escape_error, plain_value

class Dual(ArrayLike):
    """A primal value and its tangent (or a batch of k tangents) at forward level `tag`.

    Comparisons, `bool()` and shape queries look at the primal only, so a branch takes the
    same path whatever the tangent (or the chunk size) is.
    """

    __slots__ = ("primal", "tangent", "tag", "batch", "__weakref__")  # (weak: inplace.py's views)
    _unsized = "a scalar dual number has no length"
    __array_priority__ = 200

    def __init__(self, primal, tangent, tag, batch=None):
        self.primal = primal
        self.tangent = tangent
        self.tag = tag
        self.batch = batch

    @property
    def shape(self):
        primal = self.primal
        if primal.__class__ is np.ndarray or primal.__class__ is np.float64:
            return primal.shape  # the common cases, without dnp's dispatch
        return tuple(dnp.shape(primal))

    @property
    def dtype(self):
        primal = self.primal
        if primal.__class__ is np.ndarray or primal.__class__ is np.float64:
            return primal.dtype
        return dnp.result_dtype(primal)

    def __setitem__(self, index, value):
        raise RefusalError(f"[Dual.__setitem__] a dual number (a value jvp, jacfwd or hessian traces) "
                        f"cannot be written into: t[{index!r}] = ... would lose the tangent, as "
                        "tensors are immutable in TF. Build a new array instead: "
                        "dnp.where(mask, value, t), np.concatenate of slices, or np.stack of items.")

    def __bool__(self):
        return bool(self.primal)

    def __float__(self):
        raise escape_error(_api(self), "float()")

    def __complex__(self):
        raise escape_error(_api(self), "complex()")

    def __int__(self):
        return int(self.primal)

    # piecewise constant, as int(): the tangent they drop is zero (see Tensor.__floor__)
    def __floor__(self):
        return math.floor(plain_value(self).item())

    def __ceil__(self):
        return math.ceil(plain_value(self).item())

    def __trunc__(self):
        return math.trunc(plain_value(self).item())

    def __index__(self):
        return self.primal.__index__()

    def __array__(self, dtype=None, copy=None):
        raise escape_error(_api(self), "np.array / np.asarray")

    def numpy(self):
        """Refused, as for a tensor under the functional API: the tangent would be lost."""
        raise escape_error(_api(self), ".numpy()")

    def __format__(self, spec):
        if spec:  # printing is not an escape: the string carries no derivative
            value = plain_value(self)
            return format(value.item() if value.ndim == 0 else value, spec)
        return repr(self)

    def __repr__(self):
        batch = "" if self.batch is None else f", batch={self.batch}"
        return f"Dual(primal={self.primal!r}, tangent={self.tangent!r}, tag={self.tag}{batch})"

    __hash__ = None


def _coerce(other):
    if isinstance(other, (Traced, float, int, complex, np.ndarray, np.generic)):
        return other
    if isinstance(other, (list, tuple)):
        return np.asarray(other)
    if is_duck_array(other):  # a dask array: NumPy's implementations run on it lazily
        return other
    return NotImplemented


def _binary(op):
    # Operators go straight to `bind` (what dnp's call would reach after two dispatch
    # layers); a Tensor operand still gets routed by level there.
    def forward(self, other):
        if other.__class__ not in _OPERANDS:
            other = _coerce(other)
            if other is NotImplemented:
                return NotImplemented
        return bind(op, (self, other), _NO_STATIC)

    def reverse(self, other):
        if other.__class__ not in _OPERANDS:
            other = _coerce(other)
            if other is NotImplemented:
                return NotImplemented
        return bind(op, (other, self), _NO_STATIC)

    return forward, reverse


_NO_STATIC = {}

# tag -> the functional API running f on dual numbers of that tag ("jacfwd", "hvp"), set by
# functional/forward_mode.py while f runs: refusals name the API the user called
API_OF_TAG = {}


def _api(dual):
    return API_OF_TAG.get(dual.tag, "jvp")
_OPERANDS = frozenset((Dual, np.ndarray, float, int, np.float64, np.float32))

def install_operators(cls, binary):
    """NumPy's arithmetic and comparison operators on `cls` (dual numbers, vmap's values), each
    a dnp op: `binary(fn)` gives the (forward, reflected) methods of one binary function."""
    for name, fn in (("add", dnp.add), ("sub", dnp.subtract), ("mul", dnp.multiply),
                     ("truediv", dnp.divide), ("floordiv", dnp.floor_divide), ("mod", dnp.mod),
                     ("pow", dnp.power), ("matmul", dnp.matmul)):
        forward, reverse = binary(fn)
        setattr(cls, f"__{name}__", forward)
        setattr(cls, f"__r{name}__", reverse)
    for name, fn in (("lt", dnp.less), ("le", dnp.less_equal), ("gt", dnp.greater),
                     ("ge", dnp.greater_equal), ("eq", dnp.equal), ("ne", dnp.not_equal)):
        setattr(cls, f"__{name}__", binary(fn)[0])
    cls.__neg__ = lambda self: dnp.negative(self)
    cls.__pos__ = lambda self: self
    cls.__abs__ = lambda self: dnp.abs(self)


def plain_out_refusal(name, target):
    """The refusal of `np.<name>(..., out=target)` with `target` a plain NumPy array and an
    input being differentiated (what `y += x` runs for a NumPy array y and a traced x)."""
    return RefusalError(
        f"[np.{name}] out= writes the result into a plain NumPy array of shape "
        f"{target.shape} ({target.dtype}), but an input is being differentiated: "
        "a NumPy array cannot hold its derivative. This is what `y += x` runs when y is a "
        "NumPy array (np.ones, np.zeros) and x a traced value. Fix: make a new value, "
        f"y = y + x (or y = np.{name.split('.')[0]}(a, b) without out=), and use it from there on.")


def install_numpy_protocols(cls, unsupported, differentiated=False):
    """NumPy's `__array_ufunc__` / `__array_function__` on `cls`: NumPy's functions run as their
    dnp versions; `unsupported(name)` is the message for one that has none. differentiated:
    `cls` stands for values being differentiated, so a ufunc writing one into a plain NumPy
    array (`out=`) is refused as the other modes refuse it."""
    def array_ufunc(self, ufunc, method, *inputs, **kwargs):
        fn = dnp.NUMPY_DISPATCH.get(ufunc)
        if method == "__call__" and fn is not None and not kwargs:
            return fn(*inputs)
        name = ufunc.__name__ + ("" if method == "__call__" else "." + method)
        out = kwargs.get("out")
        targets = out if isinstance(out, tuple) else (out,)
        if differentiated and len(targets) == 1 and isinstance(targets[0], np.ndarray):
            raise plain_out_refusal(name, targets[0])
        raise TypeError(unsupported(name))

    def array_function(self, func, types, args, kwargs):
        fn = dnp.NUMPY_DISPATCH.get(func)
        if fn is not None:
            return fn(*args, **kwargs)
        raise TypeError(unsupported(func.__name__))

    cls.__array_ufunc__ = array_ufunc
    cls.__array_function__ = array_function


install_operators(Dual, _binary)
install_numpy_protocols(Dual, lambda name: (
    f"[np.{name}] has no differentiable dualtape version, and one of its arguments is a dual "
    "number (inside jvp/jacfwd/hessian). Use a dnp op, or apply dnp.stop_gradient first."))


def bind_dual(op, args, static):
    """Run `op` on the primals of the highest level; its JVP rules give the tangent.

    Arguments of lower levels (and tensors) pass through unchanged as constants of this
    level: `op(*primals)` re-dispatches, so their own levels handle them.
    """
    tag = 0
    batch = None
    for a in args:
        if type(a) is Dual and a.tag > tag:
            tag, batch = a.tag, a.batch
    return _bind_level(op, args, static, tag, batch)


def _bind_level(op, args, static, tag, batch):
    primals = []
    tangents = []
    plain = True  # no tensor or lower-level dual among the primals: call NumPy directly
    full = True  # every argument has a plain-array tangent
    for a in args:
        if a.__class__ is Dual and a.tag == tag:
            p = a.primal
            t = a.tangent
            if full and t.__class__ is not _ndarray:
                full = False
            tangents.append(t)
        else:
            p = a
            full = False
            tangents.append(None)
        primals.append(p)
        if plain and p.__class__ is not _ndarray and isinstance(p, Traced):
            plain = False
    if plain:
        ans = op.impl(*primals, **static) if static else op.impl(*primals)
    else:
        ans = op(*primals, **static)
    if not op.complex and ((ans.dtype.kind if ans.__class__ in _PLAIN else dnp.result_dtype(ans).kind) == "c"
                           or any_complex(primals)):
        refuse_complex_op(op, primals, ans, "a dual number of jvp/jacfwd/hessian is among its inputs")
    if batch is not None:
        tangent = batched_jvp(op, tangents, ans, primals, static, batch)
    else:
        rules = op.jvp
        if rules is not LINEAR:
            tangent = jvp_output(op, tangents, ans, primals, static)
        elif not op.nondiff_argnums and (full or op.name in SUM_OPS):
            if full:
                # a linear op's tangent is the op on the tangents (transpose, reshape, add, ...)
                tangent = op.impl(*tangents, **static) if static else op.impl(*tangents)
            else:
                tangent = linear_sum_tangent(op, tangents, ans)
                if tangent is None:
                    tangent = jvp_output(op, tangents, ans, primals, static)
        else:
            tangent = jvp_output(op, tangents, ans, primals, static)
    if tangent is None:
        return ans
    out = Dual(ans, tangent, tag, batch)
    if ans.__class__ is _ndarray and (ans.base is not None or ans is primals[0]):
        dispatch.note_view[0](ans, primals, args, out)  # NumPy's views, for in-place ops (inplace.py)
    return out


def level_of(x):
    """The highest forward level inside `x` (0 for plain values)."""
    level = 0
    while isinstance(x, Traced):
        if type(x) is Dual:
            return max(level, x.tag)
        if x.__class__ is batched_class[0]:  # a vmap's values (batching/): its level
            return max(level, x.level)
        if x.__class__ is pattern_class[0]:  # sparsity detection: always the oldest level
            return level
        level = max(level, _tape_level(x))
        x = x._value
    return level


def _tape_level(tensor):
    """The level of the newest tape watching `tensor`, or accumulator tracking it, else 0.

    Tapes and accumulators take a level from the same counter as `jvp` when entered, so
    levels order every transform by nesting, whichever kind it is.
    """
    level = 0
    state = dispatch.STATE
    for tape in state.tapes:
        tape_level = tape._dual_level
        if tape_level > level and tensor._id in tape._watched:
            level = tape_level
    for acc in state.accumulators:
        acc_level = acc._dual_level
        if acc_level > level and tensor._id in acc._tangents:
            level = acc_level
    return level


def defer_older(args, values, ids):
    """Put back the tensors of levels older than a dual number among `values`.

    dispatch.bind unwraps the tensors of an op whose arguments hold dual numbers (a newer
    tape over a dual level), then re-dispatches on the values. A tensor traced at a level
    older than such a dual (an outer `grad`'s variable, closed over, or one an outer
    accumulator tracks) must reach the dual level still wrapped, so that its own tape or
    accumulator sees the tangent computation too: unwrapped here, it would be a constant
    to the dual level and the outer derivative of the tangent would be lost. (Tapes with
    no dual level between them share tensor ids instead, as TF's nested tapes do.)

    Edits `values` and `ids` in place; returns the arguments as this level's accumulators
    see them (a deferred tensor as its value), or None when no tensor is left to record.
    """
    inner = 0
    for v in values:
        if v.__class__ is not _ndarray and isinstance(v, Traced):
            level = level_of(v)
            if level > inner:
                inner = level
    seen = None
    left = False
    for i, a in enumerate(args):
        if ids[i] is None:
            continue
        own = _tape_level(a)
        if 0 < own < inner:
            if seen is None:
                seen = list(args)
            seen[i] = values[i]
            values[i] = a
            ids[i] = None
        else:
            left = True
    if not left:
        return None
    return args if seen is None else seen


def bind(op, args, static):
    """Dual numbers, tensors or a vmap's batched values first, whichever belongs to the
    newest level (a vmap's level: batching/bind.py)."""
    tag = 0
    batch = None
    tensors = False
    vmap_level = 0
    patterns = False
    for a in args:
        cls = a.__class__
        if cls is Dual:
            if a.tag > tag:
                tag, batch = a.tag, a.batch
        elif cls is batched_class[0]:
            if a.level > vmap_level:
                vmap_level = a.level
        elif cls is pattern_class[0]:
            patterns = True
        elif cls is not _ndarray and cls is not float and isinstance(a, Tensor):
            tensors = True
    if tensors:
        newest = max(tag, vmap_level)
        for a in args:
            if isinstance(a, Tensor) and level_of(a) >= newest:
                return dispatch.bind(op, args, static, tensors_first=True)
    if vmap_level > tag:
        return batch_bind[0](op, args, static, vmap_level)
    if patterns and tag == 0:  # nothing newer than sparsity detection's values (sparsity/bind.py)
        return pattern_bind[0](op, args, static)
    return _bind_level(op, args, static, tag, batch)


batched_class = [None]  # batching/batched.py's Batched, once imported
batch_bind = [None]  # batching/bind.py's bind_level(op, args, static, level)
pattern_class = [None]  # sparsity/pattern.py's Pattern, once imported
pattern_bind = [None]  # sparsity/bind.py's bind_patterns(op, args, static)


_ndarray = np.ndarray
_PLAIN = (np.ndarray, np.float64, np.float32)  # values whose dtype is at hand
_np_add = np.add
_NOT_DIFFERENTIABLE = NOT_DIFFERENTIABLE

dispatch.dual_bind[0] = bind
dispatch.defer_older[0] = defer_older
registry.dual_bind[0] = bind
dispatch.dual_class[0] = Dual
registry.dual_class[0] = Dual
