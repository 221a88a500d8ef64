"""cos (or sin) of a saved vector computed once, in the forward loop, for the backward loop (jit=True).

A generated adjoint saves `x` and recomputes what the backward needs from it: `np.cos(x)` for
the derivative of `np.sin(x)`. When a fused forward loop (jit/fusion.py) already computes the
sine of the vector a rows stack (jit/stacks.py) just saved, the cosine costs one more select
(vecmath.vsincos, one reduction for both); the loop writes it into a buffer beside the stack's,
at the same place as the saved vector, and the fused backward loop that computes `cos` of the
vector popped from that stack reads it there instead.

    _fz_twin_cos_x = np.empty(S.shape[0])       # beside the stack's buffer S, made with it
    ...
    <push of x>                                  # then: the entry's mark cleared
    if <x is the top entry of S, by its address and length>:
        _fz_kernel_0_twins(x, ..., _fz_twin_cos_x, <its start>)   # writes sin and cos
        _fz_twin_cos_x[<its end>] = 1.0                           # the entry's mark
    else:
        _fz_kernel_0(x, ...)
    ...
    <pop of x>                                   # _fz_twinat_x, _fz_twinn_x: where the entry was
    if <x is that entry, by its address and length, and its mark is set>:
        _fz_kernel_1_twins(x, ..., _fz_twin_cos_x, _fz_twinat_x)   # reads cos there
    else:
        _fz_kernel_1(x, ...)

Every check is on the arrays themselves, at run time: a loop uses the buffer for the vector
whose memory is the stack entry's, whose values the cosines were computed from (entries are
never written after their push: the stack's free space only goes up, and this is refused in
functions that write into arrays in place). An entry whose forward loop did not run (a shape
guard that failed) has no mark: its backward loop computes
cos itself. The forward loop writes cos as its fallback pass (out-of-range arguments) computes
it: np.cos there.
"""

import ast
import copy

from ..optimize.function import splice, statements
from ..templates.quote import code_expr, code_stmt, code_stmts
from .dead_code import drop_dead
from .stacks import rows_names

PREFIX = "_fz_"
TWINS = {"_fz_sin": "sin", "_fz_cos": "cos"}  # vecmath twins whose argument reduction vsincos shares
SINCOS = "_fz_sincos"

TOP_ENTRY = "END >= N + 2 and S[END - 1] == N and (X.strides[0] == 8 or N < 2) " \
            "and X.ctypes.data == S.ctypes.data + 8 * (END - 2 - N)"
POPPED_ENTRY = "AT >= 0 and N == AN and (X.strides[0] == 8 or N < 2) and X.ctypes.data == S.ctypes.data + 8 * AT"


def twin_arguments(kernel):
    """{input name: {twin ufunc name: [the calls]}} of the calls of a vecmath twin on an input's
    own element in the kernel's first loop (`_fz_aK = x[_fz_i]`, then `_fz_sin(_fz_aK)`)."""
    loop = first_loop(kernel)
    if loop is None:
        return {}
    element = {}
    for st in loop.body:
        if isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Name) and _is_element(st.value):
            element[st.targets[0].id] = st.value.value.id
    found = {}
    for node in ast.walk(loop):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in TWINS \
                and len(node.args) == 1 and isinstance(node.args[0], ast.Name) and node.args[0].id in element:
            found.setdefault(element[node.args[0].id], {}).setdefault(TWINS[node.func.id], []).append(node)
    return found


def first_loop(kernel):
    """The fast loop of a kernel that calls vecmath twins (`_fz_ok = True`, the loop, the fallback)."""
    body = kernel.body
    if len(body) == 3 and isinstance(body[1], ast.For) and isinstance(body[2], ast.If):
        return body[1]
    return None


def _is_element(node):
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
        and isinstance(node.slice, ast.Name) and node.slice.id == f"{PREFIX}i"


