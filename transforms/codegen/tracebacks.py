"""Errors raised inside generated code name the user's file and line.

A traceback through generated code ends at `File "<dualtape f_vjp#1>", line 32` (the source
is in linecache, so the generated line shows). `name_user_lines` adds a note for each
generated frame: the user's statement it comes from, as `file.py:LINE in f: <line>`. The
generated code says where each statement comes from: a forward line is often the user's
line itself, and the other lines follow a `# <user's statement>` comment (jit/compile.py's
refusals read the same mapping). Which statement a generated line holds comes from the tree
the text was rendered from (`__dualtape_statements__` in the generated module's namespace,
kept by codegen/emit.run_module); the generated text is never parsed back, and the user's
lines are read from the front end's tree of their function.
"""

import ast
import inspect
import linecache

from ..frontend.parse import source_tree
from ..ir import syntax
from ..ir.naming import identifier

# the fields of a compound statement that hold statements, not its header's expressions
BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")

NOTED = "__dualtape_lines_noted__"


def name_user_lines(exc):
    """Add to `exc` a note per generated frame of its traceback naming the user's line (once)."""
    if getattr(exc, NOTED, False):
        return
    try:
        setattr(exc, NOTED, True)
        notes = []
        tb = exc.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            if code.co_filename.startswith("<dualtape "):
                functions = tb.tb_frame.f_globals.get("__dualtape_user_functions__", ())
                statements = tb.tb_frame.f_globals.get("__dualtape_statements__", {})
                where = user_line(functions, linecache.getlines(code.co_filename), tb.tb_lineno, code.co_name,
                                  statements)
                if where and where not in notes:
                    notes.append(where)
            tb = tb.tb_next
    except Exception:  # noqa: BLE001  (the user's error is what matters: never replace it)
        return
    for where in notes:
        exc.add_note(f"dualtape.transforms: raised by the generated code of {where}")


def user_line(functions, lines, number, generated_name="", statements=None):
    """`file:line in f: code` of the user's statement that generated line `number` (1-based)
    of `lines` comes from: the line itself or the nearest `# <statement>` comment above it in
    the same generated function, found among the lines of `functions` (those whose name the
    generated function's starts with first); None when none matches. `statements`: {line:
    the statement of the generated tree written there}."""
    statements = statements or {}
    ordered = sorted(functions, key=lambda fn: not generated_name.startswith(identifier(fn.__name__) + "_"))
    sources = [s for s in map(_source, ordered) if s is not None]
    start = number - 1
    while start > 0 and not lines[start].startswith("def "):
        start -= 1
    forward = all(x.strip() != "# backward" for x in lines[start:number])  # (its lines carry no comments)
    for k in range(number - 1, start, -1):
        stripped = lines[k].strip()
        if stripped.startswith("# ") and stripped[2:] not in ("forward", "backward"):
            candidate, part = stripped[2:], False
        elif k == number - 1 or forward:  # the user's line itself, or (forward) a part of it
            candidate, part = stripped, k != number - 1
        else:
            continue
        for fn, filename, first, body, written in sources:
            for j, line in enumerate(body):
                if line == candidate or (part or k == number - 1) and _part_of(statements.get(k + 1),
                                                                                written.get(j, ())):
                    return f"{filename}:{first + j} in {fn.__name__}: {line}"
    return None


def _part_of(st, written):
    """Whether the value of the generated assignment `st` (a forward sweep's un-nested
    `_log_y = np.log(y)`, no temporaries in it, not a bare name or constant) is one of the
    expressions `written` in a user's line."""
    if not isinstance(st, ast.Assign) or isinstance(st.value, (ast.Name, ast.Constant)) or any(
            isinstance(x, ast.Name) and x.id.startswith("_") for x in syntax.walk(st.value)):
        return False
    return ast.unparse(st.value) in written


def expressions_by_line(fn):
    """{line index in fn's source: the expressions written on that line, spelled as ast.unparse
    spells them}, for each statement that lies on one line and each compound statement's
    header (`for i in range(n):`) that does; read from the front end's tree of fn."""
    try:
        tree = syntax.to_ast(source_tree(fn))
    except (OSError, TypeError, SyntaxError):
        return {}
    out = {}
    for st in syntax.walk(tree):
        if not isinstance(st, ast.stmt):
            continue
        header = [value for field, value in ast.iter_fields(st) if field not in BLOCKS]
        found = [x for value in header for node in (value if isinstance(value, list) else [value])
                 if isinstance(node, ast.AST) for x in syntax.walk(node) if isinstance(x, ast.expr)]
        if any(x.lineno != st.lineno or x.end_lineno != st.lineno for x in found) or (
                not any(field in BLOCKS for field in st._fields) and st.end_lineno != st.lineno):
            continue
        out.setdefault(st.lineno - 1, set()).update(ast.unparse(x) for x in found)
    return out


def _source(fn):
    """(fn, its file, its first line number, its stripped lines, the expressions of each line),
    or None; a function of dualtape itself (a composition's adjoint) is not the user's."""
    if (getattr(fn, "__module__", None) or "").startswith("dualtape"):
        return None
    try:
        src, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    return fn, fn.__code__.co_filename, first, [s.strip() for s in src], expressions_by_line(fn)
