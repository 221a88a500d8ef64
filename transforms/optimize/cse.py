"""Common subexpressions: a value that straight-line code computes twice, computed once.

Forward over reverse (hvp) differentiates the adjoint code: the tangent of `h = np.tanh(a)` is
`dh = da * (1 - h * h)`, and the adjoint read back computes the same slope again
(`_mul_h_h = h * h`, then `_sub_1_mul_h_h = 1 - _mul_h_h`). Two rewrites share such values:

- hoisting: a later `t = e` whose `e` is also a part of an earlier statement's value moves up
  to just before that statement, which then reads `t` (`_mul_h_h = h * h`, then
  `dh = da * (1 - _mul_h_h)`); repeated, `1 - _mul_h_h` goes the same way;
- reuse: a part `e` of a later value, where an earlier `u = e` holds it, becomes `u`.

Only within one block, over a run of assignments to names whose values have no effect
(`quiet`: NumPy arithmetic on values of known types, as concrete.py infers them); any other
statement (a loop, a call that may write, `x[i] = ...`, `x += ...`) ends the run. A value
moved up or read from where it was computed first is one that raises nothing (`pure`: known
float arrays), so computing it earlier changes nothing but when it is computed. An expression is shared only where no name it reads is assigned
in between, so both places see the same values; the same operations on the same values give
the same bits. A shared value is always a part of a value (never two whole values made one),
so no two names come to hold one array that was two before: writing into one never shows in
the other.
"""

import ast

from ..ir.code import Comment
from .function import blocks, function, number_lines


def _key(node):
    return ast.dump(node, annotate_fields=False, include_attributes=False)


def _names(node):
    return {x.id for x in ast.walk(node) if isinstance(x, ast.Name)}


def _target(st):
    """The name `st` assigns, where it is `name = value`; else None."""
    if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
        return st.targets[0].id
    return None


def _parts(node):
    """The compound expressions inside `node`, `node` itself excluded, outermost first."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr) and not isinstance(child, (ast.Name, ast.Constant)):
            yield child
            yield from _parts(child)


def _replace(root, key, name):
    """Replace, inside `root` (not `root` itself), each part spelled `key` by the name; how many."""
    count = 0
    for node in ast.walk(root):
        for field, value in ast.iter_fields(node):
            items = value if isinstance(value, list) else [value]
            for k, child in enumerate(items):
                if isinstance(child, ast.expr) and not isinstance(child, (ast.Name, ast.Constant)) \
                        and _key(child) == key:
                    new = ast.Name(id=name, ctx=ast.Load())
                    if isinstance(value, list):
                        value[k] = new
                    else:
                        setattr(node, field, new)
                    count += 1
    return count


def share_subexpressions(body, pure, quiet):
    """`body` (statements: function.py) with common subexpressions computed once (see the
    module's docstring); `pure(st)`: whether the assignment `st`'s value raises nothing and
    has no effect; `quiet(st)`: whether it has no effect. A new list where anything changed."""
    fn = function(body, [])
    changed = False
    for block in list(blocks(fn)):
        changed = _share_in(block, pure, quiet) or changed
    if not changed:
        return body
    number_lines(fn)
    return list(fn.body)


def _share_in(block, pure, quiet):
    def plain(st):
        return _target(st) is not None and quiet(st)

    changed = False
    i = 0
    while i < len(block):
        st = block[i]
        if not plain(st) or isinstance(st.value, (ast.Name, ast.Constant)) or not pure(st):
            i += 1
            continue
        target, reads = _target(st), _names(st.value)
        moved = False
        for j in range(i - 1, -1, -1):  # back through the run, while its values stay the same
            earlier = block[j]
            if isinstance(earlier, Comment):
                continue
            if not plain(earlier) or _target(earlier) in reads:
                break
            if _target(earlier) == target or target in _names(earlier.value):
                break  # (`target` must keep its meaning between the two places)
            if _replace(earlier.value, _key(st.value), target):  # hoist `target = e` before it
                block.insert(j, block.pop(i))
                changed = moved = True
                break
        if moved:
            continue  # (the statement now at i is the next one)
        changed = _reuse(block, i, pure, quiet) or changed
        i += 1
    return changed


def _reuse(block, i, pure, quiet):
    """Replace the parts of `block[i]`'s value that an earlier `u = e` of the run holds by `u`."""
    st = block[i]
    held = {}  # key of a value -> the name holding it, unchanged up to statement i
    assigned = set()
    for j in range(i - 1, -1, -1):
        earlier = block[j]
        if isinstance(earlier, Comment):
            continue
        name = _target(earlier)
        if name is None or not quiet(earlier):
            break
        value = earlier.value
        if (not isinstance(value, (ast.Name, ast.Constant)) and name not in assigned and pure(earlier)
                and not (_names(value) & (assigned | {name}))):
            held.setdefault(_key(value), name)
        assigned.add(name)
    changed = False
    for part in list(_parts(st.value)):
        name = held.get(_key(part))
        if name is not None and _replace(st.value, _key(part), name):
            changed = True
    return changed
