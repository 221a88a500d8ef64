"""Loop-invariant arithmetic computed once, before the loop (versions for known argument types).

A step of the RK4 pendulum writes `-G / length * math.sin(theta)` four times; un-nested, the
forward sweep and the backward sweep's recomputation divide `-G` by `length` four times per
step, and the adjoints multiply by `(0.5 * DT)` and `(DT / 6.0)` again at every step. A
hand-written adjoint names these constants once. For a `for ... in range(n)` loop
(or `reversed(range(n))`) whose body calls only `math.*`, `np.*` and the `_stack`, this pass
moves out of the loop

- assignments `name = e` made once in the body, before any read of `name` there, and
- the largest subexpressions `e`,

where `e` is `+ - * /` of number literals, of global numbers (module constants such as `DT`,
read once instead of each step: nothing the loop calls can rebind them) and of local numbers
the loop does not assign (concrete.py's inference says which locals hold numbers). They are
computed under `if n > 0:` when they may raise (a division by a variable), so a loop that
runs zero times raises nothing new.
"""

import ast

from ..ir import syntax
from ..ir.code import Comment, is_comment
from ..templates.quote import code_expr, code_stmt
from .concrete_infer import TOP, WEAK
from .function import blocks, function, number_lines, parameter_names

_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def _number(value):
    return value is not TOP and value[0] == "a" and value[1] == () and value[2] is not bool and (
        value[2] in (int, float) or not isinstance(value[2], type) and value[2].kind in "iuf")


def _loop_count(loop, env):
    """`n` of `for _ in range(n)` / `reversed(range(n))` (an int name or literal), or None."""
    it = loop.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "reversed" and len(it.args) == 1:
        it = it.args[0]
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
            and len(it.args) == 1 and not it.keywords):
        return None
    n = it.args[0]
    if isinstance(n, ast.Constant) and type(n.value) is int:
        return n
    if isinstance(n, ast.Name) and (env.get(n.id) or ())[:3] == ("a", (), int):  # (its value known or not)
        return n
    return None


def _safe_calls(loop):
    """Whether every call in the loop is of math.*, np.* or the `_stack` (nothing that may
    rebind a global)."""
    for node in (sub for st in loop.body for sub in syntax.walk(st)):
        if isinstance(node, ast.Call):
            f = node.func
            if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                    and (f.value.id in ("math", "np") or f.value.id == "_stack" and f.attr in ("append", "pop"))):
                return False
    return True


