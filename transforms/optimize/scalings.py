"""A value scaled by a constant, then negated or scaled by a number, scaled once: `t = 2 * (dh * h)`,
`u = -t` as `t = -2 * (dh * h)`, `u = t`; `t = 2 * e`, `u = s * t` (s a number) as
`t = s * 2 * e`, `u = t`; within one expression, `s * (2 * e)` as `s * 2 * e`.

Forward over reverse meets both. In tanh's adjoint read back, the tangent of `1 - h * h` is
`-d_mul_h_h`, where `d_mul_h_h = 2 * (dh * h)`; the squared error's adjoint is
`b_sub_out_y = b * _mul_2_sub_out_y` of `_mul_2_sub_out_y = 2 * _sub_out_y` and a number `b`.
Each second step is an array operation of its own; the constant takes it for the price of one
number's. The bits stay the same: negating is exact and rounding symmetric (-(c * e) is
(-c) * e), and scaling by a power of two is exact (s * (2 * e) is (s * 2) * e, unless 2 * e
overflows, where the folded form is the finite one); other constants are not folded into a
scaling.

Only where `t` is read by that step alone (so no other reader sees it change), assigned once, in
the same block before it, and holds float or complex arrays (`float_array`: an unsigned integer
array cannot be scaled by a negative Python int). A number `s` is read earlier than before, at
`t`'s assignment: it must be a parameter or assigned once before it in that block. aliases.py
then drops `u = t`.
"""

import ast
import math

from .function import blocks, function, name_counts, number_lines


def _constant(node):
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _power_of_two(node):
    return _constant(node) and node.value != 0 and math.isfinite(node.value) and \
        math.frexp(abs(node.value))[0] == 0.5


def _fold_within(node, float_array, number):
    """Fold `s * (c * e)` inside one expression as `s * c * e` (c a power of two, s a number,
    `c * e` an array); whether any was."""
    changed = False
    for sub in ast.walk(node):
        if not (isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Mult)):
            continue
        for s_side, p_side in (("left", "right"), ("right", "left")):
            s, p = getattr(sub, s_side), getattr(sub, p_side)
            if not (isinstance(s, ast.Name) and number(s) and isinstance(p, ast.BinOp) and isinstance(p.op, ast.Mult)
                    and float_array(p)):
                continue
            c, e = (p.left, p.right) if _power_of_two(p.left) else (p.right, p.left)
            if _power_of_two(c) and not _constant(e):
                sub.left, sub.right = ast.BinOp(left=s, op=ast.Mult(), right=c), e
                changed = True
                break
    return changed


def fold_scalings(body, params, float_array, number):
    """`body` (statements: function.py) with negations and scalings of values scaled by a
    constant folded into the constant (see the module's docstring); `params`: the parameter
    names; `float_array(node)`: whether `node` surely holds a NumPy float or complex array;
    `number(node)`: whether it surely holds a Python float or int (whose product with an array
    has the array's dtype). A new list where anything changed."""
    fn = function(body, [])
    loads, stores = name_counts(fn)
    changed = False
    for block in list(blocks(fn)):
        made = {}  # name -> (its assignment `name = c * e` in this block so far, the index there)
        defined = {}  # name -> the index of its one assignment in this block
        for i, st in enumerate(block):
            if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
                continue
            if _fold_within(st.value, float_array, number):
                changed = True
            target, value = st.targets[0].id, st.value
            if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
                scaled, factor = value.operand, None
            elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
                scaled, factor = value.right, value.left
                if not (isinstance(scaled, ast.Name) and scaled.id in made):
                    scaled, factor = value.left, value.right
            else:
                scaled = None
            if isinstance(scaled, ast.Name) and scaled.id in made and loads.get(scaled.id) == 1:
                product, at = made[scaled.id][0].value, made[scaled.id][1]
                side = "left" if _constant(product.left) else "right"
                c = getattr(product, side)
                if factor is None:
                    setattr(product, side, ast.Constant(value=-c.value))
                elif (isinstance(factor, ast.Name) and number(factor) and _power_of_two(c)
                      and (factor.id in params and not stores.get(factor.id)
                           or stores.get(factor.id) == 1 and defined.get(factor.id, i) < at)):
                    setattr(product, side, ast.BinOp(left=ast.Name(id=factor.id, ctx=ast.Load()), op=ast.Mult(), right=c))
                else:
                    scaled = None
                if scaled is not None:
                    del made[scaled.id]
                    st.value = ast.Name(id=scaled.id, ctx=ast.Load())
                    changed = True
            elif (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult)
                    and (_constant(value.left) or _constant(value.right))
                    and stores.get(target) == 1 and float_array(st.targets[0])):
                made[target] = (st, i)
            defined[target] = i
    if not changed:
        return body
    number_lines(fn)
    return list(fn.body)
