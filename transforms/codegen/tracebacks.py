"""Errors raised inside generated code name the user's file and line.

A traceback through generated code ends at `File "<dualtape f_vjp#1>", line 32` (the source
is in linecache, so the generated line shows). `name_user_lines` adds a note for each
generated frame: the user's statement it comes from, as `file.py:LINE in f: <line>`. The
generated code says where each statement comes from: a forward line is often the user's
line itself, and the other lines follow a `# <user's statement>` comment (jit.py's refusals
read the same mapping).
"""

import ast
import functools
import inspect
import linecache

from ..ir.naming import identifier

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
                where = user_line(functions, linecache.getlines(code.co_filename), tb.tb_lineno, code.co_name)
                if where and where not in notes:
                    notes.append(where)
            tb = tb.tb_next
    except Exception:  # noqa: BLE001  (the user's error is what matters: never replace it)
        return
    for where in notes:
        exc.add_note(f"dualtape.transforms: raised by the generated code of {where}")


def user_line(functions, lines, number, generated_name=""):
    """`file:line in f: code` of the user's statement that generated line `number` (1-based)
    of `lines` comes from: the line itself or the nearest `# <statement>` comment above it in
    the same generated function, found among the lines of `functions` (those whose name the
    generated function's starts with first); None when none matches."""
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
        for fn, filename, first, body in sources:
            for j, line in enumerate(body):
                if line == candidate or (part or k == number - 1) and _part_of(candidate, line):
                    return f"{filename}:{first + j} in {fn.__name__}: {line}"
    return None


def _part_of(generated, user):
    """Whether the value of the generated assignment `generated` (a forward sweep's un-nested
    `_log_y = np.log(y)`, no temporaries in it, not a bare name or constant) is an expression
    written in the user's line `user`."""
    try:
        st = ast.parse(generated).body[0]
    except (SyntaxError, IndexError):
        return False
    if not isinstance(st, ast.Assign) or isinstance(st.value, (ast.Name, ast.Constant)) or any(
            isinstance(x, ast.Name) and x.id.startswith("_") for x in ast.walk(st.value)):
        return False
    return ast.unparse(st.value) in _expressions(user)


@functools.lru_cache(maxsize=512)
def _expressions(line):
    """The expressions written in a user's line, spelled as ast.unparse spells them (a compound
    statement's header parsed with a `pass` body)."""
    for text in (line, line + " pass"):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        return frozenset(ast.unparse(x) for x in ast.walk(tree) if isinstance(x, ast.expr))
    return frozenset()


def _source(fn):
    """(fn, its file, its first line number, its stripped lines), or None; a function of
    dualtape itself (a composition's adjoint) is not the user's."""
    if (getattr(fn, "__module__", None) or "").startswith("dualtape"):
        return None
    try:
        src, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    return fn, fn.__code__.co_filename, first, [s.strip() for s in src]
