"""The generated functions as numba compiles them: typed stacks, positional parameters, ranges.

`_stack.append(v)` / `v = _stack.pop()` always name the same variables (or the same slice)
on both sides, so the saved values split into one stack per name, each LIFO on its own. A
first, uncompiled run of the generated code (the *probe*, with `probe_functions`) records
what each stack holds: Python floats, bools, ints and tuples of floats get a preallocated
NumPy array and an integer top (`_stack_x`, `_top_x`), doubled by `grow` when full; float64
vectors one buffer (ROWS below); anything else (other arrays) a list, which numba types by what
is appended. A variable set to `None` before
a loop (saved before its first value exists) starts as a zero of its stack's type. `del`
statements go (they only free memory early), `reversed(range(...))` becomes a range counting
down, and keyword-only parameters positional ones. Comments and names stay as generated.
Each rewrite goes from trees to trees; the caller renders the result once.
"""

import ast
import copy

import numpy as np

from ..ir.code import bare_tuple, is_comment
from ..templates.quote import code_expr, code_stmt, code_stmts
from ..optimize.function import inner_blocks

STACKS = ("_stack", "_dstack")


def pushed(st):
    """(stack, value) of the statement `_stack.append(value)`, else None."""
    if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
        func = st.value.func
        if (isinstance(func, ast.Attribute) and func.attr == "append" and isinstance(func.value, ast.Name)
                and func.value.id in STACKS and len(st.value.args) == 1 and not st.value.keywords):
            return func.value.id, st.value.args[0]
    return None


def popped(st):
    """(stack, target) of the statement `target = _stack.pop()`, else None."""
    if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.value, ast.Call):
        func = st.value.func
        if (isinstance(func, ast.Attribute) and func.attr == "pop" and isinstance(func.value, ast.Name)
                and func.value.id in STACKS and not st.value.args and not st.value.keywords):
            return func.value.id, st.targets[0]
    return None


def new_stack(st):
    """The stack the statement `_stack = []` makes, else None."""
    if (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
            and st.targets[0].id in STACKS and isinstance(st.value, ast.List) and not st.value.elts):
        return st.targets[0].id
    return None


def key(stack, node, is_push):
    """The stack a push or pop belongs to: what it saves (a push of `saved(v)` saves v)."""
    if is_push and isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "saved" \
            and len(node.args) == 1:
        node = node.args[0]
    return stack, ast.unparse(node)


def key_of(st):
    """The key of a push or pop statement, else None."""
    push = pushed(st)
    if push is not None:
        return key(*push, True)
    pop = popped(st)
    return None if pop is None else key(*pop, False)


def statements(functions):
    """Every statement of `functions`, in the order of the source."""
    todo = list(reversed(functions))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.stmt):
            yield node
        todo.extend(reversed(list(ast.iter_child_nodes(node))))


def channels(functions):
    """{key: readable suffix}, in order of first use."""
    keys = {}
    for st in statements(functions):
        k = key_of(st)
        if k is not None and k not in keys:
            base = "".join(c if c.isalnum() or c == "_" else " " for c in k[1]).split()
            base = "_".join(base).strip("_") or "v"
            base = ("d" if k[0] == "_dstack" else "") + base
            name, count = base, 1
            while name in keys.values():
                count += 1
                name = f"{base}{count}"
            keys[k] = name
    return keys


class StackProbe:
    """The `_stack` of the probe run: records what each stack holds, and how deep it gets."""

    def __init__(self):
        self.items, self.samples, self.depth, self.peak = [], {}, {}, {}

    def push(self, key, value):
        self.items.append(value)
        self.samples.setdefault(key, []).append(value)
        d = self.depth[key] = self.depth.get(key, 0) + 1
        self.peak[key] = max(self.peak.get(key, 0), d)

    def pop(self, key):
        self.depth[key] = self.depth.get(key, 0) - 1
        return self.items.pop()


def is_float(v):
    return isinstance(v, float)


def is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def stack_kind(samples):
    """How a stack is stored: ('f',) ('i',) ('b',) float/int/bool arrays, ('t', k) a k-column
    float array, ('rows',) float64 vectors copied into one buffer (ROWS), ('list',) a list
    (other arrays, mixed items, or nothing seen in the probe)."""
    values = [v for v in samples if v is not None]
    if not values:
        return ("list",)
    if all(isinstance(v, (bool, np.bool_)) for v in values):
        return ("b",)
    if all(is_int(v) for v in values):
        return ("i",)
    if all(is_float(v) for v in values):
        return ("f",)
    if all(isinstance(v, tuple) for v in values):
        k = len(values[0])
        if k and all(len(v) == k and all(is_float(x) for x in v) for v in values):
            return ("t", k)
    if len(values) == len(samples) and all(type(v) is np.ndarray and v.dtype == np.float64 and v.ndim == 1
                                           for v in values):
        return ("rows",)
    return ("list",)


