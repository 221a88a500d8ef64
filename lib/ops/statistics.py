"""Statistics of NumPy: cumprod, nansum / nanmean / nanmax / nanmin, ptp, median,
quantile / percentile (every NumPy method: differentiable through the selected elements),
average with weights; cov and corrcoef composed from registry ops.

Conventions (docs/numerics.md, "More NumPy functions"): NaN entries get a zero gradient in
the nan-reductions; tied extremes share the gradient evenly (as max / min); quantiles
follow the stable sort, so among tied values the gradient goes to those the stable sort
puts at the selected positions; an even-length median is the mean of the two middles.
"""

import numpy as np

from ..core import dnp
from ..core.registry import defop
from ..core.rulekit import (average_weights, keepdims_shape, quantile_jvp, quantile_vjp, tie_share,  # noqa: F401
                            unaverage_weights, unreduce)
from .linalg import matmul
from .reductions import mean
from .shape import transpose

__all__ = ["cumprod", "nansum", "nanmean", "nanmax", "nanmin", "ptp", "median", "quantile",
           "percentile", "average", "cov", "corrcoef"]


def _sample(shape, low=-3.0, high=3.0, nans=0, **static):
    def sample(rng):
        x = rng.uniform(low, high, shape)
        for i in range(nans):  # never a whole row or column of NaNs
            x[i % shape[0], (2 * i + 1) % shape[1]] = np.nan
        return (x,), dict(static)
    sample.__name__ = sample.__qualname__ = "_sample_" + "_".join(
        [str(nans) + "nan"] * bool(nans) + [f"{k}{v}" for k, v in static.items()] + ["x".join(map(str, shape))])
    return sample


AXES = (_sample((3, 4)), _sample((3, 4), axis=1), _sample((2, 3, 4), axis=-2, keepdims=True))


# -- cumprod ------------------------------------------------------------------------------------

def _cumprod(x, *, axis=None):
    return np.cumprod(x, axis=axis)


def cumprod_vjp(g, ans, x, *, axis=None):
    return dnp.reshape(dnp.cumsum(g * ans, axis=0 if axis is None else axis, reverse=True), np.shape(x)) / x


def cumprod_jvp(dx, ans, x, *, axis=None):
    return ans * dnp.cumsum(dx / x, axis=axis)


CUMPROD = defop("Cumprod", _cumprod, vjp=cumprod_vjp, jvp=cumprod_jvp, samples=(
    _sample((3, 4), 0.5, 1.5), _sample((3, 4), 0.5, 1.5, axis=1), _sample((2, 3, 2), -1.5, -0.5, axis=-1)), complex=True)


def cumprod(a, axis=None, dtype=None, out=None):
    return CUMPROD(a, axis=axis)


# -- the nan-reductions -------------------------------------------------------------------------

def _nansum(x, *, axis=None, keepdims=False):
    return np.nansum(x, axis=axis, keepdims=keepdims)


def nansum_vjp(g, ans, x, *, axis=None, keepdims=False):
    return dnp.where(dnp.isnan(x), dnp.zeros_like(x), unreduce(g, np.shape(x), axis, keepdims))


def nansum_jvp(dx, ans, x, *, axis=None, keepdims=False):
    return dnp.sum(dnp.where(dnp.isnan(x), dnp.zeros_like(dx), dx), axis=axis, keepdims=keepdims)


NAN_SAMPLES = AXES + (_sample((3, 4), nans=2), _sample((3, 4), nans=3, axis=0, keepdims=True))
NANSUM = defop("NanSum", _nansum, vjp=nansum_vjp, jvp=nansum_jvp, samples=NAN_SAMPLES)


def _nanmean(x, *, axis=None, keepdims=False):
    return np.nanmean(x, axis=axis, keepdims=keepdims)


