"""Rule helpers of scipy.stats' distributions (dualtape.ops.scipy_stats, scipy_multivariate): the partial
derivatives of each log-density, written with `dnp` so second derivatives work.

`stats_score(dist, args, i)` is d logpdf / d args[i], broadcast like the density;
`loc_scale_factor(x, loc, scale, i)` is what a CDF's derivative w.r.t. x, loc or scale is
the density times. The special functions they call (dnp.digamma, ...) exist when SciPy does.
"""

import numpy as np

from .. import dnp
from ..traced import Traced
from .numpy_functions import primal_of
from .decompositions import onto_triangle, read_triangle
from .shapes import swap_last

__all__ = ["stats_score", "density_factor", "loc_scale_factor", "tail_sign", "log_offset", "mvn_score_x",
           "mvn_cov_vjp", "mvn_cov_jvp", "mvn_entropy_cov_vjp", "mvn_entropy_cov_jvp", "dirichlet_score_x",
           "dirichlet_score_alpha", "dirichlet_components", "component_column", "sum_but_components",
           "mvn_dimension"]


def density_factor(ans, method):
    """d pdf = pdf * d logpdf; d logpdf itself for method 'logpdf' / 'logpmf'."""
    return 1.0 if method.startswith("log") else ans


def tail_sign(method):
    """The survival function sf = 1 - cdf (and logsf) has the CDF's derivative negated."""
    return -1.0 if method in ("sf", "logsf") else 1.0


def log_offset(ans, method):
    """d log F = dF / F = dF * exp(-log F): the log methods' value, subtracted in the exponent."""
    return ans if method.startswith("log") else 0.0


def loc_scale_factor(x, loc, scale, i):
    """d cdf((x - loc) / scale) = pdf(x) * (dx - dloc - z dscale)."""
    return (1.0, -1.0)[i] if i < 2 else -(x - loc) / scale


def stats_score(dist, args, i):
    # one call per distribution, arguments spelled out: the source transformer reads this
    # function to differentiate it (transforms.hvp), and reads no `*args` call
    if dist == "norm":
        return _norm(args[0], args[1], args[2], i)
    if dist == "poisson":
        return _poisson(args[0], args[1], args[2], i)
    if dist == "beta":
        return _beta(args[0], args[1], args[2], args[3], args[4], i)
    if dist == "gamma":
        return _gamma(args[0], args[1], args[2], args[3], i)
    if dist == "chi2":
        return _chi2(args[0], args[1], args[2], args[3], i)
    return _t(args[0], args[1], args[2], args[3], i)


def _norm(x, loc, scale, i):
    z = (x - loc) / scale
    return (-z / scale, z / scale, (z * z - 1.0) / scale)[i]


def _t(x, df, loc, scale, i):
    z = (x - loc) / scale
    w = df + z * z
    if i == 1:
        return 0.5 * (dnp.digamma(0.5 * (df + 1.0)) - dnp.digamma(0.5 * df) - 1.0 / df
                      - dnp.log1p(z * z / df) + (df + 1.0) * z * z / (df * w))
    dz = -(df + 1.0) * z / w  # d logpdf / dz
    return (dz / scale, None, -dz / scale, (-dz * z - 1.0) / scale)[i]


def _gamma(x, a, loc, scale, i):
    y = (x - loc) / scale
    if i == 1:
        return dnp.log(y) - dnp.digamma(a)
    dy = (a - 1.0) / y - 1.0
    return (dy / scale, None, -dy / scale, (-dy * y - 1.0) / scale)[i]


def _chi2(x, df, loc, scale, i):
    y = (x - loc) / scale
    if i == 1:
        return 0.5 * (dnp.log(0.5 * y) - dnp.digamma(0.5 * df))
    dy = (0.5 * df - 1.0) / y - 0.5
    return (dy / scale, None, -dy / scale, (-dy * y - 1.0) / scale)[i]


def _beta(x, a, b, loc, scale, i):
    y = (x - loc) / scale
    if i in (1, 2):
        both = dnp.digamma(a + b)
        return dnp.log(y) - dnp.digamma(a) + both if i == 1 else dnp.log1p(-y) - dnp.digamma(b) + both
    dy = (a - 1.0) / y - (b - 1.0) / (1.0 - y)
    return (dy / scale, None, None, -dy / scale, (-dy * y - 1.0) / scale)[i]


def _poisson(k, mu, loc, i):
    return (k - loc) / mu - 1.0




# -- multivariate normal: logpdf(x, mean, cov) of cov's lower triangle, as SciPy ---------------

def _cov_matrix(cov, d):
    eye = np.eye(d, dtype=dnp.result_dtype(cov))
    if np.ndim(cov) == 0:
        return cov * eye
    if np.ndim(cov) == 1:
        return dnp.expand_dims(cov, -1) * eye
    return read_triangle(cov)  # scipy.linalg.eigh(cov, lower=True): the upper triangle is never read


def _precision(x, cov, allow_singular=False):
    """cov^-1; with allow_singular, its pseudo-inverse (SciPy's density on cov's support)."""
    matrix = _cov_matrix(cov, np.shape(x)[-1])
    return dnp.linalg_pinv(matrix) if allow_singular else dnp.linalg_inv(matrix)


