"""What the functional API takes and returns: inputs checked and made arrays, tangents
checked against their primals, flat and nested structures."""

import linecache
import math

import numpy as np

from ..core import dnp, nest
from ..core.errors import RefusalError
from ..core.duck import as_array, is_duck_array, primal_of
from ..core.traced import Traced
from ..forward.dual import Dual as _Dual
from ..reverse.dispatch import STATE
from ..reverse.tensor import EagerTensor as _EagerTensor
from ..reverse.tensor import Tensor, escape_error, plain_value

# -- inputs and outputs -----------------------------------------------------------------------

def as_input(x, api, what):
    """A differentiable input: traced values pass through, the rest become float arrays."""
    if x.__class__ is _ndarray and x.dtype.kind == "f":  # the common case, as is
        return x
    if isinstance(x, Traced):
        dtype = dnp.result_dtype(x)
    else:
        x = as_array(x)  # a dask array stays lazy
        dtype = x.dtype
    if dtype.kind not in "fc":
        raise TypeError(f"[{api}] {what} has dtype {dtype}, but only floating inputs can be "
                        f"differentiated. Cast it first, e.g. np.asarray(x, dtype=float).")
    return x


def as_output(x):
    cls = x.__class__
    if cls is _ndarray:
        return x
    if cls is _float64:
        return np.asarray(x)  # a scalar output as a 0-d array
    return x if isinstance(x, Traced) else as_array(x)


def zero_tangent(x):
    value = primal_of(x)
    if is_duck_array(value):
        return np.zeros_like(value)  # lazy, in the duck array's library
    return np.zeros(tuple(dnp.shape(x)), dtype=dnp.result_dtype(x))


def check_tangent(t, p, api, batch=None):
    if (batch is None and t.__class__ is _ndarray and p.__class__ is _ndarray
            and t.dtype == p.dtype and t.shape == p.shape):
        return t  # what np.asarray(t, dtype=p.dtype) gives, already checked
    t_dtype, p_dtype = dnp.result_dtype(t), dnp.result_dtype(p)
    if (t_dtype.kind == "c") != (p_dtype.kind == "c"):
        raise TypeError(f"[{api}] primal and tangent arguments do not match: a primal of dtype "
                        f"{p_dtype} needs a tangent of dtype {p_dtype}, got {t_dtype} (as JAX, "
                        "a complex primal has complex tangents and a real one real tangents). "
                        "Cast the tangent to the primal's dtype.")
    if not isinstance(t, Traced):
        t = as_array(t, dtype=dnp.result_dtype(p))
    expected = tuple(dnp.shape(p)) if batch is None else (batch,) + tuple(dnp.shape(p))
    if tuple(dnp.shape(t)) != expected:
        raise ValueError(f"[{api}] tangent of shape {tuple(dnp.shape(t))} does not match its "
                         f"primal's shape {tuple(dnp.shape(p))}. Give one tangent per primal, "
                         "with the same structure and shapes.")
    return t


_ndarray = np.ndarray
_float64 = np.float64
_is_node = nest.is_pytree_node  # JAX's pytrees: dataclasses, registered classes, None as empty


def flatten(structure):
    """nest.tree_flatten, without its walk for tuples and lists (nested too) of leaves (the
    common calls: a tuple of arguments, a list holding a tuple of parameters)."""
    if structure.__class__ is tuple or structure.__class__ is list:
        if _plain(structure):
            out = []
            _plain_leaves(structure, out)
            return out
    return nest.tree_flatten(structure)


def pack(structure, flat):
    """nest.tree_unflatten, without its walk for tuples and lists (nested too) of leaves."""
    if structure.__class__ is tuple or structure.__class__ is list:
        if _plain(structure):
            return _plain_build(structure, iter(flat))
    return nest.tree_unflatten(structure, flat)


