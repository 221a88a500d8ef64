"""Elementwise fusion for jit=True: runs of elementwise statements on arrays of one shape become
one compiled loop, with no temporaries.

Generated adjoints are written one NumPy operation per statement (`_t1 = _sin_x * 1.0001`),
and numba compiles each statement to its own loop with its own freshly allocated array. On
small arrays in long loops the allocations are the time. Here, a run of two or more
consecutive statements `name = <elementwise expression>` in one block becomes:

    if a.shape == b.shape == ...:          # every array the run reads, and every unbroadcast target
        _fz_o_x = np.empty(a.shape); ...   # one fresh array per name the rest of the code reads
        _fz_kernel_0(a, b, s, _fz_o_x)     # one loop: each element through every statement
        x = _fz_o_x
    else:
        <the statements as they were>

(a run that reads one array needs no guard, and runs its kernel alone). A vector result that
a stack of jit/stacks.py saves next gets room in that stack's buffer instead of np.empty
(`lend_row`): the kernel writes it where the push will find it.

The kernel is a separate function compiled with NumPy's error model (division by zero gives
inf or nan, as the array statements it replaces do). Which names are arrays (float64, of one
ndim) and which are scalars is what the probe run saw (`record_kinds`); a name it saw with two
kinds, or not at all, is never fused. Elementwise means: numbers, names, + - * / **, unary
minus, the one-argument ufuncs in UFUNCS, and `unbroadcast(e, np.shape(y))` whose target `y`
is in the shape guard (so it returns `e` unchanged). A statement must read at least one array
(a scalar statement keeps its scalar value and ends the run). A run never fuses a bare copy
`y = x` in a function that writes into arrays in place (subscript stores, `+=` on arrays;
jit/stacks.py's preallocated stacks aside), where the copy and the original must stay one array.

np.sin and np.cos of an array element call branch-free twins (VECTOR, jit/vecmath.py: numba
calls libm per element, which stops LLVM from vectorizing the loop). They hold for arguments
below vecmath's LIMIT only, so such a kernel checks every argument it gives them and, where one
is outside (huge, inf, nan), runs its loop again as it was, with np.sin and np.cos.
"""

import ast
import math
import sys

import numpy as np

from ..ir.code import is_comment
from ..optimize.function import BLOCKS, arguments
from ..templates.quote import code_expr, code_stmt, code_stmts
from .recycle import Site, recycle
from .saved_twins import save_twins
from .dead_code import drop_dead

UFUNCS = frozenset({"sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "sinh", "cosh", "arctan", "arcsin",
                    "arccos", "arcsinh", "expm1", "log1p", "negative", "square", "abs", "absolute",
                    "fabs", "log2", "log10", "exp2", "reciprocal"})
VECTOR = {"sin": "_fz_sin", "cos": "_fz_cos"}  # ufuncs with a vectorizable twin (jit/vecmath.py)
_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
PREFIX = "_fz_"
MIXED = "mixed"


# -- what the probe saw --------------------------------------------------------------------------