def _nonsingular(x, cov, allow_singular):
    """The derivative in cov exists where cov is nonsingular: refuse it at a singular one."""
    matrix = primal_of(_cov_matrix(cov, np.shape(x)[-1])) if allow_singular else None
    # (a vmap's batch of covariances is not read here: the inverse raises at an exactly singular one)
    if matrix is not None and not isinstance(matrix, Traced):
        s = np.linalg.eigvalsh(matrix)
        if np.min(s) <= 1e6 * np.finfo(s.dtype).eps * np.max(np.abs(s)):
            raise ValueError(f"[MultivariateNormal] no derivative in cov at a singular covariance (shape "
                             f"{np.shape(matrix)}, eigenvalues {s}): with allow_singular=True the density lives "
                             "on cov's range, which changes with cov. Fix: keep cov constant (dnp.stop_gradient) "
                             "or differentiate at a nonsingular one.")
    return cov


def mvn_score_x(x, mean, cov, allow_singular=False):
    """d logpdf / dx = -(x - mean) cov^-1, one row per point."""
    return -dnp.matmul(x - mean, _precision(x, cov, allow_singular))


def mvn_cov_vjp(g, x, mean, cov, allow_singular=False):
    """sum_n g_n d logpdf_n / d cov = -0.5 sum(g) P + 0.5 P R^T diag(g) R P, P = cov^-1
    (a scalar cov gets the trace, a vector one the diagonal, a matrix the lower triangle)."""
    d = np.shape(x)[-1]
    p = _precision(x, _nonsingular(x, cov, allow_singular))
    u = dnp.reshape(dnp.matmul(x - mean, p), (-1, d))
    gs = dnp.reshape(g, (-1, 1))
    full = -0.5 * dnp.sum(gs) * p + 0.5 * dnp.matmul(swap_last(u * gs), u)
    return _onto_cov(full, cov, d)


def _onto_cov(full, cov, d):
    """A symmetric cotangent of the d x d covariance matrix, as one of `cov` as given: a matrix's
    folded onto the lower triangle SciPy reads, a vector's diagonal, a number's trace."""
    if np.ndim(cov) >= 2:
        return onto_triangle(full)
    diag = dnp.sum(full * np.eye(d, dtype=dnp.result_dtype(full)), axis=-1)
    return diag if np.ndim(cov) == 1 else dnp.sum(diag)


def mvn_dimension(mean, cov):
    """The dimension of a multivariate normal: its mean's length, else its covariance's."""
    return np.shape(mean)[-1] if np.ndim(mean) else np.shape(cov)[-1] if np.ndim(cov) else 1


def mvn_entropy_cov_vjp(g, cov, d):
    """d entropy / d cov = 0.5 cov^-1 (entropy = 0.5 (d (1 + log 2 pi) + log det cov))."""
    return _onto_cov(0.5 * g * dnp.linalg_inv(_cov_matrix(cov, d)), cov, d)


def mvn_entropy_cov_jvp(dcov, cov, d):
    return 0.5 * dnp.sum(dnp.linalg_inv(_cov_matrix(cov, d)) * _cov_matrix(dcov, d))


# -- dirichlet: logpdf(x, alpha), the K components of x along its first axis (as SciPy), or
#    K - 1 of them, the last being 1 - their sum --------------------------------------------

def dirichlet_components(x, alpha):
    """x with all K components: K - 1 given ones completed by 1 - their sum."""
    if np.shape(x)[0] == np.shape(alpha)[0]:
        return x
    return dnp.concatenate([x, 1.0 - dnp.sum(x, axis=0, keepdims=True)], axis=0)

def component_column(v, x):
    """A (K,) vector of the components as x's first axis: (K, 1, ...) against x of shape (K, N, ...)."""
    return dnp.reshape(v, (-1,) + (1,) * (np.ndim(x) - 1))


def sum_but_components(v):
    """Sum over every axis but the first (the components): the cotangent of a (K,) alpha."""
    return dnp.sum(v, axis=tuple(range(1, np.ndim(v)))) if np.ndim(v) > 1 else v


def dirichlet_score_x(x, alpha):
    """d logpdf / dx_k = (alpha_k - 1) / x_k; with the last component implied, minus its own."""
    full = (component_column(alpha, x) - 1.0) / dirichlet_components(x, alpha)
    k = np.shape(x)[0]
    return full if k == np.shape(alpha)[0] else full[:k] - full[k:]


def dirichlet_score_alpha(x, alpha):
    """d logpdf / d alpha_k = digamma(sum alpha) - digamma(alpha_k) + log x_k, shaped as x."""
    return (dnp.digamma(dnp.sum(alpha)) - dnp.digamma(component_column(alpha, x))
            + dnp.log(dirichlet_components(x, alpha)))


def mvn_cov_jvp(dcov, x, mean, cov, allow_singular=False):
    p = _precision(x, _nonsingular(x, cov, allow_singular))
    dc = _cov_matrix(dcov, np.shape(x)[-1])
    u = dnp.matmul(x - mean, p)
    return 0.5 * dnp.sum(dnp.matmul(u, dc) * u, axis=-1) - 0.5 * dnp.sum(p * dc)
