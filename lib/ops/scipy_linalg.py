"""scipy.linalg as registry ops: solve_triangular, solve_sylvester, expm and sqrtm (and
cholesky, through np.linalg's). Imported only when SciPy is installed; scipy.linalg itself
is imported at the first call (it is slow to import and `import dualtape` never needs it).

SciPy's functions convert with np.asarray, so on traced values call them from
`dualtape.scipy.linalg`; the transformer maps SciPy's own spelling (`dnp.METHOD_DISPATCH`).
Rules: expm by the Frechet derivative (a 2n x 2n block expm), sqrtm and solve_sylvester by
Sylvester equations (X dX + dX X = dA), solve_triangular reads one triangle.
"""

import numpy as np

from ..core import dnp
from ..core.registry import defop
from ..core.rulekit import (as_columns, band_to_dense, band_transpose, dense_to_band, expm_frechet, swap_last,
                            triangle)
from .linalg_np import linalg_cholesky

__all__ = ["scipy_solve_triangular", "scipy_solve_sylvester", "scipy_expm", "scipy_sqrtm", "scipy_cholesky",
           "scipy_solve_banded"]


def _sla():
    import scipy.linalg  # noqa: PLC0415 - lazily: importing scipy.linalg takes a while
    return scipy.linalg


def _in_dtype(value, *args):
    return np.asarray(np.real(value), dtype=np.result_type(*args, 1.0))  # sqrtm may return complex zeros


def _solve_triangular(a, b, *, trans=0, lower=False, unit_diagonal=False):
    return _in_dtype(_sla().solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal), a, b)


def solve_tri_vjp_a(g, ans, a, b, *, trans=0, lower=False, unit_diagonal=False):
    return triangle(-dnp.matmul(as_columns(dnp.scipy_solve_triangular(a, g, trans=1 - trans, lower=lower,
                                                                      unit_diagonal=unit_diagonal), np.shape(a)[-1]),
                                swap_last(as_columns(ans, np.shape(a)[-1]))) if trans == 0 else
                    -dnp.matmul(as_columns(ans, np.shape(a)[-1]),
                                swap_last(as_columns(dnp.scipy_solve_triangular(
                                    a, g, trans=1 - trans, lower=lower, unit_diagonal=unit_diagonal),
                                    np.shape(a)[-1]))), lower, unit_diagonal)


def solve_tri_vjp_b(g, ans, a, b, *, trans=0, lower=False, unit_diagonal=False):
    return dnp.scipy_solve_triangular(a, g, trans=1 - trans, lower=lower, unit_diagonal=unit_diagonal)


def solve_tri_jvp_a(da, ans, a, b, *, trans=0, lower=False, unit_diagonal=False):
    return -dnp.scipy_solve_triangular(
        a, dnp.matmul(triangle(da, lower, unit_diagonal) if trans == 0 else swap_last(triangle(da, lower, unit_diagonal)),
                      ans), trans=trans, lower=lower, unit_diagonal=unit_diagonal)


