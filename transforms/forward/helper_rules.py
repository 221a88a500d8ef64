"""What the forward transformer needs beyond the registry, to read generated adjoint code.

Adjoint code (the output of `grad`) calls a few helpers that are not registry ops:
`unbroadcast`, `unreduce`, `matmul_cotangent_x`, `owned`, `add_at`, ... and pushes and pops
a `_stack`. Forward mode over that code (`hvp`, source of source) needs a JVP rule for
each helper: they are declared here as small primitives whose JVP rules are single-`return`
templates, exactly like the registry's. `_stack.append(v)` / `v = _stack.pop()` become
`Push` / `Pop` statements: the tangents travel on a second stack, `_dstack`.
"""

import inspect

from dualtape.core import dnp
from dualtape.core import rulekit
from dualtape.core.registry import LINEAR, NOT_DIFFERENTIABLE, Primitive

from ..ir import syntax
from ..calls import opmap
from .. import runtime
from .helper_rules_arrays import HELPERS_MORE, NONDIFF_MORE
from ..ir.syntax import nodes as n
from ..frontend.normalize import Normalizer, Stmt, For

ND = NOT_DIFFERENTIABLE


# -- JVP templates of the helpers (parameters: tangent, ans, *inputs) ------------------------

def unbroadcast_jvp(dg, ans, g, shape):
    return unbroadcast(dg, shape)  # noqa: F821 (a runtime name of the generated code)


def unreduce_jvp(dg, ans, g, shape, axis=None, keepdims=False):
    return unreduce(dg, shape, axis, keepdims)  # noqa: F821


def keepdims_shape_jvp(dg, ans, g, shape, axis=None, keepdims=False):
    return keepdims_shape(dg, shape, axis, keepdims)  # noqa: F821


def reshape_like_jvp(dg, ans, g, x):
    return reshape_like(dg, x)  # noqa: F821


def cast_back_jvp(dg, ans, g, x):
    return cast_back(dg, x)  # noqa: F821


def mct_x_g(dg, ans, g, x, y):
    return matmul_cotangent_x(dg, x, y)  # noqa: F821


def mct_x_y(dy, ans, g, x, y):
    return matmul_cotangent_x(g, x, dy)  # noqa: F821


def mct_y_g(dg, ans, g, x, y):
    return matmul_cotangent_y(dg, x, y)  # noqa: F821


def mct_y_x(dx, ans, g, x, y):
    return matmul_cotangent_y(g, dx, y)  # noqa: F821


def mvl_g(dg, ans, g, x, y):
    return matmul_vjp_left(dg, x, y)  # noqa: F821


def mvl_y(dy, ans, g, x, y):
    return matmul_vjp_left(g, x, dy)  # noqa: F821


def mvr_g(dg, ans, g, x, y):
    return matmul_vjp_right(dg, x, y)  # noqa: F821


def mvr_x(dx, ans, g, x, y):
    return matmul_vjp_right(g, dx, y)  # noqa: F821


def log_where_positive_jvp(dx, ans, x):
    return dnp.where(x > 0, dx / dnp.where(x > 0, x, 1.0), 0.0)


def owned_jvp(dg, ans, g):
    return owned(dg)  # noqa: F821


def primal_keepdims_jvp(dans, ans, a, shape, axis=None, keepdims=False):
    return primal_keepdims(dans, shape, axis, keepdims)  # noqa: F821 (a reshape: linear)


def prod_others_jvp(dx, ans, x, axis=None):
    return prod_others_tangent(x, dx, axis)  # noqa: F821 (zeros counted per group, as prod_others)


def div_no_nan_x(dx, ans, x, y):
    return div_no_nan(dx, y)  # noqa: F821


def div_no_nan_y(dy, ans, x, y):
    return -div_no_nan(ans * dy, y)  # noqa: F821 (d(x/y) = -(x/y) dy / y, and 0 where y == 0)


def einsum_vjp_g(dg, ans, g, operands, argnum, subscripts):
    return einsum_vjp_rows(dg, operands, argnum, subscripts)  # noqa: F821 (linear in g)


def einsum_vjp_operands(doperands, ans, g, operands, argnum, subscripts):
    return einsum_vjp_tangent(g, operands, doperands, argnum, subscripts)  # noqa: F821 (multilinear)


def _helper(name, impl, jvp, nondiff_argnums=()):
    rules = jvp if jvp is LINEAR else tuple(jvp)
    return Primitive(name, impl, rules, rules, False, False, {}, (), tuple(nondiff_argnums), False)


