"""Second names for one value read under the first: `bout = b_sub_out_y`, then `bout`'s reads
become `b_sub_out_y`'s.

The adjoint of `out = a + b` where shapes agree is `b_a = bout` (concrete.py dropped the
unbroadcast); each such line costs a Python assignment, and hides from in_place.py that one
array is read under two names (so the array is written into by neither). In the versions compiled for
known shapes, `a = b` of arrays goes where both names are assigned once in the whole function
(or `b` is a parameter never assigned), in the same block, and every read of `a` comes after it
in that block: there `a` and `b` hold the same object wherever `a` is read. Not where `a` is
returned, nor for numbers: there the name reads better than what it holds (`return ba, bb`),
and the cost was an array's.
"""

import ast

from ..ir.code import Comment
from .function import blocks, function, name_counts, number_lines


def _count(fn):
    loads, stores = name_counts(fn)
    where = {}
    for block in blocks(fn):
        for i, st in enumerate(block):
            for node in ast.walk(st):
                if isinstance(node, ast.Name):
                    where.setdefault(node.id, []).append((id(block), i, isinstance(node.ctx, ast.Load)))
    return loads, stores, where


def drop_aliases(body, params, array):
    """`body` (statements: function.py) with `a = b` between names removed and `a` read as `b`
    where that is the same object (see the module's docstring); `params`: the parameter names;
    `array(node)`: whether `node` surely holds a NumPy array (not a number). A new list where
    anything changed."""
    fn = function(body, [])
    loads, stores, where = _count(fn)
    returned = {x.id for st in ast.walk(fn) if isinstance(st, ast.Return) and st.value is not None
                for x in ast.walk(st.value) if isinstance(x, ast.Name)}
    renames = {}
    for block in list(blocks(fn)):
        for i, st in enumerate(block):
            if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                    and isinstance(st.value, ast.Name)):
                continue
            a, b = st.targets[0].id, st.value.id
            if a == b or a in params or a in returned or not array(st.value) or stores.get(a) != 1 \
                    or stores.get(b, 0) != (0 if b in params else 1):
                continue
            if b not in params and not any(blk == id(block) and j < i and not load for blk, j, load in where[b]):
                continue  # (b made in another block)
            if not all(blk == id(block) and j > i for blk, j, load in where[a] if load):
                continue
            renames[a] = b
    if not renames:
        return body

    def resolve(name):
        while name in renames:
            name = renames[name]
        return name

    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in renames:
            node.id = resolve(node.id)
    for block in list(blocks(fn)):
        block[:] = [st for st in block if not (isinstance(st, ast.Assign) and len(st.targets) == 1
                                               and isinstance(st.targets[0], ast.Name)
                                               and st.targets[0].id in renames)]
        if not block or all(isinstance(st, Comment) for st in block):
            block.append(ast.Pass())
    number_lines(fn)
    return list(fn.body)
