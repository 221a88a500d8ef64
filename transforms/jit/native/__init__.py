"""The native backend of jit=True: generated code on Python floats, ints and bools (the scalar
subset, native/kinds.py) compiled to machine code by LLVM directly (native/lowering.py writes
the IR, native/engine.py compiles it), in milliseconds where numba takes hundreds. Anything
outside the subset (arrays, calls of other functions, lists of arrays) goes to numba, as before.

The numbers are the uncompiled code's: the same IEEE operations, the C library's math
functions, and where Python would raise or leave 64-bit ints the compiled code stops and the
uncompiled code runs that call (it raises or computes as Python does).
`DUALTAPE_JIT_NATIVE=0` sends everything to numba.
"""

import os
import warnings

import numpy as np

from .kind_rules import NotScalar, constant_kind
from .program import Program
from .emitter import declarations, returned
from .lowering import Lowering
from .boxing import API, DECLARATIONS, wrapper
from .engine import builtin, machine_code

ENV = "DUALTAPE_JIT_NATIVE"


def arg_kind(value):
    """"f", "i" or "b" for a Python float, int or bool (or a NumPy float64, a float)."""
    kind = constant_kind(value)
    if kind is None or type(value) not in (float, int, bool, np.float64):
        raise NotScalar(f"an argument of type {type(value).__name__}")
    return kind


def compiled(functions, name, namespace, args, rerun, helpers):
    """(the machine-code version of generated function `name` (an ast FunctionDef among
    `functions`, which it may call, with the user's functions they call) for `args`, its LLVM
    IR), or None where the code is outside the scalar subset (numba's). `rerun(*args)` runs
    the uncompiled code (where the compiled code stops)."""
    main = next((fn for fn in functions if fn.name == name), None)
    if os.environ.get(ENV) == "0" or main is None:
        return None
    try:
        program = Program(functions, namespace, helpers)
        kinds = program.kinds(main, [arg_kind(a) for a in args], namespace)
        kinds.symbol = name  # (the callees' are name.k)
        lowered = [Lowering(made) for made in program.made.values()]
    except NotScalar:
        return None
    libm = set().union(*(lowering.libm for lowering in lowered))
    arg_kinds = [kinds.names[a.arg] for a in main.args.args]
    outputs = Lowering.slots(returned(kinds.result))
    text = "\n".join([declarations(libm), DECLARATIONS] + [lowering.text for lowering in lowered]
                     + [wrapper(f"{name}.py", kinds.symbol, arg_kinds, kinds.result, outputs)])
    try:
        address, engine = machine_code(text, f"{name}.py", sorted(libm) + ["malloc", "realloc", "free"] + list(API))
    except Exception as exc:  # noqa: BLE001  (LLVM refused the IR: a bug of lowering.py, not the user's)
        warnings.warn(f"dualtape's native jit backend could not compile {name} ({type(exc).__name__}: "
                      f"{str(exc)[:300]}); numba compiles it instead. Please report this.", RuntimeWarning,
                      stacklevel=2)
        return None
    return builtin(address, engine, name, rerun), text
