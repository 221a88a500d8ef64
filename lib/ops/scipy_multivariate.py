"""scipy.stats' distributions of vectors as registry ops: multivariate_normal (logpdf and pdf in x,
mean and cov's lower triangle, as SciPy reads it; allow_singular; entropy in cov) and dirichlet
(logpdf and pdf in x and alpha), with scipy.stats' signatures (see `scipy_stats`, whose
`Distribution` objects and value helpers they share). Imported only when SciPy is installed.
"""

import numpy as np
import scipy.special as sc

from ..core import dnp, duck
from ..core.rulekit import (component_column, density_factor, dirichlet_components,  # noqa: F401  (rule text)
                            dirichlet_score_alpha, dirichlet_score_x, mvn_cov_jvp, mvn_cov_vjp, mvn_dimension,
                            mvn_entropy_cov_jvp, mvn_entropy_cov_vjp, mvn_score_x, sum_but_components, unbroadcast)
from ..core.registry import defop
from .scipy_stats import Distribution, finish, float_type

__all__ = ["stats_mvn_logpdf", "stats_mvn_pdf", "stats_mvn_entropy", "stats_dirichlet_logpdf", "stats_dirichlet_pdf"]


# -- multivariate_normal(x, mean, cov), of cov's lower triangle (mirrored), as SciPy -----------

def _cov_matrix(cov, d):
    cov = np.asarray(cov)
    if cov.ndim == 0:
        return cov * np.eye(d, dtype=cov.dtype)
    if cov.ndim == 1:
        return np.diag(cov)
    return np.tril(cov) + np.swapaxes(np.tril(cov, -1), -1, -2)  # SciPy reads the lower triangle (eigh lower=True)


def _mvn_singular_logpdf(x, mean, cov):
    """SciPy's allow_singular=True: by the eigenvalues of cov (those below SciPy's cutoff are 0),
    the pseudo-inverse and pseudo-determinant; -inf off the support (cov's range, through mean)."""
    d = np.shape(x)[-1]
    s, u = np.linalg.eigh(_cov_matrix(cov, d))
    eps = 1e6 * np.finfo(s.dtype).eps * np.max(np.abs(s))
    if np.min(s) < -eps:
        raise ValueError(f"[MultivariateNormal] cov of shape {np.shape(cov)} must be symmetric positive "
                         f"semidefinite (its lowest eigenvalue is {np.min(s):.3g}). Fix: pass a covariance matrix.")
    kept = s > eps
    whiten = u * np.sqrt(np.where(kept, 1.0 / np.where(kept, s, 1.0), 0.0))
    r = np.asarray(x - mean)
    maha = np.sum(np.square(r @ whiten), axis=-1)
    value = -0.5 * (np.sum(kept) * 1.8378770664093453 + np.sum(np.log(s[kept])) + maha)
    off_support = np.linalg.norm(r @ u[:, ~kept], axis=-1) >= 1e3 * eps
    return np.where(off_support, -np.inf, value)


def _mvn_density(x, mean, cov, *, method, allow_singular=False):
    d = np.shape(x)[-1]
    if allow_singular:
        return finish(_mvn_singular_logpdf(x, mean, cov), method, x, mean, cov)
    lower = np.linalg.cholesky(_cov_matrix(cov, d))
    r = np.asarray(x - mean)
    z = np.linalg.solve(lower, r[..., None])[..., 0] if r.ndim > 1 else np.linalg.solve(lower, r)
    logdet = 2.0 * np.sum(np.log(np.diagonal(lower, axis1=-2, axis2=-1)), axis=-1)
    value = -0.5 * (d * 1.8378770664093453 + logdet + np.sum(z * z, axis=-1))
    return finish(value, method, x, mean, cov)


def mvn_vjp_x(g, ans, x, mean, cov, *, method, allow_singular=False):
    return unbroadcast(dnp.expand_dims(g * density_factor(ans, method), -1) * mvn_score_x(x, mean, cov, allow_singular),
                       np.shape(x))


def mvn_vjp_mean(g, ans, x, mean, cov, *, method, allow_singular=False):
    return unbroadcast(-dnp.expand_dims(g * density_factor(ans, method), -1)
                       * mvn_score_x(x, mean, cov, allow_singular),
                       np.shape(mean))


def mvn_vjp_cov(g, ans, x, mean, cov, *, method, allow_singular=False):
    return mvn_cov_vjp(g * density_factor(ans, method), x, mean, cov, allow_singular)


