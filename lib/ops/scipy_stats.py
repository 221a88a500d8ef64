"""scipy.stats' norm, t, gamma and beta as registry ops: one primitive per distribution for
logpdf / pdf and one for cdf / logcdf (static `method`), over (x, shape parameters, loc,
scale). Imported only when SciPy is installed; the public functions, poisson and
multivariate_normal are in `scipy_stats_more`.

scipy.stats' methods convert their arguments with np.asarray, so on tensors and dual numbers
call them from `dualtape.scipy.stats` (`norm.logpdf(x, mu, s)`, the same signature); the
source transformer maps SciPy's own spelling (`scipy.stats.norm.logpdf`) to these ops. The
CDFs differentiate in x, loc and scale (not in df, a, b), as autograd's.
"""

import numpy as np
import scipy.special as sc

from ..core import dnp
from ..core.registry import NOT_DIFFERENTIABLE, defop
from ..core.rulekit import density_factor, loc_scale_factor, stats_score, unbroadcast

__all__ = []  # the public functions (dnp.stats_norm_logpdf, ...) are in scipy_stats_more


def float_type(*args):
    """The float dtype of a density's value: its array arguments' (Python numbers are weak)."""
    arrays = [a for a in args if isinstance(a, (np.ndarray, np.generic))]
    return np.result_type(*arrays, 1.0) if arrays else np.dtype(np.float64)


def finish(value, method, *args):
    """logpdf -> the method's value, in the arguments' float dtype."""
    with np.errstate(divide="ignore", over="ignore"):
        out = value if method.startswith("log") else np.exp(value)
    return np.asarray(out, dtype=float_type(*args))


def _norm_logpdf(x, loc, scale):
    z = (x - loc) / scale
    return -0.5 * z * z - np.log(scale) - 0.9189385332046727


def _t_logpdf(x, df, loc, scale):
    z = (x - loc) / scale
    return (sc.gammaln(0.5 * (df + 1.0)) - sc.gammaln(0.5 * df) - 0.5 * np.log(df * np.pi)
            - np.log(scale) - 0.5 * (df + 1.0) * np.log1p(z * z / df))


def _gamma_logpdf(x, a, loc, scale):
    y = (x - loc) / scale
    with np.errstate(divide="ignore", invalid="ignore"):
        value = sc.xlogy(a - 1.0, y) - y - sc.gammaln(a) - np.log(scale)
    return np.where(y > 0, value, -np.inf)


def _beta_logpdf(x, a, b, loc, scale):
    y = (x - loc) / scale
    with np.errstate(divide="ignore", invalid="ignore"):
        value = sc.xlogy(a - 1.0, y) + sc.xlog1py(b - 1.0, -y) - sc.betaln(a, b) - np.log(scale)
    return np.where((y > 0) & (y < 1), value, -np.inf)


def _density(logpdf):
    def impl(*args, method):
        return finish(logpdf(*args), method, *args)
    impl.__name__ = logpdf.__name__.replace("_logpdf", "_density")
    return impl


def _cdf(cdf):
    def impl(*args, method):
        with np.errstate(divide="ignore"):
            value = cdf(*args)
            return np.asarray(np.log(value) if method == "logcdf" else value, dtype=float_type(*args))
    impl.__name__ = cdf.__name__
    return impl


def _norm_cdf(x, loc, scale):
    return sc.ndtr((x - loc) / scale)


def _t_cdf(x, df, loc, scale):
    return sc.stdtr(df, (x - loc) / scale)


def _gamma_cdf(x, a, loc, scale):
    return sc.gammainc(a, np.maximum((x - loc) / scale, 0.0))


def _beta_cdf(x, a, b, loc, scale):
    return sc.betainc(a, b, np.clip((x - loc) / scale, 0.0, 1.0))


def norm_density_vjp_x(g, ans, x, loc, scale, *, method):
    return unbroadcast(g * density_factor(ans, method) * stats_score("norm", (x, loc, scale), 0), np.shape(x))


def norm_density_jvp_x(dx, ans, x, loc, scale, *, method):
    return dx * density_factor(ans, method) * stats_score("norm", (x, loc, scale), 0)


def norm_density_vjp_loc(g, ans, x, loc, scale, *, method):
    return unbroadcast(g * density_factor(ans, method) * stats_score("norm", (x, loc, scale), 1), np.shape(loc))


