"""scipy.special as registry ops (SciPy is an optional extra: `dualtape.ops` imports this
module only when SciPy is installed).

SciPy's special functions are NumPy ufuncs, so `scipy.special.gammaln(t)` on a tensor or
dual number reaches `__array_ufunc__`, which finds the op in `dnp.NUMPY_DISPATCH`. Its
Python functions (logsumexp, softmax, log_softmax, polygamma, multigammaln) convert their
arguments with np.asarray, so on traced values call them from `dualtape.scipy.special`
(the transformer maps SciPy's own spelling). Functions of an order or shape first
(polygamma, gammainc; the Bessel functions in `scipy_bessel`) differentiate in x only, as
autograd does.
"""

import numpy as np
import scipy.special as sc

from ..core import dnp
from ..core.registry import defop, elementwise_op
from ..core.rulekit import no_derivative, primal_keepdims, unbroadcast, unreduce, zeros_like
from .nn import LOG_SOFTMAX, SOFTMAX

__all__ = ["gammaln", "digamma", "polygamma", "erf", "erfc", "erfinv", "erfcinv", "expit", "logit",
           "xlogy", "xlog1py", "betaln", "gamma", "rgamma", "beta", "gammainc", "gammaincc",
           "ndtr", "log_ndtr", "multigammaln", "special_logsumexp", "special_softmax",
           "special_log_softmax", "betainc", "gammasgn"]

def gammaln_vjp(g, ans, x):
    return g * dnp.digamma(x)


def gammaln_jvp(dx, ans, x):
    return dx * dnp.digamma(x)


def digamma_vjp(g, ans, x):
    return g * dnp.polygamma(1, x)


def digamma_jvp(dx, ans, x):
    return dx * dnp.polygamma(1, x)


GAMMALN = elementwise_op("Lgamma", sc.gammaln, gammaln_vjp, gammaln_jvp, domain={"x": "positive"})
DIGAMMA = elementwise_op("Digamma", sc.digamma, digamma_vjp, digamma_jvp, domain={"x": "positive"})


def erf_vjp(g, ans, x):
    return g * 1.1283791670955126 * dnp.exp(-x * x)


def erf_jvp(dx, ans, x):
    return dx * 1.1283791670955126 * dnp.exp(-x * x)


def erfc_vjp(g, ans, x):
    return g * -1.1283791670955126 * dnp.exp(-x * x)


def erfc_jvp(dx, ans, x):
    return dx * -1.1283791670955126 * dnp.exp(-x * x)


def erfinv_vjp(g, ans, x):
    return g * 0.886226925452758 * dnp.exp(ans * ans)


def erfinv_jvp(dx, ans, x):
    return dx * 0.886226925452758 * dnp.exp(ans * ans)


def erfcinv_vjp(g, ans, x):
    return g * -0.886226925452758 * dnp.exp(ans * ans)


def erfcinv_jvp(dx, ans, x):
    return dx * -0.886226925452758 * dnp.exp(ans * ans)


ERF = elementwise_op("Erf", sc.erf, erf_vjp, erf_jvp, complex=True)  # holomorphic: the rules hold for complex z
ERFC = elementwise_op("Erfc", sc.erfc, erfc_vjp, erfc_jvp, complex=True)
ERFINV = elementwise_op("Erfinv", sc.erfinv, erfinv_vjp, erfinv_jvp, domain={"x": "unit"})


def _sample_unit_interval(lo, hi):
    def sample(rng):
        return (rng.uniform(lo, hi, (2, 3)),), {}
    sample.__name__ = f"_sample_in_{lo}_{hi}".replace(".", "p")
    return sample


ERFCINV = defop("Erfcinv", sc.erfcinv, erfcinv_vjp, erfcinv_jvp, batch_vjp=True, batch_jvp=True,
                samples=(_sample_unit_interval(0.1, 1.9),))


def expit_vjp(g, ans, x):
    return g * ans * (1.0 - ans)


