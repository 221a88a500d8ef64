"""The small IR the transformers work on: one operation per statement, over names.

`Op` is one registry primitive (or a copy, subscript read, tuple build, or call of a user
function); `Primal` a statement kept as written; `SetItem`, `If`, `For`, `While` the
structured rest. `normalize.py` builds it from a function's gast tree.
"""

from . import syntax
from .syntax import nodes as n


class Stmt:
    line = 0
    text = ""


class Primal(Stmt):
    """A statement that carries no gradient, kept as written."""

    def __init__(self, node, line, text, mutates=frozenset()):
        self.node, self.line, self.text = node, line, text
        # `c += v` reads `c` although its Name is a Store: without it, dead-code elimination
        # dropped `c = np.ones(2)` before a kept `for ...: c *= 2.0` (UnboundLocalError; issue 9)
        self.reads = syntax.load_names(node) | {
            sub.target.id for sub in syntax.walk(node) if isinstance(sub, n.AugAssign) and isinstance(sub.target, n.Name)}
        # `acc.append(v)` or `push(acc, v)` changes the local list `acc` in place (the normalizer
        # finds them: mutations.changed_names): the statement writes `acc` (saved as a copy before
        # it, and replayed on a copy by a loop's backward sweep; reverse.py)
        self.mutates = set(mutates)
        self.writes = syntax.store_names(node) | self.mutates
        self.pure = isinstance(node, (n.Assign, n.AugAssign, n.AnnAssign))


class Op(Stmt):
    """`target = <one operation>(args)`; `expr` is the forward expression (a gast node)."""

    def __init__(self, target, kind, expr, args, line, text, spec=None, static=None,
                 index=None, fn=None, keywords=None, container=None):
        self.target, self.kind, self.expr, self.args = target, kind, expr, args
        self.line, self.text, self.spec = line, text, spec
        self.static = static or {}
        self.index, self.fn, self.keywords, self.container = index, fn, keywords or {}, container
        self.reads = syntax.load_names(expr)
        self.writes = {target}


class SetItem(Stmt):
    """`target[index] = value`: the overwritten slice is saved and restored."""

    def __init__(self, target, index, value, line, text):
        self.target, self.index, self.value, self.line, self.text = target, index, value, line, text
        self.reads = {target} | syntax.load_names(index) | syntax.load_names(value)
        self.writes = {target}


class If(Stmt):
    def __init__(self, test, body, orelse, line, text):
        self.test, self.body, self.orelse, self.line, self.text = test, body, orelse, line, text
        self.reads = syntax.load_names(test)


class For(Stmt):
    """`for var in range(...)`: `iter` is the range call; `break_flag` names a break flag."""

    def __init__(self, var, iter, body, break_flag, line, text):
        self.var, self.iter, self.body, self.break_flag = var, iter, body, break_flag
        self.line, self.text = line, text
        self.reads = syntax.load_names(iter)


class While(Stmt):
    def __init__(self, test, body, break_flag, line, text):
        self.test, self.body, self.break_flag, self.line, self.text = test, body, break_flag, line, text
        self.reads = syntax.load_names(test)


def is_name(atom):
    return isinstance(atom, n.Name)