def _plain(structure):
    """True for a tuple or list (not a namedtuple) whose items are leaves or such sequences."""
    for leaf in structure:
        cls = leaf.__class__
        if cls is tuple or cls is list:
            if not _plain(leaf):
                return False
        elif cls is not _ndarray and _is_node(leaf):
            return False
    return True


def _plain_leaves(structure, out):
    for leaf in structure:
        if leaf.__class__ is tuple or leaf.__class__ is list:
            _plain_leaves(leaf, out)
        else:
            out.append(leaf)


def _plain_build(structure, flat):
    return structure.__class__([_plain_build(leaf, flat) if leaf.__class__ is tuple or leaf.__class__ is list
                                else next(flat) for leaf in structure])


def sparse_argument(args, argnums, api):
    """(its position, the one array argument) that `api(f, sparsity=...)` differentiates, or a
    clear error for a nested one."""
    position = checked_argnums(argnums, len(args), api)[0]
    x = args[position]
    if nest.is_pytree_node(x):
        raise TypeError(f"[{api}] sparsity= differentiates one array, got a {type(x).__name__}; "
                        "use sparsity=None for nested arguments.")
    return position, x


def checked_argnums(argnums, nargs, api):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -nargs <= i < nargs:
            raise ValueError(f"[{api}] argnums={argnums!r} but the function got {nargs} "
                             "positional arguments.")
    return tuple(i % nargs for i in nums)

def seen_outside(t):
    """True when an enclosing tape or accumulator traces tensor `t` (it must stay wrapped)."""
    if not STATE.tapes and not STATE.accumulators:
        return False
    return any(t._id in tape._watched for tape in STATE.tapes) or any(
        acc._tracks(t) for acc in STATE.accumulators)


def unwrap(x):
    """A gradient or output as the caller sees it: arrays at top level, traced inside."""
    if x.__class__ is _EagerTensor and not STATE.tapes and not STATE.accumulators:
        value = x._value  # the common case: nothing outside traces it
        if value.__class__ is _ndarray:
            return value
    if isinstance(x, Tensor) and not seen_outside(x):
        x = x._value  # this level's wrapper; what an outer level traces lies inside it
    return as_output(x)


def unwrap_aux(aux):
    """`has_aux`'s aux as JAX returns it: unchanged, but traced values inside as plain values
    (a string stays a string; an array computed from the inputs comes back without tracing)."""
    return nest.tree_map(lambda leaf: unwrap(leaf) if isinstance(leaf, Traced) else leaf, aux)


def split_aux(out, api):
    """f's (output, aux) pair under has_aux=True, or a clear error."""
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"[{api}] has_aux=True needs f to return a pair (output, aux), got "
                        f"{type(out).__name__}. Return `value, aux` from f, or drop has_aux.")
    return out[0], out[1]


def element_write_refusal(error, api):
    """The RefusalError for `out[i] = value` of a traced value into a NumPy array, or None.

    NumPy converts the value with float(), which refuses (tensor.py, dual.py), but a tensor
    has __getitem__, so NumPy replaces that refusal with its own ValueError ('setting an
    array element with a sequence'), the refusal as its cause. Given back here, at the
    transform's boundary, with the line of the write."""
    cause = error.__cause__ or error.__context__
    if not isinstance(cause, RefusalError) or "array element with a sequence" not in str(error):
        return None
    tb = error.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next  # the frame NumPy raised in: the user's line with the write
    code = tb.tb_frame.f_code
    source = linecache.getline(code.co_filename, tb.tb_lineno).strip()
    where = f"{code.co_filename}, line {tb.tb_lineno}" + (f": {source}" if source else "")
    return escape_error(api, f"float() in a write into a NumPy array (out[i] = value, at {where})")


def at_top_level(values):
    """True outside every transform and tape, with no traced value among `values`."""
    if STATE.tapes or STATE.accumulators:
        return False
    for v in flatten(list(values)):
        if isinstance(v, Traced):
            return False
    return True


