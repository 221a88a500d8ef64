"""`scipy.integrate.odeint(func, y0, t, args)` (and `dualtape.scipy.integrate.odeint`) in the
transformer.

The normalizer writes the call as one `call` op of `func` on (y0, t, *args) marked `odeint`
(its forward expression stays the odeint call; `op.odeint` holds the nodes of func, rtol and
atol). Its adjoint is not `func`'s: `adjoint_stmts` has the transformer generate `func`'s
adjoint (w.r.t. y, t and the differentiated args, as for any called function) and calls
`runtime_odeint.odeint_adjoint`, which solves the adjoint ODE with it; forward mode
(`tangent_stmts`) solves the sensitivity equations with `func`'s tangent function. hvp
(forward over that adjoint) is refused (forward/helper_rules.ForwardNormalizer).
"""

import ast
import inspect

from ..ir import syntax
from . import opmap
from ..ir.syntax import nodes as n
from ..ir.nodes import Op, is_name
from ..frontend.parse import TransformError
from ..templates.quote import code_expr, code_stmt


def is_odeint(obj):
    module = getattr(obj, "__module__", None) or ""
    return getattr(obj, "__name__", None) == "odeint" and (
        module.startswith("scipy.integrate") or module == "dualtape.custom.odeint")


_ALLOWED_OFF = {"full_output": 0, "tfirst": False}  # options whose other values change what odeint returns


def normalize_call(norm, obj, e, out, s, target):
    """The `call` op of an odeint call (see the module docstring), refusing what it cannot do."""
    line, text = norm.loc(s)
    fix = "Or differentiate this code with dualtape.GradientTape / dualtape.grad (the runtime's odeint)."
    try:
        bound = inspect.signature(obj).bind(*e.args, **{k.arg: k.value for k in e.keywords})
    except TypeError as exc:
        raise norm.fail(s, f"cannot bind the arguments of odeint: {exc}", "Call it with SciPy's signature.") from None
    arguments = dict(bound.arguments)
    options = dict(arguments.pop("options", {}))  # dualtape's odeint(func, y0, t, args=(), **options)
    func_node, y0, t = arguments.pop("func"), arguments.pop("y0"), arguments.pop("t")
    args_node = arguments.pop("args", None)
    options.update(arguments)
    func = norm.resolve(func_node)
    if func is None or not opmap.is_user_function(func):
        raise norm.fail(s, f"odeint's func `{syntax.unparse(func_node)}` is not a Python function the transformer "
                        "can read (it differentiates func to solve the adjoint ODE)",
                        "Define func with `def` in a module and pass it by name. " + fix)
    if args_node is not None and not isinstance(args_node, (n.Tuple, n.List)):
        raise norm.fail(s, "odeint's args is not written out as a tuple",
                        "Pass args=(a, b, ...) literally in the call. " + fix)
    for key, value in options.items():
        if key in _ALLOWED_OFF and not (syntax.is_constant(value) and value.value == _ALLOWED_OFF[key]):
            raise norm.fail(s, f"odeint with {key}={syntax.unparse(value)} is not differentiable here",
                            f"Leave {key} at its default. " + fix)
        if norm.expr_varied(value):
            raise norm.fail(s, f"odeint's option `{key}` depends on a differentiated value",
                            "Options (rtol, atol, ...) must not depend on the inputs being differentiated.")
    extra = list(args_node.elts) if args_node is not None else []
    if len(inspect.signature(func).parameters) < 2 + len(extra):
        raise norm.fail(s, f"odeint's func `{func.__name__}` takes fewer parameters than (y, t, *args)",
                        "Define func(y, t, *args) with one parameter per entry of args.")
    norm.check_no_mutation(n.Call(func=func_node, args=[y0, t] + extra, keywords=[]), func, s)
    atoms = [norm.expr(a, out, s) for a in [y0, t] + extra]
    call = syntax.copy(e)
    call.args = [syntax.copy(func_node), syntax.copy(atoms[0]), syntax.copy(atoms[1])]
    keep = [k for k in e.keywords if k.arg not in ("func", "y0", "t", "args")]
    call.keywords = [syntax.copy(k) for k in keep]
    if extra:
        call.keywords.append(n.keyword(arg="args", value=n.Tuple(elts=[syntax.copy(a) for a in atoms[2:]],
                                                                  ctx=n.Load())))
    name = target or norm.fresh("ys")
    odeint = {key: options[key] for key in ("rtol", "atol") if key in options}
    odeint["func"] = func_node
    op = Op(target=name, kind="call", expr=call, args=atoms, line=line, text=text, fn=func, keywords={}, odeint=odeint)
    norm._emit(op, out)
    return syntax.name(name)


