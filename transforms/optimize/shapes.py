"""Drop `unbroadcast` where shapes are provably equal, and the recomputation it alone kept alive.

The backward sweep writes `b_t1 = unbroadcast(bx, np.shape(_t1))` for every elementwise
operand: a function call and `np.shape` per operand, and, inside a loop, recomputing the
forward values (`_t1 = _sin_x * 1.0001`) only to read their shape (a 1000-step chain on a
length-10 vector ran 2.35x the hand-written sweep).

`drop_unbroadcasts` proves shape equalities symbolically, for any argument values, over the
generated body (a shape *class* is "every value ever held by a name of the class has the same
shape S", adjoints `batch + S`, where `batch` is the jacobian's leading axes). The classes
are guessed optimistically (names linked by elementwise operations, `_stack` pushes and
pops, `unbroadcast(g, np.shape(v))`) and then checked assignment by assignment: a name
whose every assignment is an elementwise operation (`+ - * / **`, unary NumPy functions)
of class members and number literals, a pop of a stack holding only class members, or an
`unbroadcast`/`unreduce` to a member's shape keeps its class; any other name is dropped and
the check repeats. Each class has one root: a parameter that is a NumPy ndarray in this
specialization (its type is in the cache key), so no list or tuple ever joins a class. By
induction over the run, all values of a class then have the root's shape. An
`unbroadcast(g, np.shape(v))` with `g` an adjoint of `v`'s class returns `g` itself and is
replaced by `g`; assignments no longer read (in program order, or anywhere in an enclosing
loop) whose value is an elementwise expression are then removed.
"""

import ast

from ..ir import syntax
from ..ir.code import is_comment
from .function import function, inner_blocks, number_lines, parameter_names, remove

_ELEMENTWISE_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
_UNARY_NP = {"sin", "cos", "tan", "tanh", "sinh", "cosh", "exp", "expm1", "log", "log1p", "sqrt",
             "square", "negative", "abs", "absolute", "arctan", "arcsin", "arccos", "arctanh",
             "arcsinh", "reciprocal", "sign"}
BOTTOM = None


def _num(node):
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _np_call(node, names):
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "np"
            and node.func.attr in names and not node.keywords)


def _shape_arg(node):
    """`v` of `np.shape(v)`, or None."""
    if _np_call(node, {"shape"}) and len(node.args) == 1 and isinstance(node.args[0], ast.Name):
        return node.args[0].id
    return None


