"""Triangles and diagonals of NumPy: tril / triu, diag / diagflat with offsets (a
diagonal outside the matrix is empty, and so is its cotangent). Linear: one primitive each,
with NumPy's own static arguments; the rules' pieces are in `rulekit.numpy_functions`."""

import numpy as np

from ..core import dnp
from ..core.registry import LINEAR, defop
from ..core.rulekit import undiag, undiagflat

__all__ = ["tril", "triu", "diag", "diagflat"]


def _tril(m, *, k=0):
    return np.tril(m, k)


def _triu(m, *, k=0):
    return np.triu(m, k)


def tril_vjp(g, ans, m, *, k=0):
    return dnp.tril(g, k)


def triu_vjp(g, ans, m, *, k=0):
    return dnp.triu(g, k)


def _sample_band(rng):
    return (rng.standard_normal((3, 4)),), {"k": -1}


def _sample_band_stack(rng):
    return (rng.standard_normal((2, 3, 3)),), {"k": 1}


TRIL = defop("Tril", _tril, vjp=tril_vjp, jvp=LINEAR, samples=(_sample_band, _sample_band_stack), complex=True)
TRIU = defop("Triu", _triu, vjp=triu_vjp, jvp=LINEAR, samples=(_sample_band, _sample_band_stack), complex=True)


def tril(m, k=0):
    return TRIL(m, k=k)


def triu(m, k=0):
    return TRIU(m, k=k)


def _diag(v, *, k=0):
    return np.diag(v, k)


def diag_vjp(g, ans, v, *, k=0):
    return undiag(g, v, k)


def _sample_diag_vector(rng):
    return (rng.standard_normal(3),), {"k": 1}


def _sample_diag_matrix(rng):
    return (rng.standard_normal((3, 4)),), {"k": -1}


def _sample_diag_empty(rng):
    return (rng.standard_normal((2, 3)),), {"k": 3}  # outside the matrix: an empty diagonal


DIAG = defop("Diag", _diag, vjp=diag_vjp, jvp=LINEAR,
             samples=(_sample_diag_vector, _sample_diag_matrix, _sample_diag_empty), complex=True)


def diag(v, k=0):
    return DIAG(v, k=k)


def _diagflat(v, *, k=0):
    return np.diagflat(v, k)


def diagflat_vjp(g, ans, v, *, k=0):
    return undiagflat(g, v, k)


def _sample_diagflat(rng):
    return (rng.standard_normal((2, 2)),), {"k": -2}


DIAGFLAT = defop("DiagFlat", _diagflat, vjp=diagflat_vjp, jvp=LINEAR, samples=(_sample_diagflat,), complex=True)


def diagflat(v, k=0):
    return DIAGFLAT(v, k=k)



dnp.export(globals())
