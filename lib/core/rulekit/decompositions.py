"""Rule helpers of the matrix decompositions (svd, eigh, cholesky, qr, pinv) and of np.linalg.norm.

Each helper recomputes the factors it needs through `dnp` (dnp.linalg_svd_u, ...), so an
outer tape records them and second derivatives work. Conventions at ties (repeated
singular values or eigenvalues): the coupling term 1 / (s_j^2 - s_i^2) is set to 0 where
the denominator is exactly 0 (docs/numerics.md, "Decompositions at repeated values").
"""

import numpy as np

from .. import dnp
from .arrays import lower_half_diagonal, symmetrize
from .complex_parts import conj_part, eig_phase_cotangent, eig_phase_tangent, real_part, svd_phase_diagonal
from .shapes import div_no_nan, swap_last, tie_share

__all__ = ["eig_jvp_w", "eig_vjp_w", "eig_jvp_v", "eig_vjp_v", "svd_vjp_s", "svd_vjp_u", "svd_vjp_vh", "svd_jvp_s", "svd_jvp_u", "svd_jvp_vh",
           "eigh_vjp_w", "eigh_vjp_v", "eigh_jvp_w", "eigh_jvp_v", "cholesky_vjp_a", "cholesky_jvp_a",
           "qr_vjp_q", "qr_vjp_r", "qr_jvp_q", "qr_jvp_r", "pinv_vjp", "pinv_jvp", "norm_direction", "expm_frechet",
           "triangle", "read_triangle", "onto_triangle", "as_columns", "band_to_dense", "dense_to_band",
           "band_transpose"]


def _eye(x, n):
    return np.eye(n, dtype=dnp.result_dtype(x))


def _row(v):
    return dnp.expand_dims(v, -2)  # (..., k) -> (..., 1, k): scales columns when multiplied


def _coupling(values):
    """F_ij = 1 / (values_j - values_i), 0 on the diagonal and at exact ties."""
    diff = _row(values) - dnp.expand_dims(values, -1)
    return div_no_nan(dnp.ones_like(diff), diff)


def _skew(x):
    return x - _h(x)


def _h(x):
    """The conjugate transpose of the last two axes (the transpose on reals)."""
    return swap_last(conj_part(x))


def matmul_chain(*xs):
    """x0 @ x1 @ ..., through dnp."""
    out = xs[0]
    for x in xs[1:]:
        out = dnp.matmul(out, x)
    return out


# -- svd (reduced: a is (..., m, n), k = min(m, n)) -------------------------------------------

def _svd_parts(a):
    return dnp.linalg_svd_u(a), dnp.linalg_svd_s(a), dnp.linalg_svd_vh(a)


def svd_vjp_s(g, a):
    """d s_i = Re(u_i^H da v_i): a = conj(U diag(Re g) Vh) (U diag(g) Vh on reals)."""
    u, s, vh = _svd_parts(a)
    return conj_part(dnp.matmul(u * _row(real_part(g)), vh))


# Complex matrices follow JAX's svd JVP (docs/numerics.md): with dP = U^H da V,
# dU = U (F o (dP S + (dP S)^H) + diag(i Im(dP_jj) / s_j)) + (I - U U^H) da V / s and
# dV = V (F o (S dP + (S dP)^H)) + (I - V V^H) da^H U / s, F_ij = 1 / (s_j^2 - s_i^2): the
# vectors' phases are a gauge (u_j e^{it}, v_j e^{it} give the same a), fixed there by
# Im(u_j^H du_j) = Im(dP_jj) / s_j... and Re(v_j^H dv_j) = 0; the VJPs are the transposes for
# the pairing Re(sum(c * t)). On reals the conjugations and the imaginary term vanish.

def svd_vjp_u(g, a):
    u, s, vh = _svd_parts(a)
    k = dnp.matmul(swap_last(u), g)
    core = matmul_chain(conj_part(u), _coupling(s * s) * _skew(k) * _row(s) + svd_phase_diagonal(k, s), conj_part(vh))
    proj = _eye(a, np.shape(a)[-2]) - dnp.matmul(u, _h(u))
    return core + conj_part(matmul_chain(proj, conj_part(g) * _row(1.0 / s), vh))


