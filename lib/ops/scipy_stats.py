"""scipy.stats' distributions as registry ops, and their functions with scipy.stats' signatures.

The location-scale families norm, t, gamma, beta and chi2 are one table, `FAMILIES`: each row
holds the family's parameters (x, shape parameters, loc, scale), its log-density, CDF and
survival function in NumPy and SciPy's special functions, and how to draw samples. Each row
gives two primitives: the density (static `method`: logpdf or pdf) and the CDF (cdf, logcdf, or
the survival function sf = 1 - cdf and logsf, whose derivatives are the CDF's negated). Their rules are one formula for
every family: the density's derivative is the density (1 for logpdf) times `stats_score`, the
log-density's partial derivative (rulekit); the CDF's, in x, loc and scale (not in df, a, b, as
autograd's), is the density times `loc_scale_factor`. `family_rules` writes these rules for a
row's parameters as source text and compiles it, so the tape calls them and the source
transformer inlines them as it does every rule. poisson (differentiable in mu) has rules of its
own; the densities of vectors (multivariate_normal, dirichlet) are in `scipy_multivariate`.

scipy.stats' methods convert their arguments with np.asarray, so on tensors and dual numbers
call them from `dualtape.scipy.stats` (`norm.logpdf(x, mu, s)`, the same signature).
`dnp.METHOD_DISPATCH` maps SciPy's own methods (scipy.stats.norm.logpdf, ...) to these
functions, by the distribution's class and method name, for the source transformer; no
scipy.stats import is needed for that (it is slow), only scipy.special. Imported only when
SciPy is installed.
"""

import linecache
from typing import NamedTuple

import numpy as np
import scipy.special as sc

from ..core import dnp
from ..core.registry import NOT_DIFFERENTIABLE, defop
from ..core.rulekit import (density_factor, loc_scale_factor, log_offset, no_derivative,  # noqa: F401  (rule text)
                            stats_score, tail_sign, unbroadcast)

__all__ = ["stats_norm_logpdf", "stats_norm_pdf", "stats_norm_cdf", "stats_norm_logcdf",
           "stats_t_logpdf", "stats_t_pdf", "stats_t_cdf", "stats_t_logcdf",
           "stats_gamma_logpdf", "stats_gamma_pdf", "stats_gamma_cdf", "stats_gamma_logcdf",
           "stats_beta_logpdf", "stats_beta_pdf", "stats_beta_cdf", "stats_beta_logcdf",
           "stats_chi2_logpdf", "stats_chi2_pdf", "stats_chi2_cdf", "stats_chi2_logcdf",
           "stats_norm_sf", "stats_norm_logsf", "stats_t_sf", "stats_t_logsf", "stats_gamma_sf", "stats_gamma_logsf",
           "stats_beta_sf", "stats_beta_logsf", "stats_chi2_sf", "stats_chi2_logsf",
           "stats_poisson_logpmf", "stats_poisson_pmf", "stats_poisson_cdf", "stats_poisson_logcdf"]


# -- the location-scale families' formulas ----------------------------------------------------

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
    return np.where(y >= 0, value, -np.inf)  # at y = 0: 1 / scale for a = 1, as SciPy


def _beta_logpdf(x, a, b, loc, scale):
    y = (x - loc) / scale
    with np.errstate(divide="ignore", invalid="ignore"):
        value = sc.xlogy(a - 1.0, y) + sc.xlog1py(b - 1.0, -y) - sc.betaln(a, b) - np.log(scale)
    return np.where((y >= 0) & (y <= 1), value, -np.inf)  # the end points: b / scale for a = 1, as SciPy


def _chi2_logpdf(x, df, loc, scale):
    y = (x - loc) / scale
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (sc.xlogy(0.5 * df - 1.0, y) - 0.5 * y - 0.5 * df * 0.6931471805599453 - sc.gammaln(0.5 * df)
                 - np.log(scale))
    return np.where(y >= 0, value, -np.inf)


def _density(logpdf):
    def impl(*args, method):
        return finish(logpdf(*args), method, *args)
    impl.__name__ = logpdf.__name__.replace("_logpdf", "_density")
    return impl


