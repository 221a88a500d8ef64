"""The transformer's pipeline: every stage, in order, for one function.

    front end    read the source and refuse what cannot be followed (frontend/parse),
                 desugar `:=`, refuse writes into shared memory (frontend/aliasing), keep the
                 generated code's names free (ir/naming), desugar returns, jumps and array
                 methods (frontend/desugar), normalize into the IR (frontend/normalize, calls/)
    analyses     activity, scalar kinds, what the backward sweep re-reads (ir/analysis)
    emit         the adjoint or tangent statements, as ast trees (reverse/, forward/,
                 from the rule templates of templates/)
    optimize     versions per argument type, unbroadcast removal, preaccumulation, hoisting,
                 freeing dead values (optimize/)
    codegen      the module assembled and rendered once, compiled, registered for
                 tracebacks, saved (codegen/); or compiled by numba (jit/)

`adjoint_module` and `tangent_module` make the module of one transformation; a user
function called by the transformed one gets its own helper function through the same
`adjoint` / `tangent` (the module calls back here).
"""

import functools
import sys

from .calls import star_args
from .codegen import emit
from .forward.helper_rules import ForwardNormalizer
from .forward.sweep import Forward
from .frontend.aliasing import check_writes
from .frontend.functions import function_values
from .frontend.desugar import MethodRewriter, desugar_jumps, desugar_returns, desugar_walrus
from .frontend.normalize import Normalizer
from .frontend.parse import FunctionInfo, TransformError, check_supported, error
from .ir import syntax
from .ir.analysis import walk_items
from .ir.nodes import Op
from .ir.naming import alias_foreign_globals, alias_shadowed_globals, rename_reserved, shadowed_helper
from .ir.syntax import nodes as n
from .reverse.sweeps import Reverse

RECURSION_LIMIT = 50_000


def deep_recursion(stage):
    """Run a stage with room for deep expressions: gast's conversion, deep copies and
    unparsing recurse a few frames per operand, so one sum of ~300 terms written out goes past
    Python's default limit of 1000 frames. Python 3.11+ runs Python-to-Python calls without
    C stack, so a higher limit is safe; the old one is restored afterwards."""
    @functools.wraps(stage)
    def run(*args, **kwargs):
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, RECURSION_LIMIT))
        try:
            return stage(*args, **kwargs)
        finally:
            sys.setrecursionlimit(old)
    return run


# -- the module of one transformation ------------------------------------------------------------

def new_module(api):
    """An empty module whose helpers (called user functions) go through this pipeline."""
    return emit.Module(api, adjoint=adjoint, tangent=tangent)


def adjoint_module(module, fn, wrt, kinds, optimize, name, seed_default, tuple_out=False,
                   preserve_result=False):
    """The module holding the adjoint `name` of `fn` (and its helpers); its seed parameter."""
    kinds, traced = emit.traced_kinds(kinds)
    source, seed = adjoint(module, fn, wrt, kinds, optimize, name, seed_default, tuple_out, preserve_result)
    check_complex(module)
    module.functions.append(source)
    if traced:  # tensors and dual numbers: np.* everywhere, never math.* (see docs)
        module.functions = emit.traced_module(module)
    return seed


def tangent_module(module, fn, wrt, kinds, optimize, name, batch, value_only):
    """The module holding the tangent function `name` of `fn` (and its helpers); its tangent
    parameters."""
    kinds, traced = emit.traced_kinds(kinds)
    source, params = tangent(module, fn, wrt, kinds, optimize, name, batch, value_only)
    check_complex(module)
    module.functions.append(source)
    if traced:
        module.functions = emit.traced_module(module)
    return params


# -- one function --------------------------------------------------------------------------------

class FunctionIR:
    """A normalized function: its IR body, return atoms, parameters and the names it uses."""

    def __init__(self, info, params, body, ret, ret_name, used, temps, locals_, doc, complex_literal=None,
                 real_only=()):
        self.info, self.params, self.body, self.ret, self.ret_name = info, params, body, ret, ret_name
        self.used, self.temps, self.locals, self.doc = used, temps, locals_, doc
        # the first complex literal (text, statement), and the ops without complex rules
        self.complex_literal, self.real_only = complex_literal, real_only