ALLOC = {"f": "np.empty(CAP)", "i": "np.empty(CAP, dtype=np.int64)",
         "b": "np.empty(CAP, dtype=np.bool_)", "t": "np.empty((CAP, K))"}
ZERO = {"f": 0.0, "i": 0, "b": False}

# A stack of float64 vectors (any lengths), in one buffer `_stack_x` sized by the probe: each
# push copies the vector to `_free_x`, then two numbers, the end of the entry below and the
# vector's length; `_end_x` is the end of the top entry. A pop is a view of its vector.
# `_free_x` never goes down, so no push overwrites a vector a pop handed out. A push that does
# not fit raises RowsFull, and jit/compile.py compiles this specialization again with buffers
# twice as large, and runs the call again (a list for the pushes that do not fit, as before,
# cost a seventh of a short vector's step though no push ever went there).
ROWS_PUSH = """
_row_v = V
if LENT >= 0 and _row_v.shape[0] == LENTN and (_row_v.strides[0] == 8 or LENTN < 2) \\
        and _row_v.ctypes.data == S.ctypes.data + 8 * LENT:
    S[LENT + LENTN] = END
    S[LENT + LENTN + 1] = LENTN
    END = LENT + LENTN + 2
    LENT = -1
elif FREE + _row_v.shape[0] + 2 <= S.shape[0]:
    for _row_j in range(_row_v.shape[0]):
        S[FREE + _row_j] = _row_v[_row_j]
    FREE += _row_v.shape[0] + 2
    S[FREE - 2] = END
    S[FREE - 1] = _row_v.shape[0]
    END = FREE
else:
    raise RowsFull()
"""
ROWS_POP = """
_row_n = int(S[END - 1])
T = S[END - 2 - _row_n:END - 2]
END = int(S[END - 2])
"""
ROWS_NEW = """
S = np.empty(CAP)
FREE = 0
END = 0
LENT = -1
LENTN = 0
"""
# A fused loop whose result is the vector a rows stack saves next writes it into the buffer
# (jit/fusion.py): ROWS_LEND hands it the room at `_free_x` (and its entry's two numbers),
# where the push finds it and only writes those numbers (no copy, and no fresh array per step).
# A push of anything else copies above it, so the room stays the lent vector's.
ROWS_LEND = """
if FREE + N + 2 <= S.shape[0]:
    O = S[FREE:FREE + N]
    LENT = FREE
    LENTN = N
    FREE += N + 2
else:
    O = np.empty(N)
"""


def make_positional(fn):
    """`def f(x, *, dx):` as `def f(x, dx):` (numba takes no keyword-only parameters); the
    wrapper passes every argument by position."""
    a = fn.args
    if not a.kwonlyargs or a.vararg or a.kwarg:
        return
    defaults = [None] * (len(a.posonlyargs) + len(a.args) - len(a.defaults)) + list(a.defaults)
    defaults += list(a.kw_defaults)
    a.args, a.kwonlyargs, a.kw_defaults = a.args + a.kwonlyargs, [], []
    seen = False
    for i, d in enumerate(defaults):  # after a default, every parameter needs one
        seen = seen or d is not None
        if seen and d is None:
            defaults[i] = ast.Constant(None)
    first = next((i for i, d in enumerate(defaults) if d is not None), len(defaults))
    a.defaults = defaults[first:]


def counting_down(r):
    """The range that `reversed(r)` walks, counting down (numba has no `reversed`), or None:
    r is a `range(...)` call, a name holding one (`_range1 = range(m)`, a bound computed in f),
    or either cut to a break's trip count (`r[:_count1]`)."""
    count = None
    if isinstance(r, ast.Subscript) and isinstance(r.slice, ast.Slice) and r.slice.lower is None \
            and r.slice.step is None and r.slice.upper is not None:
        r, count = r.value, r.slice.upper
    is_range = isinstance(r, ast.Call) and isinstance(r.func, ast.Name) and r.func.id == "range" and not r.keywords
    u = r.args if is_range else []
    if is_range and len(u) == 1:
        return code_expr("range(N - 1, -1, -1)", N=count or u[0])
    if is_range and len(u) == 2:
        if count is None:
            return code_expr("range(B - 1, A - 1, -1)", A=u[0], B=u[1])
        return code_expr("range(A + C - 1, A - 1, -1)", A=u[0], C=count)
    if is_range and len(u) == 3 and isinstance(u[2], ast.Constant) and type(u[2].value) is int \
            and u[2].value > 0:
        k = u[2].value
        last = code_expr("max(B - A - 1, -1) // K", A=u[0], B=u[1], K=k) if count is None \
            else code_expr("C - 1", C=count)
        return code_expr("range(A + LAST * K, A - 1, -K)", A=u[0], LAST=last, K=k)
    if isinstance(r, ast.Name) or is_range:  # any range: its own start, step and length
        n = count or code_expr("len(V)", V=r)
        return code_expr("range(V.start + (N - 1) * V.step, V.start - V.step, -V.step)", V=r, N=n)
    return None