def _cdf(family):
    """The CDF op's implementation: static `method` cdf, logcdf, sf (1 - cdf, computed as SciPy does,
    without cancellation) or logsf."""
    def impl(*args, method):
        with np.errstate(divide="ignore"):
            if method in ("logcdf", "logsf") and family.log_tails is not None:
                value = family.log_tails(*args, tail=method[3:])
            else:
                value = (family.sf if method in ("sf", "logsf") else family.cdf)(*args)
                value = np.log(value) if method.startswith("log") else value
            return np.asarray(value, dtype=float_type(*args))
    impl.__name__ = family.cdf.__name__
    return impl


def _norm_cdf(x, loc, scale):
    return sc.ndtr((x - loc) / scale)


def _norm_sf(x, loc, scale):
    return sc.ndtr((loc - x) / scale)


def _norm_log_tails(x, loc, scale, *, tail):
    return sc.log_ndtr((x - loc) / scale if tail == "cdf" else (loc - x) / scale)  # accurate far in the tails


def _t_cdf(x, df, loc, scale):
    return sc.stdtr(df, (x - loc) / scale)


def _t_sf(x, df, loc, scale):
    return sc.stdtr(df, (loc - x) / scale)


def _gamma_cdf(x, a, loc, scale):
    return sc.gammainc(a, np.maximum((x - loc) / scale, 0.0))


def _gamma_sf(x, a, loc, scale):
    return sc.gammaincc(a, np.maximum((x - loc) / scale, 0.0))


def _beta_cdf(x, a, b, loc, scale):
    return sc.betainc(a, b, np.clip((x - loc) / scale, 0.0, 1.0))


def _beta_sf(x, a, b, loc, scale):
    return sc.betaincc(a, b, np.clip((x - loc) / scale, 0.0, 1.0))


def _chi2_cdf(x, df, loc, scale):
    return sc.gammainc(0.5 * df, 0.5 * np.maximum((x - loc) / scale, 0.0))


def _chi2_sf(x, df, loc, scale):
    return sc.gammaincc(0.5 * df, 0.5 * np.maximum((x - loc) / scale, 0.0))


# -- samples ----------------------------------------------------------------------------------

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


def _number(draw):
    """A draw as one Python int, which the generated tests keep constant (they differentiate
    float inputs): a CDF's shape parameter, whose derivative is refused."""
    def number(rng):
        return int(np.ceil(np.ravel(draw(rng))[0]))
    number.__name__ = f"{draw.__name__}_int"
    return number


def _samples(methods, *draws):
    return tuple(_sampler(m, *draws) for m in methods)


# -- the table and its rules --------------------------------------------------------------------

class Family(NamedTuple):
    """One location-scale family: scipy.stats' name, the ops' name, the parameters (x first,
    loc and scale last), log-density, CDF and survival function (1 - CDF) of those parameters,
    a sample draw for each, and optionally the log CDF and log survival function
    (`log_tails(*params, tail="cdf" or "sf")`) where the log of the CDF loses accuracy."""
    name: str
    op: str
    params: tuple
    logpdf: object
    cdf: object
    sf: object
    draws: tuple
    log_tails: object = None


FAMILIES = (
    Family("norm", "Normal", ("x", "loc", "scale"), _norm_logpdf, _norm_cdf, _norm_sf, (_normal, _small, _positive),
           _norm_log_tails),
    Family("t", "StudentT", ("x", "df", "loc", "scale"), _t_logpdf, _t_cdf, _t_sf,
           (_normal, _shape, _small, _positive)),
    Family("gamma", "GammaDist", ("x", "a", "loc", "scale"), _gamma_logpdf, _gamma_cdf, _gamma_sf,
           (_positive, _shape, _small, _scale)),
    Family("beta", "BetaDist", ("x", "a", "b", "loc", "scale"), _beta_logpdf, _beta_cdf, _beta_sf,
           (_unit, _shape, _shape, _tiny, _near_one)),
    Family("chi2", "Chi2Dist", ("x", "df", "loc", "scale"), _chi2_logpdf, _chi2_cdf, _chi2_sf,
           (_positive, _shape, _small, _scale)),
)

CDF_PARAMS = ("x", "loc", "scale")  # a CDF is differentiated in these (loc_scale_factor's 0, 1, 2)