def _helper_call(node):
    """('unbroadcast' | 'unreduce', g, v) for `unbroadcast(g, np.shape(v))` / `unreduce(g, np.shape(v), ...)`."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("unbroadcast", "unreduce") and len(node.args) >= 2 and not node.keywords):
        if node.func.id == "unbroadcast" and len(node.args) != 2:
            return None
        v = _shape_arg(node.args[1])
        if v is not None:
            return node.func.id, node.args[0], v
    return None


def _elementwise_names(node):
    """The names an elementwise expression reads (a list), or None when it is not one."""
    if isinstance(node, ast.Name):
        return [node.id]
    if _num(node):
        return []
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ELEMENTWISE_OPS):
        left, right = _elementwise_names(node.left), _elementwise_names(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _elementwise_names(node.operand)
    if _np_call(node, _UNARY_NP) and len(node.args) == 1:
        return _elementwise_names(node.args[0])
    return None


class _Classes:
    def __init__(self, names):
        self.parent = {k: k for k in names}

    def find(self, k):
        while self.parent[k] != k:
            self.parent[k] = self.parent[self.parent[k]]
            k = self.parent[k]
        return k

    def union(self, a, b):
        self.parent[self.find(a)] = self.find(b)


def _scan(tree):
    """(assignments: name -> [value nodes], pushes: names appended to `_stack`), or None when
    the body binds names in ways this pass does not read."""
    assigns = {}
    simple_targets = set()
    for node in syntax.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                             ast.Global, ast.Nonlocal, ast.comprehension, ast.NamedExpr)):
            if node is not tree:
                return None
        if isinstance(node, ast.Attribute) and (isinstance(node.ctx, ast.Store) or node.attr == "resize"):
            return None  # `a.shape = ...`, `a.resize(...)`: an array changing shape in place
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigns.setdefault(node.targets[0].id, []).append(node.value)
            simple_targets.add(id(node.targets[0]))
    stores = {node.id for node in syntax.walk(tree) if isinstance(node, ast.Name)
              and isinstance(node.ctx, ast.Store) and id(node) not in simple_targets}
    return assigns, stores


def _stack_pushes(tree):
    """The names pushed on `_stack` (each `_stack.append(name)`), or None when `_stack` is used
    otherwise (tuples pushed, passed to a helper, ...)."""
    pushed, ok_uses = [], set()
    for node in syntax.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            call = node.value
            if (isinstance(call.func, ast.Attribute) and call.func.attr == "append"
                    and isinstance(call.func.value, ast.Name) and call.func.value.id == "_stack"):
                if len(call.args) != 1 or not isinstance(call.args[0], ast.Name) or call.keywords:
                    return None
                pushed.append(call.args[0].id)
                ok_uses.add(id(call.func.value))
        if isinstance(node, ast.Assign) and _is_pop(node.value):
            ok_uses.add(id(node.value.func.value))
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List) and not node.value.elts:
            ok_uses.update(id(t) for t in node.targets)
    for node in syntax.walk(tree):
        if isinstance(node, ast.Name) and node.id == "_stack" and id(node) not in ok_uses:
            return None
    return pushed


def _is_pop(node):
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "pop"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "_stack"
            and not node.args and not node.keywords)


def shape_classes(tree, params, roots, adjoints):
    """name -> (class, level) for the names proved to hold values of one shape (level 1: an
    adjoint, `batch + shape`); `roots` are the parameters known to be ndarrays."""
    scan = _scan(tree)
    if scan is None:
        return {}
    assigns, bad = scan
    if "np" in assigns or "np" in bad or "np" in params:  # `np` is NumPy (the runtime's) unless rebound
        return {}
    pushed = _stack_pushes(tree)
    bad = set(bad) | {"np"} | (set(params) - set(roots))
    if pushed is None:  # a `_stack` this pass cannot read: its pops are unknown
        pushed, bad = [], bad | {"_stack"}
    while True:
        names = (set(assigns) | set(roots) | {"_stack"}) - bad
        level = {k: 1 if k in adjoints else 0 for k in names}
        classes = _Classes(names | {"_stack"})
        for name, values in assigns.items():
            for value in values:
                for other in _links(value):
                    if name in names and other in names:
                        classes.union(name, other)
        for p in pushed:
            if p in names:
                classes.union("_stack", p)
        failed = set()
        roots_of = {}
        for r in roots:
            if r in names:
                roots_of.setdefault(classes.find(r), []).append(r)
        for c, rs in roots_of.items():
            if len(rs) > 1:
                failed.update(k for k in names if classes.find(k) == c)
        if "_stack" in names and any(p not in names for p in pushed) or _push_level(pushed, level, names) < 0:
            failed.add("_stack")
        for name, values in assigns.items():
            if name in names and name not in failed and name != "_stack":  # (`_stack = []`: see _stack_pushes)
                for value in values:
                    got = _level_of(value, classes, level, names, pushed)
                    if got is None or got != (classes.find(name), level[name]):
                        failed.add(name)
                        break
        for name in names - {"_stack"}:  # a class with no root: no value proved
            if classes.find(name) not in roots_of:
                failed.add(name)
        failed -= bad
        if not failed:
            return {k: (classes.find(k), level[k]) for k in names if k != "_stack"}
        bad |= failed


def _push_level(pushed, level, names):
    levels = {level[p] for p in pushed if p in names}
    return levels.pop() if len(levels) == 1 else -1


def _links(node):
    """The names an assigned value's shape is linked to (a helper's `g` is not)."""
    if _is_pop(node):
        return ["_stack"]
    helper = _helper_call(node)
    if helper is not None:
        return [helper[2]]
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ELEMENTWISE_OPS):
        return _links(node.left) + _links(node.right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _links(node.operand)
    if _np_call(node, _UNARY_NP) and len(node.args) == 1:
        return _links(node.args[0])
    return []


LITERAL = "literal"


def _level_of(node, classes, level, names, pushed):
    """(class, level) of an expression, LITERAL for a number, or None when not provable."""
    if _is_pop(node):
        lv = _push_level(pushed, level, names)
        return None if lv < 0 or "_stack" not in names else (classes.find("_stack"), lv)
    helper = _helper_call(node)
    if helper is not None:
        v = helper[2]
        return (classes.find(v), 1) if v in names and level[v] == 0 else None
    if isinstance(node, ast.Name):
        return (classes.find(node.id), level[node.id]) if node.id in names else None
    if _num(node):
        return LITERAL
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _level_of(node.operand, classes, level, names, pushed)
    if _np_call(node, _UNARY_NP) and len(node.args) == 1:
        return _level_of(node.args[0], classes, level, names, pushed)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ELEMENTWISE_OPS):
        left = _level_of(node.left, classes, level, names, pushed)
        right = _level_of(node.right, classes, level, names, pushed)
        if left is None or right is None:
            return None
        if left == LITERAL or right == LITERAL:
            return right if left == LITERAL else left
        return (left[0], max(left[1], right[1])) if left[0] == right[0] else None
    return None


def drop_unbroadcasts(body, signature, roots, adjoints):
    """The `body` (lines or statements: function.py) of `def f(signature)` with
    provably-identity `unbroadcast` calls replaced by their argument and the values only
    they read no longer computed. `roots`: the parameters passed NumPy ndarrays; `signature`:
    the parameters (`ast.arguments`, names, or their text)."""
    if not roots:
        return body
    try:
        tree = body
    except SyntaxError:
        return body
    fn = number_lines(function(tree, signature))
    params = parameter_names(fn.args)
    classes = shape_classes(fn, params, roots, adjoints)
    if not classes:
        return body
    names = set(classes) | {"_stack"}
    level = {k: lv for k, (_, lv) in classes.items()}
    find = _Classes(names)
    for k, (c, _) in classes.items():
        find.parent[k] = c
    edits = set()
    for node in syntax.walk(fn):
        helper = _helper_call(node)
        if helper is None or helper[0] != "unbroadcast":
            continue
        v, got = helper[2], _level_of(helper[1], find, level, names, [])
        if v in classes and classes[v][1] == 0 and got == (classes[v][0], 1):
            edits.add(id(node))
    if not edits:
        return body
    _Unwrap(edits).visit(fn)
    return drop_dead(fn.body, _elementwise_of(classes))


class _Unwrap(ast.NodeTransformer):
    """`unbroadcast(g, shape)` calls (their ids) replaced by `g`."""

    def __init__(self, calls):
        self.calls = calls

    def visit_Call(self, node):
        self.generic_visit(node)
        return node.args[0] if id(node) in self.calls else node


def drop_dead(body, removable):
    """Remove simple assignments `name = value` whose value is never read afterwards (nor in
    an enclosing loop) and that `removable(st)` allows (a value that cannot raise). `body`:
    lines or statements (function.py).

    Removing one assignment may leave the values it read unread: rounds repeat until none
    goes. The lines are numbered once (removing statements keeps the order of the others) and
    the reads of each name are counted by line, less those of the statements removed, so a
    round costs one pass over the statements (a chain of n assignments takes n rounds)."""
    tree = body
    fn = number_lines(function(tree, []))
    reads = _reads_by_name(fn)
    verdicts = {}  # id(statement) -> removable(statement), asked once

    def allowed(st):
        if id(st) not in verdicts:
            verdicts[id(st)] = removable(st)
        return verdicts[id(st)]

    changed = False
    while True:
        last = {name: max(lines) for name, lines in reads.items() if lines}
        dead = _dead_statements(fn, allowed, last)
        if not dead:
            if changed:
                number_lines(fn)  # (as if numbered afresh: the lines a later pass reads)
            return fn.body if changed else body
        for st in dead.values():
            for line, name in _reads(st):
                lines = reads[name]
                lines[line] -= 1
                if not lines[line]:
                    del lines[line]
        remove(fn, dead)
        changed = True


def _reads(node):
    """(line, name) of each read of a name in `node`'s tree (`del n` and `n += 1` read n)."""
    for sub in syntax.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Load, ast.Del)):
            yield sub.lineno, sub.id
        elif isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name):
            yield sub.lineno, sub.target.id


