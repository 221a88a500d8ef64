"""NumPy functions the transformer differentiates as compositions of registry ops.

`np.flip`, `np.cov`, `np.linalg.svd`, ... are no single primitive: the runtime modes run them
as several ops (lib/ops). The transformer reads the definitions below as it reads a user's
helper function: a call `np.flip(x, 0)` stays in the forward sweep as written, and its adjoint
(tangent) is the generated helper `flip_vjp` (`flip_jvp`) of `flip` here. So every
derivative still comes from the registry's rules, written once: these are plain code in the
subset the transformer accepts (registry ops, subscripts, loops, if), with the shape
arithmetic in composition_helpers (non-differentiable: it sees shapes, never values).

Each definition has NumPy's signature. `COMPOSED` maps NumPy's function (and dnp's) to it.
"""

import numpy as np

from dualtape.core import dnp

from ..runtime.compositions import cov_check, cov_ddof, empty_residuals, fft_single_length, flip_index, lstsq_check, lstsq_residuals, matrix_norm_check, moveaxis_order, multi_dot_check, qr_check, repeat_index, split_axis, split_index, svd_check


def flip(m, axis=None):
    """np.flip: a reversing slice on each flipped axis."""
    return m[flip_index(np.ndim(m), axis)]


def moveaxis(a, source, destination):
    """np.moveaxis: a transpose."""
    return np.transpose(a, moveaxis_order(np.ndim(a), source, destination))


def repeat(a, repeats, axis=None):
    """np.repeat: an index that repeats each position (of the flattened array for axis=None)."""
    if axis is None:
        result = np.reshape(a, (-1,))[repeat_index((np.size(a),), repeats, 0)]
    else:
        result = a[repeat_index(np.shape(a), repeats, axis)]
    return result


def array_split(ary, indices_or_sections, axis=0):
    """np.array_split: the list of pieces, each a slice."""
    index = split_index(np.shape(ary), indices_or_sections, axis)
    pieces = list(index)
    for k in range(len(index)):
        pieces[k] = ary[index[k]]
    return pieces


def split(ary, indices_or_sections, axis=0):
    """np.split: np.array_split into equal pieces."""
    index = split_index(np.shape(ary), indices_or_sections, axis, True)
    pieces = list(index)
    for k in range(len(index)):
        pieces[k] = ary[index[k]]
    return pieces


def hsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, split_axis(np.ndim(ary), 1, "hsplit"))


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, split_axis(np.ndim(ary), 0, "vsplit"))


def dsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, split_axis(np.ndim(ary), 2, "dsplit"))


def dot(a, b):
    """np.dot: a product with a scalar operand, matmul where b has at most two axes (the same
    contraction: a's last axis with b's first or only one), else a tensordot over a's last
    axis and b's second to last."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        result = a * b
    elif np.ndim(b) <= 2:
        result = np.matmul(a, b)
    else:
        result = np.tensordot(a, b, axes=([-1], [np.ndim(b) - 2]))
    return result


def inner(a, b):
    """np.inner: a product over the last axes (np.tensordot, an einsum to the transformer)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        result = a * b
    else:
        result = np.tensordot(a, b, axes=([-1], [-1]))
    return result


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """np.cov: the centred rows times their transpose (fweights / aweights are refused)."""
    cov_check(fweights, aweights)
    x = np.atleast_2d(m)
    if not rowvar and np.shape(x)[0] != 1:
        x = np.transpose(x)
    if y is not None:
        other = np.atleast_2d(y)
        if not rowvar and np.shape(other)[0] != 1:
            other = np.transpose(other)
        x = np.concatenate([x, other], axis=0)
    centred = x - np.mean(x, axis=1, keepdims=True)
    c = np.matmul(centred, np.transpose(centred)) / (np.shape(x)[1] - cov_ddof(bias, ddof))
    return np.squeeze(c)


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """np.corrcoef: the covariance over the outer product of the standard deviations."""
    c = np.cov(x, y, rowvar)
    if np.ndim(c) == 0:
        result = c / c
    else:
        d = np.sqrt(np.diagonal(c))
        result = c / d[:, None] / d[None, :]
    return result


def select(condlist, choicelist, default=0):
    """np.select: nested np.where, the first true condition winning."""
    result = default
    for k in range(len(condlist) - 1, -1, -1):
        result = np.where(condlist[k], choicelist[k], result)
    return result


def multi_dot(arrays, *, out=None):
    """np.linalg.multi_dot: np.matmul chained left to right (as dnp; not reordered)."""
    multi_dot_check(len(arrays))
    result = arrays[0]
    for k in range(1, len(arrays)):
        result = np.matmul(result, arrays[k])
    return result