def solve_tri_jvp_b(db, ans, a, b, *, trans=0, lower=False, unit_diagonal=False):
    return dnp.scipy_solve_triangular(a, db, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


def _triangular(rng, n=4):
    return rng.standard_normal((n, n)) + n * np.eye(n)


def _tri_sample(**static):
    def sample(rng):
        b = rng.standard_normal((4, 2) if static.get("trans") else (4,))
        return (_triangular(rng), b), static
    sample.__name__ = "_sample_" + "_".join(f"{k}{v}" for k, v in static.items())
    return sample


SOLVE_TRIANGULAR = defop("MatrixTriangularSolve", _solve_triangular, (solve_tri_vjp_a, solve_tri_vjp_b),
                         (solve_tri_jvp_a, solve_tri_jvp_b),
                         samples=(_tri_sample(lower=True), _tri_sample(lower=False, trans=1),
                                  _tri_sample(lower=True, trans=1, unit_diagonal=True)))


def _solve_sylvester(a, b, q):
    return _in_dtype(_sla().solve_sylvester(a, b, q), a, b, q)


def sylvester_vjp_a(g, ans, a, b, q):
    return -dnp.matmul(dnp.scipy_solve_sylvester(swap_last(a), swap_last(b), g), swap_last(ans))


def sylvester_vjp_b(g, ans, a, b, q):
    return -dnp.matmul(swap_last(ans), dnp.scipy_solve_sylvester(swap_last(a), swap_last(b), g))


def sylvester_vjp_q(g, ans, a, b, q):
    return dnp.scipy_solve_sylvester(swap_last(a), swap_last(b), g)


def sylvester_jvp_a(da, ans, a, b, q):
    return dnp.scipy_solve_sylvester(a, b, -dnp.matmul(da, ans))


def sylvester_jvp_b(db, ans, a, b, q):
    return dnp.scipy_solve_sylvester(a, b, -dnp.matmul(ans, db))


def sylvester_jvp_q(dq, ans, a, b, q):
    return dnp.scipy_solve_sylvester(a, b, dq)


def _sample_sylvester(rng):
    return (rng.standard_normal((3, 3)) + 3 * np.eye(3), rng.standard_normal((2, 2)) + 2 * np.eye(2),
            rng.standard_normal((3, 2))), {}


SOLVE_SYLVESTER = defop("SolveSylvester", _solve_sylvester, (sylvester_vjp_a, sylvester_vjp_b, sylvester_vjp_q),
                        (sylvester_jvp_a, sylvester_jvp_b, sylvester_jvp_q), samples=(_sample_sylvester,))


def _expm(a):
    return _in_dtype(_sla().expm(a), a)


def expm_vjp(g, ans, a):
    return expm_frechet(a, g, True)


def expm_jvp(da, ans, a):
    return expm_frechet(a, da)


def _sample_expm(rng):
    return (0.5 * rng.standard_normal((3, 3)),), {}


EXPM = defop("MatrixExponential", _expm, expm_vjp, expm_jvp, samples=(_sample_expm,))


def _sqrtm(a):
    root = _sla().sqrtm(a)
    if np.iscomplexobj(root) and not np.iscomplexobj(a) and \
            np.max(np.abs(root.imag), initial=0.0) > 1e-8 * max(np.max(np.abs(root.real), initial=0.0), 1.0):
        # a real part is not a square root: returning it would be a wrong number
        raise ValueError(
            f"[MatrixSquareRoot] the square root of this {np.shape(a)} {np.asarray(a).dtype} matrix is complex: it "
            "has eigenvalues on the negative real axis, and the real part of a complex root is not a root. "
            "Fix: pass a matrix whose eigenvalues are off the closed negative real axis (e.g. symmetric positive "
            "definite, b @ b.T + c * np.eye(n)).")
    return _in_dtype(root, a)


def sqrtm_vjp(g, ans, a):
    return dnp.scipy_solve_sylvester(swap_last(ans), swap_last(ans), g)


def sqrtm_jvp(da, ans, a):
    return dnp.scipy_solve_sylvester(ans, ans, da)


def _sample_sqrtm(rng):
    b = rng.standard_normal((3, 3))
    return (b @ b.T + 2 * np.eye(3),), {}


SQRTM = defop("MatrixSquareRoot", _sqrtm, sqrtm_vjp, sqrtm_jvp, samples=(_sample_sqrtm,))


def _solve_banded(ab, b, *, l_and_u):
    return _in_dtype(_sla().solve_banded(l_and_u, ab, b), ab, b)


def banded_vjp_ab(g, ans, ab, b, *, l_and_u):
    return dense_to_band(-dnp.matmul(as_columns(dnp.scipy_solve_banded((l_and_u[1], l_and_u[0]), band_transpose(
        ab, l_and_u), g), np.shape(ab)[-1]), swap_last(as_columns(ans, np.shape(ab)[-1]))), l_and_u)


def banded_vjp_b(g, ans, ab, b, *, l_and_u):
    return dnp.scipy_solve_banded((l_and_u[1], l_and_u[0]), band_transpose(ab, l_and_u), g)


def banded_jvp_ab(dab, ans, ab, b, *, l_and_u):
    return -dnp.scipy_solve_banded(l_and_u, ab, dnp.matmul(band_to_dense(dab, l_and_u), ans))


def banded_jvp_b(db, ans, ab, b, *, l_and_u):
    return dnp.scipy_solve_banded(l_and_u, ab, db)


def _sample_banded(l_and_u, b_shape):
    def sample(rng):
        n = b_shape[0]
        ab = 0.3 * rng.standard_normal((sum(l_and_u) + 1, n))
        ab[l_and_u[1]] += 3.0  # a dominant diagonal
        return (ab, rng.standard_normal(b_shape)), {"l_and_u": l_and_u}
    sample.__name__ = f"_sample_banded_{l_and_u[0]}_{l_and_u[1]}_{len(b_shape)}d"
    return sample


SOLVE_BANDED = defop("SolveBanded", _solve_banded, (banded_vjp_ab, banded_vjp_b), (banded_jvp_ab, banded_jvp_b),
                     samples=(_sample_banded((1, 1), (5,)), _sample_banded((2, 1), (4, 2)),
                              _sample_banded((0, 2), (5,))))


def scipy_solve_banded(l_and_u, ab, b):
    """scipy.linalg.solve_banded((l, u), ab, b): differentiable in the band `ab` and in b."""
    return SOLVE_BANDED(ab, b, l_and_u=(int(l_and_u[0]), int(l_and_u[1])))


def scipy_solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False):
    """scipy.linalg.solve_triangular: x with op(T) x = b, T the lower or upper triangle of a;
    trans 0 / 'N' or 1 / 'T'."""
    trans = {"N": 0, "T": 1, "C": 1}.get(trans, trans)
    return SOLVE_TRIANGULAR(a, b, trans=int(trans), lower=bool(lower), unit_diagonal=bool(unit_diagonal))


def scipy_solve_sylvester(a, b, q):
    """scipy.linalg.solve_sylvester: x with a x + x b = q."""
    return SOLVE_SYLVESTER(a, b, q)


def scipy_expm(A):  # noqa: N803
    return EXPM(A)


def scipy_sqrtm(A):  # noqa: N803
    """scipy.linalg.sqrtm of a matrix with a real square root (no eigenvalues on the
    closed negative real axis, e.g. symmetric positive definite)."""
    return SQRTM(A)


def scipy_cholesky(a, lower=False):
    """scipy.linalg.cholesky: the upper factor by default (np.linalg's is the lower)."""
    return linalg_cholesky(a, upper=not lower)


for _name, _fn in (("solve_triangular", scipy_solve_triangular), ("solve_sylvester", scipy_solve_sylvester),
                   ("expm", scipy_expm), ("sqrtm", scipy_sqrtm), ("solve_banded", scipy_solve_banded)):
    dnp.METHOD_DISPATCH[("scipy.linalg", _name)] = _fn  # for the transformer, by name

dnp.export(globals())
