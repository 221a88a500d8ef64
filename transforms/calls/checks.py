"""Calls the transformer maps to one op but must refuse: arguments the op's rules would
silently ignore (see opmap.OpSpec.bind)."""

import inspect

from ..ir import syntax


class VariadicError(TypeError):
    """A variadic op's call the transformer cannot map to the op's inputs: (problem, fix)."""


# arguments a primitive's rules do not read that leave its derivative as it is, when written
# as literals (a differentiated np.sum(x, initial=y) would need y's derivative too)
_UNREAD_HARMLESS = {"Sum": {"initial"}}


def refuse_unread(spec, sig, bound, read):
    """Refuse a call passing an argument that the wrapper takes but the primitive's rules do not
    read (np.diff's prepend=, np.sum's where=): the forward sweep runs NumPy with it, but the
    derivative would be the one without it. Passing a parameter's default is fine."""
    for name, node in bound.arguments.items():
        param = sig.parameters[name]
        if param.kind == param.VAR_KEYWORD:  # np.add(x, y, where=m): each keyword on its own
            for key, value in node.items():
                _refuse_one(spec, key, value, read, inspect.Parameter.empty)
        elif param.kind == param.VAR_POSITIONAL:
            if node:
                raise VariadicError(f"`np.{spec.wrapper.__name__}` with extra positional arguments cannot be "
                                    "differentiated by the transformer", "Pass NumPy's arguments by name.")
        else:
            _refuse_one(spec, name, node, read, param.default)


def refuse_unread_keywords(spec, keywords):
    """`refuse_unread` for a primitive called directly (a ufunc: np.add(x, y, where=m)): the
    keywords its rules do not read."""
    for name, node in keywords.items():
        _refuse_one(spec, name, node, (), inspect.Parameter.empty)


def _refuse_one(spec, name, node, read, default):
    if name in read:
        return
    if syntax.is_constant(node) and (node.value is None or name in _UNREAD_HARMLESS.get(spec.prim.name, ()) or (
            default is not inspect.Parameter.empty and type(node.value) is type(default) and node.value == default)):
        return
    raise VariadicError(f"`{name}=` in {_called(spec)} cannot be differentiated by the transformer: the "
                        f"{spec.prim.name} op's rules do not read it",
                        "Leave it out (compose the same result from other ops, e.g. concatenate first), or "
                        "differentiate the call with GradientTape or dualtape.grad.")


def _called(spec):
    return f"the call of np.{spec.wrapper.__name__}" if spec.wrapper is not None else f"a call of the {spec.prim.name} op"