def float_power(x1, x2):
    """np.float_power: np.power computed in float64 (NumPy's result dtype)."""
    return np.power(dnp.cast(x1, np.float64), dnp.cast(x2, np.float64))


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """np.linalg.svd: (U, S, Vh) of the reduced SVD from the SvdU, SvdValues and SvdVh ops."""
    if compute_uv:
        svd_check(np.shape(a), full_matrices)
        result = (dnp.linalg_svd_u(a), dnp.linalg_svd_s(a), dnp.linalg_svd_vh(a))
    else:
        result = dnp.linalg_svd_s(a)
    return result


def eigh(a, UPLO="L"):  # noqa: N803  (NumPy's name)
    """np.linalg.eigh: (eigenvalues, eigenvectors) of the triangle UPLO names, mirrored, as dnp."""
    return (dnp.linalg_eigh_w(a, UPLO), dnp.linalg_eigh_v(a, UPLO))


def qr(a, mode="reduced"):
    """np.linalg.qr, the reduced QR of a square or tall matrix: (Q, R), or R for mode='r'."""
    qr_check(np.shape(a), mode)
    if mode == "r":
        result = dnp.linalg_qr_r(a)
    else:
        result = (dnp.linalg_qr_q(a), dnp.linalg_qr_r(a))
    return result


def lstsq(a, b, rcond=None):
    """np.linalg.lstsq: (x, residuals, rank, s), x = pinv(a) @ b (full rank), as dnp."""
    lstsq_check(np.shape(a))
    x = np.matmul(np.linalg.pinv(a), b)
    rank = np.linalg.matrix_rank(a)
    if lstsq_residuals(np.shape(a), rank):
        r = b - np.matmul(a, x)
        residuals = np.sum(r * r, axis=0)
        if np.ndim(b) == 1:
            residuals = np.reshape(residuals, (1,))
    else:
        residuals = empty_residuals(a.dtype)
    return (x, residuals, rank, dnp.linalg_svd_s(a))


def matrix_norm(x, keepdims=False, ord="fro"):  # noqa: A002  (NumPy's name)
    """np.linalg.matrix_norm, the Frobenius norm: np.linalg.norm over the last two axes."""
    matrix_norm_check(ord)
    return np.linalg.norm(x, axis=(-2, -1), keepdims=keepdims)


def fft(a, n=None, axis=-1, norm=None):
    """np.fft.fft: np.fft.fftn along the one axis (the FFT op's rules read s= and axes=)."""
    return np.fft.fftn(a, fft_single_length(n), (axis,), norm)


def ifft(a, n=None, axis=-1, norm=None):
    """np.fft.ifft: np.fft.ifftn along the one axis."""
    return np.fft.ifftn(a, fft_single_length(n), (axis,), norm)


def rfft(a, n=None, axis=-1, norm=None):
    """np.fft.rfft: np.fft.rfftn along the one axis."""
    return np.fft.rfftn(a, fft_single_length(n), (axis,), norm)


def irfft(a, n=None, axis=-1, norm=None):
    """np.fft.irfft: np.fft.irfftn along the one axis."""
    return np.fft.irfftn(a, fft_single_length(n), (axis,), norm)


_NUMPY = {np.flip: flip, np.moveaxis: moveaxis, np.repeat: repeat, np.array_split: array_split,
          np.split: split, np.hsplit: hsplit, np.vsplit: vsplit, np.dsplit: dsplit, np.dot: dot, np.inner: inner,
          np.cov: cov, np.corrcoef: corrcoef, np.select: select, np.linalg.multi_dot: multi_dot,
          np.float_power: float_power, np.linalg.svd: svd, np.linalg.eigh: eigh, np.linalg.qr: qr,
          np.linalg.lstsq: lstsq, np.fft.fft: fft, np.fft.ifft: ifft, np.fft.rfft: rfft, np.fft.irfft: irfft}
if hasattr(np.linalg, "matrix_norm"):  # NumPy 2
    _NUMPY[np.linalg.matrix_norm] = matrix_norm
# NumPy's function and dnp's (what np.flip dispatches to on traced values) -> its definition here
COMPOSED = dict(_NUMPY)
COMPOSED.update({dnp.NUMPY_DISPATCH[f]: c for f, c in _NUMPY.items() if f in dnp.NUMPY_DISPATCH})


def composed(obj):
    """The definition the transformer reads for a call of `obj`, or None."""
    try:
        return COMPOSED.get(obj)
    except TypeError:  # unhashable
        return None


def is_composition(fn):
    """Whether `fn` is one of the definitions here (the transformer reads its source)."""
    return getattr(fn, "__module__", None) == __name__ and fn in _DEFINITIONS


_DEFINITIONS = frozenset(_NUMPY.values())
