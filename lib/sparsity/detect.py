"""Sparsity patterns of Jacobians and Hessians: detected by running f once on `Pattern`s
(`sparsity="auto"`), or given by the user (a boolean array or a scipy.sparse matrix), and the
`Compression` each one gets, cached per shape.

A detected pattern is kept per (input shape and dtype, the other arguments' shapes, dtypes and
values): f's code is assumed to take the same path for every value of the differentiated
input, which the `Pattern` values enforce (a branch on them is refused). A closure or global
that f reads and that changes between calls is not seen: pass it as an argument instead.
"""

import hashlib

import numpy as np

from ..core import dnp, nest
from ..core.traced import Traced
from ..forward.dual import Dual
from ..reverse.tensor import Tensor
from .coloring import forward_compression, hessian_compression, reverse_compression
from .pattern import DETECTING, Pattern, Trace, as_rows

MAX_INPUTS = 20000  # the detection holds an (elements, inputs) boolean array per value


def is_sparse_matrix(value):
    return hasattr(value, "tocsr") and hasattr(value, "nnz")


def check_sparsity(sparsity, api):
    """Refuse a `sparsity=` argument that is neither None, "auto", a boolean array nor a
    scipy.sparse matrix, naming what is accepted."""
    if sparsity is None or (isinstance(sparsity, str) and sparsity == "auto") or is_sparse_matrix(sparsity):
        return
    if isinstance(sparsity, str):
        raise ValueError(f"[{api}] sparsity={sparsity!r} is not understood: use sparsity='auto' "
                         "(detected from f), a boolean array or a scipy.sparse matrix, or None.")
    if isinstance(sparsity, np.ndarray) and sparsity.dtype == bool:
        return
    if isinstance(sparsity, np.ndarray):
        raise TypeError(f"[{api}] sparsity= got an array of dtype {sparsity.dtype}; give a boolean "
                        "pattern (e.g. pattern != 0), 'auto', or a scipy.sparse matrix.")
    raise TypeError(f"[{api}] sparsity= got a {type(sparsity).__name__}; use 'auto', a boolean "
                    "array, a scipy.sparse matrix, or None.")


def check_sparse_call(sparsity, sparse_output, argnums, api):
    """Refuse, when the derivative is asked for, a `sparsity=` / `sparse_output=` combination
    that cannot be honoured."""
    check_sparsity(sparsity, api)
    if sparse_output:
        require_scipy(api)
    if sparsity is None:
        raise ValueError(f"[{api}] sparse_output=True needs sparsity= ('auto', or the pattern).")
    if not isinstance(argnums, int) or isinstance(argnums, bool):
        raise ValueError(f"[{api}] sparsity= differentiates one array argument; got argnums={argnums!r}. "
                         "Concatenate the arguments into one array, or use sparsity=None.")


def check_rows(compression, rows, api):
    """The output's size against the pattern's rows (a given pattern of the wrong size, or an
    output whose shape changed with the inputs' values)."""
    if compression.shape[0] != rows:
        raise ValueError(f"[{api}] the sparsity pattern has {compression.shape[0]} output rows, but f "
                         f"returned {rows} elements here; give a pattern of shape ({rows}, inputs), "
                         "or use sparsity=None if f's output size changes with its inputs' values.")


def require_scipy(api):
    try:
        import scipy.sparse  # noqa: F401
    except ImportError:
        raise ImportError(f"[{api}] sparse_output=True returns a scipy.sparse CSR matrix, and scipy "
                          "is not installed: pip install scipy, or use sparse_output=False "
                          "(a dense array).") from None


def given_pattern(sparsity, rows, cols, api, what):
    """A user's pattern as a (rows, cols) boolean matrix (the matrix shape or, for a dense
    array, out.shape + in.shape), or a ValueError naming the shape expected."""
    if is_sparse_matrix(sparsity):
        matrix = sparsity.tocsr()
        if matrix.shape != (rows, cols):
            raise ValueError(f"[{api}] sparsity= has shape {matrix.shape}, but the {what} is "
                             f"{rows}x{cols} (outputs x inputs, flattened in C order).")
        pattern = np.zeros((rows, cols), dtype=bool)
        coo = matrix.tocoo()
        pattern[coo.row, coo.col] = True
        return pattern
    if sparsity.size != rows * cols or sparsity.ndim < 2:
        raise ValueError(f"[{api}] sparsity= has shape {sparsity.shape}, but the {what} is {rows}x{cols} "
                         "(outputs x inputs, flattened in C order, or out.shape + in.shape).")
    return np.reshape(sparsity, (rows, cols))


def _rows_of(sparsity, n, api):
    """How many output rows a given Jacobian pattern has (its size over the input size)."""
    rows, left = divmod(int(np.prod(sparsity.shape)), max(n, 1))
    if left or (is_sparse_matrix(sparsity) and sparsity.shape[1] != n):
        raise ValueError(f"[{api}] sparsity= has shape {sparsity.shape}, which is not (outputs, {n}) "
                         "for this input.")
    return rows