class _Loop:
    def __init__(self, loop, env, local, global_number, before, hoisted):
        self.stored = {n.id for n in syntax.walk(loop) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        self.env, self.local, self.global_number, self.before = env, local, global_number, before
        self.hoisted = hoisted  # names computed before this loop, under its guard, by this pass

    def invariant(self, node):
        if isinstance(node, ast.Constant):
            return type(node.value) in (int, float)
        if isinstance(node, ast.Name):
            if node.id in self.stored:
                return False
            if node.id in self.local:
                return node.id in self.before and (_number(self.env.get(node.id, TOP)) or node.id in self.hoisted)
            return self.global_number(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, _OPS):
            return self.invariant(node.left) and self.invariant(node.right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return self.invariant(node.operand)
        return False


def _may_raise(node):
    for sub in syntax.walk(node):
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Div) and not (
                isinstance(sub.right, ast.Constant) and type(sub.right.value) in WEAK and sub.right.value != 0):
            return True
    return False


def _worth(node):
    """An operation on a name (a literal alone is folded by Python already)."""
    return isinstance(node, (ast.BinOp, ast.UnaryOp)) and any(isinstance(s, ast.Name) for s in syntax.walk(node))


class _Replace(ast.NodeTransformer):
    def __init__(self, loop, names, fresh):
        self.loop, self.names, self.fresh = loop, names, fresh

    def visit(self, node):
        if isinstance(node, ast.expr) and _worth(node) and self.loop.invariant(node):
            key = ast.dump(node)
            if key not in self.names:
                self.names[key] = (self.fresh(), node)
            return ast.Name(id=self.names[key][0], ctx=ast.Load())
        return super().visit(node)


def hoist_invariants(body, signature, env, global_number):
    """The `body` (lines or statements: function.py) of `def f(signature)` with the loop
    invariants of the module docstring computed before their loops; `env`:
    concrete_infer.infer's values; `global_number(name)`: whether a global name holds an int or
    float now; `signature`: the parameters (`ast.arguments`, names, or their text)."""
    tree = body
    fn = function(tree, signature)
    hoisted = {}  # name -> the loop counts under whose guard it was computed
    changed = False
    for _ in range(16):  # one loop at a time (a few loops per function)
        if not _hoist_one(fn, env, global_number, hoisted):
            break
        changed = True
    return fn.body if changed else body


def _hoist_one(fn, env, global_number, hoisted):
    number_lines(fn)
    params = set(parameter_names(fn.args, star=False))
    stored = {n.id for n in syntax.walk(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    local = params | stored
    taken = local | {n.id for n in syntax.walk(fn) if isinstance(n, ast.Name)}
    for loop in syntax.walk(fn):
        if not isinstance(loop, ast.For) or loop.orelse:
            continue
        count = _loop_count(loop, env)
        if isinstance(count, ast.Name) and (count.id not in params or count.id in stored):
            count = None  # (a count the function rebinds: two loops' guards could differ)
        if count is None or not _safe_calls(loop):
            continue
        before = params | {n.id for n in syntax.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                           and n.lineno < loop.lineno}
        guard = ast.dump(count)
        mine = {k for k, guards in hoisted.items() if guard in guards}
        if any(k not in mine for k in hoisted if k in before and k not in params):
            mine = set()  # (a name also computed under another loop's guard: not read here)
        edit = _plan(loop, _Loop(loop, env, local, global_number, before, mine), taken)
        if edit is not None:
            for name, _ in edit[1]:
                hoisted.setdefault(name, set()).add(guard)
            _apply(fn, loop, count, *edit)
            return True
    return False


def _plan(loop, inv, taken):
    """(statements moved out, hoisted assignments) for one loop, or None; the invariant
    subexpressions left in the loop are replaced by the names of their hoisted values."""
    moved, hoisted = [], []
    for st in loop.body:  # whole assignments, made once, before any read in the loop
        if (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                and _worth(st.value) and inv.invariant(st.value)):
            name = st.targets[0].id
            stores = [n for n in syntax.walk(loop) if isinstance(n, ast.Name) and n.id == name
                      and not isinstance(n.ctx, ast.Load)]
            loads = [n for n in syntax.walk(loop) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
            if len(stores) == 1 and all(n.lineno > st.lineno for n in loads):
                moved.append(st)
                inv.stored.discard(name)
                hoisted.append((name, st.value))
    if len(moved) == len([st for st in loop.body if not is_comment(st)]):
        return None
    counter = iter(range(1, 10 ** 6))

    def fresh():
        while True:
            name = f"_c{next(counter)}"
            if name not in taken:
                taken.add(name)
                return name
    names = {}
    for st in syntax.walk(loop):
        if isinstance(st, (ast.Assign, ast.AugAssign)) and st not in moved:
            st.value = _Replace(inv, names, fresh).visit(st.value)
    hoisted += [(name, node) for name, node in names.values()]
    if not hoisted:
        return None
    return moved, hoisted


def _apply(fn, loop, count, moved, hoisted):
    """The `moved` statements out of `loop`, the `hoisted` assignments before it: under
    `if count > 0:` when one may raise, after a `# loop invariants` comment otherwise."""
    doomed = {id(st) for st in moved}
    loop.body[:] = [st for st in loop.body if id(st) not in doomed]
    block = next(b for b in blocks(fn) if any(st is loop for st in b))
    head = next(i for i, st in enumerate(block) if st is loop)
    body = [code_stmt("NAME = VALUE", NAME=name, VALUE=node) for name, node in hoisted]
    guard = code_expr("COUNT > 0", COUNT=count)
    previous = block[head - 1] if head > 0 else None
    if (isinstance(previous, ast.If) and not previous.orelse and _is_header(previous.body[0])
            and ast.dump(previous.test) == ast.dump(guard)):  # the block a previous pass wrote for this loop
        previous.body += body
        return
    if any(_may_raise(node) for _, node in hoisted):
        new = [ast.If(test=guard, body=[Comment(_GUARDED, trailing=True)] + body, orelse=[])]
    else:
        header = Comment(_UNGUARDED)
        new = ([] if is_comment(previous) and previous.text == header.text and not previous.trailing
               else [header]) + body
    block[head:head] = new


_GUARDED = "(loop invariants)"
_UNGUARDED = "loop invariants"


def _is_header(st):
    return is_comment(st) and st.trailing and st.text == _GUARDED