def check_scalar(out, api, holomorphic=False):
    """f's output for grad, value_and_grad, hessian and hvp: one real floating number (as JAX
    requires), or a TypeError naming what f returned and the likely fix."""
    value = getattr(out, "_value", None)
    if ((value.__class__ is _ndarray or value.__class__ is _float64) and value.size == 1
            and value.dtype.kind == "f" and not holomorphic):
        return  # a tensor holding one float (the common case)
    _check_leaf(out, api, "a scalar")
    kind = dnp.result_dtype(out).kind
    if kind == "c" or holomorphic:
        check_output_kinds([out], api, holomorphic)
    if kind not in "fc":
        raise TypeError(f"[{api}] f must return a real floating scalar, got {_described(out)}. "
                        f"{api} differentiates a real number; compute the output in floats "
                        "(x.astype(float), or a float operation such as np.mean).")
    if math.prod(dnp.shape(out)) != 1:
        raise TypeError(f"[{api}] f must return a scalar, got shape {tuple(dnp.shape(out))}. "
                        "Use jacrev / jacfwd for vector outputs, or vjp.")


def check_outputs(out, api, leaves=None):
    """f's output for vjp, jvp, linearize, jacfwd and jacrev: arrays or pytrees of them (as
    before), but not None, strings or booleans, which have no derivative. `leaves`: the
    output's, when the caller has them already."""
    if out is None:
        _check_leaf(out, api, "arrays (or a pytree of them)")
    for leaf in nest.tree_flatten(out) if leaves is None else leaves:
        cls = leaf.__class__
        value = leaf._value if cls is _EagerTensor else leaf.primal if cls is _Dual else leaf
        if (value.__class__ is _ndarray or value.__class__ is _float64) and value.dtype.kind in "fciu":
            continue  # the common cases
        _check_leaf(leaf, api, "arrays (or a pytree of them)")


def _described(x):
    """What f returned, for an error message: its type, and dtype and shape for arrays."""
    if isinstance(x, Traced):
        return f"a traced array of dtype {dnp.result_dtype(x)} and shape {tuple(dnp.shape(x))}"
    dtype = getattr(x, "dtype", None)
    if isinstance(dtype, np.dtype):
        return f"{type(x).__name__} of dtype {dtype} and shape {tuple(np.shape(x))}"
    return f"{type(x).__name__} {_short(x)}"


def _short(x):
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_leaf(x, api, needed):
    """A TypeError for an output with no derivative: None, a container, a string, a bool."""
    if x is None:
        raise TypeError(f"[{api}] f returned None, but {api} needs {needed}: is a `return` "
                        "missing at the end of f?")
    if x.__class__ is tuple or x.__class__ is list:
        if needed == "a scalar":
            hint = (" If f returns (loss, something else), pass has_aux=True: the first item is "
                    "differentiated, the second comes back as it is." if len(x) == 2 else
                    " Return one scalar (np.sum / np.mean of the items, or one of them).")
            raise TypeError(f"[{api}] f must return a scalar, got a {type(x).__name__} of "
                            f"{len(x)} item{'' if len(x) == 1 else 's'}.{hint}")
        return  # a pytree node: its leaves are checked
    if isinstance(x, (str, bytes)):
        raise TypeError(f"[{api}] f returned {_described(x)}, but {api} needs {needed}: a "
                        "string has no derivative. Return the number computed from the inputs.")
    if isinstance(x, Traced):
        kind = dnp.result_dtype(x).kind
    else:
        if not isinstance(x, (np.ndarray, np.generic, int, float, complex)) and not is_duck_array(x):
            raise TypeError(f"[{api}] f returned {_described(x)}, but {api} needs {needed}. "
                            "Return NumPy arrays or numbers computed from the inputs.")
        kind = dnp.result_dtype(x).kind
    if kind == "b":
        raise TypeError(f"[{api}] f returned {_described(x)}: a boolean (a comparison, np.allclose, "
                        f"np.isclose) has no derivative, and {api} needs {needed} of floats. "
                        "Return the float quantity the test compares, e.g. np.sum((a - b) ** 2).")
    if kind in "USOV":
        raise TypeError(f"[{api}] f returned {_described(x)}, but {api} needs {needed} of floats. "
                        "Return NumPy arrays or numbers computed from the inputs.")


