"""Tangents of adjoint helpers whose tangent is not one of the helper itself (hvp).

Forward mode over adjoint code (`transforms.hvp`) needs, for each helper a VJP rule calls, its
tangent: `fwd_rules_more` declares them; where the tangent is not the helper applied to the
tangents, it is one of these functions. Plain NumPy and rulekit on plain values, like
`runtime` (which re-exports them for the generated code; `save` copies their source).
"""

import numpy as np

from dualtape.core.rulekit import expm_frechet, interp_weights, matrix_power_vjp, primal_of

from .odeint import odeint_adjoint, odeint_tangent  # noqa: F401  (scipy.integrate.odeint's, re-exported)

__all__ = ["multi_matmul", "matrix_power_vjp_tangent", "expm_frechet_tangent", "interp_weights_tangent",
           "block_upper", "odeint_adjoint", "odeint_tangent"]


def multi_matmul(*xs):
    """x0 @ x1 @ ... (rulekit.decompositions' `matmul_chain`, under the name generated code calls)."""
    out = xs[0]
    for x in xs[1:]:
        out = np.matmul(out, x)
    return out


def block_upper(a, e):
    """[[a, e], [0, a]] on the last two axes."""
    zeros = np.zeros(np.broadcast_shapes(np.shape(a), np.shape(e)))
    a = np.broadcast_to(a, np.shape(zeros))
    return np.concatenate([np.concatenate([a, np.broadcast_to(e, np.shape(zeros))], axis=-1),
                           np.concatenate([zeros, a], axis=-1)], axis=-2)


def _corners(x, n):
    """The sum of the top-left and bottom-right n x n blocks of a 2n x 2n block matrix."""
    return x[..., :n, :n] + x[..., n:, n:]


def matrix_power_vjp_tangent(g, a, da, n):
    """d/dt matrix_power_vjp(g, a + t da, n): with B = [[a, da], [0, a]], the VJP of B^n at
    the cotangent [[0, g], [0, 0]] holds the product rule's two halves on its diagonal blocks."""
    k = np.shape(a)[-1]
    return _corners(matrix_power_vjp(block_upper(np.zeros(np.shape(g)), g), block_upper(a, da), n), k)


def expm_frechet_tangent(a, e, da, transpose=False):
    """d/dt expm_frechet(a + t da, e, transpose): L(a, e) is the top right block of expm(B),
    B = [[a, e], [0, a]], so its tangent is that block of L(B, [[da, 0], [0, da]])."""
    n = np.shape(a)[-1]
    at = np.swapaxes(a, -1, -2) if transpose else a
    dat = np.swapaxes(da, -1, -2) if transpose else da
    zeros = np.zeros(np.shape(at))
    dblock = np.concatenate([np.concatenate([dat, zeros], axis=-1), np.concatenate([zeros, dat], axis=-1)], axis=-2)
    return expm_frechet(block_upper(at, e), dblock)[..., :n, n:]


def interp_weights_tangent(dx, x, xp):
    """d/dt interp_weights(x + t dx, xp): only t moves, by dx / (xp[k+1] - xp[k]) inside the knots."""
    xp_, p = primal_of(xp), primal_of(x)
    k = np.clip(np.searchsorted(xp_, p, side="right") - 1, 0, len(xp_) - 2)
    inside = (p >= xp_[0]) & (p <= xp_[-1])
    dt = np.where(inside, dx / (xp_[k + 1] - xp_[k]), 0.0)
    rows = np.arange(len(xp_)).reshape((-1,) + (1,) * p.ndim)
    return ((rows == k + 1).astype(float) - (rows == k).astype(float)) * dt