def rule_text(family):
    """The source of a family's rules: for each parameter p, `{name}_density_vjp_{p}` and
    `{name}_density_jvp_{p}`, and for x, loc and scale `{name}_cdf_vjp_{p}` and `{name}_cdf_jvp_{p}`.
    Rules are written for the family's own parameter names, as the transformer binds them."""
    name, args = family.name, ", ".join(family.params)
    rules = []
    for i, p in enumerate(family.params):
        slope = f'density_factor(ans, method) * stats_score("{name}", ({args}), {i})'
        rules.append(f"def {name}_density_vjp_{p}(g, ans, {args}, *, method):\n"
                     f"    return unbroadcast(g * {slope}, np.shape({p}))\n")
        rules.append(f"def {name}_density_jvp_{p}(d{p}, ans, {args}, *, method):\n"
                     f"    return d{p} * {slope}\n")
    for p in family.params:  # a shape parameter's CDF derivative dualtape does not compute: refused
        if p not in CDF_PARAMS:
            rules.append(f"def {name}_cdf_vjp_{p}(g, ans, {args}, *, method):\n"
                         f'    return no_derivative("{family.op}Cdf", "{p}", g)\n')
            rules.append(f"def {name}_cdf_jvp_{p}(d{p}, ans, {args}, *, method):\n"
                         f'    return no_derivative("{family.op}Cdf", "{p}", d{p})\n')
    for i, p in enumerate(CDF_PARAMS):
        slope = (f"tail_sign(method) * dnp.exp(dnp.stats_{name}_logpdf({args}) - log_offset(ans, method)) "
                 f"* loc_scale_factor(x, loc, scale, {i})")
        rules.append(f"def {name}_cdf_vjp_{p}(g, ans, {args}, *, method):\n"
                     f"    return unbroadcast(g * {slope}, np.shape({p}))\n")
        rules.append(f"def {name}_cdf_jvp_{p}(d{p}, ans, {args}, *, method):\n"
                     f"    return d{p} * {slope}\n")
    return "\n\n".join(rules)


def family_rules(family):
    """Compile a family's rules into this module. The text goes in `linecache` under its own
    file name, so `inspect.getsource` reads each rule as it does a written one (the registry
    checks the rule from it, the source transformer inlines it). Returns the four tuples
    (density VJPs, density JVPs, CDF VJPs, CDF JVPs), one entry per parameter."""
    text = rule_text(family)
    filename = f"<{__name__} rules: {family.name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    rules = {}
    exec(compile(text, filename, "exec"), globals(), rules)  # noqa: S102  (our own text)
    globals().update(rules)  # each rule at its __module__ and __qualname__, as a written one
    kinds = [[rules.get(f"{family.name}_{kind}_{p}", NOT_DIFFERENTIABLE) for p in family.params]
             for kind in ("density_vjp", "density_jvp", "cdf_vjp", "cdf_jvp")]
    return tuple(tuple(rule) for rule in kinds)


def family_ops(family):
    """The density and CDF primitives of one family."""
    density_vjp, density_jvp, cdf_vjp, cdf_jvp = family_rules(family)
    density = defop(f"{family.op}Density", _density(family.logpdf), density_vjp, density_jvp,
                    samples=_samples(("logpdf", "pdf"), *family.draws))
    constant_shapes = (draw if p in CDF_PARAMS else _number(draw) for p, draw in zip(family.params, family.draws))
    cdf = defop(f"{family.op}Cdf", _cdf(family), cdf_vjp, cdf_jvp,
                samples=_samples(("cdf", "logcdf", "sf", "logsf"), *constant_shapes))
    return density, cdf


((NORM_DENSITY, NORM_CDF), (T_DENSITY, T_CDF), (GAMMA_DENSITY, GAMMA_CDF), (BETA_DENSITY, BETA_CDF),
 (CHI2_DENSITY, CHI2_CDF)) = (family_ops(family) for family in FAMILIES)


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


def stats_norm_sf(x, loc=0.0, scale=1.0, *, method="sf"):
    return NORM_CDF(x, loc, scale, method=method)


def stats_norm_logsf(x, loc=0.0, scale=1.0, *, method="logsf"):
    return NORM_CDF(x, loc, scale, method=method)


def stats_t_sf(x, df, loc=0.0, scale=1.0, *, method="sf"):
    return T_CDF(x, df, loc, scale, method=method)


def stats_t_logsf(x, df, loc=0.0, scale=1.0, *, method="logsf"):
    return T_CDF(x, df, loc, scale, method=method)