def svd_vjp_vh(g, a):
    u, s, vh = _svd_parts(a)
    core = matmul_chain(conj_part(u) * _row(s), _coupling(s * s) * _skew(conj_part(dnp.matmul(vh, swap_last(g)))), conj_part(vh))
    proj = _eye(a, np.shape(a)[-1]) - dnp.matmul(_h(vh), vh)
    return core + matmul_chain(conj_part(u) * _row(1.0 / s), g, conj_part(proj))


def svd_jvp_s(da, a):
    u, s, vh = _svd_parts(a)
    return real_part(dnp.sum(dnp.matmul(_h(u), da) * conj_part(vh), axis=-1))  # Re diag(U^H da V)


def svd_jvp_u(da, a):
    u, s, vh = _svd_parts(a)
    dp = matmul_chain(_h(u), da, _h(vh))
    sym = dp * _row(s) + _h(dp * _row(s))  # dP S + (dP S)^H
    proj = _eye(a, np.shape(a)[-2]) - dnp.matmul(u, _h(u))
    return (dnp.matmul(u, _coupling(s * s) * sym + svd_phase_diagonal(dp, s))
            + matmul_chain(proj, da, _h(vh)) * _row(1.0 / s))


def svd_jvp_vh(da, a):
    u, s, vh = _svd_parts(a)
    v = _h(vh)
    dp = matmul_chain(_h(u), da, v)
    sym = dnp.expand_dims(s, -1) * dp + _h(dp) * _row(s)  # S dP + (S dP)^H
    proj = _eye(a, np.shape(a)[-1]) - dnp.matmul(v, vh)
    return _h(dnp.matmul(v, _coupling(s * s) * sym) + matmul_chain(proj, _h(da), u) * _row(1.0 / s))


# -- eigh of the symmetric part of a ----------------------------------------------------------

def read_triangle(x, lower=True):
    """The Hermitian (on reals: symmetric) matrix LAPACK reads from x when told one triangle
    (np.linalg.eigh's UPLO, np.linalg.cholesky's upper=): the lower (or upper) triangle,
    mirrored and conjugated, with the real part of the diagonal; the rest is never read."""
    return _copyltu(x) if lower else _copyltu(_h(x))


def onto_triangle(s, lower=True):
    """The adjoint of read_triangle (for the pairing Re(sum(c * t)) on complex values):
    s + s^H on the read triangle, the real part of the diagonal once, 0 on the other, so a
    gradient has entries only where LAPACK reads its input."""
    low = _tril(s) + _tril(swap_last(s), -1) if dnp.result_dtype(s).kind != "c" else (
        _tril(s + _h(s), -1) + _diagonal_part(real_part(s)))
    return low if lower else _h(low)


def _read_triangle(x, uplo):
    return read_triangle(x, _lower(uplo))


def _onto_triangle(s, uplo):
    return onto_triangle(s, _lower(uplo))


def _lower(uplo):
    if str(uplo).upper() not in ("L", "U"):
        raise ValueError(f"[SelfAdjointEig] UPLO must be 'L' or 'U' (the triangle np.linalg.eigh reads), "
                         f"got {uplo!r}.")
    return str(uplo).upper() == "L"


# Complex Hermitian matrices follow JAX's eigh rules (docs/numerics.md): dw = Re diag(V^H da V),
# dV = V (F o V^H da V) with F_ij = 1 / (w_j - w_i), for da the Hermitian matrix read from the
# tangent's triangle; the eigenvectors' phases are a gauge, fixed by Im(v_j^H dv_j) = 0. The
# VJPs are the transposes for the pairing Re(sum(c * t)); on reals, the real rules.

def eigh_vjp_w(g, a, uplo="L"):
    v = dnp.linalg_eigh_v(a, uplo)
    return _onto_triangle(conj_part(dnp.matmul(v * _row(real_part(g)), _h(v))), uplo)


def eigh_vjp_v(g, a, uplo="L"):
    w, v = dnp.linalg_eigh_w(a, uplo), dnp.linalg_eigh_v(a, uplo)
    inner = matmul_chain(conj_part(v), _coupling(w) * dnp.matmul(swap_last(v), g), swap_last(v))
    return _onto_triangle(0.5 * (inner + _h(inner)), uplo)