def params_of(fn_node):
    args = fn_node.args
    return [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]


def front_end(fn, wrt, api, normalizer=Normalizer, kinds=None, module=None):
    """The stages from a Python function to the IR, in order."""
    info = FunctionInfo(fn, api)                                    # read the source
    star_args.specialize(info, lambda where, what, fix: error(api, info, where, what, fix))  # *args: per call shape
    function_values(info, api, lambda where, what, fix: error(api, info, where, what, fix),  # nested functions,
                    kinds, module, wrt)                             # lambdas, functions as values
    check_supported(info, api)                                      # refuse what cannot be followed
    node = info.node
    desugar_walrus(node, lambda where, what, fix: error(api, info, where, what, fix))
    refused = check_writes(info, params_of(node), api, kinds,       # writes into shared memory
                           defer=module is not None and module.defer)
    if refused is not None:  # the general version: calls with other argument types may work
        module.deferred.append(refused)
    if not info.filename.startswith("<dualtape "):  # (adjoint code read back by hvp owns `_stack`)
        keep_generated_names_free(node, info, api, module)
    doc = bool(node.body and isinstance(node.body[0], n.Expr) and syntax.is_constant(node.body[0].value)
               and isinstance(node.body[0].value.value, str))
    desugar_returns(node)                                           # one return, at the end
    desugar_jumps(node)                                             # break/continue as flags
    params = params_of(node)
    locals_ = set(params) | syntax.store_names(node)
    MethodRewriter(locals_).visit(node)                             # x.sum() as np.sum(x)
    unknown = set(wrt) - set(params)
    if unknown:
        raise TransformError(f"[{api}] {info.name} has no parameter {sorted(unknown)[0]!r}; "
                             f"its parameters are {params}.\n  Pass wrt as parameter indices.")
    norm = normalizer(info, params, wrt, api)                       # one operation per statement
    ret = node.body[-1]
    body = norm.block(node.body[:-1])
    value = ret.value
    if value is None or (syntax.is_constant(value) and value.value is None):
        raise error(api, info, ret, "the function returns nothing",
                    "Return the value to differentiate (a scalar for grad).")
    ret_name = norm.fresh("out")
    if isinstance(value, n.Tuple):
        ret_atoms = [norm.expr(e, body, ret) for e in value.elts]
    elif isinstance(value, n.Name):
        ret_atoms = [value]
    else:
        ret_atoms = [norm.expr(value, body, ret, target=ret_name)]
    if module is not None:  # (names the normalizer defined: versions of called functions)
        for defined, obj in info.namespace.items():
            module.namespace.setdefault(defined, obj)
    used = norm.used | locals_
    # un-nesting's temporaries, told apart from user names by origin, not spelling
    locals_ |= {name for name in norm.used if name.startswith("_") and name not in info.namespace}
    return FunctionIR(info, params, body, ret_atoms, ret_name, used, norm.temps, locals_, doc,
                      getattr(norm, "complex_literal", None), real_only_ops(body, getattr(norm, "constant_parts", [])))


def real_only_ops(body, constant_parts):
    """The ops of a function's IR without complex rules, in order (each once): the generated
    code differentiates complex values only when there are none. `constant_parts`: values the
    front end keeps constant that complex values would differentiate (slogdet's sign)."""
    names = []
    for item in walk_items(body):
        if isinstance(item, Op) and item.kind == "prim" and not item.spec.prim.complex:
            if item.spec.prim.name not in names:
                names.append(item.spec.prim.name)
    return tuple(names) + tuple(name for name in constant_parts if name not in names)


def complex_ops(module, fir):
    """Note the function's ops without complex rules, and its first complex literal, on the
    module: `check_complex` refuses the two together once every function is generated."""
    module.real_only_ops.extend(name for name in fir.real_only if name not in module.real_only_ops)
    if fir.complex_literal is not None:
        module.complex_literals.append((fir.info, *fir.complex_literal))