def stats_gamma_sf(x, a, loc=0.0, scale=1.0, *, method="sf"):
    return GAMMA_CDF(x, a, loc, scale, method=method)


def stats_gamma_logsf(x, a, loc=0.0, scale=1.0, *, method="logsf"):
    return GAMMA_CDF(x, a, loc, scale, method=method)


def stats_beta_sf(x, a, b, loc=0.0, scale=1.0, *, method="sf"):
    return BETA_CDF(x, a, b, loc, scale, method=method)


def stats_beta_logsf(x, a, b, loc=0.0, scale=1.0, *, method="logsf"):
    return BETA_CDF(x, a, b, loc, scale, method=method)


def stats_chi2_logpdf(x, df, loc=0.0, scale=1.0, *, method="logpdf"):
    return CHI2_DENSITY(x, df, loc, scale, method=method)


def stats_chi2_pdf(x, df, loc=0.0, scale=1.0, *, method="pdf"):
    return CHI2_DENSITY(x, df, loc, scale, method=method)


def stats_chi2_cdf(x, df, loc=0.0, scale=1.0, *, method="cdf"):
    return CHI2_CDF(x, df, loc, scale, method=method)


def stats_chi2_logcdf(x, df, loc=0.0, scale=1.0, *, method="logcdf"):
    return CHI2_CDF(x, df, loc, scale, method=method)


def stats_chi2_sf(x, df, loc=0.0, scale=1.0, *, method="sf"):
    return CHI2_CDF(x, df, loc, scale, method=method)


def stats_chi2_logsf(x, df, loc=0.0, scale=1.0, *, method="logsf"):
    return CHI2_CDF(x, df, loc, scale, method=method)


def stats_poisson_logpmf(k, mu, loc=0.0, *, method="logpmf"):
    return POISSON_DENSITY(k, mu, loc, method=method)


def stats_poisson_pmf(k, mu, loc=0.0, *, method="pmf"):
    return POISSON_DENSITY(k, mu, loc, method=method)


def stats_poisson_cdf(k, mu, loc=0.0, *, method="cdf"):
    return POISSON_CDF(k, mu, loc, method=method)


def stats_poisson_logcdf(k, mu, loc=0.0, *, method="logcdf"):
    return POISSON_CDF(k, mu, loc, method=method)


class Distribution:
    """A scipy.stats distribution's differentiable methods: `norm.logpdf(x, loc, scale)`."""

    def __init__(self, name, **methods):
        self.name = name
        for method, fn in methods.items():
            setattr(self, method, fn)

    def __repr__(self):
        return f"<dualtape.scipy.stats.{self.name}>"


norm = Distribution("norm", logpdf=stats_norm_logpdf, pdf=stats_norm_pdf, cdf=stats_norm_cdf,
                    logcdf=stats_norm_logcdf, sf=stats_norm_sf, logsf=stats_norm_logsf)
t = Distribution("t", logpdf=stats_t_logpdf, pdf=stats_t_pdf, cdf=stats_t_cdf, logcdf=stats_t_logcdf,
                 sf=stats_t_sf, logsf=stats_t_logsf)
gamma = Distribution("gamma", logpdf=stats_gamma_logpdf, pdf=stats_gamma_pdf, cdf=stats_gamma_cdf,
                     logcdf=stats_gamma_logcdf, sf=stats_gamma_sf, logsf=stats_gamma_logsf)
beta = Distribution("beta", logpdf=stats_beta_logpdf, pdf=stats_beta_pdf, cdf=stats_beta_cdf,
                    logcdf=stats_beta_logcdf, sf=stats_beta_sf, logsf=stats_beta_logsf)
chi2 = Distribution("chi2", logpdf=stats_chi2_logpdf, pdf=stats_chi2_pdf, cdf=stats_chi2_cdf,
                    logcdf=stats_chi2_logcdf, sf=stats_chi2_sf, logsf=stats_chi2_logsf)
poisson = Distribution("poisson", logpmf=stats_poisson_logpmf, pmf=stats_poisson_pmf, cdf=stats_poisson_cdf,
                       logcdf=stats_poisson_logcdf)

for _dist in (norm, t, gamma, beta, chi2, poisson):
    for _method, _fn in vars(_dist).items():
        if _method != "name":
            dnp.METHOD_DISPATCH[(f"{_dist.name}_gen", _method)] = _fn

dnp.export(globals())
