"""NumPy's in-place operations on the functional API's traced values.

On a NumPy array, `a += b` changes the array itself, so every name bound to it sees the new
value: `a4 = a3; a3 += a3` doubles `a4` too. Tensors (TF's semantics) and dual numbers are
immutable, so Python used to rebind `a3` alone, and f's value and derivatives silently
differed from the NumPy program's. Under NumPy's semantics (the functional API's tapes and
dual numbers, see `numpy_semantics`), an in-place operation (`+=`, `-=`, `*=`, `/=`, `**=`,
`//=`, `%=`, `@=`, and a ufunc's `out=`) updates the traced object itself: it takes the
result's value and its tape node (a tensor's id) or tangent (a dual number's), so every
name holding the object sees the update. A NumPy scalar (np.sum's np.float64, x[0] of a
vector) is immutable in NumPy, so `p += q` on one rebinds `p` alone, as it does here. Where
that cannot be what NumPy does, it is refused (`RefusalError`):

- the object is an array argument of f (or an outer transform's value): NumPy would write
  into the caller's array. (An argument passed as a Python number is rebound, as Python
  does with numbers.)
- the object is a view of another traced array (`v = a[1:]; v += 1` writes into `a` in
  NumPy), or has live views (`v = a[1:]; a += 1` changes `v`). Views are noted as ops make
  them (`note_view`, from dispatch.bind and dual.py): an op's result whose memory is an
  argument's.
- the result does not fit: a broadcast shape larger than the target's (NumPy's ValueError),
  a float result into an integer target (NumPy's casting error), or a newer transform's
  value written into an older one's.

A user's GradientTape keeps TF's semantics (`t += 1` rebinds; other names keep the old
tensor), as do Variables.
"""

import operator
import weakref

import numpy as np

from ..core import dnp
from ..core.duck import primal_of  # (a vmap's value stays batched: _checks refuses it)
from ..core.errors import RefusalError
from ..core.registry import Traced
from ..core.traced import ARGUMENTS, RULES_ON_TENSORS
from ..reverse import dispatch
from ..reverse.dispatch import STATE
from ..reverse.tensor import EagerTensor
from .dual import Dual, plain_out_refusal

# -- which values follow NumPy's semantics -------------------------------------------------------

def numpy_semantics(tensor):
    """True when `tensor` lives under NumPy's semantics (the functional API: the innermost
    recording tape is one of its private tapes, or the tensor holds a dual number), False
    under TF's (a user's GradientTape, or no tape)."""
    value = tensor._value
    if value.__class__ is not np.ndarray and isinstance(value, Traced):
        return True
    if RULES_ON_TENSORS[0]:  # rules running on tensors (core/traced.py)
        return True
    tapes = STATE.tapes
    return bool(tapes) and getattr(tapes[-1], "_escape_api", None) is not None


# id(traced input object) -> True for an array (refused), False for a Python number (rebound):
# the arguments of the running functional transforms (each held alive while registered; kept by
# core/traced.py, where dualtape.transforms reads it too)
_ARGUMENTS = ARGUMENTS


def enter_arguments(objects, originals):
    """While f runs: `objects` (the traced inputs a transform made) are f's arguments, made
    from the caller's `originals` (numbers are rebound by `x += 1`, arrays refused). Returns
    the keys to give `leave_arguments` when f is done (in a `finally`)."""
    keys = []
    for obj, original in zip(objects, originals):
        key = id(obj)
        if key not in _ARGUMENTS:  # an outer transform's number argument stays a number
            cls = original.__class__
            if cls is _ndarray:
                _ARGUMENTS[key] = True  # the common case: the caller's array
            elif cls is float:
                _ARGUMENTS[key] = False
            else:
                _ARGUMENTS[key] = (not isinstance(original, (int, float, np.generic))
                                   and _ARGUMENTS.get(id(original)) is not False)
            keys.append(key)
    return keys


def leave_arguments(keys):
    for key in keys:
        _ARGUMENTS.pop(key, None)
    if not _ARGUMENTS and len(_VIEWS) > 1:
        _forget_views()  # the outermost f returned: its views are gone or never written


class arguments:
    """`enter_arguments` and `leave_arguments` as a with block."""

    __slots__ = ("keys",)

    def __init__(self, objects, originals):
        self.keys = enter_arguments(objects, originals)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        leave_arguments(self.keys)
        return False


# -- views ---------------------------------------------------------------------------------------

# id(memory owner) -> weak references to the live traced values whose arrays share that memory,
# as NumPy's views and the arrays they view do: the first the value an op took a view of, the
# rest the views. Emptied when the outermost transform's f returns (`arguments`), and pruned
# of dead references as it grows, so a long loop of views stays bounded. (The sentinel entry
# keeps the dict tracked by the cyclic collector for good: otherwise each collection untracks
# it and the next view tracks it again, an object test_no_cycles would count as left over.)
_SENTINEL = []
_VIEWS = {0: _SENTINEL}
_ref = weakref.ref
_ndarray = np.ndarray