def expit_jvp(dx, ans, x):
    return dx * ans * (1.0 - ans)


def logit_vjp(g, ans, x):
    return g / (x * (1.0 - x))


def logit_jvp(dx, ans, x):
    return dx / (x * (1.0 - x))


EXPIT = elementwise_op("Expit", sc.expit, expit_vjp, expit_jvp)
LOGIT = defop("Logit", sc.logit, logit_vjp, logit_jvp, batch_vjp=True, batch_jvp=True,
              samples=(_sample_unit_interval(0.05, 0.95),))


def xlogy_vjp_x(g, ans, x, y):
    return g * dnp.log(y)


def xlogy_vjp_y(g, ans, x, y):
    return g * x / y


def xlogy_jvp_x(dx, ans, x, y):
    return dx * dnp.log(y)


def xlogy_jvp_y(dy, ans, x, y):
    return dy * x / y


def xlog1py_vjp_x(g, ans, x, y):
    return g * dnp.log1p(y)


def xlog1py_vjp_y(g, ans, x, y):
    return g * x / (1.0 + y)


def xlog1py_jvp_x(dx, ans, x, y):
    return dx * dnp.log1p(y)


def xlog1py_jvp_y(dy, ans, x, y):
    return dy * x / (1.0 + y)


XLOGY = elementwise_op("Xlogy", sc.xlogy, (xlogy_vjp_x, xlogy_vjp_y), (xlogy_jvp_x, xlogy_jvp_y),
                       domain={"y": "positive"})
XLOG1PY = elementwise_op("Xlog1py", sc.xlog1py, (xlog1py_vjp_x, xlog1py_vjp_y),
                         (xlog1py_jvp_x, xlog1py_jvp_y), domain={"y": "positive"})


def betaln_vjp_a(g, ans, a, b):
    return g * (dnp.digamma(a) - dnp.digamma(a + b))


def betaln_vjp_b(g, ans, a, b):
    return g * (dnp.digamma(b) - dnp.digamma(a + b))


def betaln_jvp_a(da, ans, a, b):
    return da * (dnp.digamma(a) - dnp.digamma(a + b))


def betaln_jvp_b(db, ans, a, b):
    return db * (dnp.digamma(b) - dnp.digamma(a + b))


def beta_vjp_a(g, ans, a, b):
    return g * ans * (dnp.digamma(a) - dnp.digamma(a + b))


def beta_vjp_b(g, ans, a, b):
    return g * ans * (dnp.digamma(b) - dnp.digamma(a + b))


def beta_jvp_a(da, ans, a, b):
    return da * ans * (dnp.digamma(a) - dnp.digamma(a + b))


def beta_jvp_b(db, ans, a, b):
    return db * ans * (dnp.digamma(b) - dnp.digamma(a + b))


BETALN = elementwise_op("Betaln", sc.betaln, (betaln_vjp_a, betaln_vjp_b), (betaln_jvp_a, betaln_jvp_b),
                        domain={"a": "positive", "b": "positive"})
BETA = elementwise_op("BetaFunction", sc.beta, (beta_vjp_a, beta_vjp_b), (beta_jvp_a, beta_jvp_b),
                      domain={"a": "positive", "b": "positive"})


def gamma_vjp(g, ans, x):
    return g * ans * dnp.digamma(x)


def gamma_jvp(dx, ans, x):
    return dx * ans * dnp.digamma(x)


def rgamma_vjp(g, ans, x):
    return -g * ans * dnp.digamma(x)


def rgamma_jvp(dx, ans, x):
    return -dx * ans * dnp.digamma(x)


GAMMA = elementwise_op("GammaFunction", sc.gamma, gamma_vjp, gamma_jvp, domain={"x": "positive"})
RGAMMA = elementwise_op("Rgamma", sc.rgamma, rgamma_vjp, rgamma_jvp, domain={"x": "positive"})


# -- an integer order or shape first: differentiable in x only ---------------------------------

def polygamma_vjp(g, ans, n, x):
    return unbroadcast(g * dnp.polygamma(n + 1, x), np.shape(x))


