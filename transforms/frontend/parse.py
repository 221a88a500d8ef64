"""Reading a function's source and refusing, early and clearly, what the transformer cannot do.

Every refusal is a `TransformError` naming the construct, the file and line, and the fix.
"""

import ast
import inspect
import linecache
import textwrap

from ..ir import syntax
from ..ir.syntax import nodes as n
from .function_values import lifted_tree


class TransformError(Exception):
    """The source transformer cannot handle a construct; the message says where and what to do."""


def error(api, fn_info, node, what, fix):
    """A TransformError: `[api] file:line in f: <what>. <fix>`."""
    line = fn_info.first_line + getattr(node, "lineno", 1) - 1 if node is not None else fn_info.first_line
    return TransformError(f"[{api}] {fn_info.filename}:{line} in {fn_info.name}: {what}.\n  {fix}")


class FunctionInfo:
    """A parsed function: its gast FunctionDef, where it lives, and the names it can see."""

    def __init__(self, fn, api="transforms.grad"):
        self.fn = fn
        self.name = fn.__name__
        self.filename = inspect.getsourcefile(fn) or "<unknown>"
        lifted = lifted_tree(fn)
        try:
            if lifted is not None:  # a nested function or lambda of a transformed function (function_values.py)
                lines, self.first_line, self.filename = lifted.source_lines, lifted.first_line, lifted.filename
                module = n.Module(body=[syntax.copy(lifted.node)], type_ignores=[])
                lines = [line + "\n" for line in lines]
            elif self.name == "<lambda>":  # (its statement may not parse alone: `try: grad(lambda x: x * x)`)
                lines, module = lambda_source(fn, self.filename, api)
                self.first_line = 1
            else:
                lines, self.first_line = inspect.getsourcelines(fn)
                module = None
        except (OSError, TypeError) as exc:
            raise TransformError(
                f"[{api}] cannot read the source of {fn.__name__}: {exc}.\n  Define it "
                "in a file (not a REPL or exec string) so the transformer can read it.") from None
        self.source_lines = textwrap.dedent("".join(lines)).splitlines()
        module = module or syntax.parse("\n".join(self.source_lines))
        node = module.body[0]
        if not isinstance(node, n.FunctionDef):
            what = "a lambda" if self.name == "<lambda>" else f"a {type(node).__name__}"
            raise TransformError(
                f"[{api}] {self.filename}:{self.first_line}: cannot transform {what}.\n  "
                "Write the function with `def` so its body can be read.")
        node.decorator_list = []
        self.node = node
        self.namespace = dict(fn.__globals__)
        if fn.__closure__:
            for var, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                try:
                    self.namespace[var] = cell.cell_contents
                except ValueError:
                    pass
        self.closure_names = set(fn.__code__.co_freevars)

    def line_text(self, node):
        """The stripped source line of `node` (for comments in the generated code)."""
        lineno = getattr(node, "lineno", None)
        if lineno is None or lineno - 1 >= len(self.source_lines):
            return ""
        return self.source_lines[lineno - 1].strip()

    def abs_line(self, node):
        return self.first_line + getattr(node, "lineno", 1) - 1


def source_tree(fn):
    """The gast Module of the source `inspect` reads for `fn` (dedented): how the call
    resolution and the mutation analysis read the functions a program calls. Raises OSError,
    TypeError or SyntaxError as inspect and the parser do."""
    lifted = lifted_tree(fn)
    if lifted is not None:
        return n.Module(body=[syntax.copy(lifted.node)], type_ignores=[])
    return syntax.parse(textwrap.dedent(inspect.getsource(fn)))


