"""`dualtape.linalg`: TF's linear algebra namespace."""

from ..core import dnp as _dnp
from .tf_ops import output_tensor as _out, to_tensor as _t
from .tf_ops import einsum, eye, global_norm, matmul, norm, tensordot  # noqa: F401


def solve(matrix, rhs, adjoint=False, name=None):
    matrix = _t(matrix)
    if adjoint:
        matrix = _dnp.swapaxes(matrix, -1, -2)
    return _out(_dnp.linalg_solve(matrix, _t(rhs, matrix.dtype)))


def inv(input, adjoint=False, name=None):  # noqa: A002
    x = _t(input)
    return _out(_dnp.linalg_inv(_dnp.swapaxes(x, -1, -2) if adjoint else x))


def det(input, name=None):  # noqa: A002
    return _out(_dnp.linalg_det(_t(input)))


def slogdet(input, name=None):  # noqa: A002
    sign, logabsdet = _dnp.linalg_slogdet(_t(input))
    return _out(sign), _out(logabsdet)


def logdet(matrix, name=None):
    """log det of a Hermitian positive-definite matrix, via its Cholesky factor."""
    chol = _dnp.linalg_cholesky(_t(matrix))
    return _out(2 * _dnp.sum(_dnp.log(_dnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1))


def cholesky(input, name=None):  # noqa: A002
    return _out(_dnp.linalg_cholesky(_t(input)))


def trace(x, name=None):
    return _out(_dnp.trace(_t(x), axis1=-2, axis2=-1))


def diag_part(input, name=None):  # noqa: A002
    return _out(_dnp.diagonal(_t(input), axis1=-2, axis2=-1))


def matvec(a, b, transpose_a=False, name=None):
    a = _t(a)
    if transpose_a:
        a = _dnp.swapaxes(a, -1, -2)
    return _out(_dnp.matmul(a, _t(b, a.dtype)))


def transpose(a, name=None, conjugate=False):
    return _out(_dnp.swapaxes(_t(a), -1, -2))


adjoint = transpose
