"""np.linalg's decompositions and queries: svd, eigh, qr, pinv, lstsq, norm (every ord),
matrix_rank, on stacks of matrices (..., M, N).

A decomposition with several outputs is one primitive per output (SvdU, SvdValues, SvdVh):
its VJP is linear in the outputs' cotangents, so the tape sums the three parts into the
textbook formula. Each output's rules recompute the factors through `dnp` (second order
works). Ties and kinks: docs/numerics.md, "Decompositions at repeated values".
"""

from collections import namedtuple

import numpy as np

from ..core import dnp
from ..core.errors import RefusalError
from ..core.registry import NOT_DIFFERENTIABLE, defop
from ..core.rulekit import (eig_jvp_v, eig_jvp_w, eig_vjp_v, eig_vjp_w, eigh_jvp_v, eigh_jvp_w, eigh_vjp_v, eigh_vjp_w, norm_direction,
                            pinv_jvp, pinv_vjp, qr_jvp_q, qr_jvp_r, qr_vjp_q, qr_vjp_r, svd_jvp_s,
                            svd_jvp_u, svd_jvp_vh, svd_vjp_s, svd_vjp_u, svd_vjp_vh, unreduce,
                            conj_part, div_no_nan, primal_keepdims, real_part)
from .reductions import NORM

__all__ = ["linalg_eig", "linalg_eigvals", "linalg_eig_v", "linalg_svd_u", "linalg_svd_s", "linalg_svd_vh", "linalg_eigh_w", "linalg_eigh_v",
           "linalg_qr_q", "linalg_qr_r", "linalg_svd", "linalg_eigh", "linalg_eigvalsh",
           "linalg_qr", "linalg_pinv", "linalg_lstsq", "linalg_norm", "linalg_matrix_rank"]


def _separated(rng, shape):
    """A matrix with singular values 1, 2, 3, ... (+ noise): far from ties."""
    *batch, m, n = shape
    k = min(m, n)
    q1 = np.linalg.qr(rng.standard_normal((*batch, m, m)))[0][..., :k]
    q2 = np.linalg.qr(rng.standard_normal((*batch, n, n)))[0][..., :k]
    s = np.arange(1, k + 1) + 0.2 * rng.random((*batch, k))
    return (q1 * s[..., None, :]) @ np.swapaxes(q2, -1, -2)


def _s_tall(rng):
    return (_separated(rng, (4, 3)),), {}


def _s_wide(rng):
    return (_separated(rng, (2, 4)),), {}


def _s_stack(rng):
    return (_separated(rng, (2, 3, 3)),), {}


def _s_symmetric(rng):
    b = rng.standard_normal((3, 3))
    return (b + b.T + np.diag([0.0, 3.0, 6.0]),), {}  # eigenvalues apart


def _s_symmetric_stack(rng):
    b = rng.standard_normal((2, 3, 3))
    return (b + np.swapaxes(b, -1, -2) + np.diag([0.0, 3.0, 6.0]),), {}


SVD_SAMPLES = (_s_tall, _s_wide, _s_stack)


def _complex_separated(rng, shape):
    """A complex matrix with singular values 1, 2, 3, ... (+ noise): far from ties."""
    *batch, m, n = shape
    k = min(m, n)
    q1 = np.linalg.qr(rng.standard_normal((*batch, m, m)) + 1j * rng.standard_normal((*batch, m, m)))[0][..., :k]
    q2 = np.linalg.qr(rng.standard_normal((*batch, n, n)) + 1j * rng.standard_normal((*batch, n, n)))[0][..., :k]
    s = np.arange(1, k + 1) + 0.2 * rng.random((*batch, k))
    return (q1 * s[..., None, :]) @ np.conj(np.swapaxes(q2, -1, -2))


def _c_tall(rng):
    return (_complex_separated(rng, (4, 3)),), {}


def _c_wide(rng):
    return (_complex_separated(rng, (2, 4)),), {}


def _c_stack(rng):
    return (_complex_separated(rng, (2, 3, 3)),), {}


# complex matrices (and a real one: real inputs keep the real rules)
SVD_COMPLEX_SAMPLES = (_c_tall, _c_wide, _c_stack, _s_tall)
SQUARE_SAMPLES = (_s_tall, _s_stack)  # qr: m >= n


def _svd_u(a):
    return np.linalg.svd(a, full_matrices=False)[0]


def _svd_s(a):
    return np.linalg.svd(a, compute_uv=False)


def _svd_vh(a):
    return np.linalg.svd(a, full_matrices=False)[2]