def _owner(array):
    base = array.base
    return array if base is None else base


def note_view(ans, values, args, out):
    """Called by the engines when an op's result `ans` (held by the traced value `out`) may
    share memory with an argument (it has a base, or is the first argument itself): the
    argument's traced value and `out` are noted under the memory's owner."""
    base = ans.base
    v = values[0]  # the common case: a view of the first argument (x[1:], x.T, x.reshape)
    if v.__class__ is not _ndarray or not (v is ans or (base is not None and (v is base or v.base is base))):
        for i in range(1, len(values)):
            v = values[i]
            if v.__class__ is _ndarray and (v is ans or (base is not None and (v is base or v.base is base))):
                break
        else:
            return  # a view of the op's own temporary (np.cov's result): nothing traced shares it
        args = args[i:]
    a = args[0]
    owns = v.base is None  # v is the memory's owner, else a view of it
    key = id(v if owns else v.base)
    refs = _VIEWS.get(key)
    if refs is None:
        if len(_VIEWS) >= _LIMIT[0]:
            _prune_all()
        if not isinstance(a, Traced):
            _VIEWS[key] = [_DEAD, _ref(out)]
        else:  # a holds the owner (first), or a view of an owner nothing traced holds
            _VIEWS[key] = [_ref(a), _ref(out)] if owns else [_DEAD, _ref(a), _ref(out)]
        return
    if owns and refs[0]() is not a and isinstance(a, Traced) and not any(r() is a for r in refs):
        refs.append(_ref(a))  # another value holding the owner (views of views are noted)
    refs.append(_ref(out))
    n = len(refs)
    if n >= 64 and not n & (n - 1):  # at each power of two: drop the dead views
        refs[1:] = [r for r in refs[1:] if r() is not None]


class _Dead:
    __slots__ = ("__weakref__",)


_DEAD = _ref(_Dead())  # a reference to nothing: an owner whose first value is a plain array
_LIMIT = [1024]


def _prune_all():
    for key in [k for k, refs in _VIEWS.items() if k and not any(r() is not None for r in refs)]:
        del _VIEWS[key]
    _LIMIT[0] = max(1024, 2 * len(_VIEWS))


def _forget_views():
    _VIEWS.clear()
    _VIEWS[0] = _SENTINEL
    _LIMIT[0] = 1024


def _view_refusal(target, what):
    """Why updating `target` in place cannot follow NumPy, when another live traced value
    shares its memory (NumPy would change that one too), else None."""
    array = primal_of(target)
    if array.__class__ is not np.ndarray:
        return None
    owner = _owner(array)
    refs = _VIEWS.get(id(owner))
    if not refs:
        return None
    for ref in refs:
        other = ref()
        if other is None or other is target:
            continue
        plain = primal_of(other)
        if plain.__class__ is np.ndarray and _owner(plain) is owner:
            return (f"{what} updates an array that shares its memory with another live value (a "
                    f"slice, reshape or transpose of it, or the array it is one of, of shape "
                    f"{plain.shape}): NumPy would change that one too, which a traced value cannot do")
    return None


# -- the update ----------------------------------------------------------------------------------

def _refuse(reason, symbol):
    fix = f"a = a {symbol} b" if symbol else "a = np.add(a, b) (the result, without out=)"
    return RefusalError(f"[in-place {symbol or 'out='}] {reason}. Fix: write it as a new value, {fix}, "
                        "and use that name from there on; or keep the NumPy code as it is and "
                        "differentiate it with dualtape.transforms, which reads it as written.")


def update(target, new, symbol):
    """Make `target` (a tensor or dual number) hold `new`, NumPy's `target[...] = new`."""
    shape, new_shape = tuple(target.shape), tuple(dnp.shape(new))
    if new_shape != shape:
        try:
            fits = np.broadcast_shapes(new_shape, shape) == shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"non-broadcastable output operand with shape {shape} doesn't match "
                             f"the broadcast shape {new_shape} (in-place {symbol or 'out='} on a traced value)")
        new = dnp.broadcast_to(new, shape)
    dtype, new_dtype = dnp.result_dtype(target), dnp.result_dtype(new)
    if new_dtype != dtype:
        if not np.can_cast(new_dtype, dtype, "same_kind"):
            raise TypeError(f"Cannot cast ufunc output from {new_dtype!r} to {dtype!r} with casting "
                            f"rule 'same_kind' (in-place {symbol or 'out='} on a traced value)")
        new = dnp.cast(new, dtype)
    if target.__class__ is EagerTensor:
        if new.__class__ is not EagerTensor:
            raise _refuse("its result belongs to another transform than its target (a value of "
                          "a newer transform written into an older one's)", symbol)
        target._value, target._id = new._value, new._id
        return target
    if new.__class__ is Dual:
        if new.tag != target.tag or new.batch != target.batch:
            raise _refuse("its result belongs to another transform than its target (a value of "
                          "a newer transform written into an older one's)", symbol)
        target.primal, target.tangent = new.primal, new.tangent
        return target
    if isinstance(new, Traced):
        raise _refuse("its result belongs to another transform than its target", symbol)
    zero = np.zeros(shape, dtype)  # a result with no derivative (x //= 2): a zero tangent
    target.primal = new
    target.tangent = zero if target.batch is None else np.broadcast_to(zero, (target.batch,) + shape)
    return target