def _reads_by_name(fn):
    """{name: {line: how many reads of name on that line}} of `fn`."""
    reads = {}
    for line, name in _reads(fn):
        lines = reads.setdefault(name, {})
        lines[line] = lines.get(line, 0) + 1
    return reads


def _elementwise_of(classes):
    """`name = <elementwise expression of class members>`: NumPy operations on ndarrays, nothing raised."""
    def removable(st):
        operands = _elementwise_names(st.value)
        return bool(operands) and all(o in classes for o in operands)
    return removable


def _dead_statements(fn, removable, last):
    """{id: statement} of the assignments no line reads after them (nor in an enclosing loop);
    `last`: {name: the last line reading it}. A read at line L keeps `name = ...` at line n
    when L > n or L lies in an enclosing loop, whose span holds n: when L is at least the first
    line of the outermost enclosing loop."""
    dead = {}

    def visit(body, outer_loop):
        kept = sum(not is_comment(st) for st in body)
        for st in body:
            if (kept > 1 and isinstance(st, ast.Assign) and len(st.targets) == 1
                    and isinstance(st.targets[0], ast.Name) and removable(st)):
                first_live = outer_loop.lineno if outer_loop is not None else st.lineno + 1
                if last.get(st.targets[0].id, 0) < first_live:
                    dead[id(st)] = st
                    kept -= 1
            for _, inner in inner_blocks(st):
                visit(inner, outer_loop or (st if isinstance(st, (ast.For, ast.While)) else None))
            for handler in getattr(st, "handlers", ()):
                visit(handler.body, outer_loop)
    visit(fn.body, None)
    return dead