def polygamma_jvp(dx, ans, n, x):
    return dx * dnp.polygamma(n + 1, x)


def gammainc_vjp(g, ans, a, x):
    return unbroadcast(g * dnp.exp((a - 1.0) * dnp.log(x) - x - dnp.gammaln(a + 0.0 * x)), np.shape(x))


def gammainc_jvp(dx, ans, a, x):
    return dx * dnp.exp((a - 1.0) * dnp.log(x) - x - dnp.gammaln(a + 0.0 * x))


def gammaincc_vjp(g, ans, a, x):
    return unbroadcast(-g * dnp.exp((a - 1.0) * dnp.log(x) - x - dnp.gammaln(a + 0.0 * x)), np.shape(x))


def gammaincc_jvp(dx, ans, a, x):
    return -dx * dnp.exp((a - 1.0) * dnp.log(x) - x - dnp.gammaln(a + 0.0 * x))


def order_sample(order, lo, hi):
    def sample(rng):
        return (order, rng.uniform(lo, hi, (2, 3))), {}  # a Python number: float32 stays float32
    sample.__name__ = f"_sample_order_{order}"
    return sample


class _InDtypeOfX:
    """SciPy's function of (order, x), its result in x's float dtype (an integer or float64
    order would promote a float32 x)."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__

    def __call__(self, n, x):
        return np.asarray(self.fn(n, x), dtype=np.result_type(x))


def order_op(name, impl, vjp, jvp, samples, refusals=None):
    """A function of (order, x) differentiable in x. The order is an integer (no derivative), or
    with `refusals` (its VJP and JVP rules, which raise) a real number whose derivative dualtape
    does not compute: differentiating in it raises instead of giving zero. Samples hold the order
    as a Python int, which the generated tests keep constant (they differentiate float inputs)."""
    if refusals is None:
        return defop(name, _InDtypeOfX(impl), (None, vjp), (None, jvp), nondiff_argnums=(0,), samples=samples)
    return defop(name, _InDtypeOfX(impl), (refusals[0], vjp), (refusals[1], jvp), samples=samples)


# the orders and shapes with a derivative dualtape does not compute

def gammainc_vjp_a(g, ans, a, x):
    return no_derivative("Igamma", "a", g)


def gammainc_jvp_a(da, ans, a, x):
    return no_derivative("Igamma", "a", da)


def gammaincc_vjp_a(g, ans, a, x):
    return no_derivative("Igammac", "a", g)


def gammaincc_jvp_a(da, ans, a, x):
    return no_derivative("Igammac", "a", da)


POLYGAMMA = order_op("Polygamma", sc.polygamma, polygamma_vjp, polygamma_jvp,
                      (order_sample(1, 0.3, 3.0), order_sample(2, 0.3, 3.0)))
GAMMAINC = order_op("Igamma", sc.gammainc, gammainc_vjp, gammainc_jvp, (order_sample(2, 0.2, 3.0),),
                    (gammainc_vjp_a, gammainc_jvp_a))
GAMMAINCC = order_op("Igammac", sc.gammaincc, gammaincc_vjp, gammaincc_jvp, (order_sample(3, 0.2, 3.0),),
                     (gammaincc_vjp_a, gammaincc_jvp_a))


# betainc(a, b, x): the regularized incomplete beta function, differentiable in x (as autograd);
# d/dx = x^(a-1) (1-x)^(b-1) / B(a, b), the beta density

def betainc_vjp(g, ans, a, b, x):
    return unbroadcast(g * dnp.exp((a - 1.0) * dnp.log(x) + (b - 1.0) * dnp.log1p(-x)
                                   - dnp.betaln(a + 0.0 * x, b + 0.0 * x)), np.shape(x))


def betainc_jvp(dx, ans, a, b, x):
    return dx * dnp.exp((a - 1.0) * dnp.log(x) + (b - 1.0) * dnp.log1p(-x) - dnp.betaln(a + 0.0 * x, b + 0.0 * x))


def _betainc(a, b, x):
    return np.asarray(sc.betainc(a, b, x), dtype=np.result_type(x))


def betainc_vjp_a(g, ans, a, b, x):
    return no_derivative("Betainc", "a", g)


def betainc_jvp_a(da, ans, a, b, x):
    return no_derivative("Betainc", "a", da)


def betainc_vjp_b(g, ans, a, b, x):
    return no_derivative("Betainc", "b", g)


def betainc_jvp_b(db, ans, a, b, x):
    return no_derivative("Betainc", "b", db)


def _sample_betainc(rng):  # a and b Python ints: constants to the generated tests
    return (int(rng.integers(2, 4)), 3, rng.uniform(0.1, 0.9, (2, 3))), {}


def _sample_betainc_a_one(rng):
    return (1, int(rng.integers(1, 3)), rng.uniform(0.1, 0.9, (2, 3))), {}


BETAINC = defop("Betainc", _betainc, (betainc_vjp_a, betainc_vjp_b, betainc_vjp),
                (betainc_jvp_a, betainc_jvp_b, betainc_jvp),
                samples=(_sample_betainc, _sample_betainc_a_one))


# gammasgn: the sign of the gamma function, piecewise constant (zero derivative between its poles)

def gammasgn_vjp(g, ans, x):
    return zeros_like(g)


def gammasgn_jvp(dx, ans, x):
    return zeros_like(dx)


GAMMASGN = elementwise_op("Gammasgn", sc.gammasgn, gammasgn_vjp, gammasgn_jvp, domain={"x": "positive"})


def ndtr_vjp(g, ans, x):
    return g * dnp.exp(-0.5 * x * x) * 0.3989422804014327


def ndtr_jvp(dx, ans, x):
    return dx * dnp.exp(-0.5 * x * x) * 0.3989422804014327


def log_ndtr_vjp(g, ans, x):
    return g * dnp.exp(-0.5 * x * x - 0.9189385332046727 - ans)


def log_ndtr_jvp(dx, ans, x):
    return dx * dnp.exp(-0.5 * x * x - 0.9189385332046727 - ans)


NDTR = elementwise_op("Ndtr", sc.ndtr, ndtr_vjp, ndtr_jvp)
LOG_NDTR = elementwise_op("LogNdtr", sc.log_ndtr, log_ndtr_vjp, log_ndtr_jvp)


# -- SciPy's Python functions -----------------------------------------------------------------

def _multigammaln(a, *, d):
    return np.asarray(sc.multigammaln(a, d), dtype=np.result_type(a))


def multigammaln_vjp(g, ans, a, *, d):
    return g * dnp.sum(dnp.digamma(dnp.expand_dims(a, -1) - 0.5 * np.arange(d).astype(dnp.result_dtype(a))), axis=-1)


def multigammaln_jvp(da, ans, a, *, d):
    return da * dnp.sum(dnp.digamma(dnp.expand_dims(a, -1) - 0.5 * np.arange(d).astype(dnp.result_dtype(a))), axis=-1)


def _sample_multigammaln(rng):
    return (rng.uniform(2.0, 4.0, (2, 3)),), {"d": 3}


MULTIGAMMALN = defop("Multigammaln", _multigammaln, multigammaln_vjp, multigammaln_jvp, batch_vjp=True,
                     batch_jvp=True, samples=(_sample_multigammaln,))


def _logsumexp(a, *, axis=None, b=None, keepdims=False):
    return np.asarray(sc.logsumexp(a, axis=axis, b=b, keepdims=keepdims), dtype=np.result_type(a))


def logsumexp_vjp(g, ans, a, *, axis=None, b=None, keepdims=False):
    return unbroadcast(unreduce(g, np.shape(a), axis, keepdims)
                       * dnp.exp(a - primal_keepdims(ans, np.shape(a), axis, keepdims))
                       * (1.0 if b is None else np.asarray(b).astype(dnp.result_dtype(a))), np.shape(a))


def logsumexp_jvp(da, ans, a, *, axis=None, b=None, keepdims=False):
    return dnp.sum(da * dnp.exp(a - primal_keepdims(ans, np.shape(a), axis, keepdims))
                   * (1.0 if b is None else np.asarray(b).astype(dnp.result_dtype(a))),
                   axis=axis, keepdims=keepdims)


def _sample_lse(rng):
    return (rng.standard_normal((3, 4)),), {"axis": 1, "b": rng.uniform(0.5, 2.0, (3, 4))}


def _sample_lse_all(rng):
    return (rng.standard_normal((2, 3)),), {"b": rng.uniform(0.5, 2.0, (3,)), "keepdims": True}


def _sample_lse_plain(rng):
    return (rng.standard_normal((2, 3)),), {"axis": 0}


LOGSUMEXP_B = defop("ScipyLogSumExp", _logsumexp, logsumexp_vjp, logsumexp_jvp,
                    samples=(_sample_lse, _sample_lse_all, _sample_lse_plain))


def gammaln(x):
    return GAMMALN(x)


def digamma(x):
    return DIGAMMA(x)


def polygamma(n, x):
    """scipy.special.polygamma(n, x): differentiable in x."""
    return POLYGAMMA(n, x)


def multigammaln(a, d):
    return MULTIGAMMALN(a, d=int(d))


def special_logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """scipy.special.logsumexp: log(sum(b * exp(a))) over `axis`; `b` is a constant (as in
    autograd), so the gradient is w.r.t. `a` only."""
    if return_sign:
        raise NotImplementedError("[ScipyLogSumExp] return_sign=True has no derivative here. "
                                  "Fix: keep b positive and call it with return_sign=False.")
    if isinstance(axis, list):
        axis = tuple(axis)
    return LOGSUMEXP_B(a, axis=axis, b=b, keepdims=bool(keepdims))


def special_softmax(x, axis=None):
    """scipy.special.softmax: over all axes by default (unlike tf.nn.softmax)."""
    return SOFTMAX(x, axis=_all_axes(x, axis))


def special_log_softmax(x, axis=None):
    return LOG_SOFTMAX(x, axis=_all_axes(x, axis))


def _all_axes(x, axis):
    if axis is None:
        return tuple(range(np.ndim(x)))
    return tuple(axis) if isinstance(axis, (list, tuple)) else int(axis)


erf, erfc, erfinv, erfcinv, expit, logit = ERF, ERFC, ERFINV, ERFCINV, EXPIT, LOGIT
xlogy, xlog1py, betaln = XLOGY, XLOG1PY, BETALN
gamma, rgamma, beta, gammainc, gammaincc, ndtr, log_ndtr = GAMMA, RGAMMA, BETA, GAMMAINC, GAMMAINCC, NDTR, LOG_NDTR
gammasgn = GAMMASGN


def betainc(a, b, x):
    """scipy.special.betainc(a, b, x): differentiable in x."""
    return BETAINC(a, b, x)


SCIPY_SPECIAL = {sc.gammaln: gammaln, sc.digamma: digamma, sc.polygamma: polygamma, sc.erf: erf,
                 sc.erfc: erfc, sc.erfinv: erfinv, sc.erfcinv: erfcinv, sc.expit: expit,
                 sc.logit: logit, sc.xlogy: xlogy, sc.xlog1py: xlog1py, sc.betaln: betaln,
                 sc.gamma: gamma, sc.rgamma: rgamma, sc.beta: beta, sc.gammainc: gammainc,
                 sc.gammaincc: gammaincc, sc.ndtr: ndtr, sc.log_ndtr: log_ndtr,
                 sc.multigammaln: multigammaln, sc.logsumexp: special_logsumexp,
                 sc.softmax: special_softmax, sc.log_softmax: special_log_softmax,
                 sc.betainc: betainc, sc.gammasgn: gammasgn}

dnp.export(globals(), SCIPY_SPECIAL)
