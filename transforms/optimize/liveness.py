"""Free arrays as soon as the rest of a generated function no longer reads them.

A hand-written adjoint lets Python free `x @ w1` as soon as `x @ w1 + b1` is computed; the
generated code names every intermediate value, so without help each one would live until
the function returns. For large arrays that costs memory traffic (fresh pages instead of
reused, cache-warm ones): the MLP gradient of issue #5 ran 1.15x the hand-written NumPy.

`free_dead_values` reads the top-level statements of a generated body and, after the last
statement that reads an array-valued name, writes `del name`. When the rest of the function
only needs the name's shape after the forward sweep (`unbroadcast(g, np.shape(_matmul_x_w1))`), the shape is saved
first (`_shape_matmul_x_w1 = np.shape(_matmul_x_w1)`) and the array freed at once.

Compound statements (loops, branches) count as one statement that reads and writes every
name inside them; only names bound by a top-level simple statement are ever deleted, so a
`del` never meets an unbound name.
"""

import ast
import re

IND = "    "


def _groups(lines):
    """Top-level statements: lists of lines (a compound statement keeps its indented body)."""
    groups = []
    for line in lines:
        if groups and (line.startswith(IND) or line.startswith(("else:", "elif "))):
            groups[-1].append(line)
        else:
            groups.append([line])
    return groups


class _Names(ast.NodeVisitor):
    def __init__(self):
        self.loads, self.stores, self.values = set(), set(), set()

    def visit_Call(self, node):
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr == "shape" and isinstance(f.value, ast.Name)
                and f.value.id == "np" and len(node.args) == 1 and isinstance(node.args[0], ast.Name)
                and not node.keywords):
            self.loads.add(node.args[0].id)
            self.visit(f)
            return
        self.generic_visit(node)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            self.loads.add(node.id)
            self.values.add(node.id)
        else:
            self.stores.add(node.id)


def _facts(group):
    text = "\n".join(group)
    if text.lstrip().startswith("#"):
        return None
    tree = ast.parse(text)
    v = _Names()
    v.visit(tree)
    compound = not isinstance(tree.body[0], (ast.Assign, ast.AugAssign, ast.Expr, ast.AnnAssign))
    return v.loads, v.values, v.stores, compound


def _shape_name(name, taken):
    base = "_shape" + (name if name.startswith("_") else "_" + name)
    new, k = base, 1
    while new in taken:
        k += 1
        new = f"{base}_{k}"
    taken.add(new)
    return new


def free_dead_values(lines, keep, is_array, taken):
    """`lines` (a function body, top level unindented) with `del` after each array's last use.

    keep: names never deleted (parameters, anything returned); is_array(name): whether a
    name may hold an array (scalars are not worth a line); taken: names already in use.
    """
    groups = _groups(lines)
    facts = [_facts(g) for g in groups]
    if not facts or facts[-1] is None or not groups[-1][0].startswith("return"):
        return lines
    last = len(groups) - 1
    backward = next((i for i, g in enumerate(groups) if g[0].strip() == "# backward"), last)
    keep = set(keep) | facts[-1][0]
    value_use, any_use, simple_def, any_def = {}, {}, {}, {}
    for i, f in enumerate(facts):
        if f is None:
            continue
        loads, values, stores, compound = f
        for name in loads:
            any_use[name] = i
        for name in values:
            value_use[name] = i
        for name in stores:
            any_def[name] = i
            if not compound:
                simple_def.setdefault(name, i)
    after = {}   # group index -> [(name, shape name or None)]
    rename = {}  # name -> (from group index, shape name)
    for name, first in simple_def.items():
        if name in keep or name.startswith("_stack") or not is_array(name):
            continue
        used = any_use.get(name)
        if used is None or any_def[name] > used:
            continue
        point = max(value_use.get(name, first), first)
        if point >= last - 1:
            continue  # dies at the return anyway
        shape = None
        if used > point > backward:
            continue  # the backward sweep reads its shape soon: not worth a line
        if used > point:
            shape = _shape_name(name, taken)
            rename[name] = (point, shape)
        after.setdefault(point, []).append((name, shape))
    if not after:
        return lines
    out = []
    for i, group in enumerate(groups):
        for line in group:
            if "np.shape(" in line:  # (cheap tests first: a long sum has hundreds of temporaries)
                for name, (point, shape) in rename.items():
                    if i > point and f"np.shape({name})" in line:
                        line = re.sub(rf"\bnp\.shape\({re.escape(name)}\)", shape, line)
            out.append(line)
        if i in after:
            freed = after[i]
            out += [f"{shape} = np.shape({name})" for name, shape in freed if shape]
            out.append("del " + ", ".join(name for name, _ in freed))
    return out