def detect(f, args, argnum, kwargs, api, second_order):
    """Run f once with args[argnum] a Pattern: (output shape, Jacobian pattern (m, n), Hessian
    pattern (n, n) or None)."""
    x = np.asarray(args[argnum])
    n = x.size
    if n > MAX_INPUTS:
        raise ValueError(f"[{api}] sparsity='auto' on an input of {n} elements would hold an "
                         f"(elements x {n}) boolean array per value; give the pattern yourself "
                         f"(sparsity=a scipy.sparse matrix), or split the input.")
    trace = Trace(n, second_order, api)
    start = Pattern(x, np.eye(n, dtype=bool).reshape(x.shape + (n,)), trace)
    full = list(args)
    full[argnum] = start
    DETECTING[0] += 1
    try:
        out = f(*full, **kwargs)
    finally:
        DETECTING[0] -= 1
    if second_order and isinstance(out, tuple) and len(out) == 2:  # has_aux: (value, aux)
        out = out[0]
    if nest.is_pytree_node(out):
        raise TypeError(f"[{api}] sparsity= needs f to return one array, got a "
                        f"{type(out).__name__}; use sparsity=None for nested outputs.")
    out = _innermost(out)
    shape = tuple(np.shape(out._value if out.__class__ is Pattern else out))
    m = int(np.prod(shape))
    if isinstance(out, Traced) and out.__class__ is not Pattern:  # not followed: be safe
        return shape, np.ones((m, n), dtype=bool), None if not second_order else np.ones((n, n), dtype=bool)
    deps = out.deps if out.__class__ is Pattern else None
    jacobian = np.zeros((m, n), dtype=bool) if deps is None else np.array(as_rows(deps, n))
    return shape, jacobian, trace.interactions


def _innermost(out):
    """The Pattern under f's result: a tape's tensor or a dual number of an enclosing transform
    holds it as its value (their derivatives take the same paths as the values)."""
    while isinstance(out, Traced) and out.__class__ is not Pattern:
        if isinstance(out, Dual):
            out = out.primal
        elif isinstance(out, Tensor):
            out = out._value
        else:
            return out
    return out


def _key_part(value):
    """What a call's other argument contributes to the cache key: shape, dtype and the bytes'
    digest for arrays, the value for scalars, the parts of tuples, lists and dicts; any other
    object makes a key of its own (its contents could change under the same id)."""
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.dtype.str, hashlib.blake2b(np.ascontiguousarray(value).view(np.uint8),
                                                                       digest_size=16).digest())
    if isinstance(value, (int, float, complex, str, bool, bytes, type(None), np.generic)):
        return (type(value).__name__, value)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__,) + tuple(_key_part(v) for v in value)
    if isinstance(value, dict):
        return ("dict",) + tuple((repr(k), _key_part(v)) for k, v in value.items())
    return ("object", object())  # not comparable by value: never reused (detected again)


def cache_key(args, argnum, kwargs):
    x = args[argnum]
    return (np.shape(x), np.asarray(x).dtype.str, argnum,
            tuple(_key_part(a) for i, a in enumerate(args) if i != argnum),
            tuple(sorted((k, _key_part(v)) for k, v in kwargs.items())))


class Plans:
    """The compressions of one differentiated function, per call key (see `cache_key`)."""

    def __init__(self, f, kind, sparsity, api):
        self.f, self.kind, self.sparsity, self.api = f, kind, sparsity, api
        self.auto = isinstance(sparsity, str)  # detected: f runs on the arguments' plain values
        self.plans = {}

    def plan(self, args, argnum, kwargs, out_size=None):
        """(output shape or None, Compression) for this call (plain `args` and `kwargs` when
        `auto`; a given pattern reads only the input's shape)."""
        auto = self.auto
        key = cache_key(args, argnum, kwargs) if auto else (tuple(dnp.shape(args[argnum])), out_size)
        found = self.plans.get(key)
        if found is not None:
            return found
        n = int(np.prod(dnp.shape(args[argnum])))
        if not auto and self.kind != "hessian" and out_size is None:
            out_size = _rows_of(self.sparsity, n, self.api)
        if self.kind == "hessian":
            if auto:
                shape, _, pattern = detect(self.f, args, argnum, kwargs, self.api, True)
            else:
                shape, pattern = None, given_pattern(self.sparsity, n, n, self.api, "Hessian")
            compression = hessian_compression(pattern)
        else:
            if auto:
                shape, pattern, _ = detect(self.f, args, argnum, kwargs, self.api, False)
            else:
                shape, pattern = None, given_pattern(self.sparsity, out_size, n, self.api, "jacobian")
            compression = (forward_compression if self.kind == "jacfwd" else reverse_compression)(pattern)
        if len(self.plans) > 64:  # many shapes or constants: keep the newest
            self.plans.clear()
        self.plans[key] = (shape, compression)
        return shape, compression