class Positional(ast.NodeTransformer):
    """Every function's parameters positional, and (numba) `reversed(...)` ranges counting down."""

    def __init__(self, ranges=False):
        self.ranges = ranges

    def visit_FunctionDef(self, node):
        make_positional(node)
        return self.generic_visit(node)

    def visit_For(self, node):
        self.generic_visit(node)
        it = node.iter
        if (self.ranges and isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "reversed"
                and len(it.args) == 1 and not it.keywords):
            down = counting_down(it.args[0])
            if down is not None:
                node.iter = down
        return node


def positional_functions(functions):
    """Copies of the generated functions with every parameter positional (`make_positional`)."""
    return [Positional().visit(copy.deepcopy(fn)) for fn in functions]


class ProbeStacks(ast.NodeTransformer):
    """Each stack a StackProbe (`_Probe` in the probe's namespace) told which key each push
    and pop is."""

    def visit_Expr(self, node):
        push = pushed(node)
        if push is None:
            return node
        stack, value = push
        return code_stmt("S.push(KEY, V)", S=stack, KEY=constant_key(key(stack, value, True)), V=value)

    def visit_Assign(self, node):
        pop = popped(node)
        if pop is not None:
            stack, target = pop
            return code_stmt("T = S.pop(KEY)", S=stack, KEY=constant_key(key(stack, target, False)), T=target)
        stack = new_stack(node)
        return node if stack is None else code_stmt("S = _Probe()", S=stack)


def constant_key(k):
    return ast.Tuple(elts=[ast.Constant(k[0]), ast.Constant(k[1])], ctx=ast.Load())


def probe_functions(functions):
    """The generated functions with their stacks recording (StackProbe), for the probe run."""
    return [ProbeStacks().visit(fn) for fn in positional_functions(functions)]


def only_deletes(body):
    """Whether a block holds `del` statements and nothing else but comments."""
    kept = [st for st in body if not is_comment(st)]
    return bool(kept) and all(isinstance(st, ast.Delete) for st in kept)


