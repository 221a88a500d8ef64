"""A negation of a scaled value folded into its constant: `t = 2 * (dh * h)`, `u = -t` as
`t = -2 * (dh * h)`, `u = t`.

Forward over reverse meets it in tanh's adjoint read back: the tangent of `1 - h * h` is
`-d_mul_h_h`, where `d_mul_h_h = 2 * (dh * h)`. The negation is an array operation of its own;
the constant takes it for free, with the same bits (negating is exact, and rounding is symmetric:
-(c * e) is (-c) * e). Only where `t` is read by that negation alone (so no other reader sees
the sign change), assigned once, in the same block before it, and holds float or complex values
(`float_array`: an unsigned integer array cannot be scaled by a negative Python int).
aliases.py then drops `u = t`.
"""

import ast

from .function import blocks, function, number_lines


def _constant(node):
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def fold_negations(body, float_array):
    """`body` (statements: function.py) with negations of values scaled by a constant folded
    into the constant (see the module's docstring); `float_array(node)`: whether `node` surely
    holds a NumPy float or complex value. A new list where anything changed."""
    fn = function(body, [])
    loads, stores = {}, {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            table = loads if isinstance(node.ctx, ast.Load) else stores
            table[node.id] = table.get(node.id, 0) + 1
    changed = False
    for block in list(blocks(fn)):
        made = {}  # name -> its assignment `name = c * e` in this block, so far
        for st in block:
            if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
                continue
            value = st.value
            if (isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) and isinstance(value.operand, ast.Name)
                    and value.operand.id in made and loads.get(value.operand.id) == 1):
                scaled = made.pop(value.operand.id).value
                side = "left" if _constant(scaled.left) else "right"
                setattr(scaled, side, ast.Constant(value=-getattr(scaled, side).value))
                st.value = value.operand
                changed = True
            elif (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult)
                    and (_constant(value.left) or _constant(value.right))
                    and stores.get(st.targets[0].id) == 1 and float_array(st.targets[0])):
                made[st.targets[0].id] = st
    if not changed:
        return body
    number_lines(fn)
    return list(fn.body)
