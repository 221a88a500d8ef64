"""Functions passed as values: the kind of a function-valued argument, and lifted functions.

A function-valued argument (`predict(params, x, nonlinearity=relu)`) is not differentiated:
the transformer specializes on it. Its kind is a `FunctionKind`, a string unique to the
function it holds (so a version per argument types is a version per function too), which
carries the function; the front end (frontend/functions.py) reads the call of the parameter
as a call of that function.

A nested function or lambda of a transformed function is lifted: a module-level function of
its own, whose free variables that are locals of the enclosing function become parameters.
`lift` makes the Python function the rest of the transformer reads like any user function
(its tree comes from `lifted_tree`, not from `inspect`, which would read the nested `def`).
"""

import ast
import functools
import inspect
import types

import numpy as np

from ..ir import syntax


class FunctionKind(str):
    """The kind of a function-valued argument: "function <name> <id>", carrying `.fn`."""

    def __new__(cls, fn):
        kind = super().__new__(cls, f"function {getattr(fn, '__name__', type(fn).__name__)} {id(fn)}")
        kind.fn = fn
        return kind


class ObjectKind(str):
    """The kind of an argument that is an instance of a user's class (not a pytree): "object
    <class> <id>", carrying `.cls`. Its methods are called as functions of the class with the
    instance as first argument; the instance itself is not differentiated."""

    def __new__(cls, of):
        kind = super().__new__(cls, f"object {of.__qualname__} {id(of)}")
        kind.cls = of
        return kind


LIBRARIES = ("builtins", "numpy", "dualtape", "scipy", "jax", "torch", "tensorflow", "functools", "collections")


def is_user_object(value):
    """Whether `value` is an instance of a class of the user's (a model object whose methods
    a transformed function calls), not a number, array, container or pytree node."""
    cls = type(value)
    if isinstance(value, (tuple, list, dict, set, str, bytes, type, types.ModuleType, np.ndarray, np.generic)) \
            or is_function_value(value) or not hasattr(value, "__dict__") or any(
                hasattr(cls, name) for name in ("__array__", "__array_ufunc__", "__array_function__", "__add__",
                                                "__mul__", "__float__")):
        return False  # (a duck array or number is a value, not a model)
    from dualtape.core.nest import is_pytree_node  # (a pytree node is differentiated leaf by leaf)
    return not is_pytree_node(value) and (getattr(cls, "__module__", "") or "").split(".")[0] not in LIBRARIES


def method_of(cls, name):
    """The plain function `cls.name` (a method the class or a base defines), or None."""
    try:
        found = inspect.getattr_static(cls, name)
    except AttributeError:
        return None
    return found if inspect.isfunction(found) else None


def is_function_value(value):
    """Whether `value` is a function the transformer can specialize on: a Python function,
    a NumPy ufunc or builtin, a `functools.partial`."""
    return (inspect.isfunction(value) or isinstance(value, (np.ufunc, types.BuiltinFunctionType, functools.partial))
            or (inspect.ismethod(value) and inspect.isfunction(value.__func__)))


def function_key(values):
    """The function-valued ones among `values` (as (position, function)): what a cache key
    adds to the argument types, so `nonlinearity=np.tanh` and `nonlinearity=relu` differ."""
    return tuple((k, v) for k, v in enumerate(values) if is_function_value(v))


class Lifted:
    """How a lifted function reads: its tree (already rewritten), and its enclosing function's
    file, first line and source lines (its lines are the enclosing function's)."""

    def __init__(self, node, filename, first_line, source_lines):
        self.node, self.filename, self.first_line, self.source_lines = node, filename, first_line, source_lines


def lifted_tree(fn):
    """The `Lifted` of a lifted function, or None."""
    return getattr(fn, "__dualtape_lifted__", None)


def lift(node, namespace, filename, first_line, source_lines):
    """A Python function for the gast FunctionDef `node` (its globals: `namespace`, which the
    caller fills with the other lifted functions), carrying its tree for the transformer."""
    tree = ast.Module(body=[syntax.to_ast(syntax.copy(node))], type_ignores=[])
    located(tree.body[0], first_line - 1)
    code = compile(tree, filename, "exec")
    made = {}
    exec(code, namespace, made)  # (defines the function only: its body runs when the generated code calls it)
    fn = made[node.name]
    fn.__dualtape_lifted__ = Lifted(node, filename, first_line, source_lines)
    return fn


def located(tree, shift):
    """Give every node of `tree` a location (its parent's where it has none), lines moved by
    `shift` (iteratively: no recursive closure)."""
    todo = [(tree, 1 + shift, 0)]
    while todo:
        node, line, col = todo.pop()
        if "lineno" in getattr(node, "_attributes", ()):
            if getattr(node, "lineno", None) is None:
                node.lineno, node.col_offset = line, col
            else:
                node.lineno += shift
            node.end_lineno, node.end_col_offset = node.lineno, node.col_offset
            line, col = node.lineno, node.col_offset
        todo.extend((child, line, col) for child in ast.iter_child_nodes(node))


def jit_lifted_calls(fn, njit):
    """Compile the lifted functions that the lifted function `fn` may call, in its globals
    (theirs: one namespace per transformation), so numba can type `fn`'s calls of them."""
    if not inspect.isfunction(fn) or lifted_tree(fn) is None:
        return
    for name, value in list(fn.__globals__.items()):
        if inspect.isfunction(value) and lifted_tree(value) is not None:  # (not one numba compiled already)
            fn.__globals__[name] = njit(value)