def save_twins(fn, calls, kernels, in_place):
    """Rewrite `fn` (fused) and add kernel variants to `kernels` (see the module docstring).
    `calls`: (the kernel call statement, the kernel) of each fused loop of fn."""
    if in_place:
        return
    news = {st.rows_new: st for st in ast.walk(fn) if hasattr(st, "rows_new")}
    pushes = [st for st in ast.walk(fn) if hasattr(st, "rows_push")]  # (all of them: each clears its mark)
    pops = [st for st in ast.walk(fn) if hasattr(st, "rows_pop")]
    pushed = {name: stack for name, stack in getattr(fn, "rows", {}).items() if stack in news}
    popped = {}
    for st in pops:
        target = st.targets[0]
        if isinstance(target, ast.Name) and st.rows_pop in news:
            popped.setdefault(target.id, set()).add(st.rows_pop)
    after = _last_stack_operation(fn.body)
    producers, consumers = [], []
    for call, kernel in calls:
        for name, twins in twin_arguments(kernel).items():
            if name in pushed and after.get((id(call), pushed[name])) == "push":
                producers.append((call, kernel, name, pushed[name], twins))
            stacks = popped.get(name, ())
            if len(stacks) == 1 and after.get((id(call), next(iter(stacks)))) == "pop":
                consumers.append((call, kernel, name, next(iter(stacks)), twins))
    made = {(stack, twin) for *_, name, stack, twins in consumers for twin in twins
            if any(p[3] == stack for p in producers)}
    if not made:
        return
    replace = {}  # (one variant per kernel call: its first role)
    for call, kernel, name, stack, twins in producers:
        saved = [twin for twin in ("sin", "cos") if (stack, twin) in made]
        if saved and id(call) not in replace:
            replace[id(call)] = [_producer(call, kernel, name, stack, saved, kernels)]
    for call, kernel, name, stack, twins in consumers:
        used = [twin for twin in twins if (stack, twin) in made]
        if used and id(call) not in replace:
            replace[id(call)] = [_consumer(call, kernel, name, stack, used, kernels)]
    extra = {}
    for stack, new in news.items():
        twins = [twin for twin in ("sin", "cos") if (stack, twin) in made]
        extra[id(new)] = [code_stmt("B = np.empty(S.shape[0])", B=buffer(stack, twin), S=stack) for twin in twins] \
            + code_stmts("AT = -1\nAN = 0", **_pop_names(stack))
    for st in pushes:
        extra[id(st)] = [_clear_mark(st.rows_push, twin) for twin in ("sin", "cos") if (st.rows_push, twin) in made]
    for st in pops:  # (where the entry popped was: after `x = S[...]`, before the end moves down)
        if any(st.rows_pop == stack for stack, _ in made):
            names = _pop_names(st.rows_pop)
            extra[id(st)] = [code_stmt("AT = E - 2 - _row_n", E=rows_names(st.rows_pop)["END"], **names),
                             code_stmt("AN = _row_n", **names)]
    splice(fn, replace, extra)


def _last_stack_operation(body):
    """{(id of a statement, stack): "push" or "pop"}: the last of the two on that rows stack before
    the statement in the source (where a loop saves or where it restores: which role a fused loop
    after it plays; the checks at run time are what make either safe)."""
    last, out = {}, {}
    for st in statements(body):
        for stack, what in last.items():
            out[(id(st), stack)] = what
        if hasattr(st, "rows_push"):
            last[st.rows_push] = "push"
        if hasattr(st, "rows_pop"):
            last[st.rows_pop] = "pop"
    return out


def buffer(stack, twin):
    return f"{PREFIX}twin_{twin}_{stack[len('_stack_'):]}"


def _pop_names(stack):
    suffix = stack[len("_stack_"):]
    return {"AT": f"{PREFIX}twinat_{suffix}", "AN": f"{PREFIX}twinn_{suffix}"}


def _clear_mark(stack, twin):
    names = rows_names(stack)
    return code_stmt("B[END - 2] = 0.0", B=buffer(stack, twin), END=names["END"])