def mvn_jvp_x(dx, ans, x, mean, cov, *, method, allow_singular=False):
    return density_factor(ans, method) * dnp.sum(dx * mvn_score_x(x, mean, cov, allow_singular), axis=-1)


def mvn_jvp_mean(dmean, ans, x, mean, cov, *, method, allow_singular=False):
    return -density_factor(ans, method) * dnp.sum(dmean * mvn_score_x(x, mean, cov, allow_singular), axis=-1)


def mvn_jvp_cov(dcov, ans, x, mean, cov, *, method, allow_singular=False):
    return density_factor(ans, method) * mvn_cov_jvp(dcov, x, mean, cov, allow_singular)


def _mvn_sample(method, n, nonsymmetric=False, allow_singular=False):
    def sample(rng):
        b = rng.standard_normal((3, 3))
        shape = (n, 3) if n else (3,)
        cov = b @ b.T + 3.0 * np.eye(3)
        if nonsymmetric:  # the upper triangle is noise SciPy never reads
            cov = np.tril(cov) + np.triu(rng.standard_normal((3, 3)), 1)
        static = {"method": method, "allow_singular": True} if allow_singular else {"method": method}
        return (rng.standard_normal(shape), 0.3 * rng.standard_normal(3), cov), static
    sample.__name__ = f"_sample_{method}_{n}" + ("_nonsymmetric" if nonsymmetric else "") + (
        "_allow_singular" if allow_singular else "")
    return sample


MVN_DENSITY = defop("MultivariateNormal", _mvn_density, (mvn_vjp_x, mvn_vjp_mean, mvn_vjp_cov),
                    (mvn_jvp_x, mvn_jvp_mean, mvn_jvp_cov),
                    samples=(_mvn_sample("logpdf", 4), _mvn_sample("logpdf", 0), _mvn_sample("pdf", 2),
                             _mvn_sample("logpdf", 3, nonsymmetric=True), _mvn_sample("pdf", 2, allow_singular=True),
                             _mvn_sample("logpdf", 0, nonsymmetric=True, allow_singular=True)))


# entropy(mean, cov) = 0.5 (d (1 + log 2 pi) + log det cov): the mean gives only the dimension d

def _mvn_entropy(mean, cov):
    d = mvn_dimension(mean, cov)
    lower = np.linalg.cholesky(_cov_matrix(cov, d))
    value = 0.5 * d * (1.8378770664093453 + 1.0) + np.sum(np.log(np.diagonal(lower)))
    return np.asarray(value, dtype=float_type(cov))


def mvn_entropy_vjp(g, ans, mean, cov):
    return mvn_entropy_cov_vjp(g, cov, mvn_dimension(mean, cov))


def mvn_entropy_jvp(dcov, ans, mean, cov):
    return mvn_entropy_cov_jvp(dcov, cov, mvn_dimension(mean, cov))


def _mvn_entropy_sample(kind):
    def sample(rng):
        b = rng.standard_normal((3, 3))
        cov = {"matrix": b @ b.T + 3.0 * np.eye(3), "vector": rng.uniform(0.5, 2.0, 3),
               "number": np.array(rng.uniform(0.5, 2.0))}[kind]
        return (np.zeros(3), cov), {}
    sample.__name__ = f"_sample_entropy_{kind}"
    return sample


MVN_ENTROPY = defop("MultivariateNormalEntropy", _mvn_entropy, (None, mvn_entropy_vjp), (None, mvn_entropy_jvp),
                    nondiff_argnums=(0,),
                    samples=tuple(_mvn_entropy_sample(kind) for kind in ("matrix", "vector", "number")))


# -- dirichlet(x, alpha): the K components along x's first axis, as SciPy ----------------------

