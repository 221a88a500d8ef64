"""scipy.stats' public functions: norm, t, gamma and beta (ops in `scipy_stats`), poisson and
multivariate_normal (ops here), and the distribution objects of `dualtape.scipy.stats`.

`dnp.METHOD_DISPATCH` maps SciPy's own methods (scipy.stats.norm.logpdf, ...) to these
functions, by the distribution's class and method name, for the source transformer; no
scipy.stats import is needed for that (it is slow), only scipy.special.
"""

import numpy as np
import scipy.special as sc

from ..core import dnp
from ..core.registry import defop
from ..core.rulekit import density_factor, mvn_cov_jvp, mvn_cov_vjp, mvn_score_x, stats_score, unbroadcast
from .scipy_stats import (BETA_CDF, BETA_DENSITY, GAMMA_CDF, GAMMA_DENSITY, NORM_CDF, NORM_DENSITY, T_CDF,
                          T_DENSITY, finish, float_type)

__all__ = ["stats_norm_logpdf", "stats_norm_pdf", "stats_norm_cdf", "stats_norm_logcdf",
           "stats_t_logpdf", "stats_t_pdf", "stats_t_cdf", "stats_t_logcdf",
           "stats_gamma_logpdf", "stats_gamma_pdf", "stats_gamma_cdf", "stats_gamma_logcdf",
           "stats_beta_logpdf", "stats_beta_pdf", "stats_beta_cdf", "stats_beta_logcdf",
           "stats_poisson_logpmf", "stats_poisson_pmf", "stats_poisson_cdf", "stats_poisson_logcdf",
           "stats_mvn_logpdf", "stats_mvn_pdf"]


# -- poisson(k, mu, loc): differentiable in mu ------------------------------------------------

def _poisson_density(k, mu, loc, *, method):
    kk = k - loc
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where((kk >= 0) & (kk == np.floor(kk)), sc.xlogy(kk, mu) - mu - sc.gammaln(kk + 1.0), -np.inf)
    return finish(value, method, mu)


def _poisson_cdf(k, mu, loc, *, method):
    kk = np.floor(k - loc)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(kk >= 0, sc.pdtr(np.maximum(kk, 0.0), mu), 0.0)
        return np.asarray(np.log(value) if method == "logcdf" else value, dtype=float_type(mu))


def poisson_density_vjp_mu(g, ans, k, mu, loc, *, method):
    return unbroadcast(g * density_factor(ans, method) * stats_score("poisson", (k, mu, loc), 1), np.shape(mu))


def poisson_density_jvp_mu(dmu, ans, k, mu, loc, *, method):
    return dmu * density_factor(ans, method) * stats_score("poisson", (k, mu, loc), 1)


def poisson_cdf_vjp_mu(g, ans, k, mu, loc, *, method):
    return unbroadcast(-g * dnp.exp(dnp.stats_poisson_logpmf(dnp.floor(k - loc), mu)
                                    - (ans if method == "logcdf" else 0.0)), np.shape(mu))


def poisson_cdf_jvp_mu(dmu, ans, k, mu, loc, *, method):
    return -dmu * dnp.exp(dnp.stats_poisson_logpmf(dnp.floor(k - loc), mu) - (ans if method == "logcdf" else 0.0))


def _poisson_sample(method):
    def sample(rng):
        return (np.floor(rng.uniform(0.0, 6.0, (2, 3))), rng.uniform(0.5, 4.0, (3,)), 0.0), {"method": method}
    sample.__name__ = f"_sample_{method}"
    return sample


POISSON_DENSITY = defop("PoissonDist", _poisson_density, (None, poisson_density_vjp_mu, None),
                        (None, poisson_density_jvp_mu, None), nondiff_argnums=(0, 2),
                        samples=(_poisson_sample("logpmf"), _poisson_sample("pmf")))
POISSON_CDF = defop("PoissonCdf", _poisson_cdf, (None, poisson_cdf_vjp_mu, None),
                    (None, poisson_cdf_jvp_mu, None), nondiff_argnums=(0, 2),
                    samples=(_poisson_sample("cdf"), _poisson_sample("logcdf")))


# -- multivariate_normal(x, mean, cov), of cov's lower triangle (mirrored), as SciPy -----------

