"""The kinds of the scalar subset the native backend compiles, and how they combine.

A scalar is "f" (a float64), "i" (an int64) or "b" (a bool); a `Tup` a tuple of kinds; "o" a
name that holds None or a float, "n" None; a `Buffer` a stack (a NumPy array made by
`np.empty`, grown by `grow`, or a Python list built by `append`, read by `pop`); SHAPE the
shape () of a number. Also the tables of what may be called on numbers: math's and NumPy's
functions (the C library's) and the runtime helpers native/lowering.py computes itself.
"""

import ast
from dataclasses import dataclass

import numpy as np

SCALARS = ("f", "i", "b")
# None, and a name that holds None or a float (the generated code's `_retval = None` before a
# return assigns it): "n" and "o". Read as a number, an "o" must hold a float (else the
# uncompiled code runs: Python's TypeError); copied, pushed, popped or returned it stays one.
OPTIONAL = ("n", "o")
INT_LIMIT = 2 ** 63

# math's functions that call the C library's function of the same name, as CPython does: an
# error of CPython's (a nan from numbers, an infinity from finite numbers) is one of theirs
MATH1 = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
         "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "erf", "erfc", "fabs")
MATH2 = ("atan2", "pow", "copysign")
MATH_CONSTANTS = ("pi", "e", "tau", "inf", "nan")
# NumPy's functions on a float or int: the C library's function (as numba computes them; NumPy's
# own SIMD exp, log, tanh and arctan may differ from it in the last bit)
NUMPY1 = {"sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
          "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "arcsinh": "asinh", "arccosh": "acosh",
          "arctanh": "atanh", "exp": "exp", "expm1": "expm1", "log": "log", "log1p": "log1p", "log2": "log2",
          "log10": "log10", "sqrt": "sqrt", "fabs": "fabs"}
NUMPY2 = {"arctan2": "atan2", "power": "pow", "copysign": "copysign"}
NUMPY_CONSTANTS = ("pi", "e", "inf", "nan")
DTYPES = {"float64": "f", "int64": "i", "bool_": "b"}
# runtime helpers that, on numbers (and the shape ()), return their first argument (shape_of: ())
IDENTITIES = {"shape_of": 1, "unbroadcast": 2, "broadcast_tangent": 2, "saved": 1}
# runtime helpers on scalars (lowering.py computes them): name -> (arguments, the one that must
# be a float, the kind returned)
HELPERS = {"step": (1, 0, "b"), "abs_cotangent": (3, 1, "f"), "abs_tangent": (3, 1, "f"), "power_slope": (2, 0, "f")}


class NotScalar(Exception):
    """A construct outside the scalar subset: numba compiles the code instead."""


@dataclass(frozen=True)
class Buffer:
    """A stack: `items` the kinds of one element's 8-byte slots; `rows` whether an element is a
    tuple of them (a 2-D array's row, a list of tuples); `is_list` a Python list (its length
    kept) rather than a preallocated array (its length is its capacity)."""
    items: tuple
    rows: bool
    is_list: bool


@dataclass(frozen=True)
class Tup:
    """A tuple value (a right-hand side unpacked, a value returned, a list element)."""
    items: tuple


PENDING_LIST = Buffer((), False, True)  # `[]` before its first append is seen
SHAPE = "()"  # np.shape(x), shape_of(x) of a scalar x: read only by unbroadcast and `!= ()`


def constant_kind(value):
    """The kind of a Python or NumPy number, or None."""
    if isinstance(value, (bool, np.bool_)):
        return "b"
    if isinstance(value, (int, np.integer)):
        return "i" if -INT_LIMIT <= int(value) < INT_LIMIT else None
    if isinstance(value, (float, np.floating)) and np.dtype(type(value)) == np.float64:
        return "f"
    return None


def global_value(name, namespace):
    """The number a global name holds (frozen, as numba does), or raise NotScalar."""
    if name not in namespace or constant_kind(namespace[name]) is None:
        raise NotScalar(f"the global `{name}`")
    return namespace[name]


def arithmetic(op, left, right):
    """The kind of `left op right` on scalars, as Python computes it."""
    if left not in SCALARS or right not in SCALARS:
        raise NotScalar("arithmetic on a non-scalar")
    left, right = ("i" if k == "b" else k for k in (left, right))
    kind = "f" if "f" in (left, right) else "i"
    if isinstance(op, (ast.Add, ast.Sub, ast.Mult)):
        return kind
    if isinstance(op, ast.Div):
        return "f"
    if isinstance(op, ast.Pow) and kind == "f":
        return "f"
    if isinstance(op, (ast.FloorDiv, ast.Mod)) and kind == "i":
        return "i"
    raise NotScalar(f"the operator {type(op).__name__} on {left} and {right}")


def joined(old, kind):
    """The kind of a name that holds `old` and `kind` (None and a float: "o"), or None."""
    if old == kind:
        return old
    if {old, kind} <= {"n", "f", "o"}:
        return "o"
    if isinstance(old, Tup) and isinstance(kind, Tup) and len(old.items) == len(kind.items):
        items = tuple(joined(a, b) for a, b in zip(old.items, kind.items))
        return None if None in items else Tup(items)
    if isinstance(old, Buffer) and isinstance(kind, Buffer) and (old.rows, old.is_list) == (kind.rows, kind.is_list) \
            and len(old.items) == len(kind.items):
        items = tuple(joined(a, b) for a, b in zip(old.items, kind.items))
        return None if None in items else Buffer(items, old.rows, old.is_list)
    return None


def join(kinds, name, kind):
    """Record that `name` holds `kind`; a second kind it cannot join leaves the code to numba."""
    old = kinds.get(name)
    if old is None or old == PENDING_LIST and isinstance(kind, Buffer) and kind.is_list:
        kinds[name] = kind
    elif kind != old and kind != PENDING_LIST:
        both = joined(old, kind)
        if both is None:
            raise NotScalar(f"`{name}` holds a {old} and a {kind}")
        kinds[name] = both
