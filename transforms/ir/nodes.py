"""The small IR the transformers work on: one operation per statement, over names.

`Op` is one registry primitive (or a copy, subscript read, tuple build, or call of a user
function); `Primal` a statement kept as written; `SetItem`, `If`, `For`, `While` the
structured rest. `normalize.py` builds it from a function's gast tree.

Each kind is a small dataclass naming every field the stages read: those the front end
fills, `reads` / `writes` (computed from them), and those later stages attach (the reverse
sweeps' `saved`, a checkpointed loop's `ck`, ...), which start empty. Statements compare by
identity (passes keep them in sets and dicts).
"""

from dataclasses import dataclass, field

from . import syntax
from .syntax import nodes as n


class Stmt:
    line = 0
    text = ""


@dataclass(eq=False)
class Primal(Stmt):
    """A statement that carries no gradient, kept as written."""

    node: object
    line: int
    text: str
    # `acc.append(v)` or `push(acc, v)` changes the local list `acc` in place (the normalizer
    # finds them: mutations.changed_names): the statement writes `acc` (saved as a copy before
    # it, and replayed on a copy by a loop's backward sweep; reverse/)
    mutates: set = frozenset()
    reads: set = field(init=False)
    writes: set = field(init=False)
    pure: bool = field(init=False)
    saved: list = None  # the names the reverse sweep saves before it (reverse/sweeps.py)

    def __post_init__(self):
        node = self.node
        # `c += v` reads `c` although its Name is a Store: without it, dead-code elimination
        # would drop `c = np.ones(2)` before a kept `for ...: c *= 2.0` (UnboundLocalError)
        self.reads, writes = set(), set()
        scoped = syntax.comprehension_scoped(node)
        for sub in syntax.walk(node):
            if id(sub) in scoped:
                continue
            if isinstance(sub, n.Name) and isinstance(sub.ctx, n.Store):
                writes.add(sub.id)
            elif isinstance(sub, n.Name) and isinstance(sub.ctx, n.Load):
                self.reads.add(sub.id)
            elif isinstance(sub, n.AugAssign) and isinstance(sub.target, n.Name):
                self.reads.add(sub.target.id)
        self.mutates = set(self.mutates)
        self.writes = writes | self.mutates
        self.pure = isinstance(node, (n.Assign, n.AugAssign, n.AnnAssign))


@dataclass(eq=False, kw_only=True)
class Op(Stmt):
    """`target = <one operation>(args)`; `expr` is the forward expression (a gast node).

    kind: "prim" (a registry primitive, `spec` its OpSpec and `static` its static arguments),
    "copy", "getitem" (`index` the subscript), "pack" (a tuple, list or dict display: `container`;
    a dict's keys in `index`),
    "listop" (`+` / `*` that may be Python's list operators), "sequence" (`np.stack(ys, axis)` of
    a list held by a name: `container` "stack" or "concatenate", `static` its axis), "dict"
    (`dict(zip(keys, values))`, keys known at run time: `index` the name of their list, `args` the
    values' list) or "call" (a user function `fn`, with `keywords`)."""

    target: str
    kind: str
    expr: object
    args: list
    line: int
    text: str
    spec: object = None
    static: dict = None
    index: object = None
    fn: object = None
    keywords: dict = None
    container: str = None
    split: bool = False  # the copy `x = _t` after `_t = x * 2` (an op never reads its own target)
    odeint: dict = None  # scipy.integrate.odeint: the nodes of func, rtol, atol (calls/odeint.py)
    tangent_first: bool = False  # forward mode writes the tangent before the value (forward/ops.py)
    mutates: frozenset = frozenset()
    saved: list = None  # the names the reverse sweep saves before it (reverse/sweeps.py)
    reads: set = field(init=False)
    writes: set = field(init=False)

    def __post_init__(self):
        self.static = self.static or {}
        self.keywords = self.keywords or {}
        self.reads = syntax.load_names(self.expr)
        self.writes = {self.target}


@dataclass(eq=False)
class SetItem(Stmt):
    """`target[index] = value`: the overwritten slice is saved and restored."""

    target: str
    index: object
    value: object
    line: int
    text: str
    reads: set = field(init=False)
    writes: set = field(init=False)

    def __post_init__(self):
        self.reads = {self.target} | syntax.load_names(self.index) | syntax.load_names(self.value)
        self.writes = {self.target}


@dataclass(eq=False)
class If(Stmt):
    test: object
    body: list
    orelse: list
    line: int
    text: str
    reads: set = field(init=False)
    cond: str = None  # the name the reverse sweep saves the test in (reverse/control.py)

    def __post_init__(self):
        self.reads = syntax.load_names(self.test)


@dataclass(eq=False)
class For(Stmt):
    """`for var in range(...)`: `iter` is the range call; `break_flag` names a break flag."""

    var: str
    iter: object
    body: list
    break_flag: str
    line: int
    text: str
    reads: set = field(init=False)
    target_node: object = None  # forward mode's loop over an inactive iterable: its target as written
    # what the reverse sweep attaches (reverse/control.py, reverse/checkpoint.py)
    ck: dict = None
    count: str = None
    range_name: str = None
    range_node: object = None
    saved_after: list = None

    def __post_init__(self):
        self.reads = syntax.load_names(self.iter)


@dataclass(eq=False)
class While(Stmt):
    test: object
    body: list
    break_flag: str
    line: int
    text: str
    reads: set = field(init=False)
    count: str = None  # the reverse sweep's pass counter (reverse/control.py)

    def __post_init__(self):
        self.reads = syntax.load_names(self.test)


def is_name(atom):
    return isinstance(atom, n.Name)
