"""np.linalg: solve, inv, det, slogdet and cholesky, on stacks of matrices (..., M, M).

They are public here with a `linalg_` prefix; `NUMPY_LINALG` maps NumPy's own functions to
them (for tensors and duals passed to np.linalg)."""

from collections import namedtuple

import numpy as np

from ..core import dnp
from ..core.registry import NOT_DIFFERENTIABLE, defop
from ..core.rulekit import (cholesky_jvp_a, cholesky_vjp_a, matrix_scalar, real_part, sign_det_cotangent,
                            sign_det_tangent, swap_last, unbroadcast)

__all__ = ["linalg_solve", "linalg_inv", "linalg_det", "linalg_slogdet", "linalg_cholesky"]


# -- np.linalg -------------------------------------------------------------------------------

def solve_vjp_a(g, ans, a, b):
    return unbroadcast(-dnp.matmul(dnp.linalg_solve(swap_last(a), g), swap_last(ans)), np.shape(a))


def solve_vjp_b(g, ans, a, b):
    return unbroadcast(dnp.linalg_solve(swap_last(a), g), np.shape(b))


def solve_jvp_a(da, ans, a, b):
    return -dnp.linalg_solve(a, dnp.matmul(da, ans))  # d(a^-1 b) = -a^-1 da a^-1 b


def solve_jvp_b(db, ans, a, b):
    return dnp.linalg_solve(a, db)


def _well_conditioned(rng, shape):
    n = shape[-1]
    return 0.3 * rng.standard_normal(shape) + n * np.eye(n)


def _sample_solve(rng):
    return (_well_conditioned(rng, (3, 3)), rng.standard_normal((3, 2))), {}


def _sample_solve_batched(rng):
    return (_well_conditioned(rng, (2, 3, 3)), rng.standard_normal((2, 3, 1))), {}


def _sample_solve_broadcast(rng):
    return (_well_conditioned(rng, (3, 3)), rng.standard_normal((2, 3, 2))), {}


MATRIX_SOLVE = defop("MatrixSolve", np.linalg.solve, vjp=(solve_vjp_a, solve_vjp_b),
                     jvp=(solve_jvp_a, solve_jvp_b), batch_vjp=True,
                     samples=(_sample_solve, _sample_solve_batched, _sample_solve_broadcast), complex=True)


def inv_vjp(g, ans, a):
    return -dnp.matmul(swap_last(ans), dnp.matmul(g, swap_last(ans)))


def inv_jvp(da, ans, a):
    return -dnp.matmul(ans, dnp.matmul(da, ans))


def _sample_square(rng):
    return (_well_conditioned(rng, (3, 3)),), {}


def _sample_square_stack(rng):
    return (_well_conditioned(rng, (2, 2, 2)),), {}


def _sample_general_square(rng):
    return (rng.standard_normal((4, 4)),), {}


MATRIX_INVERSE = defop("MatrixInverse", np.linalg.inv, vjp=inv_vjp, jvp=inv_jvp, batch_vjp=True,
                       samples=(_sample_square, _sample_square_stack, _sample_general_square), complex=True)


def det_vjp(g, ans, a):
    return matrix_scalar(g * ans) * swap_last(dnp.linalg_inv(a))  # d det = det tr(a^-1 da)


def det_jvp(da, ans, a):
    return ans * dnp.sum(swap_last(dnp.linalg_inv(a)) * da, axis=(-2, -1))


MATRIX_DETERMINANT = defop("MatrixDeterminant", np.linalg.det, vjp=det_vjp, jvp=det_jvp,
                           batch_vjp=True,
                           samples=(_sample_square, _sample_square_stack, _sample_general_square), complex=True)


def _logabsdet(a):
    return np.linalg.slogdet(a)[1]


def _signdet(a):
    return np.linalg.slogdet(a)[0]


def logabsdet_vjp(g, ans, a):
    return dnp.multiply(matrix_scalar(real_part(g)), swap_last(dnp.linalg_inv(a)))  # Re(g) a^-T


def logabsdet_jvp(da, ans, a):
    return real_part(dnp.sum(dnp.multiply(swap_last(dnp.linalg_inv(a)), da), axis=(-2, -1)))  # Re(tr(a^-1 da))


def signdet_vjp(g, ans, a):
    return dnp.multiply(matrix_scalar(sign_det_cotangent(g, ans)), swap_last(dnp.linalg_inv(a)))


