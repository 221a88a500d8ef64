"""Tangents of the adjoint helpers of the newer ops (issue 12): stacking, diagonals, kron, diff,
sorting, quantiles, convolution, interpolation, averages, matrix powers, expm, banded and
triangular solves, scipy.stats' density factors. `fwd_rules.HELPERS` merges these.

Most helpers are linear in the cotangent and read their other inputs for shapes, indices or
sorted orders only (piecewise constant): LINEAR, with those inputs non-differentiable. The
bilinear ones (kron, convolve) say which input the result is linear in by `argnum`; the rest
get a tangent function of `runtime_tangents`. The decomposition helpers (svd, eigh, qr, pinv,
norm) are read from their source instead (fwd_rules.ForwardNormalizer.reads_source).
"""

from dualtape.core import dnp
from dualtape.core import rulekit
from dualtape.core import rulekit_decomp
from dualtape.core.registry import LINEAR, NOT_DIFFERENTIABLE, Primitive

ND = NOT_DIFFERENTIABLE


def _helper(name, impl, jvp, nondiff_argnums=(), variadic=False):
    rules = jvp if jvp is LINEAR or variadic else tuple(jvp)
    return Primitive(name, impl, rules, rules, False, variadic, {}, (), tuple(nondiff_argnums), False)


# -- JVP templates (parameters: tangent, ans, *inputs; names are the generated code's) ---------

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
    return multi_matmul(*replace_at(xs, argnum, dx))  # noqa: F821 (rulekit_decomp._mm: multilinear)


_R = rulekit
HELPERS_MORE = {
    _R.stack_piece: _helper("stack_piece", _R.stack_piece, LINEAR, (1, 2, 3)),
    _R.append_piece: _helper("append_piece", _R.append_piece, LINEAR, (1, 2, 3, 4)),
    _R.undiag: _helper("undiag", _R.undiag, LINEAR, (1, 2)),
    _R.undiagflat: _helper("undiagflat", _R.undiagflat, LINEAR, (1, 2)),
    _R.undiff: _helper("undiff", _R.undiff, LINEAR, (1, 2)),
    _R.quantile_vjp: _helper("quantile_vjp", _R.quantile_vjp, LINEAR, (1, 2, 3, 4, 5)),
    _R.quantile_jvp: _helper("quantile_jvp", _R.quantile_jvp, LINEAR, (1, 2, 3, 4, 5)),
    _R.interp_slope: _helper("interp_slope", _R.interp_slope, LINEAR, (0, 1)),
    _R.interp_weights: _helper("interp_weights", _R.interp_weights, (iw_x, ND)),
    _R.average_weights: _helper("average_weights", _R.average_weights, LINEAR, (0, 2)),
    _R.unaverage_weights: _helper("unaverage_weights", _R.unaverage_weights, LINEAR, (1, 2, 3)),
    _R.conv_full_cotangent: _helper("conv_full_cotangent", _R.conv_full_cotangent, LINEAR, (1, 2, 3, 4)),
    _R.dense_to_band: _helper("dense_to_band", _R.dense_to_band, LINEAR, (1,)),
    _R.band_to_dense: _helper("band_to_dense", _R.band_to_dense, LINEAR, (1,)),
    _R.band_transpose: _helper("band_transpose", _R.band_transpose, LINEAR, (1,)),
    _R.triangle: _helper("triangle", _R.triangle, LINEAR, (1, 2)),
    _R.as_columns: _helper("as_columns", _R.as_columns, LINEAR, (1,)),
    _R.kron_vjp: _helper("kron_vjp", _R.kron_vjp, (kron_g, kron_a, kron_b, ND)),
    _R.convolve_vjp: _helper("convolve_vjp", _R.convolve_vjp, (conv_g, conv_a, conv_v, ND, ND, ND)),
    _R.matrix_power_vjp: _helper("matrix_power_vjp", _R.matrix_power_vjp, (mp_g, mp_a, ND)),
    _R.expm_frechet: _helper("expm_frechet", _R.expm_frechet, (ef_a, ef_e, ND)),
    _R.density_factor: _helper("density_factor", _R.density_factor, (density_ans, ND)),
    _R.loc_scale_factor: _helper("loc_scale_factor", _R.loc_scale_factor, (lsf_x, lsf_loc, lsf_scale, ND)),
    rulekit_decomp._mm: _helper("multi_matmul", rulekit_decomp._mm, mm_jvp, variadic=True),
}

NONDIFF_MORE = {dnp.result_dtype, _R.primal_of, _R.sort_index, _R.along_axis_index, _R.diagonal_index,
                _R.stacked_shape, _R.stack_axis, _R.rollaxis_inverse, _R.put_winners}