def svdu_vjp(g, ans, a):
    return svd_vjp_u(g, a)


def svdu_jvp(da, ans, a):
    return svd_jvp_u(da, a)


def svds_vjp(g, ans, a):
    return svd_vjp_s(g, a)


def svds_jvp(da, ans, a):
    return svd_jvp_s(da, a)


def svdvh_vjp(g, ans, a):
    return svd_vjp_vh(g, a)


def svdvh_jvp(da, ans, a):
    return svd_jvp_vh(da, a)


SVD_U = defop("SvdU", _svd_u, vjp=svdu_vjp, jvp=svdu_jvp, batch_vjp=False, samples=SVD_SAMPLES,
              complex=SVD_COMPLEX_SAMPLES)
SVD_S = defop("SvdValues", _svd_s, vjp=svds_vjp, jvp=svds_jvp, batch_vjp=False, samples=SVD_SAMPLES,
              complex=SVD_COMPLEX_SAMPLES)
SVD_VH = defop("SvdVh", _svd_vh, vjp=svdvh_vjp, jvp=svdvh_jvp, batch_vjp=False, samples=SVD_SAMPLES,
               complex=SVD_COMPLEX_SAMPLES)


def _eigh_w(a, *, UPLO="L"):  # noqa: N803  (NumPy's name)
    return np.linalg.eigh(a, UPLO=UPLO)[0]


def _eigh_v(a, *, UPLO="L"):  # noqa: N803
    return np.linalg.eigh(a, UPLO=UPLO)[1]


def eighw_vjp(g, ans, a, *, UPLO="L"):  # noqa: N803
    return eigh_vjp_w(g, a, UPLO)


def eighw_jvp(da, ans, a, *, UPLO="L"):  # noqa: N803
    return eigh_jvp_w(da, a, UPLO)


def eighv_vjp(g, ans, a, *, UPLO="L"):  # noqa: N803
    return eigh_vjp_v(g, a, UPLO)


def eighv_jvp(da, ans, a, *, UPLO="L"):  # noqa: N803
    return eigh_jvp_v(da, a, UPLO)


def _s_nonsymmetric(rng):  # np.linalg.eigh reads one triangle: the other is noise it ignores
    return (np.tril(_s_symmetric(rng)[0][0]) + np.triu(rng.standard_normal((3, 3)), 1),), {}


def _s_nonsymmetric_upper(rng):
    return (np.triu(_s_symmetric_stack(rng)[0][0]) + np.tril(rng.standard_normal((2, 3, 3)), -1),), {"UPLO": "U"}


EIGH_SAMPLES = (_s_symmetric, _s_symmetric_stack, _s_nonsymmetric, _s_nonsymmetric_upper)


def _hermitian(rng, shape):
    b = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return b + np.conj(np.swapaxes(b, -1, -2)) + np.diag([0.0, 3.0, 6.0])  # eigenvalues apart


def _c_hermitian(rng):
    return (_hermitian(rng, (3, 3)),), {}


def _c_hermitian_stack(rng):
    return (_hermitian(rng, (2, 3, 3)),), {}


def _c_lower(rng):  # the upper triangle and the diagonal's imaginary part are noise eigh ignores
    noise = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    return (np.tril(_hermitian(rng, (3, 3))) + np.triu(noise, 1) + 1j * np.diag(np.diag(noise).imag),), {}


def _c_upper(rng):
    noise = rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3))
    return (np.triu(_hermitian(rng, (2, 3, 3))) + np.tril(noise, -1),), {"UPLO": "U"}


EIGH_COMPLEX_SAMPLES = (_c_hermitian, _c_hermitian_stack, _c_lower, _c_upper, _s_nonsymmetric)
EIGH_W = defop("SelfAdjointEigValues", _eigh_w, vjp=eighw_vjp, jvp=eighw_jvp, batch_vjp=False,
               samples=EIGH_SAMPLES, complex=EIGH_COMPLEX_SAMPLES)
EIGH_V = defop("SelfAdjointEigVectors", _eigh_v, vjp=eighv_vjp, jvp=eighv_jvp, batch_vjp=False,
               samples=EIGH_SAMPLES, complex=EIGH_COMPLEX_SAMPLES)


def _eig_w(a):
    return np.linalg.eigvals(a)


def _eig_v(a):
    return np.linalg.eig(a)[1]


def eigw_vjp(g, ans, a):
    return eig_vjp_w(g, a)  # V^-T diag(g) V^T