def norm_density_jvp_loc(dloc, ans, x, loc, scale, *, method):
    return dloc * density_factor(ans, method) * stats_score("norm", (x, loc, scale), 1)


def norm_density_vjp_scale(g, ans, x, loc, scale, *, method):
    return unbroadcast(g * density_factor(ans, method) * stats_score("norm", (x, loc, scale), 2), np.shape(scale))


def norm_density_jvp_scale(dscale, ans, x, loc, scale, *, method):
    return dscale * density_factor(ans, method) * stats_score("norm", (x, loc, scale), 2)


def norm_cdf_vjp_x(g, ans, x, loc, scale, *, method):
    return unbroadcast(g * dnp.exp(dnp.stats_norm_logpdf(x, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 0), np.shape(x))


def norm_cdf_jvp_x(dx, ans, x, loc, scale, *, method):
    return dx * dnp.exp(dnp.stats_norm_logpdf(x, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 0)


def norm_cdf_vjp_loc(g, ans, x, loc, scale, *, method):
    return unbroadcast(g * dnp.exp(dnp.stats_norm_logpdf(x, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 1), np.shape(loc))


def norm_cdf_jvp_loc(dloc, ans, x, loc, scale, *, method):
    return dloc * dnp.exp(dnp.stats_norm_logpdf(x, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 1)


def norm_cdf_vjp_scale(g, ans, x, loc, scale, *, method):
    return unbroadcast(g * dnp.exp(dnp.stats_norm_logpdf(x, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 2), np.shape(scale))


def norm_cdf_jvp_scale(dscale, ans, x, loc, scale, *, method):
    return dscale * dnp.exp(dnp.stats_norm_logpdf(x, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 2)


def t_density_vjp_x(g, ans, x, df, loc, scale, *, method):
    return unbroadcast(g * density_factor(ans, method) * stats_score("t", (x, df, loc, scale), 0), np.shape(x))


def t_density_jvp_x(dx, ans, x, df, loc, scale, *, method):
    return dx * density_factor(ans, method) * stats_score("t", (x, df, loc, scale), 0)


def t_density_vjp_df(g, ans, x, df, loc, scale, *, method):
    return unbroadcast(g * density_factor(ans, method) * stats_score("t", (x, df, loc, scale), 1), np.shape(df))


def t_density_jvp_df(ddf, ans, x, df, loc, scale, *, method):
    return ddf * density_factor(ans, method) * stats_score("t", (x, df, loc, scale), 1)


def t_density_vjp_loc(g, ans, x, df, loc, scale, *, method):
    return unbroadcast(g * density_factor(ans, method) * stats_score("t", (x, df, loc, scale), 2), np.shape(loc))


def t_density_jvp_loc(dloc, ans, x, df, loc, scale, *, method):
    return dloc * density_factor(ans, method) * stats_score("t", (x, df, loc, scale), 2)


def t_density_vjp_scale(g, ans, x, df, loc, scale, *, method):
    return unbroadcast(g * density_factor(ans, method) * stats_score("t", (x, df, loc, scale), 3), np.shape(scale))


def t_density_jvp_scale(dscale, ans, x, df, loc, scale, *, method):
    return dscale * density_factor(ans, method) * stats_score("t", (x, df, loc, scale), 3)


def t_cdf_vjp_x(g, ans, x, df, loc, scale, *, method):
    return unbroadcast(g * dnp.exp(dnp.stats_t_logpdf(x, df, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 0), np.shape(x))


def t_cdf_jvp_x(dx, ans, x, df, loc, scale, *, method):
    return dx * dnp.exp(dnp.stats_t_logpdf(x, df, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 0)


def t_cdf_vjp_loc(g, ans, x, df, loc, scale, *, method):
    return unbroadcast(g * dnp.exp(dnp.stats_t_logpdf(x, df, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 1), np.shape(loc))


def t_cdf_jvp_loc(dloc, ans, x, df, loc, scale, *, method):
    return dloc * dnp.exp(dnp.stats_t_logpdf(x, df, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 1)


def t_cdf_vjp_scale(g, ans, x, df, loc, scale, *, method):
    return unbroadcast(g * dnp.exp(dnp.stats_t_logpdf(x, df, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 2), np.shape(scale))


def t_cdf_jvp_scale(dscale, ans, x, df, loc, scale, *, method):
    return dscale * dnp.exp(dnp.stats_t_logpdf(x, df, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 2)


def gamma_density_vjp_x(g, ans, x, a, loc, scale, *, method):
    return unbroadcast(g * density_factor(ans, method) * stats_score("gamma", (x, a, loc, scale), 0), np.shape(x))


def gamma_density_jvp_x(dx, ans, x, a, loc, scale, *, method):
    return dx * density_factor(ans, method) * stats_score("gamma", (x, a, loc, scale), 0)


def gamma_density_vjp_a(g, ans, x, a, loc, scale, *, method):
    return unbroadcast(g * density_factor(ans, method) * stats_score("gamma", (x, a, loc, scale), 1), np.shape(a))


def gamma_density_jvp_a(da, ans, x, a, loc, scale, *, method):
    return da * density_factor(ans, method) * stats_score("gamma", (x, a, loc, scale), 1)


def gamma_density_vjp_loc(g, ans, x, a, loc, scale, *, method):
    return unbroadcast(g * density_factor(ans, method) * stats_score("gamma", (x, a, loc, scale), 2), np.shape(loc))


def gamma_density_jvp_loc(dloc, ans, x, a, loc, scale, *, method):
    return dloc * density_factor(ans, method) * stats_score("gamma", (x, a, loc, scale), 2)


def gamma_density_vjp_scale(g, ans, x, a, loc, scale, *, method):
    return unbroadcast(g * density_factor(ans, method) * stats_score("gamma", (x, a, loc, scale), 3), np.shape(scale))


def gamma_density_jvp_scale(dscale, ans, x, a, loc, scale, *, method):
    return dscale * density_factor(ans, method) * stats_score("gamma", (x, a, loc, scale), 3)


def gamma_cdf_vjp_x(g, ans, x, a, loc, scale, *, method):
    return unbroadcast(g * dnp.exp(dnp.stats_gamma_logpdf(x, a, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 0), np.shape(x))


def gamma_cdf_jvp_x(dx, ans, x, a, loc, scale, *, method):
    return dx * dnp.exp(dnp.stats_gamma_logpdf(x, a, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 0)


def gamma_cdf_vjp_loc(g, ans, x, a, loc, scale, *, method):
    return unbroadcast(g * dnp.exp(dnp.stats_gamma_logpdf(x, a, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 1), np.shape(loc))


def gamma_cdf_jvp_loc(dloc, ans, x, a, loc, scale, *, method):
    return dloc * dnp.exp(dnp.stats_gamma_logpdf(x, a, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 1)


def gamma_cdf_vjp_scale(g, ans, x, a, loc, scale, *, method):
    return unbroadcast(g * dnp.exp(dnp.stats_gamma_logpdf(x, a, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 2), np.shape(scale))


def gamma_cdf_jvp_scale(dscale, ans, x, a, loc, scale, *, method):
    return dscale * dnp.exp(dnp.stats_gamma_logpdf(x, a, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 2)


def beta_density_vjp_x(g, ans, x, a, b, loc, scale, *, method):
    return unbroadcast(g * density_factor(ans, method) * stats_score("beta", (x, a, b, loc, scale), 0), np.shape(x))


def beta_density_jvp_x(dx, ans, x, a, b, loc, scale, *, method):
    return dx * density_factor(ans, method) * stats_score("beta", (x, a, b, loc, scale), 0)


def beta_density_vjp_a(g, ans, x, a, b, loc, scale, *, method):
    return unbroadcast(g * density_factor(ans, method) * stats_score("beta", (x, a, b, loc, scale), 1), np.shape(a))


def beta_density_jvp_a(da, ans, x, a, b, loc, scale, *, method):
    return da * density_factor(ans, method) * stats_score("beta", (x, a, b, loc, scale), 1)


def beta_density_vjp_b(g, ans, x, a, b, loc, scale, *, method):
    return unbroadcast(g * density_factor(ans, method) * stats_score("beta", (x, a, b, loc, scale), 2), np.shape(b))


def beta_density_jvp_b(db, ans, x, a, b, loc, scale, *, method):
    return db * density_factor(ans, method) * stats_score("beta", (x, a, b, loc, scale), 2)


def beta_density_vjp_loc(g, ans, x, a, b, loc, scale, *, method):
    return unbroadcast(g * density_factor(ans, method) * stats_score("beta", (x, a, b, loc, scale), 3), np.shape(loc))


def beta_density_jvp_loc(dloc, ans, x, a, b, loc, scale, *, method):
    return dloc * density_factor(ans, method) * stats_score("beta", (x, a, b, loc, scale), 3)


def beta_density_vjp_scale(g, ans, x, a, b, loc, scale, *, method):
    return unbroadcast(g * density_factor(ans, method) * stats_score("beta", (x, a, b, loc, scale), 4), np.shape(scale))


def beta_density_jvp_scale(dscale, ans, x, a, b, loc, scale, *, method):
    return dscale * density_factor(ans, method) * stats_score("beta", (x, a, b, loc, scale), 4)


def beta_cdf_vjp_x(g, ans, x, a, b, loc, scale, *, method):
    return unbroadcast(g * dnp.exp(dnp.stats_beta_logpdf(x, a, b, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 0), np.shape(x))


def beta_cdf_jvp_x(dx, ans, x, a, b, loc, scale, *, method):
    return dx * dnp.exp(dnp.stats_beta_logpdf(x, a, b, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 0)


def beta_cdf_vjp_loc(g, ans, x, a, b, loc, scale, *, method):
    return unbroadcast(g * dnp.exp(dnp.stats_beta_logpdf(x, a, b, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 1), np.shape(loc))


def beta_cdf_jvp_loc(dloc, ans, x, a, b, loc, scale, *, method):
    return dloc * dnp.exp(dnp.stats_beta_logpdf(x, a, b, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 1)


def beta_cdf_vjp_scale(g, ans, x, a, b, loc, scale, *, method):
    return unbroadcast(g * dnp.exp(dnp.stats_beta_logpdf(x, a, b, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 2), np.shape(scale))


def beta_cdf_jvp_scale(dscale, ans, x, a, b, loc, scale, *, method):
    return dscale * dnp.exp(dnp.stats_beta_logpdf(x, a, b, loc, scale) - (ans if method == "logcdf" else 0.0)) * loc_scale_factor(x, loc, scale, 2)


def _sampler(method, *draws):
    def sample(rng):
        return tuple(draw(rng) for draw in draws), {"method": method}
    sample.__name__ = f"_sample_{method}"
    return sample


def _normal(rng):
    return rng.standard_normal((2, 3))


def _positive(rng):
    return rng.uniform(0.5, 2.0, (2, 3))


def _small(rng):
    return rng.uniform(-0.2, 0.2, (3,))


def _unit(rng):
    return rng.uniform(0.1, 0.9, (2, 3))


def _shape(rng):
    return rng.uniform(1.5, 4.0, (3,))


def _scale(rng):
    return rng.uniform(0.8, 1.5)


def _tiny(rng):
    return rng.uniform(-0.05, 0.05, (3,))


def _near_one(rng):
    return rng.uniform(1.0, 1.05)  # (x - loc) / scale stays inside (0, 1) for beta


def _samples(methods, *draws):
    return tuple(_sampler(m, *draws) for m in methods)


def _ops(name, dist, draws):
    ns = globals()
    ins = {"norm": ["x", "loc", "scale"], "t": ["x", "df", "loc", "scale"],
           "gamma": ["x", "a", "loc", "scale"], "beta": ["x", "a", "b", "loc", "scale"]}[dist]
    density = defop(f"{name}Density", _density(ns[f"_{dist}_logpdf"]),
                    tuple(ns[f"{dist}_density_vjp_{i}"] for i in ins),
                    tuple(ns[f"{dist}_density_jvp_{i}"] for i in ins),
                    samples=_samples(("logpdf", "pdf"), *draws))
    cdf_vjp = tuple(ns.get(f"{dist}_cdf_vjp_{i}", NOT_DIFFERENTIABLE) for i in ins)
    cdf_jvp = tuple(ns.get(f"{dist}_cdf_jvp_{i}", NOT_DIFFERENTIABLE) for i in ins)
    cdf = defop(f"{name}Cdf", _cdf(ns[f"_{dist}_cdf"]), cdf_vjp, cdf_jvp,
                samples=_samples(("cdf", "logcdf"), *draws))
    return density, cdf


NORM_DENSITY, NORM_CDF = _ops("Normal", "norm", (_normal, _small, _positive))
T_DENSITY, T_CDF = _ops("StudentT", "t", (_normal, _shape, _small, _positive))
GAMMA_DENSITY, GAMMA_CDF = _ops("GammaDist", "gamma", (_positive, _shape, _small, _scale))
BETA_DENSITY, BETA_CDF = _ops("BetaDist", "beta", (_unit, _shape, _shape, _tiny, _near_one))