def signdet_jvp(da, ans, a):
    return sign_det_tangent(dnp.sum(dnp.multiply(swap_last(dnp.linalg_inv(a)), da), axis=(-2, -1)), ans)


LOG_ABS_DETERMINANT = defop("LogMatrixDeterminant", _logabsdet, vjp=logabsdet_vjp,
                            jvp=logabsdet_jvp, batch_vjp=True,
                            samples=(_sample_square, _sample_square_stack, _sample_general_square), complex=True)
# the sign is +-1 on reals (derivative 0), det / |det| on complex values, moving with a's phase
SIGN_DETERMINANT = defop("LogMatrixDeterminantSign", _signdet, vjp=signdet_vjp, jvp=signdet_jvp,
                         batch_vjp=True, samples=(_sample_square, _sample_square_stack), complex=True)


def _cholesky(a, *, upper=False):
    return np.linalg.cholesky(a, upper=bool(upper))  # reads a's lower triangle (upper=True: its upper)


def cholesky_vjp(g, ans, a, *, upper=False):
    return cholesky_vjp_a(g, ans, upper)


def cholesky_jvp(da, ans, a, *, upper=False):
    return cholesky_jvp_a(da, ans, upper)


def _positive_definite(rng, shape):
    b = rng.standard_normal(shape)
    return b @ np.swapaxes(b, -1, -2) + shape[-1] * np.eye(shape[-1])


def _sample_cholesky(rng):
    return (_positive_definite(rng, (3, 3)),), {}


def _sample_cholesky_stack(rng):
    return (_positive_definite(rng, (2, 4, 4)),), {}


def _sample_cholesky_nonsymmetric(rng):  # LAPACK reads the lower triangle: the upper is noise it ignores
    return (np.tril(_positive_definite(rng, (3, 3))) + np.triu(rng.standard_normal((3, 3)), 1),), {}


def _sample_cholesky_nonsymmetric_upper(rng):  # upper=True reads the upper triangle
    return (np.triu(_positive_definite(rng, (2, 4, 4))) + np.tril(rng.standard_normal((2, 4, 4)), -1),), \
        {"upper": True}


CHOLESKY = defop("Cholesky", _cholesky, vjp=cholesky_vjp, jvp=cholesky_jvp, batch_vjp=True,
                 samples=(_sample_cholesky, _sample_cholesky_stack, _sample_cholesky_nonsymmetric,
                          _sample_cholesky_nonsymmetric_upper))


def _check_square(api, a):
    shape = tuple(np.shape(a))
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise np.linalg.LinAlgError(f"[{api}] expects a square matrix or a stack of them "
                                    f"(..., M, M), got shape {shape}.")


def linalg_solve(a, b):
    """np.linalg.solve: x with a @ x = b; b is a vector only when it is 1-D (NumPy 2)."""
    _check_square("MatrixSolve", a)
    if np.ndim(b) == 1:
        return dnp.getitem(MATRIX_SOLVE(a, dnp.expand_dims(b, -1)), (Ellipsis, 0))
    return MATRIX_SOLVE(a, b)


def linalg_inv(a):
    _check_square("MatrixInverse", a)
    return MATRIX_INVERSE(a)


def linalg_det(a):
    _check_square("MatrixDeterminant", a)
    return MATRIX_DETERMINANT(a)


SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])  # as np.linalg's


def linalg_slogdet(a):
    """np.linalg.slogdet: (sign, logabsdet), two primitives; only logabsdet is differentiable."""
    _check_square("LogMatrixDeterminant", a)
    return SlogdetResult(SIGN_DETERMINANT(a), LOG_ABS_DETERMINANT(a))


def linalg_cholesky(a, upper=False):
    """np.linalg.cholesky, which reads one triangle of `a` (the lower one; upper=True: the upper
    one, and the upper factor): the derivatives of that function; the gradient has entries in
    that triangle only."""
    _check_square("Cholesky", a)
    return CHOLESKY(a, upper=bool(upper))


NUMPY_LINALG = {np.linalg.solve: linalg_solve, np.linalg.inv: linalg_inv, np.linalg.det: linalg_det,
                np.linalg.slogdet: linalg_slogdet, np.linalg.cholesky: linalg_cholesky}

dnp.export(globals(), NUMPY_LINALG)
