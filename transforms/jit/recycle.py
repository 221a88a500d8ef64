"""Dead arrays as the next results of fused loops (jit=True): two buffers per name, in turn.

A fused loop (jit/fusion.py) writes its result `x` into a fresh array, `np.empty` per call; in a
long loop on short vectors the allocation is a fifth of the step. When `x` is only ever read in
ways that make no other reference to its array, the array `x` held before the previous fused
assignment is dead, and this one writes into it instead:

    if _fz_own_x >= 2 and _fz_prev_x.shape == A.shape:
        _fz_o3_x = _fz_prev_x              # dead: nothing else refers to it
    else:
        _fz_o3_x = np.empty(A.shape)
    _fz_kernel_3(..., x, ..., _fz_o3_x)
    _fz_prev_x = x
    x = _fz_o3_x
    _fz_own_x = min(_fz_own_x + 1, 2)

(a loop that does not read x sets `_fz_own_x = 1` and keeps no `_fz_prev_x`). `_fz_own_x`
counts the fused assignments of `x` since anything else could have shared its array: at 1,
x's array is a fused loop's and was never exposed; at 2, so was `_fz_prev_x` (the array x
held before), which no name but `_fz_prev_x` refers to any more. The result never goes into an
array the loop reads (it reads x, not `_fz_prev_x`), so the loop's fallback pass (vecmath
arguments out of range) still sees its inputs, and LLVM's overlap checks pass.

The proof is by the reads of the name in the whole function, conservatively. A read that makes
no reference to the array: `x.shape` (`.ndim`, `.size`), `np.shape(x)`, an argument of a fused
kernel, an operand of arithmetic, a comparison or a one-argument ufunc (a new array), a
`return` (the function ends). Any other read (a copy `y = x`, a push onto a stack, a call,
`unbroadcast(x, ...)`, a subscript, which may be a view) or any other store of `x` sets
`_fz_own_x = 0` right after its statement. Where such a read or store is not a simple statement
(a loop header, an if's test, a nested function), or a fused result of `x` is room lent by a
stack (jit/stacks.py), the name keeps its fresh arrays.
"""

import ast

from ..optimize.function import splice
from ..templates.quote import code_stmt, code_stmts

PREFIX = "_fz_"
SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)
SIZES = ("shape", "ndim", "size")


class Site:
    """One fused assignment of `name`: its allocation `O = np.empty(A.shape)` and the rebinding
    `name = O` (statements of the fused block), or room lent by a stack (`lent`); `reads`:
    whether the loop reads `name` (else `name` may have no value before it)."""

    def __init__(self, name, ndim, alloc, rebind, lent, reads):
        self.name, self.ndim, self.alloc, self.rebind, self.lent, self.reads = name, ndim, alloc, rebind, lent, reads


def recycle(fn, sites, ufuncs):
    """Rewrite `fn` (after fusion) so the fused results of each name of `sites` that qualifies
    go into its dead array (see the module docstring); `ufuncs`: the names of the np functions
    of one array that return a new one. Returns the names rewritten."""
    by_name = {}
    for site in sites:
        by_name.setdefault(site.name, []).append(site)
    done = []
    for name, its in by_name.items():
        if any(site.lent for site in its) or len({site.ndim for site in its}) != 1:
            continue
        resets = exposures(fn, name, its, ufuncs)
        if resets is None:
            continue
        _rewrite(fn, name, its, resets)
        done.append(name)
    return done


def _parents(fn):
    parents = {}
    for node in ast.walk(fn):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    return parents


def _keeps_no_reference(node, parent, kernel_calls, ufuncs):
    """Whether the read `node` (a Name) makes no new reference to its array."""
    if isinstance(parent, ast.Attribute):
        return parent.attr in SIZES
    if isinstance(parent, ast.BinOp):
        return True
    if isinstance(parent, ast.UnaryOp):
        return isinstance(parent.op, ast.USub)
    if isinstance(parent, ast.Compare):
        return True
    if isinstance(parent, ast.Call) and node in parent.args:
        if id(parent) in kernel_calls:
            return True
        func = parent.func
        return (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "np"
                and (func.attr == "shape" or func.attr in ufuncs) and len(parent.args) == 1 and not parent.keywords)
    return False


def exposures(fn, name, sites, ufuncs=()):
    """The ids of the statements after which `name`'s array may be shared (or `name` was stored
    by other code), or None where one is not a simple statement (the name is left alone)."""
    parents = _parents(fn)
    own = {id(site.rebind) for site in sites} | {id(site.alloc) for site in sites}
    kernel_calls = {id(node) for node in ast.walk(fn) if isinstance(node, ast.Call)
                     and isinstance(node.func, ast.Name) and node.func.id.startswith(f"{PREFIX}kernel_")}
    resets = set()
    for node in ast.walk(fn):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return None
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        statement, inner = _statement_of(node, parents, fn)
        if statement is None or inner:  # (a nested function, lambda or class: left alone)
            return None
        if id(statement) in own and isinstance(node.ctx, ast.Store):
            continue
        if isinstance(node.ctx, ast.Load) and _keeps_no_reference(node, parents.get(id(node)), kernel_calls, ufuncs):
            continue
        if isinstance(statement, ast.Return):
            continue
        if not isinstance(statement, SIMPLE):  # (a loop header, an if's test, ...)
            return None
        resets.add(id(statement))
    return resets


def _statement_of(node, parents, fn):
    """(the innermost statement holding `node`, whether a function, lambda or class inside `fn`
    holds it)."""
    statement, nested = None, False
    while node is not None and node is not fn:
        if statement is None and isinstance(node, ast.stmt):
            statement = node
        nested = nested or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))
        node = parents.get(id(node))
    return statement, nested


def _rewrite(fn, name, sites, resets):
    own, prev = f"{PREFIX}own_{name}", f"{PREFIX}prev_{name}"
    replace, after = {}, {key: [code_stmt("OWN = 0", OWN=own)] for key in resets}
    for site in sites:
        choose = code_stmt("if OWN >= 2 and PREV.shape == A.shape:\n    O = PREV\nelse:\n    pass",
                           OWN=own, PREV=prev, A=site.alloc.value.args[0].value, O=site.alloc.targets[0].id)
        choose.orelse = [site.alloc]
        replace[id(site.alloc)] = [choose]
        if site.reads:
            replace[id(site.rebind)] = [code_stmt("PREV = N", PREV=prev, N=name), site.rebind,
                                        code_stmt("OWN = min(OWN + 1, 2)", OWN=own)]
        else:  # (the array `name` held, if any, is not kept: no dead one to reuse next)
            replace[id(site.rebind)] = [site.rebind, code_stmt("OWN = 1", OWN=own)]
    splice(fn, replace, after)
    start = 1 if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant) else 0
    shape = "(" + "0, " * sites[0].ndim + ")"
    fn.body[start:start] = code_stmts(f"OWN = 0\nPREV = np.empty({shape})", OWN=own, PREV=prev)