HELPERS = {
    rulekit.unbroadcast: _helper("unbroadcast", rulekit.unbroadcast, (unbroadcast_jvp, ND)),
    rulekit.unreduce: _helper("unreduce", rulekit.unreduce, (unreduce_jvp, ND, ND, ND)),
    rulekit.keepdims_shape: _helper("keepdims_shape", rulekit.keepdims_shape, (keepdims_shape_jvp, ND, ND, ND)),
    rulekit.reshape_like: _helper("reshape_like", rulekit.reshape_like, (reshape_like_jvp, ND)),
    rulekit.cast_back: _helper("cast_back", rulekit.cast_back, (cast_back_jvp, ND)),
    rulekit.matmul_cotangent_x: _helper("matmul_cotangent_x", rulekit.matmul_cotangent_x, (mct_x_g, ND, mct_x_y)),
    rulekit.matmul_cotangent_y: _helper("matmul_cotangent_y", rulekit.matmul_cotangent_y, (mct_y_g, mct_y_x, ND)),
    rulekit.matmul_vjp_left: _helper("matmul_vjp_left", rulekit.matmul_vjp_left, (mvl_g, ND, mvl_y)),
    rulekit.matmul_vjp_right: _helper("matmul_vjp_right", rulekit.matmul_vjp_right, (mvr_g, mvr_x, ND)),
    rulekit.log_where_positive: _helper("log_where_positive", rulekit.log_where_positive, (log_where_positive_jvp,)),
    rulekit.swap_last: _helper("swap_last", rulekit.swap_last, LINEAR),
    rulekit.matrix_scalar: _helper("matrix_scalar", rulekit.matrix_scalar, LINEAR),
    rulekit.lower_half_diagonal: _helper("lower_half_diagonal", rulekit.lower_half_diagonal, LINEAR),
    rulekit.symmetrize: _helper("symmetrize", rulekit.symmetrize, LINEAR),
    rulekit.untranspose: _helper("untranspose", rulekit.untranspose, LINEAR, (1,)),
    rulekit.concat_piece: _helper("concat_piece", rulekit.concat_piece, LINEAR, (1, 2, 3)),
    rulekit.untile: _helper("untile", rulekit.untile, LINEAR, (1, 2)),
    rulekit.unpad: _helper("unpad", rulekit.unpad, LINEAR, (1,)),
    rulekit.unindex_like: _helper("unindex_like", rulekit.unindex_like, LINEAR, (1, 2)),
    rulekit.index_rows: _helper("index_rows", rulekit.index_rows, LINEAR, (1,)),
    rulekit.primal_keepdims: _helper("primal_keepdims", rulekit.primal_keepdims, (primal_keepdims_jvp, ND, ND, ND)),
    rulekit.prod_others: _helper("prod_others", rulekit.prod_others, (prod_others_jvp, ND)),
    rulekit.div_no_nan: _helper("div_no_nan", rulekit.div_no_nan, (div_no_nan_x, div_no_nan_y)),
    rulekit.einsum_vjp_rows: _helper("einsum_vjp_rows", rulekit.einsum_vjp_rows,
                                     (einsum_vjp_g, einsum_vjp_operands, ND, ND)),
    rulekit.einsum_vjp: _helper("einsum_vjp", rulekit.einsum_vjp, (einsum_vjp_g, einsum_vjp_operands, ND, ND)),
    runtime.owned: _helper("owned", runtime.owned, (owned_jvp,)),
    runtime.saved: _helper("saved", runtime.saved, LINEAR),
    runtime.accumulate: _helper("accumulate", runtime.accumulate, LINEAR),
    runtime.add_at: _helper("add_at", runtime.add_at, LINEAR, (1,)),
    runtime.zero_slot: _helper("zero_slot", runtime.zero_slot, LINEAR, (1, 2)),
    # linear in g: a list operator's other operand is a list, a count, or not differentiated
    runtime.list_add_adjoint: _helper("list_add_adjoint", runtime.list_add_adjoint, LINEAR, (1, 2, 3)),
    runtime.list_mul_adjoint: _helper("list_mul_adjoint", runtime.list_mul_adjoint, LINEAR, (1, 2, 3)),
}
NONDIFF_HELPERS = {runtime.zeros_like, runtime.take_axis, runtime.pad_pairs, runtime.prod_others_tangent, runtime.einsum_vjp_tangent, rulekit.zeros_like, rulekit.ones_like, rulekit.step,
                   rulekit.reduced_size, rulekit.reduced_shape, rulekit.shape_of, rulekit.normalize_axis,
                   rulekit.tie_share, rulekit.inverse_permutation, rulekit.batch_shape, rulekit.negative_axis,
                   rulekit.axis_index, rulekit.einsum_sizes, runtime.solve_rhs_shape, runtime.solve_x_shape,
                   runtime.einsum_subscripts, runtime.tensordot_subscripts, runtime.diagonal_block,
                   runtime.diagonal_subscripts}
