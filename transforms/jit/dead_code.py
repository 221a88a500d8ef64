"""Dead statements of a fused kernel's loop (jit/fusion.py, jit/saved_twins.py).

A run of statements fused into one loop computes every statement of the run for each element,
also those whose names only code outside the kernel read (the backward of `x = sin(x) * c`
recomputes `sin(x)` for nothing), and a kernel that reads a saved cos no longer needs its own.
Those values, and the range checks of their vecmath arguments, go.
"""

import ast

ARGUMENTS = "_fz_a"  # the locals holding a vecmath twin's argument (fusion.py), which the checks read
CHECKED = "_fz_ok"  # whether every argument was in the twins' range


def drop_dead(loop):
    """`loop` (a kernel's loop) without the assignments to locals that nothing kept reads: a twin's
    value the run computed for a name read only outside the kernel, and the range check of its
    argument (the checks, `_fz_ok &= abs(a) < L`, keep only arguments of values kept). Stores
    into arrays, and any other statement, stay."""
    needed, kept = set(), []
    checks = [st for st in loop.body if _is_check(st)]
    for st in reversed(loop.body):
        if _is_check(st) or (_local(st) is not None and _local(st) not in needed):
            continue
        kept.append(st)
        needed |= {n.id for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    kept.reverse()
    at = next((i for i, st in enumerate(kept) if _local(st) is None), len(kept))
    kept[at:at] = [st for st in checks if any(isinstance(n, ast.Name) and n.id.startswith(ARGUMENTS) and n.id in needed
                                              for n in ast.walk(st.value))]
    loop.body = kept
    return loop


def _is_check(st):
    return isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name) and st.target.id == CHECKED


def _local(st):
    """The local an assignment `name = value` binds, else None."""
    if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
        return st.targets[0].id
    return None