def _dirichlet_density(x, alpha, *, method):
    x = dirichlet_components(x, alpha)
    a = np.reshape(alpha, (-1,) + (1,) * (np.ndim(x) - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.sum(sc.xlogy(a - 1.0, x), axis=0) - np.sum(sc.gammaln(alpha)) + sc.gammaln(np.sum(alpha))
    return finish(value, method, x, alpha)


def dirichlet_vjp_x(g, ans, x, alpha, *, method):
    return dnp.expand_dims(g * density_factor(ans, method), 0) * dirichlet_score_x(x, alpha)


def dirichlet_vjp_alpha(g, ans, x, alpha, *, method):
    return sum_but_components(dnp.expand_dims(g * density_factor(ans, method), 0) * dirichlet_score_alpha(x, alpha))


def dirichlet_jvp_x(dx, ans, x, alpha, *, method):
    return density_factor(ans, method) * dnp.sum(dx * dirichlet_score_x(x, alpha), axis=0)


def dirichlet_jvp_alpha(dalpha, ans, x, alpha, *, method):
    return density_factor(ans, method) * dnp.sum(component_column(dalpha, x) * dirichlet_score_alpha(x, alpha), axis=0)


def _dirichlet_sample(method, n, implied=False):
    def sample(rng):
        alpha = rng.uniform(1.2, 3.0, 4)
        x = rng.dirichlet(alpha, size=n).T if n else rng.dirichlet(alpha)
        return (x[:-1] if implied else x, alpha), {"method": method}
    sample.__name__ = f"_sample_dirichlet_{method}_{n}" + ("_implied" if implied else "")
    return sample


DIRICHLET_DENSITY = defop("DirichletDist", _dirichlet_density, (dirichlet_vjp_x, dirichlet_vjp_alpha),
                          (dirichlet_jvp_x, dirichlet_jvp_alpha),
                          samples=(_dirichlet_sample("logpdf", 0), _dirichlet_sample("pdf", 0),
                                   _dirichlet_sample("logpdf", 3), _dirichlet_sample("pdf", 0, implied=True),
                                   _dirichlet_sample("logpdf", 2, implied=True)))


def check_dirichlet_points(x, alpha):
    """x checked as SciPy checks it: alpha a vector of K, x of K (or K - 1, the last component
    implied) entries along its first axis, each in [0, 1], summing to 1."""
    ks, xs = np.shape(alpha), np.shape(x)
    if len(ks) != 1 or not xs or xs[0] not in (ks[0], ks[0] - 1) or len(xs) > 2:
        raise ValueError(f"[DirichletDist] x of shape {xs} and alpha of shape {ks}: alpha must be a vector of the "
                         "K concentrations and x hold K (or K - 1) components along its first axis, shape (K,) or "
                         "(K, N). Fix: pass one point per column, x.T for points in rows.")
    value = np.asarray(duck.primal_of(x))
    if xs[0] != ks[0]:  # the last component is 1 - the others, as SciPy
        value = np.concatenate([value, 1.0 - np.sum(value, axis=0, keepdims=True)], axis=0)
    if np.min(value) < 0 or np.max(value) > 1 or np.any(np.abs(np.sum(value, axis=0) - 1.0) > 1e-9):
        raise ValueError(f"[DirichletDist] the points x of shape {xs} must lie on the simplex (entries in [0, 1], "
                         f"summing to 1 along the first axis); their sums are {np.sum(value, axis=0)}. "
                         "Fix: normalize them (x / np.sum(x, axis=0)), as SciPy requires.")


# -- the public functions, with scipy.stats' signatures ---------------------------------------

def stats_mvn_logpdf(x, mean=0.0, cov=1.0, allow_singular=False, *, method="logpdf"):
    """multivariate_normal.logpdf; `cov` a matrix (its lower triangle is read, as SciPy's), a vector
    (the diagonal) or a number. allow_singular=True: a singular cov is allowed, as in SciPy (the
    density on its support); the derivative in cov is refused where cov is singular."""
    return MVN_DENSITY(x, 0.0 if mean is None else mean, cov, method=method, allow_singular=bool(allow_singular))


def stats_mvn_pdf(x, mean=0.0, cov=1.0, allow_singular=False, *, method="pdf"):
    return MVN_DENSITY(x, 0.0 if mean is None else mean, cov, method=method, allow_singular=bool(allow_singular))


def stats_mvn_entropy(mean=None, cov=1.0):
    """multivariate_normal.entropy(mean, cov), differentiable in cov (read as in logpdf)."""
    return MVN_ENTROPY(0.0 if mean is None else mean, cov)


def stats_dirichlet_logpdf(x, alpha, *, method="logpdf"):
    check_dirichlet_points(x, alpha)
    return DIRICHLET_DENSITY(x, alpha, method=method)


def stats_dirichlet_pdf(x, alpha, *, method="pdf"):
    check_dirichlet_points(x, alpha)
    return DIRICHLET_DENSITY(x, alpha, method=method)


multivariate_normal = Distribution("multivariate_normal", logpdf=stats_mvn_logpdf, pdf=stats_mvn_pdf,
                                   entropy=stats_mvn_entropy)
dirichlet = Distribution("dirichlet", logpdf=stats_dirichlet_logpdf, pdf=stats_dirichlet_pdf)

for _dist in (dirichlet, multivariate_normal):
    for _method, _fn in vars(_dist).items():
        if _method != "name":
            dnp.METHOD_DISPATCH[(f"{_dist.name}_gen", _method)] = _fn

dnp.export(globals())
