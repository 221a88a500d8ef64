"""`dualtape.scipy.special`: scipy.special's differentiable functions (as autograd.scipy.special)."""

from ..ops.scipy_bessel import i0e, i1e, iv, ive, j0, j1, jv, y0, y1, yn  # noqa: F401
from ..ops.scipy_bessel import special_i0 as i0, special_i1 as i1  # noqa: F401
from ..ops.scipy_special import (beta, betainc, betaln, digamma, erf, erfc, erfcinv, erfinv, expit,  # noqa: F401
                                 gamma, gammainc, gammaincc, gammaln, gammasgn, log_ndtr, logit,
                                 multigammaln, ndtr, polygamma, rgamma, xlog1py, xlogy)
from ..ops.scipy_special import special_log_softmax as log_softmax  # noqa: F401
from ..ops.scipy_special import special_logsumexp as logsumexp  # noqa: F401
from ..ops.scipy_special import special_softmax as softmax  # noqa: F401

psi = digamma
jn = jv
