"""`dualtape.scipy.stats`: scipy.stats' distributions with differentiable methods (as
autograd.scipy.stats): norm, t, gamma, beta, chi2 (logpdf, pdf, cdf, logcdf, sf, logsf), poisson
(logpmf, pmf, cdf, logcdf), dirichlet (logpdf, pdf) and multivariate_normal (logpdf, pdf,
entropy)."""

from ..ops.scipy_multivariate import dirichlet, multivariate_normal  # noqa: F401
from ..ops.scipy_stats import beta, chi2, gamma, norm, poisson, t  # noqa: F401