def _variant(kernel, kernels, params):
    """A copy of `kernel` named `<name>_twins` with `params` added, appended to `kernels`."""
    variant = copy.deepcopy(kernel)
    variant.name = f"{kernel.name}_twins"
    variant.args.args += [ast.arg(arg=p) for p in params]
    kernels.append(variant)
    return variant


def _call_of(call, name, extra):
    new = copy.deepcopy(call)
    new.value.func = ast.Name(id=name, ctx=ast.Load())
    new.value.args += extra
    return new


def _at(name):
    """`name[_fz_at + _fz_i]`: the value for this element in a buffer beside the stack."""
    return code_expr("B[P + I]", B=name, P=f"{PREFIX}at", I=f"{PREFIX}i")


def _producer(call, kernel, name, stack, saved, kernels):
    """The kernel call as: where `name` is the stack's top entry, the variant that writes the
    twins `saved` beside it, and sets the entry's mark; else the call as it was."""
    variant = _variant(kernel, kernels, [f"{PREFIX}b_{twin}" for twin in saved] + [f"{PREFIX}at"])
    loop, fallback = first_loop(variant), variant.body[2].body[0]
    pair = f"{PREFIX}sc_{name}"
    calls = twin_arguments(variant)[name]
    argument = next(iter(calls.values()))[0].args[0].id
    new = {id(node): code_expr("P[K]", P=pair, K=0 if twin == "sin" else 1)  # (both from one reduction)
           for twin, nodes in calls.items() for node in nodes}
    _Replace(new).visit(loop)
    at = next(i for i, st in enumerate(loop.body) if isinstance(st, ast.Assign) and st.targets[0].id == argument)
    loop.body.insert(at + 1, code_stmt("P = F(A)", P=pair, F=SINCOS, A=argument))
    for twin in saved:
        b = f"{PREFIX}b_{twin}"
        loop.body.append(code_stmt("B = P[K]", B=_at(b), P=pair, K=0 if twin == "sin" else 1))
        fallback.body.append(code_stmt(f"B = np.{twin}(X[I])", B=_at(b), X=name, I=f"{PREFIX}i"))
    names = rows_names(stack)
    start = code_expr("E - 2 - X.shape[0]", E=names["END"], X=name)
    test = code_expr(TOP_ENTRY, X=name, N=code_expr("X.shape[0]", X=name), S=stack, **names)
    buffers = [ast.Name(id=buffer(stack, twin), ctx=ast.Load()) for twin in saved]
    marks = [code_stmt("B[E - 2] = 1.0", B=buffer(stack, twin), E=names["END"]) for twin in saved]
    return ast.If(test=test, body=[_call_of(call, variant.name, buffers + [start])] + marks, orelse=[call])


def _consumer(call, kernel, name, stack, used, kernels):
    """The kernel call as: where `name` is the entry last popped from the stack and its mark is
    set, the variant that reads the twins `used` there; else the call as it was."""
    variant = _variant(kernel, kernels, [f"{PREFIX}b_{twin}" for twin in used] + [f"{PREFIX}at"])
    calls = twin_arguments(variant)[name]
    _Replace({id(node): _at(f"{PREFIX}b_{twin}") for twin in used for node in calls[twin]}).visit(variant)
    drop_dead(first_loop(variant))
    names = _pop_names(stack)
    marks = [code_expr("B[AT + X.shape[0]] == 1.0", B=buffer(stack, twin), X=name, **names) for twin in used]
    entry = code_expr(POPPED_ENTRY, X=name, N=code_expr("X.shape[0]", X=name), S=stack, **names)
    buffers = [ast.Name(id=buffer(stack, twin), ctx=ast.Load()) for twin in used]
    return ast.If(test=ast.BoolOp(op=ast.And(), values=[entry] + marks),
                  body=[_call_of(call, variant.name, buffers + [ast.Name(id=names["AT"], ctx=ast.Load())])],
                  orelse=[call])


class _Replace(ast.NodeTransformer):
    """Nodes replaced by id."""

    def __init__(self, new):
        self.new = new

    def visit(self, node):
        if id(node) in self.new:
            return self.new[id(node)]
        return super().visit(node)