def eigh_jvp_w(da, a, uplo="L"):
    v = dnp.linalg_eigh_v(a, uplo)
    return real_part(dnp.sum(dnp.matmul(_read_triangle(da, uplo), v) * conj_part(v), axis=-2))  # Re diag(V^H da V)


def eigh_jvp_v(da, a, uplo="L"):
    w, v = dnp.linalg_eigh_w(a, uplo), dnp.linalg_eigh_v(a, uplo)
    return dnp.matmul(v, _coupling(w) * matmul_chain(_h(v), _read_triangle(da, uplo), v))


# -- cholesky of the triangle LAPACK reads ----------------------------------------------------

def _lower_factor(x, upper):
    return swap_last(x) if upper else x


def cholesky_vjp_a(g, ans, upper=False):
    """Murray (2016): S = sym(L^-T Phi(L^T g) L^-1), Phi the lower triangle with the diagonal
    halved, for the symmetric matrix np.linalg.cholesky reads; folded onto the triangle it reads
    from a (the upper one, and ans = L^T, when upper=True)."""
    low, g_low = _lower_factor(ans, upper), _lower_factor(g, upper)
    inv = dnp.linalg_inv(low)
    s = symmetrize(matmul_chain(swap_last(inv), lower_half_diagonal(dnp.matmul(swap_last(low), g_low)), inv))
    return onto_triangle(s, not upper)


def cholesky_jvp_a(da, ans, upper=False):
    """dL = L Phi(L^-1 dA L^-T), dA the tangent's read triangle, mirrored."""
    low = _lower_factor(ans, upper)
    inv = dnp.linalg_inv(low)
    return _lower_factor(dnp.matmul(low, lower_half_diagonal(matmul_chain(inv, read_triangle(da, not upper), swap_last(inv)))),
                         upper)


# -- qr (reduced, m >= n) ---------------------------------------------------------------------

def _tril(x, k=0):
    m, n = np.shape(x)[-2:]
    return x * np.tril(np.ones((m, n)), k).astype(dnp.result_dtype(x))


def _copyltu(x):
    if dnp.result_dtype(x).kind == "c":  # Hermitian: LAPACK reads the diagonal's real part only
        return _tril(x, -1) + _h(_tril(x, -1)) + _diagonal_part(real_part(x))
    return _tril(x) + swap_last(_tril(x, -1))


def _diagonal_part(x):
    return x * _eye(x, np.shape(x)[-1])


def _right_solve_rt(x, r):
    """x R^-T."""
    return swap_last(dnp.linalg_solve(r, swap_last(x)))


def qr_vjp_q(g, a):
    q, r = dnp.linalg_qr_q(a), dnp.linalg_qr_r(a)
    return _right_solve_rt(g - dnp.matmul(q, _copyltu(dnp.matmul(swap_last(g), q))), r)


def qr_vjp_r(g, a):
    q, r = dnp.linalg_qr_q(a), dnp.linalg_qr_r(a)
    return _right_solve_rt(dnp.matmul(q, _copyltu(dnp.matmul(r, swap_last(g)))), r)


def _qr_x_omega(da, a):
    q, r = dnp.linalg_qr_q(a), dnp.linalg_qr_r(a)
    x = swap_last(dnp.linalg_solve(swap_last(r), swap_last(dnp.matmul(swap_last(q), da))))  # Q^T da R^-1
    low = _tril(x, -1)
    return q, r, x, low - swap_last(low)


def qr_jvp_q(da, a):
    q, r, x, omega = _qr_x_omega(da, a)
    return swap_last(dnp.linalg_solve(swap_last(r), swap_last(da))) - dnp.matmul(q, x - omega)


def qr_jvp_r(da, a):
    q, r, x, omega = _qr_x_omega(da, a)
    return dnp.matmul(x - omega, r)


# -- pinv (constant rank) ---------------------------------------------------------------------

def pinv_vjp(g, p, a):
    m, n = np.shape(a)[-2:]
    gt = swap_last(g)
    return (-matmul_chain(swap_last(p), g, swap_last(p))
            + matmul_chain(_eye(a, m) - dnp.matmul(a, p), gt, p, swap_last(p))
            + matmul_chain(swap_last(p), p, gt, _eye(a, n) - dnp.matmul(p, a)))