def eigw_jvp(da, ans, a):
    return eig_jvp_w(da, a)  # diag(V^-1 da V)


def _s_real_spectrum(rng):  # real eigenvalues: np.linalg.eigvals then returns floats, as the real tests expect
    q = np.linalg.qr(rng.standard_normal((3, 3)))[0]
    return (q @ np.diag([-1.0, 1.0, 3.0]) @ np.linalg.inv(q) + 0.1 * np.triu(rng.standard_normal((3, 3))),), {}


def _s_complex_spectrum(rng):  # a real matrix with complex eigenvalues (pairs): complex values out
    return (rng.standard_normal((3, 3)) + np.array([[0.0, 2.0, 0.0], [-2.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),), {}


def _s_complex_matrix(rng):
    return (rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3)),), {}


def eigv_vjp(g, ans, a):
    return eig_vjp_v(g, a)


def eigv_jvp(da, ans, a):
    return eig_jvp_v(da, a)  # in LAPACK's normalization: unit columns, largest component real


# The eigenvalues and eigenvectors of a general matrix (simple eigenvalues): complex in general,
# even for a real matrix; the vectors' derivative follows the normalization LAPACK returns.
EIG_SAMPLES = (_s_complex_spectrum, _s_complex_matrix, _s_real_spectrum)
EIG_W = defop("EigValues", _eig_w, vjp=eigw_vjp, jvp=eigw_jvp, batch_vjp=False, samples=(_s_real_spectrum,),
              complex=EIG_SAMPLES)
EIG_V = defop("EigVectors", _eig_v, vjp=eigv_vjp, jvp=eigv_jvp, batch_vjp=False, samples=(_s_real_spectrum,),
              complex=EIG_SAMPLES)


def _qr_q(a):
    return np.linalg.qr(a)[0]


def _qr_r(a):
    return np.linalg.qr(a)[1]


def qrq_vjp(g, ans, a):
    return qr_vjp_q(g, a)


def qrq_jvp(da, ans, a):
    return qr_jvp_q(da, a)


def qrr_vjp(g, ans, a):
    return qr_vjp_r(g, a)


def qrr_jvp(da, ans, a):
    return qr_jvp_r(da, a)


QR_Q = defop("QrQ", _qr_q, vjp=qrq_vjp, jvp=qrq_jvp, batch_vjp=False, samples=SQUARE_SAMPLES)
QR_R = defop("QrR", _qr_r, vjp=qrr_vjp, jvp=qrr_jvp, batch_vjp=False, samples=SQUARE_SAMPLES)


def pinv_vjp_rule(g, ans, a):
    return pinv_vjp(g, ans, a)


def pinv_jvp_rule(da, ans, a):
    return pinv_jvp(da, ans, a)


PINV = defop("MatrixPinv", np.linalg.pinv, vjp=pinv_vjp_rule, jvp=pinv_jvp_rule, batch_vjp=False,
             samples=SVD_SAMPLES)


def norm_vjp(g, ans, x, *, ord=None, axis=None, keepdims=False):  # noqa: A002
    # the Euclidean / Frobenius norms as EuclideanNorm's rule (whose helpers the transformer's
    # forward mode differentiates: hvp); every other ord through norm_direction. Complex x: the
    # norm is real, d norm = Re(sum(direction * dx)), so the cotangent is Re(g) direction (JAX's)
    return unreduce(real_part(g), np.shape(x), axis, keepdims) * (
        div_no_nan(conj_part(x), primal_keepdims(ans, np.shape(x), axis, keepdims)) if ord is None or ord == "fro"
        else norm_direction(x, ans, ord, axis, keepdims))


def norm_jvp(dx, ans, x, *, ord=None, axis=None, keepdims=False):  # noqa: A002
    return real_part(div_no_nan(dnp.sum(dx * conj_part(x), axis=axis, keepdims=keepdims), ans) if ord is None or ord == "fro"
                     else dnp.sum(dx * norm_direction(x, ans, ord, axis, keepdims), axis=axis, keepdims=keepdims))


def _norm_sample(shape, **static):
    def sample(rng):
        return (rng.standard_normal(shape) + np.sign(rng.standard_normal(shape)) * 0.2,), static
    sample.__name__ = f"_norm_{len(shape)}d_" + "_".join(f"{k}{v}" for k, v in static.items()).replace("-", "m")
    return sample


