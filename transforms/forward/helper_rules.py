"""What the forward transformer needs beyond the registry, to read generated adjoint code.

Adjoint code (the output of `grad`) calls helpers that are not registry ops: `unbroadcast`,
`unreduce`, `matmul_cotangent_x`, `owned`, `add_at`, ..., and the adjoint helpers of the array
ops (stacking, diagonals, kron, diff, sorting, quantiles, convolution, interpolation, averages,
matrix powers, expm, banded and triangular solves, scipy.stats' density factors); it pushes
and pops a `_stack`. Forward mode over that code (`hvp`, source of source) needs a JVP rule
for each helper: they are declared here as small primitives (`HELPERS`) whose JVP rules are
single-`return` templates, exactly like the registry's.

Most array helpers are linear in the cotangent and read their other inputs for shapes,
indices or sorted orders only (piecewise constant): LINEAR, with those inputs
non-differentiable. The bilinear ones (kron, convolve) say which input the result is linear
in by `argnum`; the rest get a tangent function of `runtime/tangents.py`. The decomposition
helpers (svd, eigh, qr, pinv, norm) are read from their source instead
(`ForwardNormalizer.reads_source`).

`_stack.append(v)` / `v = _stack.pop()` become `Push` / `Pop` statements: the tangents travel
on a second stack, `_dstack`.
"""

import inspect

from dualtape.core import dnp
from dualtape.core import rulekit
from dualtape.core.rulekit import decompositions as rulekit_decompositions
from dualtape.core.registry import LINEAR, NOT_DIFFERENTIABLE, Primitive

from ..ir import syntax
from ..calls import opmap
from .. import runtime
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


# -- JVP templates of the array ops' adjoint helpers (names are the generated code's) --------

def kron_g(dg, ans, g, a, b, argnum):
    return kron_vjp(dg, a, b, argnum)  # noqa: F821


def kron_a(da, ans, g, a, b, argnum):
    return kron_vjp(g, da, b, argnum) * (argnum == 1)  # noqa: F821 (a only gives a shape when argnum is 0)


def kron_b(db, ans, g, a, b, argnum):
    return kron_vjp(g, a, db, argnum) * (argnum == 0)  # noqa: F821


def conv_g(dg, ans, g, a, v, mode, argnum, correlate=False):
    return convolve_vjp(dg, a, v, mode, argnum, correlate)  # noqa: F821


def conv_a(da, ans, g, a, v, mode, argnum, correlate=False):
    return convolve_vjp(g, da, v, mode, argnum, correlate) * (argnum == 1)  # noqa: F821


def conv_v(dv, ans, g, a, v, mode, argnum, correlate=False):
    return convolve_vjp(g, a, dv, mode, argnum, correlate) * (argnum == 0)  # noqa: F821


def mp_g(dg, ans, g, a, n):
    return matrix_power_vjp(dg, a, n)  # noqa: F821


def mp_a(da, ans, g, a, n):
    return matrix_power_vjp_tangent(g, a, da, n)  # noqa: F821


def ef_a(da, ans, a, e, transpose=False):
    return expm_frechet_tangent(a, e, da, transpose)  # noqa: F821


def ef_e(de, ans, a, e, transpose=False):
    return expm_frechet(a, de, transpose)  # noqa: F821 (linear in the direction)


def iw_x(dx, ans, x, xp):
    return interp_weights_tangent(dx, x, xp)  # noqa: F821


def density_ans(dans, ans, a, method):
    return dans * float(not method.startswith("log"))  # density_factor: ans, or 1.0 for log-densities


def lsf_x(dx, ans, x, loc, scale, i):
    return dx * (-1.0 / scale) * (i == 2)  # loc_scale_factor: constants unless i == 2: -(x - loc) / scale


def lsf_loc(dloc, ans, x, loc, scale, i):
    return dloc / scale * (i == 2)


def lsf_scale(dscale, ans, x, loc, scale, i):
    return dscale * (x - loc) / (scale * scale) * (i == 2)


def mm_jvp(dx, ans, *xs, argnum):
    return multi_matmul(*replace_at(xs, argnum, dx))  # noqa: F821 (rulekit's matmul_chain: multilinear)


