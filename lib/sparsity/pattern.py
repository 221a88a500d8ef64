"""`Pattern`: a value that carries, beside its NumPy value, which inputs each element depends on.

Running `f` once on a `Pattern` gives the sparsity of its Jacobian (`deps`: a boolean array of
shape `value.shape + (n,)`, True where element e of the value may depend on input j) and, for
a scalar f, of its Hessian (`Trace.interactions`: the pairs of inputs some nonlinear op
couples). Every registry op on a `Pattern` runs on the values, and the op's pattern rule
(rules.py) gives the result's `deps`; an op without a rule makes every output element depend
on every input element of its arguments, which is always safe.

The patterns hold for every value of the inputs of the same shapes: where f's path depends on
the values (a Python `if` on a traced value, `float()`, an index computed from the inputs), the
conversion is refused, or the op's result made dense, never guessed from this one point.
"""

import numpy as np

from ..core import dnp
from ..core.errors import RefusalError
from ..core.array_like import ArrayLike
from ..forward.dual import install_numpy_protocols, install_operators


DETECTING = [0]  # > 0 while a detection runs f (custom-derivative functions then look for Patterns)


class Trace:
    """One detection: the number of inputs, and (for Hessians) the pairs of inputs that a
    nonlinear op couples, accumulated over the whole run (a superset of the Hessian's pattern:
    every second derivative of f is a sum, over the ops, of an op's second derivative taken
    through the first-order dependencies of its inputs)."""

    __slots__ = ("n", "interactions", "api")

    def __init__(self, n, second_order, api):
        self.n = n
        self.interactions = np.zeros((n, n), dtype=bool) if second_order else None
        self.api = api

    def couple(self, left, right):
        """Record that every input in a row of `left` may interact with every input in the same
        row of `right` (both of shape (rows, n)), symmetrically."""
        if self.interactions is None:
            return
        left = np.reshape(left, (-1, self.n))
        right = np.reshape(right, (-1, self.n))
        first, second = row_pairs(left, right)
        if first is None:  # too many pairs to list: every input of left with every one of right (a superset)
            first, second = np.ix_(np.flatnonzero(left.any(axis=0)), np.flatnonzero(right.any(axis=0)))
        self.interactions[first, second] = True
        self.interactions[second, first] = True


PAIR_LIMIT = 20_000_000  # pairs listed one by one; past it, coupling the unions is cheaper (and safe)


def row_pairs(left, right):
    """(i, j) index arrays of every pair with left[r, i] and right[r, j] for some row r, or
    (None, None) when there are more than PAIR_LIMIT of them (a join on the row, in NumPy)."""
    left_rows, left_cols = np.nonzero(left)
    right_rows, right_cols = np.nonzero(right)  # row-major: sorted by row
    per_row = np.bincount(right_rows, minlength=len(right))
    starts = np.cumsum(per_row) - per_row
    repeats = per_row[left_rows]
    total = int(repeats.sum())
    if total > PAIR_LIMIT:
        return None, None
    first = np.repeat(left_cols, repeats)
    within = np.arange(total) - np.repeat(np.cumsum(repeats) - repeats, repeats)
    second = right_cols[np.repeat(starts[left_rows], repeats) + within]
    return first, second


class Pattern(ArrayLike):
    """A value of the function under sparsity detection: `_value` (its NumPy value at the
    point given), `deps` (None when it depends on no input, else a boolean array of shape
    `primal.shape + (n,)`) and the `trace` it belongs to. A value computed from the inputs
    through non-differentiable ops (`x > 0`) has `deps` None but stays a `Pattern`: it still
    depends on the inputs' values, which matters where it is used as an index."""

    __slots__ = ("_value", "deps", "_trace")
    __array_priority__ = 250

    def __init__(self, value, deps, trace):
        self._value = value
        self.deps = deps
        self._trace = trace

    @property
    def primal(self):
        """Refused: the value is one point's, and the pattern must hold at every point (dualtape's
        conversions to plain values, such as plain_value, walk here)."""
        self._refuse("a conversion to a plain value")

    @property
    def shape(self):
        return np.shape(self._value)

    @property
    def dtype(self):
        return dnp.result_dtype(self._value)

    def __setitem__(self, index, value):
        raise RefusalError(f"[{self._trace.api}] a traced value cannot be written into (t[{index!r}] = ...), "
                           "as in every dualtape transform. Build a new array instead: dnp.where(mask, "
                           "value, t), np.concatenate of slices, or np.stack of items.")

    def _refuse(self, what):
        raise RefusalError(
            f"[{self._trace.api}] sparsity='auto' runs f once for each shape, on values that carry "
            f"which inputs they depend on, and f used {what} of a traced value: the result, and so the "
            "derivative's pattern, could change with the inputs' values. Keep the computation in "
            "array ops (dnp.where instead of an `if`), or pass the pattern yourself (sparsity=a "
            "boolean array), or use sparsity=None.")

    def __bool__(self):
        self._refuse("bool() (a Python `if`, `while`, `and`/`or`)")

    def __float__(self):
        self._refuse("float()")

    def __complex__(self):
        self._refuse("complex()")

    def __int__(self):
        self._refuse("int()")

    def __index__(self):
        self._refuse("an integer conversion (operator.index)")

    def __array__(self, dtype=None, copy=None):
        self._refuse("np.asarray / np.array")

    def item(self):
        self._refuse(".item()")

    def tolist(self):
        self._refuse(".tolist()")

    def __format__(self, spec):
        self._refuse("formatting")

    def __repr__(self):
        count = 0 if self.deps is None else int(self.deps.sum())
        return f"Pattern(shape={self.shape}, dependencies={count})"

    __hash__ = None


def pattern_binary(fn):
    """(forward, reflected) operator methods of a dnp function on Patterns."""
    def forward(self, other):
        return fn(self, other)

    def reverse(self, other):
        return fn(other, self)

    return forward, reverse


install_operators(Pattern, pattern_binary)
install_numpy_protocols(Pattern, lambda name: (
    f"[np.{name}] has no differentiable dualtape version, and one of its arguments is traced by "
    "sparsity='auto'. Use a dnp op, or pass sparsity= an explicit pattern."), differentiated=True)


def deps_of(value):
    """The dependency array of a value (None for a constant or a value with no dependency)."""
    return value.deps if value.__class__ is Pattern else None


def as_rows(deps, n):
    """A dependency array as a matrix: one row per element, one column per input."""
    return np.reshape(deps, (-1, n))