def nanmean_vjp(g, ans, x, *, axis=None, keepdims=False):
    return dnp.where(dnp.isnan(x), dnp.zeros_like(x), unreduce(g, np.shape(x), axis, keepdims)) / dnp.sum(
        dnp.where(dnp.isnan(x), dnp.zeros_like(x), dnp.ones_like(x)), axis=axis, keepdims=True)


def nanmean_jvp(dx, ans, x, *, axis=None, keepdims=False):
    return dnp.sum(dnp.where(dnp.isnan(x), dnp.zeros_like(dx), dx), axis=axis, keepdims=keepdims) / dnp.sum(
        dnp.where(dnp.isnan(x), dnp.zeros_like(x), dnp.ones_like(x)), axis=axis, keepdims=keepdims)


NANMEAN = defop("NanMean", _nanmean, vjp=nanmean_vjp, jvp=nanmean_jvp, samples=NAN_SAMPLES)


def _nanmax(x, *, axis=None, keepdims=False):
    return np.nanmax(x, axis=axis, keepdims=keepdims)


def _nanmin(x, *, axis=None, keepdims=False):
    return np.nanmin(x, axis=axis, keepdims=keepdims)


def nanextremum_vjp(g, ans, x, *, axis=None, keepdims=False):
    return unreduce(g, np.shape(x), axis, keepdims) * tie_share(x, ans, axis, keepdims)


def nanextremum_jvp(dx, ans, x, *, axis=None, keepdims=False):
    return dnp.sum(dnp.where(dnp.isnan(x), dnp.zeros_like(dx), dx) * tie_share(x, ans, axis, keepdims),
                   axis=axis, keepdims=keepdims)


NANMAX = defop("NanMax", _nanmax, vjp=nanextremum_vjp, jvp=nanextremum_jvp, samples=NAN_SAMPLES)
NANMIN = defop("NanMin", _nanmin, vjp=nanextremum_vjp, jvp=nanextremum_jvp, samples=NAN_SAMPLES)


def _ptp(x, *, axis=None, keepdims=False):
    return np.ptp(x, axis=axis, keepdims=keepdims)


def ptp_vjp(g, ans, x, *, axis=None, keepdims=False):
    return unreduce(g, np.shape(x), axis, keepdims) * (
        tie_share(x, dnp.max(x, axis=axis, keepdims=keepdims), axis, keepdims)
        - tie_share(x, dnp.min(x, axis=axis, keepdims=keepdims), axis, keepdims))


def ptp_jvp(dx, ans, x, *, axis=None, keepdims=False):
    return dnp.sum(dx * (tie_share(x, dnp.max(x, axis=axis, keepdims=keepdims), axis, keepdims)
                         - tie_share(x, dnp.min(x, axis=axis, keepdims=keepdims), axis, keepdims)),
                   axis=axis, keepdims=keepdims)


PTP = defop("Ptp", _ptp, vjp=ptp_vjp, jvp=ptp_jvp, samples=AXES)


def _no_out(api, out=None, **unsupported):
    if out is not None or any(v not in (None, False) for v in unsupported.values()):
        raise TypeError(f"[{api}] out= and {sorted(unsupported)} are not supported on differentiable "
                        "values. Use the returned value.")


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _no_out("NanSum", out, initial=initial, where=where)
    return NANSUM(a, axis=axis, keepdims=keepdims)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _no_out("NanMean", out, where=where)
    return NANMEAN(a, axis=axis, keepdims=keepdims)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_out("NanMax", out, initial=initial, where=where)
    return NANMAX(a, axis=axis, keepdims=keepdims)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_out("NanMin", out, initial=initial, where=where)
    return NANMIN(a, axis=axis, keepdims=keepdims)


def ptp(a, axis=None, out=None, keepdims=False):
    _no_out("Ptp", out)
    return PTP(a, axis=axis, keepdims=keepdims)


# -- median, quantile, percentile ---------------------------------------------------------------

def _median(x, *, axis=None, keepdims=False):
    return np.median(x, axis=axis, keepdims=keepdims)


