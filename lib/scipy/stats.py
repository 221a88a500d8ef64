"""`dualtape.scipy.stats`: scipy.stats' distributions with differentiable methods (as
autograd.scipy.stats): norm, t, gamma, beta (logpdf, pdf, cdf, logcdf), poisson (logpmf, pmf,
cdf, logcdf) and multivariate_normal (logpdf, pdf)."""

from ..ops.scipy_stats import beta, gamma, multivariate_normal, norm, poisson, t  # noqa: F401