def pinv_jvp(da, p, a):
    m, n = np.shape(a)[-2:]
    dat = swap_last(da)
    return (-matmul_chain(p, da, p) + matmul_chain(p, swap_last(p), dat, _eye(a, m) - dnp.matmul(a, p))
            + matmul_chain(_eye(a, n) - dnp.matmul(p, a), dat, swap_last(p), p))


# -- np.linalg.norm: d norm / dx, for every ord ----------------------------------------------

def norm_direction(x, ans, ord=None, axis=None, keepdims=False):  # noqa: A002
    """The gradient of each norm w.r.t. its group of `x`, shaped like `x`: d norm =
    Re(sum(direction * dx)) (complex x: the rules' convention, docs/numerics.md, so the
    direction holds conj(z) / |z| where the real one holds sign(x)).

    Conventions: sign(0) = 0 at kinks (ord=1, the Euclidean norm at 0 gives 0), tied extremes
    share the gradient evenly (ord=inf), ord=0 counts and has gradient 0; the matrix 2- and
    nuclear norms follow the singular vectors (ties: see docs/numerics.md)."""
    nd = len(np.shape(x))
    if axis is None:
        axis = tuple(range(nd))
    axis = (axis,) if isinstance(axis, (int, np.integer)) else tuple(a % nd for a in axis)
    full = ans if keepdims else _expand(ans, axis)
    if len(axis) == 2 and ord not in (None, "fro"):
        return _matrix_direction(x, ord, axis)
    if ord in (None, 2, "fro"):
        return div_no_nan(conj_part(x), full)
    if ord == 0:
        return x * 0.0
    if ord == 1:
        return _sign(x)
    if ord in (np.inf, -np.inf):
        return _sign(x) * tie_share(dnp.abs(x), full, axis=axis, keepdims=True)
    p = float(ord)
    return _sign(x) * div_no_nan(dnp.abs(x) ** (p - 1.0), full ** (p - 1.0))


def _sign(x):
    """d|x| / dx: sign(x) on reals (piecewise constant, 0 at 0), conj(z) / |z| for complex z
    (Re(conj(z) dz) / |z| = d|z|; 0 at 0, where a derivative through |z| refuses)."""
    return div_no_nan(dnp.conj(x), dnp.abs(x)) if dnp.result_dtype(x).kind == "c" else dnp.sign(x)


def _expand(v, axis):
    for a in sorted(axis):
        v = dnp.expand_dims(v, a)
    return v


def _matrix_direction(x, ord, axis):  # noqa: A002
    m = dnp.moveaxis(x, axis, (-2, -1))
    if ord in ("nuc", 2, -2):
        u, s, vh = _svd_parts(m)
        if ord == "nuc":
            d = conj_part(dnp.matmul(u, vh))  # d nuc = Re tr(U^H dm V)
        else:
            extreme = dnp.max(s, axis=-1) if ord == 2 else dnp.min(s, axis=-1)
            share = tie_share(s, extreme, axis=-1)
            d = conj_part(dnp.matmul(u * _row(share), vh))
    else:
        along = -2 if ord in (1, -1) else -1  # ord 1: column sums (over rows)
        sums = dnp.sum(dnp.abs(m), axis=along)
        best = dnp.max(sums, axis=-1) if ord in (1, np.inf) else dnp.min(sums, axis=-1)
        d = _sign(m) * dnp.expand_dims(tie_share(sums, best, axis=-1), along)
    return dnp.moveaxis(d, (-2, -1), axis)


# -- scipy.linalg: expm's Frechet derivative, solve_triangular's triangle ---------------------

def expm_frechet(a, e, transpose=False):
    """L(a, e), the derivative of expm at `a` in direction `e` (of a.T when `transpose`): the
    upper right block of expm([[a, e], [0, a]])."""
    n = np.shape(a)[-1]
    at = swap_last(a) if transpose else a
    zeros = dnp.zeros_like(at)
    block = dnp.concatenate([dnp.concatenate([at, e], axis=-1), dnp.concatenate([zeros, at], axis=-1)], axis=-2)
    return dnp.getitem(dnp.scipy_expm(block), (Ellipsis, slice(0, n), slice(n, 2 * n)))