def _cov_matrix(cov, d):
    cov = np.asarray(cov)
    if cov.ndim == 0:
        return cov * np.eye(d, dtype=cov.dtype)
    if cov.ndim == 1:
        return np.diag(cov)
    return np.tril(cov) + np.swapaxes(np.tril(cov, -1), -1, -2)  # SciPy reads the lower triangle (eigh lower=True)


def _mvn_density(x, mean, cov, *, method):
    d = np.shape(x)[-1]
    lower = np.linalg.cholesky(_cov_matrix(cov, d))
    r = np.asarray(x - mean)
    z = np.linalg.solve(lower, r[..., None])[..., 0] if r.ndim > 1 else np.linalg.solve(lower, r)
    logdet = 2.0 * np.sum(np.log(np.diagonal(lower, axis1=-2, axis2=-1)), axis=-1)
    value = -0.5 * (d * 1.8378770664093453 + logdet + np.sum(z * z, axis=-1))
    return finish(value, method, x, mean, cov)


def mvn_vjp_x(g, ans, x, mean, cov, *, method):
    return unbroadcast(dnp.expand_dims(g * density_factor(ans, method), -1) * mvn_score_x(x, mean, cov), np.shape(x))


def mvn_vjp_mean(g, ans, x, mean, cov, *, method):
    return unbroadcast(-dnp.expand_dims(g * density_factor(ans, method), -1) * mvn_score_x(x, mean, cov),
                       np.shape(mean))


def mvn_vjp_cov(g, ans, x, mean, cov, *, method):
    return mvn_cov_vjp(g * density_factor(ans, method), x, mean, cov)


def mvn_jvp_x(dx, ans, x, mean, cov, *, method):
    return density_factor(ans, method) * dnp.sum(dx * mvn_score_x(x, mean, cov), axis=-1)


def mvn_jvp_mean(dmean, ans, x, mean, cov, *, method):
    return -density_factor(ans, method) * dnp.sum(dmean * mvn_score_x(x, mean, cov), axis=-1)


def mvn_jvp_cov(dcov, ans, x, mean, cov, *, method):
    return density_factor(ans, method) * mvn_cov_jvp(dcov, x, mean, cov)


def _mvn_sample(method, n, nonsymmetric=False):
    def sample(rng):
        b = rng.standard_normal((3, 3))
        shape = (n, 3) if n else (3,)
        cov = b @ b.T + 3.0 * np.eye(3)
        if nonsymmetric:  # the upper triangle is noise SciPy never reads
            cov = np.tril(cov) + np.triu(rng.standard_normal((3, 3)), 1)
        return (rng.standard_normal(shape), 0.3 * rng.standard_normal(3), cov), {"method": method}
    sample.__name__ = f"_sample_{method}_{n}" + ("_nonsymmetric" if nonsymmetric else "")
    return sample


MVN_DENSITY = defop("MultivariateNormal", _mvn_density, (mvn_vjp_x, mvn_vjp_mean, mvn_vjp_cov),
                    (mvn_jvp_x, mvn_jvp_mean, mvn_jvp_cov),
                    samples=(_mvn_sample("logpdf", 4), _mvn_sample("logpdf", 0), _mvn_sample("pdf", 2),
                             _mvn_sample("logpdf", 3, nonsymmetric=True)))


# -- the public functions, with scipy.stats' signatures ---------------------------------------

def stats_norm_logpdf(x, loc=0.0, scale=1.0, *, method="logpdf"):
    return NORM_DENSITY(x, loc, scale, method=method)


def stats_norm_pdf(x, loc=0.0, scale=1.0, *, method="pdf"):
    return NORM_DENSITY(x, loc, scale, method=method)


def stats_norm_cdf(x, loc=0.0, scale=1.0, *, method="cdf"):
    return NORM_CDF(x, loc, scale, method=method)


def stats_norm_logcdf(x, loc=0.0, scale=1.0, *, method="logcdf"):
    return NORM_CDF(x, loc, scale, method=method)


def stats_t_logpdf(x, df, loc=0.0, scale=1.0, *, method="logpdf"):
    return T_DENSITY(x, df, loc, scale, method=method)


def stats_t_pdf(x, df, loc=0.0, scale=1.0, *, method="pdf"):
    return T_DENSITY(x, df, loc, scale, method=method)