NORM_SAMPLES = (_norm_sample((4,), ord=1), _norm_sample((4,), ord=np.inf),
                _norm_sample((4,), ord=-np.inf), _norm_sample((4,), ord=3.0),
                _norm_sample((2, 3), ord=1, axis=1), _norm_sample((2, 3), ord=2, axis=0),
                _norm_sample((3, 3), ord="fro"), _norm_sample((3, 4), ord="nuc"),
                _norm_sample((3, 4), ord=2), _norm_sample((4, 3), ord=-2),
                _norm_sample((3, 4), ord=1), _norm_sample((3, 4), ord=-1),
                _norm_sample((3, 4), ord=np.inf), _norm_sample((3, 4), ord=-np.inf),
                _norm_sample((2, 3, 4), ord="nuc", axis=(2, 0), keepdims=True),
                _norm_sample((2, 3, 4), ord=1, axis=(0, 2)))

LINALG_NORM = defop("LinalgNorm", np.linalg.norm, vjp=norm_vjp, jvp=norm_jvp, batch_vjp=False,
                    samples=NORM_SAMPLES, complex=True)
# linalg_norm reaches LinalgNorm through this list, so the source transformer reads it as the
# EuclideanNorm wrapper it was (its forward mode, hvp, differentiates that op's rule helpers).
_OTHER_ORDS = [LINALG_NORM]
MATRIX_RANK = defop("MatrixRank", np.linalg.matrix_rank, vjp=NOT_DIFFERENTIABLE,
                    jvp=NOT_DIFFERENTIABLE)


# -- the public functions, as np.linalg's ------------------------------------------------------

SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("QRResult", ["Q", "R"])


def _check_matrix(api, a, square=False):
    shape = tuple(np.shape(a))
    if len(shape) < 2 or square and shape[-1] != shape[-2]:
        what = "a square matrix or a stack of them (..., M, M)" if square else "a matrix (..., M, N)"
        raise np.linalg.LinAlgError(f"[{api}] expects {what}, got shape {shape}.")


def linalg_svd_u(a):
    return SVD_U(a)


def linalg_svd_s(a):
    return SVD_S(a)


def linalg_svd_vh(a):
    return SVD_VH(a)


def linalg_svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """np.linalg.svd: (U, S, Vh) reduced, or S alone with compute_uv=False."""
    _check_matrix("Svd", a)
    if not compute_uv:
        return SVD_S(a)
    m, n = np.shape(a)[-2:]
    if full_matrices and m != n:
        raise RefusalError(f"[Svd] full_matrices=True on a non-square matrix of shape "
                           f"{tuple(np.shape(a))}: the extra columns of U (or rows of Vh) are "
                           "arbitrary, so they have no derivative. Fix: pass "
                           "full_matrices=False (the reduced SVD).")
    return SVDResult(SVD_U(a), SVD_S(a), SVD_VH(a))


def _uplo(uplo):
    if not isinstance(uplo, str) or uplo.upper() not in ("L", "U"):
        raise ValueError(f"[SelfAdjointEig] UPLO must be 'L' or 'U' (the triangle np.linalg.eigh reads), "
                         f"got {uplo!r}.")
    return uplo.upper()


def linalg_eigh_w(a, UPLO="L"):  # noqa: N803
    return EIGH_W(a, UPLO=_uplo(UPLO))


def linalg_eigh_v(a, UPLO="L"):  # noqa: N803
    return EIGH_V(a, UPLO=_uplo(UPLO))


def linalg_eigh(a, UPLO="L"):  # noqa: N803
    """np.linalg.eigh, which reads one triangle of a (UPLO='L': the lower one, mirrored): the
    values, and the derivatives of that function; the gradient has entries in that triangle only."""
    _check_matrix("SelfAdjointEig", a, square=True)
    return EighResult(EIGH_W(a, UPLO=_uplo(UPLO)), EIGH_V(a, UPLO=_uplo(UPLO)))


def linalg_eigvalsh(a, UPLO="L"):  # noqa: N803
    _check_matrix("SelfAdjointEigValues", a, square=True)
    return EIGH_W(a, UPLO=_uplo(UPLO))


def linalg_eigvals(a):
    _check_matrix("EigValues", a, square=True)
    return EIG_W(a)


def linalg_eig_v(a):
    return EIG_V(a)


def linalg_eig(a):
    """np.linalg.eig: (eigenvalues, eigenvectors), complex in general even for a real matrix;
    the eigenvectors' derivative keeps LAPACK's normalization (unit norm, largest component real)."""
    _check_matrix("Eig", a, square=True)
    return EigResult(EIG_W(a), EIG_V(a))


def linalg_qr_q(a):
    return QR_Q(a)


