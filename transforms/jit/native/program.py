"""The functions of one native module: the generated code's, and the user's plain functions
they call (their source read, as the generated code is lowered), each with its Kinds per
tuple of argument kinds (native/kinds.py)."""

import ast
import inspect
import textwrap

from .kind_rules import NotScalar
from .kinds import Kinds


class Program:
    """The functions one native module holds: the generated ones (by name) and the user's that
    they call (read from their source), each with its Kinds per tuple of argument kinds."""

    def __init__(self, functions, namespace, helpers):
        self.generated = {fn.name: fn for fn in functions}
        self.namespace, self.helpers = namespace, helpers
        self.made, self.busy, self.sources = {}, set(), {}

    def kinds(self, fn, arg_kinds, namespace):
        """The Kinds of `fn` for `arg_kinds` (made once; `symbol` names its LLVM function)."""
        key = (id(fn), tuple(arg_kinds))
        if key in self.made:
            return self.made[key]
        if key in self.busy:
            raise NotScalar(f"a recursive call of {fn.name}")
        self.busy.add(key)
        made = Kinds(fn, arg_kinds, namespace, self)
        self.busy.discard(key)
        made.symbol = f"{fn.name}.{len(self.made)}"
        self.made[key] = made
        return made

    def callee(self, name, namespace):
        """(FunctionDef, its globals, its defaults as values) of a function the code may call
        natively: a generated one, or a plain function of the user's; else None."""
        if name in self.generated and namespace is self.namespace:
            fn = self.generated[name]
            return fn, namespace, None
        value = namespace.get(name)
        if not inspect.isfunction(value) or value.__closure__ or value.__kwdefaults__ \
                or value.__module__ is None or value.__module__.startswith(("dualtape", "numpy", "numba")):
            return None
        if value not in self.sources:
            try:
                tree = ast.parse(textwrap.dedent(inspect.getsource(value)))
            except (OSError, TypeError, SyntaxError):
                return None
            fn = tree.body[0] if len(tree.body) == 1 else None
            self.sources[value] = fn if isinstance(fn, ast.FunctionDef) and not fn.decorator_list \
                and fn.name == value.__name__ else None
        fn = self.sources[value]
        return None if fn is None else (fn, value.__globals__, value.__defaults__ or ())