def stats_t_cdf(x, df, loc=0.0, scale=1.0, *, method="cdf"):
    return T_CDF(x, df, loc, scale, method=method)


def stats_t_logcdf(x, df, loc=0.0, scale=1.0, *, method="logcdf"):
    return T_CDF(x, df, loc, scale, method=method)


def stats_gamma_logpdf(x, a, loc=0.0, scale=1.0, *, method="logpdf"):
    return GAMMA_DENSITY(x, a, loc, scale, method=method)


def stats_gamma_pdf(x, a, loc=0.0, scale=1.0, *, method="pdf"):
    return GAMMA_DENSITY(x, a, loc, scale, method=method)


def stats_gamma_cdf(x, a, loc=0.0, scale=1.0, *, method="cdf"):
    return GAMMA_CDF(x, a, loc, scale, method=method)


def stats_gamma_logcdf(x, a, loc=0.0, scale=1.0, *, method="logcdf"):
    return GAMMA_CDF(x, a, loc, scale, method=method)


def stats_beta_logpdf(x, a, b, loc=0.0, scale=1.0, *, method="logpdf"):
    return BETA_DENSITY(x, a, b, loc, scale, method=method)


def stats_beta_pdf(x, a, b, loc=0.0, scale=1.0, *, method="pdf"):
    return BETA_DENSITY(x, a, b, loc, scale, method=method)


def stats_beta_cdf(x, a, b, loc=0.0, scale=1.0, *, method="cdf"):
    return BETA_CDF(x, a, b, loc, scale, method=method)


def stats_beta_logcdf(x, a, b, loc=0.0, scale=1.0, *, method="logcdf"):
    return BETA_CDF(x, a, b, loc, scale, method=method)


def stats_poisson_logpmf(k, mu, loc=0.0, *, method="logpmf"):
    return POISSON_DENSITY(k, mu, loc, method=method)


def stats_poisson_pmf(k, mu, loc=0.0, *, method="pmf"):
    return POISSON_DENSITY(k, mu, loc, method=method)


def stats_poisson_cdf(k, mu, loc=0.0, *, method="cdf"):
    return POISSON_CDF(k, mu, loc, method=method)


def stats_poisson_logcdf(k, mu, loc=0.0, *, method="logcdf"):
    return POISSON_CDF(k, mu, loc, method=method)


def stats_mvn_logpdf(x, mean=0.0, cov=1.0, allow_singular=False, *, method="logpdf"):
    """multivariate_normal.logpdf; `cov` a matrix (its lower triangle is read, as SciPy's), a vector
    (the diagonal) or a number. allow_singular=True has no derivative here."""
    return MVN_DENSITY(x, 0.0 if mean is None else mean, cov, method=method)


def stats_mvn_pdf(x, mean=0.0, cov=1.0, allow_singular=False, *, method="pdf"):
    return MVN_DENSITY(x, 0.0 if mean is None else mean, cov, method=method)


class Distribution:
    """A scipy.stats distribution's differentiable methods: `norm.logpdf(x, loc, scale)`."""

    def __init__(self, name, **methods):
        self.name = name
        for method, fn in methods.items():
            setattr(self, method, fn)

    def __repr__(self):
        return f"<dualtape.scipy.stats.{self.name}>"


def _methods(dist, *names, prefix=None):
    return {n: globals()[f"stats_{prefix or dist}_{n}"] for n in names}


norm = Distribution("norm", **_methods("norm", "logpdf", "pdf", "cdf", "logcdf"))
t = Distribution("t", **_methods("t", "logpdf", "pdf", "cdf", "logcdf"))
gamma = Distribution("gamma", **_methods("gamma", "logpdf", "pdf", "cdf", "logcdf"))
beta = Distribution("beta", **_methods("beta", "logpdf", "pdf", "cdf", "logcdf"))
poisson = Distribution("poisson", **_methods("poisson", "logpmf", "pmf", "cdf", "logcdf"))
multivariate_normal = Distribution("multivariate_normal", **_methods("mvn", "logpdf", "pdf"))

for _dist in (norm, t, gamma, beta, poisson, multivariate_normal):
    for _method, _fn in vars(_dist).items():
        if _method != "name":
            dnp.METHOD_DISPATCH[(f"{_dist.name}_gen", _method)] = _fn

dnp.export(globals())
