"""A transposed matrix that several products read from the right, copied once into row order.

Adjoints read the weights transposed: `bh = g @ w.T`, and forward over reverse reads them twice
(`bh = g @ w.T`, `dbh = dg @ w.T + g @ dw.T`). NumPy hands `w.T` to BLAS as a transposed
operand; OpenBLAS's kernels for small products are slower that way (a (32, 64) @ (64, 64).T
costs 7.4 µs, against 4.6 µs with a row-order copy, which costs 2.3 µs). So in the versions
compiled for known shapes (concrete.py), `t = w.T`, a matrix of at least MIN_SIDE rows and
columns that two or more products read as their right operand, and nothing else reads, becomes
`t = np.ascontiguousarray(w.T)`: the same values, one copy for all the products.

A copy holds what the view held only while `w` is not written: every statement from the copy
to the last product that reads it, in the same block, must assign names without effects
(`quiet`), so nothing writes into `w` in between.
"""

import ast

from ..ir.code import Comment
from .function import blocks, function, name_counts, number_lines

MIN_SIDE = 32  # (a (32, 10) @ (10, 64) product is as fast with its operand transposed)


def _transposed(st):
    """`w` where `st` is `t = w.T` of a name, else None."""
    if (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
            and isinstance(st.value, ast.Attribute) and st.value.attr == "T"
            and isinstance(st.value.value, ast.Name)):
        return st.value.value.id
    return None


def _right_operand_reads(node, name):
    """(reads of `name` in `node`, those as the right operand of `@`)."""
    reads = sum(isinstance(x, ast.Name) and x.id == name and isinstance(x.ctx, ast.Load) for x in ast.walk(node))
    right = sum(isinstance(x, ast.BinOp) and isinstance(x.op, ast.MatMult) and isinstance(x.right, ast.Name)
                and x.right.id == name for x in ast.walk(node))
    return reads, right


def contiguous_transposes(body, quiet, infer_):
    """`body` (statements: function.py) with the transposes that several products read copied
    once (see the module's docstring); `quiet(st)`: whether an assignment has no effect;
    `infer_`: concrete.py's abstract value of an expression. A new list where anything changed."""
    fn = function(body, [])
    total, stores = name_counts(fn)
    changed = False
    for block in list(blocks(fn)):
        for i, st in enumerate(block):
            if _transposed(st) is None:
                continue
            v = infer_(st.value)
            if v is None or v[0] != "a" or len(v[1]) != 2 or min(v[1]) < MIN_SIDE:
                continue
            name, reads, right = st.targets[0].id, 0, 0
            if stores.get(name) != 1:
                continue
            for later in block[i + 1:]:
                if reads == total.get(name, 0):
                    break
                if isinstance(later, Comment):
                    continue
                if not (isinstance(later, ast.Assign) and all(isinstance(t, ast.Name) for t in later.targets)
                        and quiet(later)):
                    break
                r, m = _right_operand_reads(later, name)
                reads, right = reads + r, right + m
            if reads == right == total.get(name, 0) >= 2:
                st.value = ast.Call(func=ast.Attribute(value=ast.Name(id="np", ctx=ast.Load()),
                                                       attr="ascontiguousarray", ctx=ast.Load()),
                                    args=[st.value], keywords=[])
                changed = True
    if not changed:
        return body
    number_lines(fn)
    return list(fn.body)