# -- complex values: JAX's rules for which transform takes them --------------------------------

def check_input_kinds(leaves, api, holomorphic):
    """JAX's checks on the differentiated inputs: with holomorphic=True they must be complex;
    without it, jacfwd (and hessian, its outer level) takes real inputs only, a complex input
    having no complex-linear basis direction for a non-holomorphic f."""
    for leaf in leaves:
        dtype = dnp.result_dtype(leaf)
        if holomorphic and dtype.kind != "c":
            raise TypeError(f"[{api}] {api} with holomorphic=True requires inputs with complex "
                            f"dtype, but got {dtype}. Pass complex inputs (x.astype(complex)), "
                            "or drop holomorphic=True for a real input.")
        if not holomorphic and api in ("jacfwd", "hessian") and dtype.kind == "c":
            raise TypeError(f"[{api}] jacfwd requires real-valued inputs (input dtype that is a "
                            f"sub-dtype of np.floating), but got {dtype}. For holomorphic "
                            "differentiation, pass holomorphic=True. For differentiation of "
                            "non-holomorphic functions involving complex inputs or integer "
                            "inputs, use jvp directly.")


def check_output_kinds(leaves, api, holomorphic):
    """JAX's checks on f's outputs: complex with holomorphic=True; real otherwise for grad and
    jacrev (a complex output's gradient needs a cotangent, which vjp takes)."""
    for leaf in leaves:
        dtype = dnp.result_dtype(leaf)
        if holomorphic and dtype.kind != "c":
            raise TypeError(f"[{api}] {api} with holomorphic=True requires outputs with complex "
                            f"dtype, but got {dtype}. Drop holomorphic=True for a real-valued f.")
        if not holomorphic and dtype.kind == "c":
            raise TypeError(f"[{api}] {api} requires real-valued outputs (output dtype that is a "
                            f"sub-dtype of np.floating), but got {dtype}. For holomorphic "
                            "differentiation, pass holomorphic=True. For differentiation of "
                            "non-holomorphic functions involving complex outputs, use vjp "
                            "directly.")


def check_cotangent_kind(cotangent, output, api):
    """A vjp cotangent is complex exactly when its output is (JAX's rule)."""
    c_dtype, o_dtype = dnp.result_dtype(cotangent), dnp.result_dtype(output)
    if (c_dtype.kind == "c") != (o_dtype.kind == "c"):
        raise ValueError(f"[{api}] a cotangent of dtype {c_dtype} for an output of dtype "
                         f"{o_dtype}: a complex output needs a complex cotangent, a real one a "
                         "real cotangent (as JAX). Cast the cotangent to the output's dtype.")


def plain_arguments(values, api):
    """A call's arguments (a tuple, or a dict of keyword arguments) with each traced leaf as its
    plain value: what sparsity detection runs f on (it is the outermost level, see sparsity/)."""
    try:
        return nest.tree_map(lambda leaf: plain_value(leaf) if isinstance(leaf, Traced) else leaf, values)
    except RefusalError as error:  # a vmap's values: one per example
        raise RefusalError(f"[{api}] sparsity= detects the pattern on the arguments' values, and one of "
                           "them has no single value here (it is batched by vmap). Give the pattern "
                           "(sparsity=a boolean array), or use sparsity=None inside vmap.") from error


def plan_arguments(auto, args, kwargs, api):
    """(args, kwargs) as a sparsity plan reads them: plain values when the pattern is detected
    (`auto`) and some are traced; as they are otherwise (a given pattern reads only shapes)."""
    if not auto:
        return args, kwargs
    plain_args = args if at_top_level(args) else plain_arguments(args, api)
    return plain_args, (plain_arguments(kwargs, api) if kwargs else kwargs)