HELPERS.update(HELPERS_MORE)
NONDIFF_HELPERS |= NONDIFF_MORE


def is_rule_helper(obj):
    return inspect.isfunction(obj) and opmap.in_package(obj, *_RULE_HELPER_MODULES)


_RULE_HELPER_MODULES = ("dualtape.core.rulekit_decomp", "dualtape.core.rulekit_stats", "dualtape.core.rulekit_numpy",
                        "dualtape.core.rulekit_signal", "dualtape.core.rulekit_shapes")  # (shapes: power_slope)


def helper_spec(obj):
    prim = HELPERS.get(obj) if opmap._hashable(obj) else None
    if prim is None:
        return None
    inputs, statics = _inputs(prim)
    return opmap.OpSpec(prim, None, inputs, statics, False)


def _inputs(prim):
    try:
        params = list(inspect.signature(prim.impl).parameters.values())
    except (TypeError, ValueError):
        return ["x"], []
    return [p.name for p in params if p.kind == p.POSITIONAL_OR_KEYWORD], []


# -- the _stack idiom --------------------------------------------------------------------------

class Push(Stmt):
    """`_stack.append(value)`: the tangents of the active values it names go on `_dstack`."""

    def __init__(self, node, value, line, text):
        self.node, self.value, self.line, self.text = node, value, line, text
        self.reads = syntax.load_names(value) | {"_stack"}
        self.writes = set()


class Pop(Stmt):
    """`target = _stack.pop()`: restores names (or a slice), and their tangents from `_dstack`."""

    def __init__(self, node, target, line, text):
        self.node, self.target, self.line, self.text = node, target, line, text
        self.reads = syntax.load_names(target) | {"_stack"}
        self.writes = syntax.store_names(target) | (
            {target.value.id} if isinstance(target, n.Subscript) and isinstance(target.value, n.Name) else set())


def _is_stack_call(node, method):
    return (isinstance(node, n.Call) and isinstance(node.func, n.Attribute) and node.func.attr == method
            and isinstance(node.func.value, n.Name) and node.func.value.id == "_stack")


class ForwardNormalizer(Normalizer):
    """The reverse transformer's normalizer, plus adjoint-code helpers, the `_stack` idiom,
    and `for` loops over inactive iterables kept as written (forward mode never reverses them)."""

    def lookup(self, obj):
        return helper_spec(obj) or opmap.lookup(obj)

    def is_nondiff(self, obj):
        return (opmap._hashable(obj) and obj in NONDIFF_HELPERS) or opmap.is_nondiff(obj)

    def call(self, e, out, s, target):
        if self.resolve(e.func) is runtime.odeint_adjoint:  # hvp of odeint: forward over the adjoint ODE
            raise self.fail(s, "the Hessian of odeint (forward mode over its adjoint ODE) is not supported",
                            "Use dualtape.transforms.grad / vjp for its gradient; for second derivatives, "
                            "central differences of that gradient.")
        return super().call(e, out, s, target)

    def reads_source(self, obj):
        """User functions, and the rulekit helpers VJP rules call that have no entry in HELPERS
        (svd_vjp_u, eigh_vjp_v, norm_direction, ...): written with dnp on their inputs, they are
        differentiated by reading their source, as the tape differentiates them by running it."""
        return opmap.is_user_function(obj) or is_rule_helper(obj)

    def stmt(self, s, out):
        if isinstance(s, n.Delete):  # `del` in adjoint code frees memory: the tangent code keeps both
            return None
        if isinstance(s, n.Expr) and _is_stack_call(s.value, "append"):
            line, text = self.loc(s)
            out.append(Push(s, s.value.args[0], line, text))
            return None
        if isinstance(s, n.Assign) and len(s.targets) == 1 and _is_stack_call(s.value, "pop"):
            line, text = self.loc(s)
            out.append(Pop(s, s.targets[0], line, text))
            return None
        return super().stmt(s, out)

    def for_loop(self, s, out):
        if self._writes_varied(s) and not self.expr_varied(s.iter):
            line, text = self.loc(s)
            loop = For(syntax.unparse(s.target), s.iter, self.block(s.body), getattr(s, "_dualtape_break", None),
                       line, text)
            loop.target_node = s.target
            out.append(loop)
            return None
        return super().for_loop(s, out)
