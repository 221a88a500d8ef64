"""The rules' helpers for complex values: parts, moduli and phases, in JAX's convention.

A complex z = x + iy is a pair of reals, and every rule is the R-linear map of that pair.
The rules' convention (JAX's, docs/numerics.md "Complex numbers") pairs a cotangent c with
a tangent t by Re(sum(c * t)), without conjugation, so a holomorphic op's rule is its real
rule unchanged (`g * cos(x)`), and only the ops that are not holomorphic (real, imag, conj,
abs, angle) need the helpers below. Each accepts real inputs too, where it gives the real
rule, so one rule serves both.
"""

import numpy as np

from .. import dnp
from ..duck import primal_of, values_of

__all__ = ["eig_phase_cotangent", "eig_phase_tangent", "svd_phase_diagonal", "real_part", "sign_det_cotangent", "sign_det_tangent", "real_cotangent", "imag_cotangent", "conj_part", "abs_cotangent", "abs_tangent",
           "angle_cotangent", "angle_tangent", "refuse_complex_zero"]


def _is_complex(x):
    return dnp.result_dtype(x).kind == "c"


def _like(value, x):
    """`value` in the dtype of x when x is complex (a real cotangent of a complex input)."""
    dtype = dnp.result_dtype(x)
    return dnp.cast(value, dtype) if dtype.kind == "c" and dnp.result_dtype(value) != dtype else value


def real_cotangent(g, x):
    """Real's cotangent: Re(g), in x's dtype. Re(c dz) = g Re(dz) gives c = g; g's imaginary
    part (a real value's cotangent may carry one the transformer did not drop) is not part
    of it."""
    return _like(dnp.real(g), x) if _is_complex(x) else g


def imag_cotangent(g, x):
    """Imag's cotangent: -i Re(g) (Re(-i g dz) = g Im(dz)); zero for a real x (imag(x) = 0)."""
    if _is_complex(x):
        return dnp.multiply(_like(dnp.real(g), x), -1j)
    return dnp.zeros_like(g) if dnp.result_dtype(g) == dnp.result_dtype(x) else dnp.zeros_like(x)


def conj_part(x):
    """conj(x): x itself when real (no copy). Conj's cotangent (Re(c conj(dz)) = Re(conj(c) dz)),
    and the conj(z) that a real-valued function's complex rule has where its real rule has x
    (d|z|^2 = 2 Re(conj(z) dz): var, std, norm)."""
    return dnp.conjugate(x) if _is_complex(x) else x


def refuse_complex_zero(x, op_name):
    """Raise where a complex x is 0: |z| and angle(z) have no derivative there (a cone, not a
    kink with a one-sided convention as |x| at 0 on the reals)."""
    value = np.asarray(values_of(x))  # (every example's, under vmap)
    if value.dtype.kind == "c" and not np.all(value != 0):
        raise ValueError(f"[{op_name}] has no derivative at a complex 0 (input of shape "
                         f"{value.shape}, dtype {value.dtype}, zero at index "
                         f"{tuple(int(i) for i in np.argwhere(value == 0)[0])}): |z| is a cone "
                         "there, differentiable along no complex direction. Keep z away from 0 "
                         "(e.g. np.sqrt(z.real ** 2 + z.imag ** 2 + eps)).")
    return x


def abs_cotangent(g, x, ans):
    """|z|'s cotangent: Re(g) conj(z) / |z| (the real rule g sign(x) on reals)."""
    if not _is_complex(x):
        return g * dnp.sign(x)  # abs'(0) = 0, as TF
    return dnp.multiply(dnp.real(g), dnp.divide(dnp.conjugate(refuse_complex_zero(x, "Abs")), ans))


def abs_tangent(dx, x, ans):
    """|z|'s tangent: Re(conj(z) dz) / |z| (dx sign(x) on reals)."""
    if not _is_complex(x):
        return dx * dnp.sign(x)
    return dnp.divide(dnp.real(dnp.multiply(dnp.conjugate(refuse_complex_zero(x, "Abs")), dx)), ans)


def angle_cotangent(g, x):
    """angle(z)'s cotangent: -i Re(g) / z (Re(c dz) = g Im(dz / z)); zero on reals."""
    if not _is_complex(x):
        return dnp.zeros_like(g) if dnp.result_dtype(g) == dnp.result_dtype(x) else dnp.zeros_like(x)
    return dnp.multiply(dnp.real(g), dnp.divide(-1j, refuse_complex_zero(x, "Angle")))


def angle_tangent(dx, x):
    """angle(z)'s tangent: Im(dz / z); zero on reals (angle is 0 or pi there)."""
    if not _is_complex(x):
        return dnp.zeros_like(dx)
    return dnp.imag(dnp.divide(dx, refuse_complex_zero(x, "Angle")))


def real_part(x):
    """Re(x): x itself when real (a real output's tangent or cotangent, as logabsdet's)."""
    return dnp.real(x) if _is_complex(x) else x


def sign_det_cotangent(g, ans):
    """The scalar factor of slogdet's sign cotangent, i Im(g s) (times a^-T); 0 on reals.
    d s = i Im(tr(a^-1 da)) s for s = det / |det|, and Re(c i Im(t) s) = Re(i Im(c s) t)."""
    if not _is_complex(ans):
        return dnp.zeros_like(g)
    return dnp.multiply(dnp.imag(dnp.multiply(g, ans)), 1j)


def sign_det_tangent(trace, ans):
    """slogdet's sign tangent from t = tr(a^-1 da): i Im(t) s; 0 on reals (s is +-1 there)."""
    if not _is_complex(ans):
        return dnp.zeros_like(trace)
    return dnp.multiply(dnp.multiply(dnp.imag(trace), 1j), ans)


def _largest_component(v):
    """1 at each column's entry of largest modulus (LAPACK makes it real), else 0: a constant."""
    modulus = np.abs(np.asarray(primal_of(v)))
    return (modulus == np.max(modulus, axis=-2, keepdims=True)).astype(modulus.dtype)


def eig_phase_tangent(dv0, v):
    """-i Im(dv0_k) / v_k per column (k: its largest component, which LAPACK keeps real), the
    rotation keeping it real; 0 for real eigenvectors (nothing rotates)."""
    if not _is_complex(v):
        return dnp.zeros_like(dnp.sum(dv0, axis=-2))
    pick = _largest_component(v)
    return dnp.multiply(dnp.divide(dnp.imag(dnp.sum(dnp.multiply(dv0, pick), axis=-2)), dnp.real(dnp.sum(dnp.multiply(v, pick), axis=-2))),
                        -1j)


def eig_phase_cotangent(s, v):
    """The transpose of eig_phase_tangent, placed in a matrix: i Im(s_j) / v_kj at each column's
    largest component; 0 for real eigenvectors."""
    if not _is_complex(v) and not _is_complex(s):
        return dnp.zeros_like(v)
    pick = _largest_component(v)
    return dnp.multiply(pick, dnp.expand_dims(dnp.divide(dnp.multiply(dnp.imag(s), 1j),
                                                        dnp.real(dnp.sum(dnp.multiply(v, pick), axis=-2))), -2))


def svd_phase_diagonal(k, s):
    """diag(i Im(k_jj) / s_j): the turn of the singular vectors' phases that JAX's svd JVP puts
    in dU (k = U^H da V), and its transpose (k = U^T g); 0 on reals."""
    if not _is_complex(k):
        return dnp.zeros_like(k)
    part = dnp.imag(k)
    return dnp.multiply(dnp.multiply(part, np.eye(np.shape(k)[-1], dtype=dnp.result_dtype(part)))
                        / dnp.expand_dims(s, -2), 1j)