def check_complex(module):
    """Refuse a complex literal in a transformation using an op without complex rules, in that
    function or in one it calls (the transformer's form of the runtime modes' per-op check);
    calls with complex arguments are refused likewise (api.py)."""
    if module.complex_literals and module.real_only_ops:
        info, literal, statement = module.complex_literals[0]
        raise error(module.api, info, statement,
                    f"the complex value `{literal}` is differentiated along with the op "
                    f"{module.real_only_ops[0]} (here or in a function called), which has no complex "
                    "derivative rules: its real rules would give a wrong derivative if complex values "
                    "reach it, and the transformer does not follow dtypes",
                    "Hold the real and imaginary parts in separate float arrays (z = a + 1j * b: "
                    "compute with a and b), compute it outside the function, use ops with complex rules "
                    "(docs/numerics.md, 'Complex numbers'), or use dualtape.grad, which checks each op.")


def keep_generated_names_free(node, info, api, module):
    """Refuse a parameter named like a value generated code uses; give globals that a local
    name shadows (or that another module names differently) aliases the generated code reads."""
    params = params_of(node)
    rename_reserved(node, params, lambda name: error(
        api, info, node, f"the parameter `{name}` has the name of a value the generated code uses",
        f"Rename the parameter (e.g. `{name}_`); generated code reads `{name}` itself."))
    locals_ = set(params) | syntax.store_names(node)
    aliases = alias_shadowed_globals(node, locals_, info.namespace)
    if module is not None:
        aliases.update(alias_foreign_globals(node, locals_, info.namespace, module.namespace))
    for alias, value in aliases.items():
        info.namespace[alias] = value  # (the normalizer resolves calls through it)
        if module is not None:
            module.namespace[alias] = value


@deep_recursion
def adjoint(module, fn, wrt, kinds, optimize, name, seed_default, tuple_out=False, preserve_result=False):
    """The adjoint function of `fn` w.r.t. parameter names `wrt`, and its seed parameter."""
    module.add_namespace(fn)
    fir = front_end(fn, wrt, module.api, kinds=kinds, module=module)
    complex_ops(module, fir)
    module.user_names |= fir.used
    rev = Reverse(fir, wrt, kinds, module, optimize)  # analyses: activity, kinds, needed values
    module.generating.append(fir.info)
    try:
        function, seed = rev.generate(name, seed_default, list(wrt), preserve_result, tuple_out)  # emit, optimize
    finally:
        module.generating.pop()
    module.container_adjoints[name] = {p for p in fir.params if p in rev.mutable}
    module.scalar_output = len(fir.ret) == 1 and (  # (the last generated: the main one)
        rev.kinds.is_scalar(fir.ret[0]) or getattr(rev, "scalar_result", False))  # (proved by optimize/concrete)
    check_shadowing(module, fir, function)
    return function, seed


@deep_recursion
def tangent(module, fn, wrt, kinds, optimize, name, batch=False, value_only=0):
    """The tangent function of `fn` w.r.t. parameter names `wrt`, and its tangent parameters;
    the last `value_only` outputs get no tangent."""
    module.add_namespace(fn)
    fir = front_end(fn, wrt, module.api, ForwardNormalizer, kinds=kinds, module=module)
    complex_ops(module, fir)
    module.generating.append(fir.info)
    try:
        function, params = Forward(fir, wrt, kinds, module, optimize, batch, value_only).generate(name)
    finally:
        module.generating.pop()
    check_shadowing(module, fir, function)
    return function, params


def check_shadowing(module, fir, function):
    """Refuse a parameter named like a runtime helper that the generated code calls."""
    name = shadowed_helper([function], fir.params)
    if name is not None:
        raise error(module.api, fir.info, fir.info.node, f"the parameter `{name}` has the name of a helper "
                    "the generated code calls", f"Rename the parameter (e.g. `{name}_`).")