def _checks(target, symbol):
    """NotImplemented when Python should rebind (TF's semantics, a number argument), a
    refusal when NumPy's in-place update cannot be followed, else None."""
    if target.__class__ is EagerTensor:
        if not numpy_semantics(target):
            return NotImplemented
    elif target.__class__ is not Dual:
        return NotImplemented  # a Variable: TF's semantics
    plain = primal_of(target)
    if plain.__class__ is not np.ndarray:
        if getattr(plain, "batch_size", None) is not None and plain.ndim:
            raise _refuse("updates a value that vmap batches in place: which other values share its "
                          "memory, as NumPy's semantics need, cannot be followed for each example", symbol)
        return NotImplemented  # a NumPy scalar (np.sum's np.float64, or each example's) or a number: rebound
    argument = _ARGUMENTS.get(id(target))
    if argument is False:
        return NotImplemented  # a Python number argument: numbers are rebound
    what = f"a {symbol}= b" if symbol else "out="
    if argument:
        raise _refuse(f"{what} writes into an argument of the differentiated function: NumPy "
                      "would change the caller's array, which stays read-only while it is "
                      "differentiated", symbol)
    reason = _view_refusal(target, what)
    if reason is not None:
        raise _refuse(reason, symbol)
    return None


def _inplace(binary, symbol):
    def method(self, other):
        checked = _checks(self, symbol)
        if checked is not None:
            return checked
        return update(self, binary(self, other), symbol)

    method.__name__ = f"__i{binary.__name__.strip('_')}__"
    return method


_OPERATORS = {"add": (operator.add, "+"), "sub": (operator.sub, "-"), "mul": (operator.mul, "*"),
              "truediv": (operator.truediv, "/"), "pow": (operator.pow, "**"),
              "floordiv": (operator.floordiv, "//"), "mod": (operator.mod, "%"),
              "matmul": (operator.matmul, "@")}

for _name, (_fn, _symbol) in _OPERATORS.items():
    setattr(EagerTensor, f"__i{_name}__", _inplace(_fn, _symbol))
    setattr(Dual, f"__i{_name}__", _inplace(_fn, _symbol))


# -- out= ----------------------------------------------------------------------------------------

def ufunc_out(ufunc, method, inputs, kwargs, live):
    """A ufunc called with `out=` on traced values (a += b on a NumPy array a and a traced b
    calls np.add(a, b, out=(a,))); NotImplemented to leave it to the caller's path.
    live(x): whether x is a value being differentiated."""
    out = kwargs["out"]
    targets = out if isinstance(out, tuple) else (out,)
    name = ufunc.__name__ + ("" if method == "__call__" else "." + method)
    traced_in = [x for x in inputs if live(x)]
    if len(targets) == 1 and isinstance(targets[0], np.ndarray) and traced_in:
        raise plain_out_refusal(name, targets[0])
    if len(targets) != 1 or not isinstance(targets[0], (EagerTensor, Dual)) or method != "__call__":
        return NotImplemented
    target = targets[0]
    fn = dnp.NUMPY_DISPATCH.get(ufunc)
    extra = sorted(k for k in kwargs if k != "out")
    if fn is None or extra:
        if not (traced_in or live(target)):
            return NotImplemented
        raise RefusalError(f"[np.{name}] out= into a traced value is supported for ufuncs dualtape "
                           f"differentiates, without other keywords (got {extra or 'no rule'}). "
                           f"Fix: y = np.{ufunc.__name__}(a, b) without out=.")
    checked = _checks(target, "")
    if checked is NotImplemented:
        return NotImplemented
    return update(target, fn(*inputs), "")


dispatch.note_view[0] = note_view


def _dual_array_ufunc(original):
    dispatch_get = dnp.NUMPY_DISPATCH.get  # (the dict is filled in place, never rebound)

    def array_ufunc(self, ufunc, method, *inputs, **kwargs):
        if not kwargs and method == "__call__":  # the common call: dual.py's path, one call fewer
            fn = dispatch_get(ufunc)
            if fn is not None:
                return fn(*inputs)
        elif "out" in kwargs:
            result = ufunc_out(ufunc, method, inputs, kwargs, lambda x: isinstance(x, Traced))
            if result is not NotImplemented:
                return result
        return original(self, ufunc, method, *inputs, **kwargs)

    return array_ufunc


Dual.__array_ufunc__ = _dual_array_ufunc(Dual.__array_ufunc__)