class TypedStacks(Positional):
    """The rewrite of `jit_functions` (see the module docstring)."""

    def __init__(self, names, kinds, peak, keep_blocks, widths=None, pushes=None, room=1):
        super().__init__(ranges=True)
        self.names, self.kinds, self.peak, self.keep_blocks = names, kinds, peak, keep_blocks
        self.widths = widths or {}  # rows stacks: the longest vector the probe saw
        self.pushes, self.room = pushes or {}, room  # rows stacks: how many pushes; a factor of room
        self.zero_of = {k[1]: ZERO[kind[0]] for k, kind in kinds.items() if kind[0] in ZERO}

    def storage(self, stack, value, push):
        """(the typed stack's array, its top, its kind) that `stack`'s push or pop of `value` uses."""
        k = key(stack, value, push)
        name = self.names[k]
        return f"_stack_{name}", f"_top_{name}", self.kinds[k]

    def visit_Delete(self, node):
        return ast.Pass() if self.keep_blocks else None

    def visit_Expr(self, node):
        push = pushed(node)
        if push is None:
            return self.generic_visit(node)
        s, top, kind = self.storage(*push, True)
        value = push[1]
        if kind[0] == "list":
            return code_stmt("S.append(V)", S=s, V=value)
        if kind[0] == "rows":
            if isinstance(value, ast.Name):
                self.rows[value.id] = s
            return tagged(code_stmts(ROWS_PUSH, V=value, S=s, **rows_names(s)), "rows_push", s)
        out = code_stmts("if TOP == len(S):\n    S = grow(S)", S=s, TOP=top)
        if kind[0] == "t" and isinstance(value, ast.Tuple):
            out += [code_stmt("S[TOP, J] = V", S=s, TOP=top, J=j, V=item) for j, item in enumerate(value.elts)]
        elif kind[0] == "t":
            out += [code_stmt("S[TOP, J] = V[J]", S=s, TOP=top, J=j, V=value) for j in range(kind[1])]
        else:
            out.append(code_stmt("S[TOP] = V", S=s, TOP=top, V=value))
        return out + [code_stmt("TOP += 1", TOP=top)]

    def visit_Assign(self, node):
        pop = popped(node)
        if pop is not None:
            s, top, kind = self.storage(*pop, False)
            target = pop[1]
            if kind[0] == "list":
                return code_stmt("T = S.pop()", T=target, S=s)
            if kind[0] == "rows":
                return tagged(code_stmts(ROWS_POP, T=target, S=s, **rows_names(s)), "rows_pop", s, at=1)
            if kind[0] == "t":
                items = ast.Tuple(elts=[code_expr("S[TOP, J]", S=s, TOP=top, J=j) for j in range(kind[1])],
                                  ctx=ast.Load())
                return [code_stmt("TOP -= 1", TOP=top), bare_tuple(code_stmt("T = V", T=target, V=items))]
            return [code_stmt("TOP -= 1", TOP=top), code_stmt("T = S[TOP]", T=target, S=s, TOP=top)]
        stack = new_stack(node)
        if stack is not None:
            out = []
            for k, name in self.names.items():
                if k[0] != stack:
                    continue
                kind = self.kinds[k]
                if kind[0] == "list":
                    out.append(code_stmt("S = []", S=f"_stack_{name}"))
                    continue
                if kind[0] == "rows":
                    # (every push and every fused result lent room takes its own: the pushes of a
                    # call, not its depth, twice for the lent rooms, times `room` after RowsFull)
                    cap = (2 * self.pushes.get(k, 0) + 8) * (self.widths.get(k, 0) + 2) * self.room
                    out += tagged(code_stmts(ROWS_NEW, S=f"_stack_{name}", CAP=cap, **rows_names(f"_stack_{name}")),
                                  "rows_new", f"_stack_{name}")
                    continue
                alloc = code_expr(ALLOC[kind[0]], CAP=max(8, self.peak.get(k, 0)), K=kind[-1])
                out += [code_stmt("S = A", S=f"_stack_{name}", A=alloc), code_stmt("TOP = 0", TOP=f"_top_{name}")]
            return out
        if (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Constant)
                and node.value.value is None and node.targets[0].id in self.zero_of):
            return code_stmt("X = Z", X=node.targets[0].id, Z=self.zero_of[node.targets[0].id])
        return self.generic_visit(node)


def tagged(statements, tag, stack, at=-1):
    """`statements` (a rows stack's push, pop or creation), the one at `at` (a pop's `T = ...`)
    marked with `tag`: the stack's name (jit/saved_twins.py finds them so)."""
    setattr(statements[at], tag, stack)
    return statements


def rows_names(stack):
    """The names of a rows stack's counters and overflow list (ROWS), from its buffer's name."""
    suffix = stack[len("_stack_"):]
    return {"FREE": f"_free_{suffix}", "END": f"_end_{suffix}", "LENT": f"_lent_{suffix}",
            "LENTN": f"_lentn_{suffix}"}


class RowsFull(Exception):
    """A rows stack's buffer is full: compiled code raises it, and jit/compile.py compiles that
    specialization again with `room` doubled (jit_functions) and runs the call again."""


def jit_functions(functions, samples=None, peak=None, room=1):
    """The numba-compatible twins of a module's generated functions (see the module docstring).
    `samples` / `peak`: what the probe saw on each stack (None: every stack a list); `room`:
    a factor of the rows stacks' buffers (doubled each time one was full)."""
    samples, peak = samples or {}, peak or {}
    names = channels(functions)
    kinds = {k: stack_kind(samples.get(k, ())) for k in names}
    widths = {k: max(v.shape[0] for v in samples[k]) for k, kind in kinds.items() if kind == ("rows",)}
    keep_blocks = any(only_deletes(body) for st in statements(functions) for _, body in inner_blocks(st))
    keep_blocks = keep_blocks or any(only_deletes(h.body) for st in statements(functions)
                                     for h in getattr(st, "handlers", ()))
    pushes = {k: len(samples[k]) for k in widths}
    rewrite = TypedStacks(names, kinds, peak, keep_blocks, widths, pushes, room)
    out = []
    for fn in functions:
        rewrite.rows = {}
        out.append(rewrite.visit(copy.deepcopy(fn)))
        out[-1].rows = rewrite.rows  # {name: the rows stack it is pushed to} (fusion lends them room)
    return out