def adjoint_stmts(rev, st, g, loads, arg_adj, ans):
    """The adjoint of `ys = odeint(func, y0, t, args)` as generated code (standard-ast
    statements): one odeint_adjoint call (see above), then the adjoints accumulated."""
    params = list(inspect.signature(st.fn).parameters)
    active = [k for k in range(2, len(st.args)) if is_name(st.args[k]) and st.args[k].id in rev.active]
    wrt = (params[0], params[1]) + tuple(params[k] for k in active)
    kinds = {params[0]: "array", params[1]: "scalar"}
    kinds.update((params[k], rev.kinds.expr_kind(st.args[k])) for k in range(2, len(st.args)))
    helper, seed = rev.module.helper(st.fn, wrt, kinds, rev.optimize, st)
    args = [rev.code(a, loads) for a in st.args]
    by0, bt, bargs = (rev.namer.fresh("_b") for _ in range(3))
    call = code_expr("odeint_adjoint(FUNC, HELPER, SEED, ACTIVE, ANS, Y0, T, ARGS, G)",
                     FUNC=syntax.to_ast(st.odeint["func"]), HELPER=helper, SEED=ast.Constant(value=seed),
                     ACTIVE=ast.Tuple(elts=[ast.Constant(value=k - 2) for k in active], ctx=ast.Load()),
                     ANS=syntax.to_ast(ans), Y0=args[0], T=args[1], ARGS=ast.Tuple(elts=args[2:], ctx=ast.Load()), G=g)
    call.keywords = [ast.keyword(arg=key, value=syntax.to_ast(st.odeint[key]))
                     for key in ("rtol", "atol") if key in st.odeint]
    body = [code_stmt("BY0, BT, BARGS = CALL", BY0=by0, BT=bt, BARGS=bargs, CALL=call)]
    for k, adj in ((0, by0), (1, bt)):
        a = st.args[k]
        if is_name(a) and a.id in rev.active:
            rev.accumulate(body, arg_adj(a.id), adj, a.id, loads.get(a.id, a.id))
    for j, k in enumerate(active):
        a = st.args[k].id
        rev.accumulate(body, arg_adj(a), code_expr("BARGS[J]", BARGS=bargs, J=j), a, loads.get(a, a))
    return body


def tangent_stmts(fwd, st):
    """The tangent of `ys = odeint(func, y0, t, args)` as generated code (standard-ast
    statements): the call itself, then one odeint_tangent call, which solves the forward
    sensitivity equations with the transformer's tangent function of `func`."""
    if fwd.batch:
        raise TransformError(f"[{fwd.module.api}] {st.text!r}: odeint with a batch of tangents (jacfwd, hessian) "
                             "is not supported.\n  Call the jvp once per direction, or use "
                             "dualtape.transforms.grad / vjp.")
    primal = code_stmt("T = E", T=st.target, E=syntax.to_ast(st.expr))
    params = list(inspect.signature(st.fn).parameters)
    active = [k for k in range(2, len(st.args)) if is_name(st.args[k]) and st.args[k].id in fwd.active]
    wrt = (params[0],) + tuple(params[k] for k in active)
    kinds = {params[0]: "array", params[1]: "scalar"}
    kinds.update((params[k], fwd.kinds.expr_kind(st.args[k])) for k in range(2, len(st.args)))
    helper, tparams = fwd.module.forward_helper(st.fn, wrt, kinds, fwd.optimize, False, st)
    args = [syntax.to_ast(a) for a in st.args]

    def tangent(a):
        return ast.Name(id=fwd.d(a.id), ctx=ast.Load()) if is_name(a) and a.id in fwd.active else ast.Constant(value=None)

    def literal_tuple(values):
        return ast.Tuple(elts=[ast.Constant(value=v) for v in values], ctx=ast.Load())
    call = code_expr("odeint_tangent(FUNC, HELPER, TPARAMS, ACTIVE, TARGET, Y0, T, ARGS, DY0, DT, DARGS)",
                     FUNC=syntax.to_ast(st.odeint["func"]), HELPER=helper, TPARAMS=literal_tuple(tparams),
                     ACTIVE=literal_tuple(k - 2 for k in active), TARGET=st.target, Y0=args[0], T=args[1],
                     ARGS=ast.Tuple(elts=args[2:], ctx=ast.Load()), DY0=tangent(st.args[0]), DT=tangent(st.args[1]),
                     DARGS=ast.Tuple(elts=[tangent(st.args[k]) for k in active], ctx=ast.Load()))
    call.keywords = [ast.keyword(arg=key, value=syntax.to_ast(st.odeint[key]))
                     for key in ("rtol", "atol") if key in st.odeint]
    return [primal, fwd.define(st.target, call)]