def abs_cotangent_g(dg, ans, g, x, absolute):
    return abs_cotangent(dg, x, absolute)  # noqa: F821 (real x: sign(x) is piecewise constant)


def helper(name, impl, jvp, nondiff_argnums=(), variadic=False):
    """A helper as a primitive whose JVP rules are `jvp` (one per input, or LINEAR; one rule
    for all inputs when `variadic`), its inputs at `nondiff_argnums` not differentiated."""
    rules = jvp if jvp is LINEAR or variadic else tuple(jvp)
    return Primitive(name=name, impl=impl, vjp=rules, jvp=rules, elementwise=False, variadic=variadic, domain={},
                     samples=(), nondiff_argnums=tuple(nondiff_argnums), batch_jvp=False)


HELPERS = {
    rulekit.unbroadcast: helper("unbroadcast", rulekit.unbroadcast, (unbroadcast_jvp, ND)),
    rulekit.unreduce: helper("unreduce", rulekit.unreduce, (unreduce_jvp, ND, ND, ND)),
    rulekit.keepdims_shape: helper("keepdims_shape", rulekit.keepdims_shape, (keepdims_shape_jvp, ND, ND, ND)),
    rulekit.reshape_like: helper("reshape_like", rulekit.reshape_like, (reshape_like_jvp, ND)),
    rulekit.cast_back: helper("cast_back", rulekit.cast_back, (cast_back_jvp, ND)),
    rulekit.matmul_cotangent_x: helper("matmul_cotangent_x", rulekit.matmul_cotangent_x, (mct_x_g, ND, mct_x_y)),
    rulekit.matmul_cotangent_y: helper("matmul_cotangent_y", rulekit.matmul_cotangent_y, (mct_y_g, mct_y_x, ND)),
    rulekit.matmul_vjp_left: helper("matmul_vjp_left", rulekit.matmul_vjp_left, (mvl_g, ND, mvl_y)),
    rulekit.matmul_vjp_right: helper("matmul_vjp_right", rulekit.matmul_vjp_right, (mvr_g, mvr_x, ND)),
    rulekit.log_where_positive: helper("log_where_positive", rulekit.log_where_positive, (log_where_positive_jvp,)),
    rulekit.swap_last: helper("swap_last", rulekit.swap_last, LINEAR),
    rulekit.matrix_scalar: helper("matrix_scalar", rulekit.matrix_scalar, LINEAR),
    rulekit.lower_half_diagonal: helper("lower_half_diagonal", rulekit.lower_half_diagonal, LINEAR),
    rulekit.symmetrize: helper("symmetrize", rulekit.symmetrize, LINEAR),
    rulekit.untranspose: helper("untranspose", rulekit.untranspose, LINEAR, (1,)),
    rulekit.concat_piece: helper("concat_piece", rulekit.concat_piece, LINEAR, (1, 2, 3)),
    rulekit.untile: helper("untile", rulekit.untile, LINEAR, (1, 2)),
    rulekit.unpad: helper("unpad", rulekit.unpad, LINEAR, (1,)),
    rulekit.unindex_like: helper("unindex_like", rulekit.unindex_like, LINEAR, (1, 2)),
    rulekit.index_rows: helper("index_rows", rulekit.index_rows, LINEAR, (1,)),
    rulekit.primal_keepdims: helper("primal_keepdims", rulekit.primal_keepdims, (primal_keepdims_jvp, ND, ND, ND)),
    rulekit.prod_others: helper("prod_others", rulekit.prod_others, (prod_others_jvp, ND)),
    rulekit.div_no_nan: helper("div_no_nan", rulekit.div_no_nan, (div_no_nan_x, div_no_nan_y)),
    rulekit.einsum_vjp_rows: helper("einsum_vjp_rows", rulekit.einsum_vjp_rows,
                                    (einsum_vjp_g, einsum_vjp_operands, ND, ND)),
    rulekit.einsum_vjp: helper("einsum_vjp", rulekit.einsum_vjp, (einsum_vjp_g, einsum_vjp_operands, ND, ND)),
    runtime.owned: helper("owned", runtime.owned, (owned_jvp,)),
    runtime.saved: helper("saved", runtime.saved, LINEAR),
    runtime.accumulate: helper("accumulate", runtime.accumulate, LINEAR),
    runtime.add_at: helper("add_at", runtime.add_at, LINEAR, (1,)),
    runtime.zero_slot: helper("zero_slot", runtime.zero_slot, LINEAR, (1, 2)),
    # linear in g: a list operator's other operand is a list, a count, or not differentiated
    runtime.list_add_adjoint: helper("list_add_adjoint", runtime.list_add_adjoint, LINEAR, (1, 2, 3)),
    runtime.list_mul_adjoint: helper("list_mul_adjoint", runtime.list_mul_adjoint, LINEAR, (1, 2, 3)),
    runtime.sequence_adjoint: helper("sequence_adjoint", runtime.sequence_adjoint, LINEAR, (1, 2, 3)),
    runtime.dict_adjoint: helper("dict_adjoint", runtime.dict_adjoint, LINEAR, (1, 2)),
    rulekit.stack_piece: helper("stack_piece", rulekit.stack_piece, LINEAR, (1, 2, 3)),
    rulekit.append_piece: helper("append_piece", rulekit.append_piece, LINEAR, (1, 2, 3, 4)),
    rulekit.undiag: helper("undiag", rulekit.undiag, LINEAR, (1, 2)),
    rulekit.undiagflat: helper("undiagflat", rulekit.undiagflat, LINEAR, (1, 2)),
    rulekit.undiff: helper("undiff", rulekit.undiff, LINEAR, (1, 2)),
    rulekit.quantile_vjp: helper("quantile_vjp", rulekit.quantile_vjp, LINEAR, (1, 2, 3, 4, 5)),
    rulekit.quantile_jvp: helper("quantile_jvp", rulekit.quantile_jvp, LINEAR, (1, 2, 3, 4, 5)),
    rulekit.interp_slope: helper("interp_slope", rulekit.interp_slope, LINEAR, (0, 1)),
    rulekit.interp_weights: helper("interp_weights", rulekit.interp_weights, (iw_x, ND)),
    rulekit.average_weights: helper("average_weights", rulekit.average_weights, LINEAR, (0, 2)),
    rulekit.unaverage_weights: helper("unaverage_weights", rulekit.unaverage_weights, LINEAR, (1, 2, 3)),
    rulekit.conv_full_cotangent: helper("conv_full_cotangent", rulekit.conv_full_cotangent, LINEAR, (1, 2, 3, 4)),
    # the FFT ops' helpers: linear in the spectrum, the rest shapes and axes
    rulekit.fft_resize: helper("fft_resize", rulekit.fft_resize, LINEAR, (1, 2)),
    rulekit.fft_unresize: helper("fft_unresize", rulekit.fft_unresize, LINEAR, (1, 2, 3)),
    rulekit.half_spectrum: helper("half_spectrum", rulekit.half_spectrum, LINEAR, (1,)),
    rulekit.real_like: helper("real_like", rulekit.real_like, LINEAR, (1,)),
    rulekit.dense_to_band: helper("dense_to_band", rulekit.dense_to_band, LINEAR, (1,)),
    rulekit.band_to_dense: helper("band_to_dense", rulekit.band_to_dense, LINEAR, (1,)),
    rulekit.band_transpose: helper("band_transpose", rulekit.band_transpose, LINEAR, (1,)),
    rulekit.triangle: helper("triangle", rulekit.triangle, LINEAR, (1, 2)),
    rulekit.as_columns: helper("as_columns", rulekit.as_columns, LINEAR, (1,)),
    rulekit.kron_vjp: helper("kron_vjp", rulekit.kron_vjp, (kron_g, kron_a, kron_b, ND)),
    rulekit.convolve_vjp: helper("convolve_vjp", rulekit.convolve_vjp, (conv_g, conv_a, conv_v, ND, ND, ND)),
    rulekit.matrix_power_vjp: helper("matrix_power_vjp", rulekit.matrix_power_vjp, (mp_g, mp_a, ND)),
    rulekit.expm_frechet: helper("expm_frechet", rulekit.expm_frechet, (ef_a, ef_e, ND)),
    rulekit.density_factor: helper("density_factor", rulekit.density_factor, (density_ans, ND)),
    rulekit.loc_scale_factor: helper("loc_scale_factor", rulekit.loc_scale_factor, (lsf_x, lsf_loc, lsf_scale, ND)),
    rulekit_decompositions.matmul_chain: helper("multi_matmul", rulekit_decompositions.matmul_chain, mm_jvp, variadic=True),
    # the complex rules' helpers, on real values (transforms.hvp refuses complex ones): linear in
    # the cotangent, their other inputs piecewise constant there
    rulekit.abs_cotangent: helper("abs_cotangent", rulekit.abs_cotangent, (abs_cotangent_g, ND, ND)),
    rulekit.real_cotangent: helper("real_cotangent", rulekit.real_cotangent, LINEAR, (1,)),
    rulekit.imag_cotangent: helper("imag_cotangent", rulekit.imag_cotangent, LINEAR, (1,)),
    rulekit.conj_part: helper("conj_part", rulekit.conj_part, LINEAR),
    rulekit.angle_cotangent: helper("angle_cotangent", rulekit.angle_cotangent, LINEAR, (1,)),
    rulekit.real_part: helper("real_part", rulekit.real_part, LINEAR),
    rulekit.sign_det_cotangent: helper("sign_det_cotangent", rulekit.sign_det_cotangent, LINEAR, (1,)),
    rulekit.eig_phase_cotangent: helper("eig_phase_cotangent", rulekit.eig_phase_cotangent, LINEAR, (1,)),
    rulekit.eig_phase_tangent: helper("eig_phase_tangent", rulekit.eig_phase_tangent, LINEAR, (1,)),
    rulekit.svd_phase_diagonal: helper("svd_phase_diagonal", rulekit.svd_phase_diagonal, LINEAR, (1,)),
}
NONDIFF_HELPERS = {
    runtime.zeros_like, runtime.take_axis, runtime.pad_pairs, runtime.prod_others_tangent, runtime.einsum_vjp_tangent,
    runtime.solve_rhs_shape, runtime.solve_x_shape, runtime.einsum_subscripts, runtime.tensordot_subscripts,
    runtime.diagonal_block, runtime.diagonal_subscripts, rulekit.zeros_like, rulekit.ones_like, rulekit.step,
    rulekit.reduced_size, rulekit.reduced_shape, rulekit.shape_of, rulekit.normalize_axis, rulekit.tie_share,
    rulekit.inverse_permutation, rulekit.batch_shape, rulekit.negative_axis, rulekit.axis_index, rulekit.einsum_sizes,
    dnp.result_dtype, rulekit.primal_of, rulekit.sort_index, rulekit.along_axis_index, rulekit.diagonal_index,
    rulekit.stacked_shape, rulekit.stack_axis, rulekit.rollaxis_inverse, rulekit.put_winners, rulekit.fft_axes,
    rulekit.fft_lengths, rulekit.swap_norm, rulekit.max_pool_index}


def is_rule_helper(obj):
    return inspect.isfunction(obj) and opmap.in_package(obj, *_RULE_HELPER_MODULES)


_RULE_HELPER_MODULES = ("dualtape.core.rulekit.decompositions", "dualtape.core.rulekit.stats",
                        "dualtape.core.rulekit.numpy_functions", "dualtape.core.rulekit.signal",
                        "dualtape.core.rulekit.shapes")  # (shapes: power_slope)


def helper_spec(obj):
    prim = HELPERS.get(obj) if opmap.hashable(obj) else None
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
        return (opmap.hashable(obj) and obj in NONDIFF_HELPERS) or opmap.is_nondiff(obj)

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
            # (`var` is a label for the analyses: the loop is written from `target_node`)
            out.append(For(syntax.unparse(s.target), s.iter, self.block(s.body), getattr(s, "_dualtape_break", None),
                           line, text, target_node=s.target))
            return None
        return super().for_loop(s, out)