def median_vjp(g, ans, x, *, axis=None, keepdims=False):
    return quantile_vjp(g, x, 0.5, axis, keepdims)


def median_jvp(dx, ans, x, *, axis=None, keepdims=False):
    return quantile_jvp(dx, x, 0.5, axis, keepdims)


MEDIAN = defop("Median", _median, vjp=median_vjp, jvp=median_jvp,
               samples=AXES + (_sample((5,)), _sample((3, 5), axis=0)))


def _q(q, x):
    """q as an array of x's float dtype (a float32 x keeps float32 quantiles)."""
    return np.asarray(q, dtype=np.result_type(x, np.float16))


def _quantile(x, *, q, axis=None, keepdims=False, method="linear"):
    return np.quantile(x, _q(q, x), axis=axis, keepdims=keepdims, method=method)


def quantile_vjp_rule(g, ans, x, *, q, axis=None, keepdims=False, method="linear"):
    return quantile_vjp(g, x, q, axis, keepdims, method)


def quantile_jvp_rule(dx, ans, x, *, q, axis=None, keepdims=False, method="linear"):
    return quantile_jvp(dx, x, q, axis, keepdims, method)


QUANTILE = defop("Quantile", _quantile, vjp=quantile_vjp_rule, jvp=quantile_jvp_rule, samples=(
    _sample((3, 4), q=0.3), _sample((3, 4), q=(0.1, 0.5, 1.0), axis=1),
    _sample((2, 3, 4), q=0.75, axis=-1, keepdims=True), _sample((5,), q=0.0),
    _sample((3, 5), q=(0.1, 0.5, 0.9), axis=1, method="lower"), _sample((3, 5), q=(0.3, 0.75), axis=0, method="higher"),
    _sample((6,), q=(0.0, 0.3, 0.5, 0.7, 1.0), method="nearest"), _sample((2, 4), q=0.4, axis=1, method="midpoint"),
    _sample((7,), q=(0.2, 0.6), method="inverted_cdf"), _sample((7,), q=(0.2, 0.6), method="hazen")))


def _percentile(x, *, q, axis=None, keepdims=False, method="linear"):
    return np.percentile(x, _q(q, x), axis=axis, keepdims=keepdims, method=method)


def percentile_vjp(g, ans, x, *, q, axis=None, keepdims=False, method="linear"):
    return quantile_vjp(g, x, np.asarray(q) / 100, axis, keepdims, method)


def percentile_jvp(dx, ans, x, *, q, axis=None, keepdims=False, method="linear"):
    return quantile_jvp(dx, x, np.asarray(q) / 100, axis, keepdims, method)


PERCENTILE = defop("Percentile", _percentile, vjp=percentile_vjp, jvp=percentile_jvp, samples=(
    _sample((3, 4), q=30), _sample((3, 4), q=(10, 90), axis=0), _sample((5,), q=(25, 50), method="midpoint"),
    _sample((3, 4), q=60, axis=1, method="nearest")))


# NumPy's methods: each mixes the two sorted entries around a position set by n and q alone
METHODS = ("linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf", "averaged_inverted_cdf",
           "closest_observation", "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
           "normal_unbiased")


def _check_quantile(api, axis, out, overwrite_input, method, weights=None):
    _no_out(api, out)
    if method not in METHODS or isinstance(axis, (tuple, list)) or weights is not None:
        raise TypeError(f"[{api}] is differentiable with one axis (or None), no weights and a method of "
                        f"{METHODS}, got method={method!r}, axis={axis!r}, weights="
                        f"{'None' if weights is None else 'given'}. Move the axes together with np.reshape "
                        "first; weighted quantiles are not differentiable here.")


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _check_quantile("Median", axis, out, overwrite_input, "linear")
    return MEDIAN(a, axis=axis, keepdims=keepdims)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             weights=None):
    _check_quantile("Quantile", axis, out, overwrite_input, method, weights)
    return QUANTILE(a, q=q, axis=axis, keepdims=keepdims, method=method)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               weights=None):
    _check_quantile("Percentile", axis, out, overwrite_input, method, weights)
    return PERCENTILE(a, q=q, axis=axis, keepdims=keepdims, method=method)