def kind_of(value):
    """("array", ndim) for a float64 array, "scalar" for a real number, None for anything else."""
    if type(value) is np.ndarray:
        return ("array", value.ndim) if value.dtype == np.float64 and value.ndim > 0 else None
    if isinstance(value, (float, int, np.floating, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return "scalar"
    return None


class record_kinds:
    """Context manager: while the probe runs, the kind of every local of the generated functions
    (frames whose file name starts with `tag`), per function name: {function: {name: kind}}.
    Each line is looked at a few times only (the probe may run long loops)."""

    LOOKS = 3

    def __init__(self, tag):
        self.tag, self.kinds, self.seen = tag, {}, {}

    def __enter__(self):
        self.previous = sys.gettrace()
        sys.settrace(self._call)
        return self.kinds

    def __exit__(self, *exc):
        sys.settrace(self.previous)
        return False

    def _call(self, frame, event, arg):
        if not frame.f_code.co_filename.startswith(self.tag):
            return None
        return self._line

    def _line(self, frame, event, arg):
        key = (frame.f_code, frame.f_lineno)
        count = self.seen.get(key, 0)
        if count >= self.LOOKS and event == "line":
            return self._line
        self.seen[key] = count + 1
        kinds = self.kinds.setdefault(frame.f_code.co_name, {})
        for name, value in frame.f_locals.items():
            kind = kind_of(value)
            old = kinds.get(name, kind)
            kinds[name] = kind if old == kind else MIXED
        return self._line


def may_hold_arrays(functions, namespace, args):
    """Whether a name of the generated `functions` can hold an array when they are called with
    `args`: an argument is (or holds) one, or the code reads a global other than the math
    module, a number or a dualtape runtime helper (np, a user function, ...). Where none can,
    there is nothing to fuse, and the probe runs without `record_kinds` (tracing every line of
    a long scalar loop costs more than compiling it)."""
    if any(_holds_array(a) for a in args):
        return True
    from ..runtime.names import RUNTIME_NAMES
    for function in functions:
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in namespace:
                value = namespace[node.id]
                if not (node.id in RUNTIME_NAMES or value is math
                        or isinstance(value, (int, float)) and not isinstance(value, bool)):
                    return True
    return False


def _holds_array(value):
    if isinstance(value, np.ndarray):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_array(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_array(v) for v in value.values())
    return False


# -- finding runs ----------------------------------------------------------------------------------

def _np_call(node):
    """The ufunc name of `np.<ufunc>(x)`, or None."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords \
            and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
            and node.func.value.id == "np" and node.func.attr in UFUNCS:
        return node.func.attr
    return None


def _unbroadcast_target(node):
    """`unbroadcast(e, np.shape(y))`: (e, "y"), else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "unbroadcast" \
            and len(node.args) == 2 and not node.keywords:
        shape = node.args[1]
        if isinstance(shape, ast.Call) and isinstance(shape.func, ast.Attribute) and shape.func.attr == "shape" \
                and isinstance(shape.func.value, ast.Name) and shape.func.value.id == "np" \
                and len(shape.args) == 1 and isinstance(shape.args[0], ast.Name):
            return node.args[0], shape.args[0].id
    return None


def _elementwise(node, kinds, ndim):
    """(whether `node` is elementwise over arrays of `ndim` dims and scalars, whether it reads
    an array), given the kinds the probe saw."""
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float), False
    if isinstance(node, ast.Name):
        kind = kinds.get(node.id)
        return kind in ("scalar", ("array", ndim)), kind == ("array", ndim)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _OPS):
        ok1, a1 = _elementwise(node.left, kinds, ndim)
        ok2, a2 = _elementwise(node.right, kinds, ndim) if ok1 else (False, False)
        return ok1 and ok2, a1 or a2
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _elementwise(node.operand, kinds, ndim)
    if _np_call(node):
        return _elementwise(node.args[0], kinds, ndim)
    unb = _unbroadcast_target(node)
    if unb is not None:
        inner, target = unb
        if kinds.get(target) != ("array", ndim):
            return False, False
        ok, reads_array = _elementwise(inner, kinds, ndim)
        return ok and reads_array, reads_array  # (a scalar unbroadcast to an array would broadcast)
    return False, False


def _candidate(st, kinds, in_place):
    """The ndim of the arrays a fusable statement works on, else None."""
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
        return None
    target = st.targets[0].id
    kind = kinds.get(target)
    if not (isinstance(kind, tuple) and kind[0] == "array") or target.startswith(PREFIX):
        return None
    value = st.value
    unb = _unbroadcast_target(value)
    if in_place and (isinstance(value, ast.Name) or (unb is not None and isinstance(unb[0], ast.Name))):
        return None  # (a copy, which must stay one array with its original)
    ok, reads_array = _elementwise(value, kinds, kind[1])
    return kind[1] if ok and reads_array else None


