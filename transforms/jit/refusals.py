"""What numba refused, in words: whether an error came out of its compiler, the Python
containers the transformer accepts that numba cannot hold (jit=True runs the uncompiled code
there, with a warning), the runtime helpers without a compiled twin, and the construct and
user line a refusal names (jit/compile.py). `re` here reads numba's error messages only, never
generated code."""

import ast
import inspect
import re

import numpy as np

from ..frontend.parse import TransformError

from ..calls.star_args import has_star_parameters
from ..frontend.function_values import is_function_value, is_user_object
from ..ir import syntax
from ..runtime import lists as runtime_lists
from ..runtime.names import RUNTIME_HELPERS

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def plain_text(exc):
    """A numba error's text without its terminal colours."""
    return ANSI.sub("", str(exc))


def untyped_helper(text):
    """The runtime helper without a compiled twin that numba's error `text` names, or None."""
    helper = re.search(r"Untyped global name '(\w+)'", text)
    return helper.group(1) if helper and helper.group(1) in RUNTIME_HELPERS else None


def refusal(api, f, exc, source, filename):
    """A TransformError naming what numba rejected (`exc`) in the generated `source` (compiled
    from `filename`) of `f`, on which generated line, and the user's line it comes from."""
    text = plain_text(exc)
    construct = construct_named(text)
    helper = untyped_helper(text)
    if helper:
        construct += (f" ({helper} is a helper of dualtape.transforms.runtime that has no compiled "
                      "twin in transforms/jit/runtime.py)")
    if "unbox heterogeneous list" in text:
        construct += " (numba takes a list of arrays of one ndim and dtype only: pass a tuple)"
    lines = source.splitlines()
    where = ""
    found = [int(n) for n in re.findall(re.escape(filename) + r'", line (\d+)', text)]
    if found:
        number = found[-1]
        where = f"\n  generated line {number}: {lines[number - 1].strip()}"
        user = user_line(f, lines, number)
        if user:
            where += f"\n  from {user}"
    return TransformError(
        f"[{api}] numba cannot compile the generated code of {f.__name__}: {construct}{where}"
        f"\n  Rewrite that construct (numba compiles floats, NumPy arrays, math and np functions, loops and "
        "branches), pass jit='fallback' to run the uncompiled code there, or call without jit=True.")


def raised_compiling(exc):
    """Whether `exc` came out of numba's compiler rather than the compiled code: an error in its
    typing that numba does not wrap in a NumbaError (an AttributeError typing `np.sum(x,
    dtype="float64")`, whose dtype is a string). It is a construct numba cannot compile."""
    import traceback
    return any("/numba/core/typing/" in frame.filename or "/numba/core/compiler" in frame.filename
               for frame in traceback.extract_tb(exc.__traceback__))


def python_containers(functions, args, namespace, error):
    """What in this specialization numba cannot hold, described, or None: the Python containers
    and dynamic typing the transformer accepts (lists built by list operations, dicts, function
    values, `*args` helpers, a name that is a number and then an array, as `sum` over arrays
    starts), which jit=True runs uncompiled, with a warning, rather than refuse. Any other construct numba rejects (`error`, its message) stays a refusal."""
    unify = re.search(r"Cannot unify (.+?) and (.+?) for '([^']+)'", error)
    if unify:
        return f"`{unify.group(3).split('.')[0]}`, a {unify.group(1)} and then a {unify.group(2)}"
    if re.search(r"\b(reflected )?list\((array|list|UniTuple|Tuple|reflected)", error):
        return "a Python list of arrays"
    for value in args:
        if isinstance(value, dict) or is_function_value(value) or is_user_object(value):
            return f"an argument of type {type(value).__name__}"
        if isinstance(value, list) and any(isinstance(item, (np.ndarray, list, tuple, dict)) for item in value):
            return "an argument that is a list of arrays"
    from . import runtime as jit_runtime  # (imports numba)
    list_helpers = {name for name, value in vars(runtime_lists).items() if inspect.isfunction(value)
                    and value.__module__ == runtime_lists.__name__ and name not in jit_runtime.NAMES}
    for fn in functions:
        for node in syntax.walk(fn):
            if isinstance(node, (ast.Dict, ast.DictComp)):
                return "a dict"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                name = node.func.id
                if name in list_helpers:
                    return f"a Python list (runtime helper {name})"
                value = namespace.get(name)
                if inspect.isfunction(value) and not value.__module__.startswith(("dualtape", "numba")) \
                        and has_star_parameters(value):  # (a user's helper)
                    return f"a call of {name}, which has *args / **kwargs"
    return None


def untwinned_helpers(functions, twins):
    """The runtime helpers (and dnp functions) the generated functions call that have no compiled
    twin in `twins` (jit/runtime.py's NAMES), in order of first call; the list helpers are left to
    `python_containers`. Where numba stops at one of them (it names the first only), the refusal
    of jit=True (the warning of jit='fallback', which runs the uncompiled code) names them all.
    Each has a twin, or is behind a construct numba cannot compile anyway (np.einsum, linear
    algebra decompositions, FFTs, statistics): tests/test_jit_helpers.py holds the list."""
    list_helpers = {name for name, value in vars(runtime_lists).items() if inspect.isfunction(value)}
    missing = []
    for fn in functions:
        for node in syntax.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Name) and func.id in RUNTIME_HELPERS and func.id not in twins \
                    and func.id not in list_helpers and callable(RUNTIME_HELPERS[func.id]) \
                    and not inspect.ismodule(RUNTIME_HELPERS[func.id]):
                name = func.id
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "dnp":
                name = f"dnp.{func.attr}"
            else:
                continue
            if name not in missing:
                missing.append(name)
    return missing


def construct_named(text):
    """The construct a numba error's text names: its first line or two that say what failed."""
    keep = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith(("Failed in", "During:", "File ", "<source", "^")) or s.startswith("- "):
            continue
        if s.startswith(("No implementation", "Untyped global", "Unknown attribute", "Use of unsupported",
                         "Cannot", "Invalid use", "Unsupported", "NameError", "Rejected")) or not keep:
            keep.append(s)
        if len(keep) >= 2:
            break
    return " ".join(keep)[:400] or text[:400]


def user_line(f, lines, number):
    """`file:line: code` of the user's statement the generated line `number` comes from: the
    nearest `# <statement>` comment above it that is a line of f."""
    try:
        src, first = inspect.getsourcelines(f)
    except (OSError, TypeError):
        return None
    stripped = [s.strip() for s in src]
    for k in range(number - 1, -1, -1):
        s = lines[k].strip()
        if s.startswith("# ") and s[2:] in stripped and s[2:] not in ("forward", "backward"):
            j = stripped.index(s[2:])
            return f"{f.__code__.co_filename}:{first + j}: {s[2:]}"
    return None