# -- average with weights ------------------------------------------------------------------------

def _average(a, weights, *, axis=None, keepdims=False):
    return np.average(a, axis=axis, weights=weights, keepdims=keepdims)


def average_vjp_a(g, ans, a, weights, *, axis=None, keepdims=False):
    return unreduce(g, np.shape(a), axis, keepdims) * average_weights(a, weights, axis) / dnp.sum(
        average_weights(a, weights, axis), axis=axis, keepdims=True)


def average_vjp_w(g, ans, a, weights, *, axis=None, keepdims=False):
    return unaverage_weights(unreduce(g, np.shape(a), axis, keepdims) * (
        a - keepdims_shape(ans, np.shape(a), axis, keepdims)) / dnp.sum(
        average_weights(a, weights, axis), axis=axis, keepdims=True), a, weights, axis)


def average_jvp_a(da, ans, a, weights, *, axis=None, keepdims=False):
    return dnp.sum(da * average_weights(a, weights, axis), axis=axis, keepdims=keepdims) / dnp.sum(
        average_weights(a, weights, axis), axis=axis, keepdims=keepdims)


def average_jvp_w(dw, ans, a, weights, *, axis=None, keepdims=False):
    return dnp.sum(average_weights(a, dw, axis) * (a - keepdims_shape(ans, np.shape(a), axis, keepdims)),
                   axis=axis, keepdims=keepdims) / dnp.sum(average_weights(a, weights, axis), axis=axis,
                                                           keepdims=keepdims)


def _sample_average(rng):
    return (rng.standard_normal((3, 4)), rng.uniform(0.5, 2, 4)), {"axis": 1}


def _sample_average_full(rng):
    return (rng.standard_normal((2, 3)), rng.uniform(0.5, 2, (2, 3))), {}


def _sample_average_keepdims(rng):
    return (rng.standard_normal((3, 2)), rng.uniform(0.5, 2, (3, 2))), {"axis": 0, "keepdims": True}


AVERAGE = defop("Average", _average, vjp=(average_vjp_a, average_vjp_w), jvp=(average_jvp_a, average_jvp_w),
                samples=(_sample_average, _sample_average_full, _sample_average_keepdims), complex=True)


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    if returned:
        raise TypeError("[Average] returned=True is not supported on differentiable values; "
                        "compute np.sum(weights) separately.")
    if weights is None:
        return mean(a, axis=axis, keepdims=keepdims)
    return AVERAGE(a, weights, axis=axis, keepdims=keepdims)


# -- cov, corrcoef: composed ----------------------------------------------------------------------

def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """np.cov from registry ops (centre, one matmul); fweights / aweights are not supported."""
    if fweights is not None or aweights is not None:
        raise TypeError("[cov] fweights= and aweights= are not supported on differentiable values.")
    x = dnp.atleast_2d(m)
    if not rowvar and np.shape(x)[0] != 1:
        x = transpose(x)
    if y is not None:
        y = dnp.atleast_2d(y)
        x = dnp.vstack([x, y if rowvar or np.shape(y)[0] == 1 else transpose(y)])
    n = np.shape(x)[1]
    ddof = (0 if bias else 1) if ddof is None else ddof
    centred = x - mean(x, axis=1, keepdims=True)
    c = matmul(centred, transpose(centred)) / (n - ddof)
    return dnp.squeeze(c)


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """np.corrcoef: cov divided by the outer product of the standard deviations."""
    c = cov(x, y, rowvar)
    if np.ndim(c) == 0:
        return c / c
    d = dnp.sqrt(dnp.diagonal(c))
    return c / d[:, None] / d[None, :]


dnp.export(globals())