def writes_in_place(fn, kinds):
    """Whether `fn` writes into an array in place (a subscript store, `+=` on an array, a call
    that writes into an argument: `out=`, np.copyto, a method such as `.fill`, the runtime's
    add_at and zero_slot); the preallocated stacks of jit/stacks.py (`_stack_*`) do not count:
    what they hold was copied in."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and (any(k.arg == "out" for k in node.keywords) or _writer(node.func)):
            return True
        if isinstance(node, ast.AugAssign):
            target = node.target
            if not (isinstance(target, ast.Name) and (kinds.get(target.id) == "scalar"
                                                      or (target.id.startswith(STACK_COUNTERS)
                                                          and target.id not in kinds))):  # (not the probe's)
                return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Subscript) and not (isinstance(t.value, ast.Name)
                                                         and t.value.id.startswith(STACK_ARRAYS)):
                    return True
    return False


def _writer(func):
    """Whether a call of `func` writes into an array it is given."""
    if isinstance(func, ast.Name):
        return func.id in WRITING_HELPERS
    return isinstance(func, ast.Attribute) and func.attr in WRITING_CALLS


WRITING_HELPERS = ("add_at", "zero_slot")  # (transforms/runtime: b[index] += g, b[index] = 0)
WRITING_CALLS = ("copyto", "put", "place", "putmask", "put_along_axis", "fill_diagonal", "fill", "sort", "resize",
                 "itemset", "partition", "setfield")
STACK_ARRAYS = ("_stack_",)  # jit/stacks.py's storage, and its counters
STACK_COUNTERS = ("_top_", "_free_", "_end_", "_lent_", "_lentn_")


# -- rewriting -------------------------------------------------------------------------------------

class _Fuser:
    def __init__(self, fn, kinds, counter):
        self.fn, self.kinds, self.counter = fn, kinds, counter
        self.in_place = writes_in_place(fn, kinds)
        self.kernels = []
        self.sites = []  # (jit/recycle.py: each fused result, where it may reuse a dead array)
        self.calls = []  # (jit/saved_twins.py: each kernel call statement, and its kernel)

    def block(self, body):
        """The statement list with its runs fused (recursing into nested blocks)."""
        for st in body:
            for field in BLOCKS:
                inner = getattr(st, field, None)
                if isinstance(inner, list) and inner and not isinstance(st, ast.FunctionDef):
                    setattr(st, field, self.block(inner))
            for handler in getattr(st, "handlers", ()):
                handler.body = self.block(handler.body)
        out, run, ndim = [], [], None
        for st in body + [None]:
            if st is not None and is_comment(st) and run:  # (comments inside a run go before its loop)
                run.append((st, None))
                continue
            cand = _candidate(st, self.kinds, self.in_place) if st is not None else None
            if cand is not None and (ndim is None or cand == ndim):
                run.append((st, cand))
                ndim = cand
                continue
            out.extend(self.fuse(run, ndim))
            run, ndim = [], None
            if cand is not None:  # (a statement of another ndim starts a new run)
                run, ndim = [(st, cand)], cand
            elif st is not None:
                out.append(st)
        return out

    def fuse(self, entries, ndim):
        """The statements of `entries` ((statement, ndim) pairs; a comment has none) as one fused
        block after the comments, or as they were (fewer than two statements, or none of their
        names read afterwards)."""
        statements = [st for st, ndim in entries if ndim is not None]
        if len(statements) < 2:
            return [st for st, _ in entries]
        comments = [st for st, cand in entries if cand is None]
        outside = exposed_reads(self.fn.body, {id(st) for st in statements})
        inputs, scalars, guard, live = [], [], [], []
        index = ast.Name(id="_fz_i", ctx=ast.Load())
        local = {}  # name assigned in the run -> its scalar local

        def scalar_of(name):
            if name in local:
                return ast.Name(id=local[name], ctx=ast.Load())
            if self.kinds.get(name) == "scalar":
                if name not in scalars:
                    scalars.append(name)
                return ast.Name(id=name, ctx=ast.Load())
            if name not in inputs:
                inputs.append(name)
            return ast.Subscript(value=ast.Name(id=name, ctx=ast.Load()), slice=index, ctx=ast.Load())

        checked = []  # the locals holding the arguments of the vectorizable calls (VECTOR)

        def lower(node, vector):
            if isinstance(node, ast.Constant):
                return ast.Constant(value=node.value)
            if isinstance(node, ast.Name):
                return scalar_of(node.id)
            if isinstance(node, ast.BinOp):
                return ast.BinOp(left=lower(node.left, vector), op=node.op, right=lower(node.right, vector))
            if isinstance(node, ast.UnaryOp):
                return ast.UnaryOp(op=node.op, operand=lower(node.operand, vector))
            if _np_call(node):
                arg = lower(node.args[0], vector)
                twin = VECTOR.get(node.func.attr)
                if vector is None or twin is None or not _elementwise(node.args[0], self.kinds, ndim)[1]:
                    return ast.Call(func=node.func, args=[arg], keywords=[])  # (a scalar's: its own type)
                name = f"{PREFIX}a{len(checked)}"
                checked.append(name)
                vector.append(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=arg))
                return code_expr("F(A)", F=twin, A=name)
            inner, target = _unbroadcast_target(node)
            if target not in local and target not in guard:
                guard.append(target)
            return lower(inner, vector)

        def lowered(vector):
            """The kernel's statements on scalars: with the vectorizable twins (vector=True) or not."""
            local.clear()
            out = []
            for j, st in enumerate(statements):
                target = st.targets[0].id
                value = lower(st.value, out if vector else None)
                name = f"{PREFIX}s{j}_{target}"
                out.append(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=value))
                local[target] = name
            return out

        body = lowered(False)
        fast = lowered(True) if any(VECTOR.get(_np_call(n)) for st in statements for n in ast.walk(st.value)) \
            else None
        for target in local:
            if outside.get(target) or target in inputs:  # (an input too: the next iteration's run reads it)
                live.append(target)
        guard = list(dict.fromkeys(inputs + [g for g in guard if g not in inputs]))
        if not guard or not live:
            return [st for st, _ in entries]
        k = next(self.counter)
        kernel = f"{PREFIX}kernel_{k}"
        outs = [f"{PREFIX}o{k}_{name}" for name in live]
        first = guard[0]

        def loop(statements):
            statements = list(statements)
            for name, out in zip(live, outs):
                statements.append(ast.Assign(targets=[ast.Subscript(value=ast.Name(id=out, ctx=ast.Load()),
                                                                    slice=index, ctx=ast.Store())],
                                             value=ast.Name(id=local[name], ctx=ast.Load())))
            node = code_stmt("for I in range(A.shape[0]):\n    pass" if ndim == 1 else
                             "for I in np.ndindex(A.shape):\n    pass", I="_fz_i", A=first)
            node.body = statements
            return node

        kernel_body = [loop(body)]
        if fast is not None:  # (the twins' loop, then the loop as it was where an argument is out of their range)
            checks = [code_stmt("_fz_ok &= abs(A) < L", A=name, L=vecmath_limit()) for name in checked]
            kernel_body = [code_stmt("_fz_ok = True"), drop_dead(loop(fast + checks)),
                           code_stmt("if not _fz_ok:\n    pass")]
            kernel_body[-1].body = [loop(body)]
        params = inputs + [g for g in guard if g not in inputs] + scalars + outs
        self.kernels.append(_function(kernel, params, kernel_body))
        call = code_stmt("K()", K=kernel)
        call.value.args = [ast.Name(id=p, ctx=ast.Load()) for p in params]
        self.calls.append((call, self.kernels[-1]))
        rows = getattr(self.fn, "rows", {}) if ndim == 1 else {}  # (jit/stacks.py: room in a rows stack)
        allocs = [code_stmt("O = np.empty(A.shape)", O=out, A=first) if name not in rows else
                  lend_row(rows[name], out, code_expr("A.shape[0]", A=first)) for name, out in zip(live, outs)]
        rebinds = [code_stmt("N = O", N=name, O=out) for name, out in zip(live, outs)]
        self.sites += [Site(name, ndim, alloc, rebind, name in rows, name in inputs)
                       for name, alloc, rebind in zip(live, allocs, rebinds)]
        fused = allocs + [call] + rebinds
        tests = [code_expr("A.shape == B.shape", A=g, B=first) for g in guard[1:]]
        if not tests:  # (one array: nothing to guard)
            return comments + fused
        test = ast.BoolOp(op=ast.And(), values=tests) if len(tests) > 1 else tests[0]
        return comments + [ast.If(test=test, body=fused, orelse=statements)]