def linalg_qr_r(a):
    return QR_R(a)


def linalg_qr(a, mode="reduced"):
    """np.linalg.qr, mode 'reduced' on square or tall matrices (M >= N)."""
    _check_matrix("Qr", a)
    m, n = np.shape(a)[-2:]
    if mode not in ("reduced", "r") or m < n:
        raise RefusalError(f"[Qr] mode={mode!r} on shape {tuple(np.shape(a))} has no derivative "
                           "here: only the reduced QR of a square or tall matrix (M >= N) does. "
                           "Fix: mode='reduced', or factor the transpose.")
    return QR_R(a) if mode == "r" else QRResult(QR_Q(a), QR_R(a))


def linalg_pinv(a, rcond=None, hermitian=False, *, rtol=None):
    """np.linalg.pinv; its derivative assumes the rank is constant near `a` (full rank)."""
    _check_matrix("MatrixPinv", a)
    return PINV(a)


LstsqResult = namedtuple("LstsqResult", ["x", "residuals", "rank", "s"])


def linalg_lstsq(a, b, rcond=None):
    """np.linalg.lstsq: x = pinv(a) @ b (differentiable, full rank), residuals as NumPy's
    (the squared residual norms when a is tall and of full rank, else empty), rank and s."""
    _check_matrix("Lstsq", a)
    if np.ndim(a) != 2:
        raise np.linalg.LinAlgError(f"[Lstsq] expects a 2-D matrix a, got shape {tuple(np.shape(a))}.")
    x = dnp.matmul(PINV(a), b)
    m, n = np.shape(a)
    rank = int(MATRIX_RANK(a))
    if rank == n and m > n:
        r = b - dnp.matmul(a, x)
        residuals = dnp.sum(r * r, axis=0)
        residuals = dnp.reshape(residuals, (1,)) if np.ndim(b) == 1 else residuals
    else:
        residuals = np.zeros((0,), dtype=dnp.result_dtype(a))
    return LstsqResult(x, residuals, rank, SVD_S(a))


def linalg_norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """np.linalg.norm for every ord and axis NumPy accepts; the Euclidean and Frobenius norms
    run the EuclideanNorm primitive (gradient 0 at 0), the others LinalgNorm (on the tape and
    in the functional API; the transformer maps only the Euclidean ones). Conventions:
    docs/numerics.md."""
    nd = np.ndim(x)
    if ord is None or ord == "fro" or ord == 2 and (axis is None and nd == 1 or isinstance(axis, (int, np.integer))):
        return NORM(x, axis=_as_axis(axis), keepdims=bool(keepdims))
    if axis is None and nd not in (1, 2):
        raise ValueError(f"[LinalgNorm] ord={ord!r} needs a vector or a matrix, or `axis`; got "
                         f"shape {tuple(np.shape(x))}. Fix: pass axis=... (an int or a pair).")
    if isinstance(axis, list):
        axis = tuple(axis)
    return _OTHER_ORDS[0](x, ord=ord, axis=axis, keepdims=bool(keepdims))


def _as_axis(axis):
    if axis is None or isinstance(axis, (int, np.integer)):
        return None if axis is None else int(axis)
    return tuple(int(a) for a in axis)


def linalg_matrix_rank(A, tol=None, hermitian=False, *, rtol=None):  # noqa: N803
    """np.linalg.matrix_rank: an integer, with no derivative."""
    return MATRIX_RANK(A)


NUMPY_DECOMPOSITIONS = {np.linalg.svd: linalg_svd, np.linalg.eigh: linalg_eigh, np.linalg.eig: linalg_eig,
                        np.linalg.eigvals: linalg_eigvals,
                        np.linalg.eigvalsh: linalg_eigvalsh, np.linalg.qr: linalg_qr,
                        np.linalg.pinv: linalg_pinv, np.linalg.lstsq: linalg_lstsq,
                        np.linalg.norm: linalg_norm, np.linalg.matrix_rank: linalg_matrix_rank}
if hasattr(np.linalg, "svdvals"):  # NumPy 2
    NUMPY_DECOMPOSITIONS[np.linalg.svdvals] = linalg_svd_s
if hasattr(np.linalg, "matrix_norm"):
    NUMPY_DECOMPOSITIONS[np.linalg.matrix_norm] = lambda x, /, *, keepdims=False, ord="fro": linalg_norm(
        x, ord=ord, axis=(-2, -1), keepdims=keepdims)

dnp.export(globals(), NUMPY_DECOMPOSITIONS)