def triangle(x, lower, unit_diagonal):
    """The triangle solve_triangular reads (without the diagonal when it is taken as ones)."""
    n = np.shape(x)[-1]
    k = -1 if unit_diagonal else 0
    mask = np.tril(np.ones((n, n)), k) if lower else np.triu(np.ones((n, n)), -k)
    return x * mask.astype(dnp.result_dtype(x))


def as_columns(x, n):
    return dnp.reshape(x, (n, -1))


def _band_selector(l_and_u, n, dtype):
    """E[k, i, j] = 1 where the banded storage row k holds a[i, j] (k = u + i - j)."""
    lower, upper = l_and_u
    k, i, j = np.ogrid[:lower + upper + 1, :n, :n]
    return (k == upper + i - j).astype(dtype)


def band_to_dense(ab, l_and_u):
    """The (n, n) matrix of scipy.linalg.solve_banded's storage `ab`."""
    return dnp.einsum("kj,kij->ij", ab, _band_selector(l_and_u, np.shape(ab)[-1], dnp.result_dtype(ab)))


def dense_to_band(a, l_and_u):
    """The band of `a` in solve_banded's storage (entries outside the band dropped)."""
    return dnp.einsum("ij,kij->kj", a, _band_selector(l_and_u, np.shape(a)[-1], dnp.result_dtype(a)))


def band_transpose(ab, l_and_u):
    return dense_to_band(swap_last(band_to_dense(ab, l_and_u)), (l_and_u[1], l_and_u[0]))


# -- eigenvalues of a general matrix (complex: JAX's convention, docs/numerics.md) --------------

def eig_jvp_w(da, a):
    """d w = diag(V^-1 da V): each simple eigenvalue is a holomorphic function of a."""
    v = dnp.linalg_eig_v(a)
    return dnp.sum(dnp.multiply(swap_last(dnp.linalg_inv(v)), dnp.matmul(da, v)), axis=-2)


def eig_vjp_w(g, a):
    """V^-T diag(g) V^T, the transpose of eig_jvp_w for the pairing Re(sum(c * t))."""
    v = dnp.linalg_eig_v(a)
    return dnp.matmul(dnp.multiply(swap_last(dnp.linalg_inv(v)), _row(g)), swap_last(v))


def eig_jvp_v(da, a):
    """dV in LAPACK's normalization (unit columns, each largest component real):
    dV0 = V (F o V^-1 da V), plus V diag(c) with Re c = -Re(v^H dv0) (unit norm) and
    Im c = -Im(dv0_k) / v_k (v_k, the largest component, stays real: eig_phase_tangent)."""
    w, v = dnp.linalg_eigvals(a), dnp.linalg_eig_v(a)
    dv0 = dnp.matmul(v, _coupling(w) * matmul_chain(dnp.linalg_inv(v), da, v))
    gauge = dnp.subtract(eig_phase_tangent(dv0, v), dnp.real(dnp.sum(dnp.multiply(dnp.conjugate(v), dv0), axis=-2)))
    return dnp.add(dv0, dnp.multiply(v, _row(gauge)))


def eig_vjp_v(g, a):
    """The transpose of eig_jvp_v for the pairing Re(sum(c * t)): with s_j = sum_i g_ij v_ij,
    the gauge term gives g0 = g - Re(s) conj(V) - i Im(s) / v_k at each largest component
    (eig_phase_cotangent); then V^-T (F o V^T g0) V^T."""
    w, v = dnp.linalg_eigvals(a), dnp.linalg_eig_v(a)
    s = dnp.sum(dnp.multiply(g, v), axis=-2)
    g0 = dnp.subtract(dnp.subtract(g, dnp.multiply(_row(dnp.real(s)), dnp.conjugate(v))), eig_phase_cotangent(s, v))
    inv_t = swap_last(dnp.linalg_inv(v))
    return matmul_chain(inv_t, _coupling(w) * dnp.matmul(swap_last(v), g0), swap_last(v))
