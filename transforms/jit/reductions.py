"""NumPy reductions over an axis, as numba compiles them: a rewrite of the generated trees.

numba compiles `np.sum(x, axis=k)` but not `np.max`, `np.min` or `np.mean` over an axis, nor
`keepdims=` on any of them, and softmax, log-sum-exp and batch means are written that way
(`m = np.max(z, axis=1, keepdims=True)`). Each such call becomes a compiled twin of
jit/runtime.py that computes the same array: `reduce_max(x, k)` (and `reduce_min`, `reduce_mean`,
`reduce_sum`), or `reduce_max_kept(x, k)` with `keepdims=True` (the reduced axes kept as length 1).
A call with other arguments, or whose `keepdims` is not a constant, stays as written (numba then
names it if it cannot compile it).
"""

import ast

from ..templates.quote import code_expr

TWINS = {"max": "max", "amax": "max", "min": "min", "amin": "min", "mean": "mean", "sum": "sum"}


def numpy_reduction(node):
    """(name, x, axis, keepdims) of a call `np.<reduction>(x, axis=..., keepdims=...)` this rewrite
    takes, else None."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "np"
            and func.attr in TWINS and node.args):
        return None
    if len(node.args) > 2 or any(k.arg not in ("axis", "keepdims") for k in node.keywords):
        return None
    given = dict(zip(("x", "axis"), node.args), **{k.arg: k.value for k in node.keywords})
    axis = given.get("axis", ast.Constant(None))
    keepdims = given.get("keepdims", ast.Constant(False))
    if not isinstance(keepdims, ast.Constant) or not isinstance(keepdims.value, bool):
        return None
    if isinstance(axis, ast.Constant) and axis.value is None and not keepdims.value:
        return None  # (a whole reduction: numba compiles it)
    return func.attr, given["x"], axis, keepdims.value


class Reductions(ast.NodeTransformer):
    """Reductions over an axis, or with keepdims, as calls of the compiled twins (module docstring)."""

    def visit_Call(self, node):
        self.generic_visit(node)
        found = numpy_reduction(node)
        if found is None:
            return node
        name, x, axis, keepdims = found
        twin = f"reduce_{TWINS[name]}_kept" if keepdims else f"reduce_{TWINS[name]}"
        return code_expr(f"{twin}(X, AXIS)", X=x, AXIS=axis)


def compiled_reductions(functions):
    """The functions (trees, changed in place) with their reductions over an axis as compiled twins."""
    rewrite = Reductions()
    return [rewrite.visit(fn) for fn in functions]