def lend_row(stack, out, length):
    """`out` as room in the rows stack `stack` (jit/stacks.py's ROWS_LEND), or a fresh array."""
    from .stacks import ROWS_LEND, rows_names
    lend = code_stmts(ROWS_LEND, S=stack, O=out, N=length, **rows_names(stack))
    return lend[0]


def vecmath_limit():
    """jit/vecmath.py's LIMIT (that module imports numba; fusion.py does not)."""
    from .vecmath import LIMIT
    return LIMIT


def _function(name, params, body):
    """`def name(*params): body` (standard ast)."""
    fields = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}
    return ast.FunctionDef(name=name, args=arguments(params), body=body, decorator_list=[], returns=None,
                           type_comment=None, **fields)


def exposed_reads(body, skip):
    """{name: count} of the reads, outside the statements whose ids are in `skip`, that may see
    a value from elsewhere: a read is covered (not counted) when an earlier plain assignment in
    its own statement list (or an enclosing one), after any skipped statement binding the name,
    binds it, so it sees that one."""

    def walk(statements):
        out, bound = {}, set()

        def add(name, count):
            if name not in bound:
                out[name] = out.get(name, 0) + count

        for st in statements:
            nested = [inner for field in BLOCKS
                      if isinstance(inner := getattr(st, field, None), list) and not isinstance(st, ast.FunctionDef)]
            nested += [h.body for h in getattr(st, "handlers", ())]
            if id(st) not in skip:
                inner_ids = {id(n) for block in nested for s in block for n in ast.walk(s)}
                for node in ast.walk(st):
                    if id(node) not in inner_ids and isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                        add(node.id, 1)
            for block in nested:
                for name, count in walk(block).items():
                    add(name, count)
                bound -= {n.id for s in block for n in ast.walk(s)  # (the block may rebind them)
                          if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            if id(st) not in skip and isinstance(st, ast.Assign) and all(isinstance(t, ast.Name) for t in st.targets):
                bound.update(t.id for t in st.targets)
            elif id(st) in skip:  # (a skipped statement rebinds its targets: a later read sees it, not what came before)
                bound -= {n.id for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        return out

    return walk(body)


def fuse_functions(functions, kinds_by_function):
    """The functions with their elementwise runs fused, followed by the kernels they call
    (to be compiled with `error_model="numpy"`: `is_kernel`)."""
    import itertools
    counter = itertools.count()
    out, kernels = [], []
    for fn in functions:
        kinds = kinds_by_function.get(fn.name)
        if not kinds:
            out.append(fn)
            continue
        fuser = _Fuser(fn, kinds, counter)
        fn.body = fuser.block(fn.body)
        recycle(fn, fuser.sites, UFUNCS)
        save_twins(fn, fuser.calls, fuser.kernels, fuser.in_place)
        out.append(fn)
        kernels.extend(fuser.kernels)
    for fn in out + kernels:
        ast.fix_missing_locations(fn)
    return out + kernels


def is_kernel(name):
    return name.startswith(f"{PREFIX}kernel_")