def lambda_source(fn, filename, api):
    """(the lines of `fn`'s file, a module holding `def <lambda>(args): return body`) for the
    lambda `fn`: the whole file is parsed and the lambda found by the positions of its code
    (the statement `inspect` reads may not parse alone: a lambda in a `try:`, `for` or `if`
    line would give a raw SyntaxError). Line numbers are the file's."""
    lines = linecache.getlines(filename, fn.__globals__)
    if not lines:
        raise OSError("could not get source code")
    try:
        tree = ast.parse("".join(lines))
    except SyntaxError as exc:
        raise OSError(f"the file does not parse ({exc.msg}, line {exc.lineno})") from None
    spans = [(a, c, b, d) for a, b, c, d in fn.__code__.co_positions()
             if None not in (a, b, c, d) and (a, c) != (b, d)]
    line = fn.__code__.co_firstlineno
    found = [x for x in syntax.walk(tree) if isinstance(x, ast.Lambda) and x.lineno == line and all(
        (x.lineno, x.col_offset) <= (a, c) and (b, d) <= (x.end_lineno, x.end_col_offset) for a, c, b, d in spans)]
    found.sort(key=lambda x: (x.end_lineno - x.lineno, x.end_col_offset - x.col_offset))  # the innermost
    if not found:
        raise OSError(f"no lambda of line {line} of {filename} holds its code (was the file changed since?)")
    if not spans and len({ast.dump(x) for x in found}) > 1:  # (no columns: python -X no_debug_ranges)
        raise TransformError(f"[{api}] {filename}:{line}: cannot tell which lambda of this line is the function "
                             "to transform.\n  Write it with `def` (or put the lambda on a line of its own).")
    lam = found[0]
    node = ast.FunctionDef(name="<lambda>", args=lam.args, body=[ast.Return(value=lam.body)], decorator_list=[],
                           returns=None, type_comment=None, **({"type_params": []} if hasattr(ast, "TypeVar") else {}))
    ast.copy_location(node, lam)
    ast.copy_location(node.body[0], lam.body)
    return lines, syntax.from_ast(ast.Module(body=[node], type_ignores=[]))


_REFUSED = {
    n.Try: ("`try`", "Move the try/except outside the differentiated function, or use GradientTape for it."),
    n.With: ("`with`", "Move the with-block outside the differentiated function, or use GradientTape for it."),
    n.AsyncWith: ("`async with`", "Differentiate a synchronous function."),
    n.AsyncFor: ("`async for`", "Differentiate a synchronous function."),
    n.Yield: ("`yield`", "Return a value instead of yielding; generators cannot be differentiated."),
    n.YieldFrom: ("`yield from`", "Return a value instead of yielding; generators cannot be differentiated."),
    n.Await: ("`await`", "Differentiate a synchronous function."),
    n.ClassDef: ("a class definition", "Define the class outside the differentiated function."),
    n.FunctionDef: ("a nested function definition", "Define the helper at module level; the transformer differentiates calls of it."),
    n.Lambda: ("a lambda used as a value (stored in a container, returned)",
               "Define the function with `def`, and call it or pass it to a function."),
    n.Global: ("`global`", "Return the value instead of writing a global variable."),
    n.Nonlocal: ("`nonlocal`", "Return the value instead of writing an enclosing variable."),
    n.Delete: ("`del`", "Assign a new value instead of deleting the name."),
    n.Import: ("`import` inside the function", "Import the module at module level."),
    n.ImportFrom: ("`import` inside the function", "Import the module at module level."),
    n.Match: ("`match`", "Use if / elif / else instead."),
}


# builtins that read or run code by name: their effect on derivatives is invisible in the source
_DYNAMIC = {"eval", "exec", "compile", "locals", "vars", "globals", "__import__"}


def check_supported(info, api="transforms.grad"):
    """Raise TransformError for the first construct the transformer refuses outright."""
    fn = info.node
    args = fn.args
    generated = info.filename.startswith("<dualtape ")  # adjoint code read back by hvp frees with `del`
    if args.vararg is not None or args.kwarg is not None:
        raise error(api, info, fn, "`*args` / `**kwargs` parameters are not supported",
                    "Name each parameter; pass sequences as one list or array argument.")
    for node in syntax.walk(fn):
        if node is fn:
            continue
        for kind, (what, fix) in _REFUSED.items():
            if isinstance(node, kind) and not (kind is n.Delete and generated):
                raise error(api, info, node, f"{what} is not supported by the transformer", fix)
        if isinstance(node, (n.For, n.While)) and node.orelse:
            raise error(api, info, node, "a loop `else` clause is not supported",
                        "Set a flag before `break` and test it after the loop.")
        if isinstance(node, (n.ListComp, n.SetComp, n.DictComp, n.GeneratorExp)):
            pass  # allowed when inactive; normalize refuses active ones
        if (isinstance(node, n.Call) and isinstance(node.func, n.Name) and node.func.id in _DYNAMIC
                and node.func.id not in info.namespace and not generated):
            raise error(api, info, node, f"`{node.func.id}(...)` reads or runs code by name, which the "
                        "transformer cannot see (it would run it and give a zero derivative)",
                        "Write the expression out in the function, or use GradientTape for it.")
