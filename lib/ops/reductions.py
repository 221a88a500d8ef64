"""Reductions: sum, mean, prod, max/min, var/std, logsumexp, norm (cumsum is in `scans`), and the
non-differentiable any/all/argmax/argmin/count_nonzero.

Static `axis` (None, an int or a tuple of ints, negatives allowed) and `keepdims` are
keyword-only metadata; the dnp functions take NumPy's signatures and normalize them.
VJPs broadcast the reduced cotangent back with `unreduce`; JVPs reduce `dx * (local
derivative)` the same way the op reduces `x`. Conventions at kinks follow TF: tied maxima
split the gradient evenly; prod is exact at zeros. Where TF gives NaN (the norm and std of
an all-zero group), we give the subgradient 0 instead (`div_no_nan`).
"""

import numpy as np

from ..core import dnp
from ..core.dtypes import as_numpy_dtype
from ..core.registry import LINEAR, NOT_DIFFERENTIABLE, Traced, defop
from ..core.rulekit import (conj_part, div_no_nan, normalize_axis, primal_keepdims, prod_others, real_part, reduced_size,
                            tie_share, unreduce)

__all__ = ["sum", "mean", "prod", "max", "min", "amax", "amin", "var", "std", "logsumexp", "norm", "any",
           "all", "argmax", "argmin", "count_nonzero"]


# -- samples: every reduction sees the same axis / keepdims spellings --------------------------

def normal_sample(shape, scale=1.0, offset=0.0, **static):
    """A sample `rng -> (args, static)`: a standard normal array of `shape`, scaled."""
    def sample(rng):
        return (rng.standard_normal(shape) * scale + offset,), dict(static)
    sample.__name__ = "sample_" + "x".join(map(str, shape)) + "".join(
        f"_{k}{v}" for k, v in static.items()).replace(" ", "")
    return sample


REDUCE_SAMPLES = (
    normal_sample((3, 2)),                                   # axis=None
    normal_sample((3, 4), axis=1),
    normal_sample((2, 3, 4), axis=-1, keepdims=True),
    normal_sample((2, 3, 4), axis=(0, 2), keepdims=True),
    normal_sample((2, 3, 4), axis=(0, -1)),
    normal_sample((3, 4), axis=None, keepdims=True),
    normal_sample((5,), axis=0, keepdims=True),
    normal_sample(()),                                       # 0-d
    normal_sample((2, 3), axis=()),                          # reduce over nothing: the identity
)
# Groups of more than one element: std is not differentiable where a group is constant.
GROUP_SAMPLES = REDUCE_SAMPLES[:7]


def _reduction(name, impl, vjp, jvp, samples=REDUCE_SAMPLES, **kw):
    # every reduction VJP broadcasts g back with `unreduce` and reads the primal through
    # `primal_keepdims`, so a cotangent with leading batch axes (jacobians) works as is
    return defop(name, impl, vjp=vjp, jvp=jvp, samples=samples, batch_vjp=True, **kw)


# -- sum and mean: linear ------------------------------------------------------------------------

def _sum(x, *, axis=None, keepdims=False):
    if x.__class__ is _ndarray:  # what np.sum calls, without its Python-level wrapper
        return _add_reduce(x, axis=axis, keepdims=keepdims)
    return np.sum(x, axis=axis, keepdims=keepdims)


_ndarray = np.ndarray
_add_reduce = np.add.reduce


def sum_vjp(g, ans, x, *, axis=None, keepdims=False):
    return unreduce(g, np.shape(x), axis, keepdims)


SUM = _reduction("Sum", _sum, sum_vjp, LINEAR, complex=True)


def _mean(x, *, axis=None, keepdims=False):
    return np.mean(x, axis=axis, keepdims=keepdims)


def mean_vjp(g, ans, x, *, axis=None, keepdims=False):
    return unreduce(g, np.shape(x), axis, keepdims) / reduced_size(np.shape(x), axis)


MEAN = _reduction("Mean", _mean, mean_vjp, LINEAR, complex=True)


# -- prod: exact at zeros -------------------------------------------------------------------------

def _prod(x, *, axis=None, keepdims=False):
    return np.prod(x, axis=axis, keepdims=keepdims)


def prod_vjp(g, ans, x, *, axis=None, keepdims=False):
    return unreduce(g, np.shape(x), axis, keepdims) * prod_others(x, axis)  # not ans / x: zeros


def prod_jvp(dx, ans, x, *, axis=None, keepdims=False):
    return dnp.sum(dx * prod_others(x, axis), axis=axis, keepdims=keepdims)


def _sample_prod_zeros(rng):
    x = rng.standard_normal((3, 4))
    x[0, 1] = x[1, 0] = x[1, 2] = 0.0  # row 0: one zero, row 1: two zeros, row 2: none
    return (x,), {"axis": 1}


PROD = _reduction("Prod", _prod, prod_vjp, prod_jvp, samples=REDUCE_SAMPLES + (_sample_prod_zeros,), complex=True)


# -- max and min: ties split the gradient evenly, as TF's reduce_max ----------------------------

def _max(x, *, axis=None, keepdims=False):
    return np.max(x, axis=axis, keepdims=keepdims)


def _min(x, *, axis=None, keepdims=False):
    return np.min(x, axis=axis, keepdims=keepdims)


def extremum_vjp(g, ans, x, *, axis=None, keepdims=False):
    return unreduce(g, np.shape(x), axis, keepdims) * tie_share(
        x, primal_keepdims(ans, np.shape(x), axis, keepdims), axis, True)


def extremum_jvp(dx, ans, x, *, axis=None, keepdims=False):
    return dnp.sum(dx * tie_share(x, primal_keepdims(ans, np.shape(x), axis, keepdims), axis, True),
                   axis=axis, keepdims=keepdims)


# Samples have no ties (finite differences cannot see a kink); tests check ties explicitly.
MAX = _reduction("Max", _max, extremum_vjp, extremum_jvp, domain={"x": "no_ties"})
MIN = _reduction("Min", _min, extremum_vjp, extremum_jvp, domain={"x": "no_ties"})


# -- var and std (ddof is static) ---------------------------------------------------------------
# Real-valued for complex x too: var = sum |x - mean|^2 / (n - ddof), so d var =
# 2 Re(sum(conj(x - mean) dx)) / (n - ddof) and, in the rules' convention (docs/numerics.md),
# the cotangent of x is Re(g) 2 conj(x - mean) / (n - ddof), as JAX's; on reals conj and
# real_part are the identity and the rules are the real ones.

def _var(x, *, axis=None, keepdims=False, ddof=0):
    return np.var(x, axis=axis, keepdims=keepdims, ddof=ddof)


def var_vjp(g, ans, x, *, axis=None, keepdims=False, ddof=0):
    return (unreduce(real_part(g), np.shape(x), axis, keepdims) * conj_part(x - dnp.mean(x, axis=axis, keepdims=True))
            * (2 / (reduced_size(np.shape(x), axis) - ddof)))


def var_jvp(dx, ans, x, *, axis=None, keepdims=False, ddof=0):
    return (real_part(dnp.sum(dx * conj_part(x - dnp.mean(x, axis=axis, keepdims=True)), axis=axis, keepdims=keepdims))
            * (2 / (reduced_size(np.shape(x), axis) - ddof)))


VAR_SAMPLES = REDUCE_SAMPLES[:8] + (normal_sample((3, 4), axis=-1, ddof=1),
                                    normal_sample((2, 3, 4), axis=(0, 2), keepdims=True, ddof=1))
VAR = _reduction("ReduceVariance", _var, var_vjp, var_jvp, samples=VAR_SAMPLES, complex=True)


def _std(x, *, axis=None, keepdims=False, ddof=0):
    return np.std(x, axis=axis, keepdims=keepdims, ddof=ddof)


def std_vjp(g, ans, x, *, axis=None, keepdims=False, ddof=0):
    # d std = Re(conj(x - mean) dx) / ((n - ddof) std); a constant group (std == 0) gets 0, not NaN
    return unreduce(real_part(g), np.shape(x), axis, keepdims) * div_no_nan(
        conj_part(x - dnp.mean(x, axis=axis, keepdims=True)),
        primal_keepdims(ans, np.shape(x), axis, keepdims) * (reduced_size(np.shape(x), axis) - ddof))


def std_jvp(dx, ans, x, *, axis=None, keepdims=False, ddof=0):
    return div_no_nan(real_part(dnp.sum(dx * conj_part(x - dnp.mean(x, axis=axis, keepdims=True)), axis=axis,
                                        keepdims=keepdims)),
                      ans * (reduced_size(np.shape(x), axis) - ddof))


STD = _reduction("ReduceStd", _std, std_vjp, std_jvp, samples=GROUP_SAMPLES + VAR_SAMPLES[-2:], complex=True)


# -- logsumexp: shifted by the max, finite at +-1000 ------------------------------------------

def _logsumexp(x, *, axis=None, keepdims=False):
    x = np.asarray(x)
    shift = np.max(x, axis=axis, keepdims=True)
    shift = np.where(np.isfinite(shift), shift, np.zeros_like(shift))  # all -inf: log 0 = -inf
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - shift), axis=axis, keepdims=True)) + shift
    return out if keepdims else np.squeeze(out, axis=normalize_axis(axis, x.ndim))


def logsumexp_vjp(g, ans, x, *, axis=None, keepdims=False):
    # d logsumexp = softmax(x) = exp(x - ans) <= 1: never overflows
    return unreduce(g, np.shape(x), axis, keepdims) * dnp.exp(x - primal_keepdims(ans, np.shape(x), axis, keepdims))


def logsumexp_jvp(dx, ans, x, *, axis=None, keepdims=False):
    return dnp.sum(dx * dnp.exp(x - primal_keepdims(ans, np.shape(x), axis, keepdims)), axis=axis, keepdims=keepdims)


def _sample_huge(rng):
    x = rng.choice([-1000.0, 1000.0], (3, 4)) + rng.standard_normal((3, 4))
    return (x,), {"axis": -1}


LOGSUMEXP = _reduction("ReduceLogSumExp", _logsumexp, logsumexp_vjp, logsumexp_jvp,
                       samples=REDUCE_SAMPLES + (_sample_huge,))


# -- norm: Euclidean / Frobenius over axis -----------------------------------------------------
# sqrt(sum |x|^2), real for complex x too: d |x| = Re(sum(conj(x) dx)) / |x|, so the cotangent
# of x is Re(g) conj(x) / |x| (JAX's; on reals x / |x|).

def _norm(x, *, axis=None, keepdims=False):
    if np.iscomplexobj(x):  # |z|^2, as np.linalg.norm (np.square(z) would be z^2)
        return np.sqrt(np.sum(np.square(x.real) + np.square(x.imag), axis=axis, keepdims=keepdims))
    return np.sqrt(np.sum(np.square(x), axis=axis, keepdims=keepdims))


def norm_vjp(g, ans, x, *, axis=None, keepdims=False):
    # d |x| = x / |x|; at |x| == 0 we give the subgradient 0 where TF gives NaN
    return unreduce(real_part(g), np.shape(x), axis, keepdims) * div_no_nan(
        conj_part(x), primal_keepdims(ans, np.shape(x), axis, keepdims))


def norm_jvp(dx, ans, x, *, axis=None, keepdims=False):
    return div_no_nan(real_part(dnp.sum(dx * conj_part(x), axis=axis, keepdims=keepdims)), ans)


NORM = _reduction("EuclideanNorm", _norm, norm_vjp, norm_jvp, samples=REDUCE_SAMPLES[:8], complex=True)


# -- not differentiable: boolean and index results --------------------------------------------

def _any(x, *, axis=None, keepdims=False):
    return np.any(x, axis=axis, keepdims=keepdims)


def _all(x, *, axis=None, keepdims=False):
    return np.all(x, axis=axis, keepdims=keepdims)


def _argmax(x, *, axis=None, keepdims=False):
    return np.argmax(x, axis=axis, keepdims=keepdims)


def _argmin(x, *, axis=None, keepdims=False):
    return np.argmin(x, axis=axis, keepdims=keepdims)


def _count_nonzero(x, *, axis=None, keepdims=False):
    return np.count_nonzero(x, axis=axis, keepdims=keepdims)


ARG_SAMPLES = (normal_sample((3, 4)), normal_sample((3, 4), axis=-1, keepdims=True), normal_sample((5,), axis=0))
ANY = _reduction("Any", _any, NOT_DIFFERENTIABLE, NOT_DIFFERENTIABLE)
ALL = _reduction("All", _all, NOT_DIFFERENTIABLE, NOT_DIFFERENTIABLE)
ARGMAX = _reduction("ArgMax", _argmax, NOT_DIFFERENTIABLE, NOT_DIFFERENTIABLE, samples=ARG_SAMPLES)
ARGMIN = _reduction("ArgMin", _argmin, NOT_DIFFERENTIABLE, NOT_DIFFERENTIABLE, samples=ARG_SAMPLES)
COUNT_NONZERO = _reduction("CountNonzero", _count_nonzero, NOT_DIFFERENTIABLE, NOT_DIFFERENTIABLE)


# -- the dnp functions: NumPy's names and signatures ------------------------------------------

def canonical_axis(axis):
    """None, an int, or a tuple of ints: one spelling for records and rules."""
    if axis is None:
        return None
    if axis.__class__ is int:
        return axis
    if isinstance(axis, (tuple, list)):
        return tuple(int(a) for a in axis)
    return int(axis)


def _reduce(op, name, x, axis, keepdims, dtype=None, out=None, **unsupported):
    if dtype is not None and not isinstance(x, Traced):  # plain values: NumPy's own dtype= semantics
        refuse_out(name, out, **unsupported)
        return getattr(np, name)(x, axis=axis, dtype=dtype, keepdims=keepdims)
    refuse_out(name, out, **unsupported)
    return op(with_dtype(name, x, dtype), axis=canonical_axis(axis), keepdims=bool(keepdims))


def with_dtype(name, x, dtype):
    """`x` cast for a reduction's `dtype=` (np.sum(x, dtype=np.float64) is the sum of
    x cast to float64, so it is differentiable): a float dtype only, since an integer or
    boolean result drops the derivative."""
    if dtype is None:
        return x
    target = as_numpy_dtype(dtype)
    if target.kind != "f":
        raise TypeError(f"[{name}] dtype={target} on a differentiable value of dtype {dnp.result_dtype(x)} and "
                        f"shape {tuple(dnp.shape(x))}: a {target.kind == 'c' and 'complex' or 'non-float'} result "
                        "has no derivative here. Pass a float dtype (np.float64, np.float32), or reduce "
                        "dnp.stop_gradient(x) if no derivative is meant.")
    return x if dnp.result_dtype(x) == target else dnp.cast(x, target)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """np.sum: `dnp.sum(x, axis=(0, 2), keepdims=True)`; its gradient broadcasts g back."""
    if dtype is None and out is None and initial is None and where is None:  # the common call
        return SUM(a, axis=canonical_axis(axis), keepdims=bool(keepdims))
    return _reduce(SUM, "sum", a, axis, keepdims, dtype, out, initial=initial, where=where)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    return _reduce(MEAN, "mean", a, axis, keepdims, dtype, out, where=where)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """np.prod, with a gradient that is exact where elements are zero (unlike ans / x)."""
    return _reduce(PROD, "prod", a, axis, keepdims, dtype, out, initial=initial, where=where)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """np.max; tied maxima share the gradient evenly, as TF's reduce_max."""
    return _reduce(MAX, "max", a, axis, keepdims, None, out, initial=initial, where=where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """np.min; tied minima share the gradient evenly, as TF's reduce_min."""
    return _reduce(MIN, "min", a, axis, keepdims, None, out, initial=initial, where=where)


amax, amin = max, min


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    refuse_out("var", out, where=where, mean=mean)
    ddof = ddof if correction is None else correction
    if dtype is not None and not isinstance(a, Traced):  # plain values: NumPy's own dtype= semantics
        return np.var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    return VAR(with_dtype("var", a, dtype), axis=canonical_axis(axis), keepdims=bool(keepdims), ddof=int(ddof))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    """np.std; a constant group (std 0) gets gradient 0 where TF gives NaN."""
    refuse_out("std", out, where=where, mean=mean)
    ddof = ddof if correction is None else correction
    if dtype is not None and not isinstance(a, Traced):  # plain values: NumPy's own dtype= semantics
        return np.std(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    return STD(with_dtype("std", a, dtype), axis=canonical_axis(axis), keepdims=bool(keepdims), ddof=int(ddof))


def logsumexp(a, axis=None, keepdims=False):
    """log(sum(exp(a))) over `axis`, computed stably (scipy.special.logsumexp without `b`).

    >>> float(logsumexp(np.array([1000.0, 1000.0])))  # doctest: +ELLIPSIS
    1000.693...
    """
    return LOGSUMEXP(a, axis=canonical_axis(axis), keepdims=bool(keepdims))


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """np.linalg.norm for the Euclidean / Frobenius norm (ord None, 2 on vectors, 'fro').

    Unlike np.linalg.norm, any `axis` tuple is accepted (the norm of the flattened group).
    The gradient at an all-zero group is 0 (a subgradient); TF's tf.norm gives NaN there.
    """
    two_axes = axis is not None and not isinstance(axis, (int, np.integer)) and len(axis) == 2
    if not (ord is None or ord == "fro" and (two_axes or axis is None and np.ndim(x) == 2)
            or ord == 2 and (not two_axes and (axis is not None or np.ndim(x) == 1))):
        raise NotImplementedError(f"[norm] ord={ord!r} for axis={axis!r} on a tensor of shape "
                                  f"{tuple(np.shape(x))} is not supported: only the Euclidean "
                                  "(ord=None, ord=2 on vectors) and Frobenius norms are. "
                                  "Compose other norms from dnp.abs, dnp.max and dnp.sum.")
    return NORM(x, axis=canonical_axis(axis), keepdims=bool(keepdims))


def any(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    return _reduce(ANY, "any", a, axis, keepdims, None, out, where=where)


def all(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    return _reduce(ALL, "all", a, axis, keepdims, None, out, where=where)


def argmax(a, axis=None, out=None, *, keepdims=False):
    refuse_out("argmax", out)
    return ARGMAX(a, axis=None if axis is None else int(axis), keepdims=bool(keepdims))


def argmin(a, axis=None, out=None, *, keepdims=False):
    refuse_out("argmin", out)
    return ARGMIN(a, axis=None if axis is None else int(axis), keepdims=bool(keepdims))


def count_nonzero(a, axis=None, *, keepdims=False):
    return COUNT_NONZERO(a, axis=canonical_axis(axis), keepdims=bool(keepdims))


def refuse_out(name, out, **unsupported):
    if out is not None:
        raise TypeError(f"[{name}] out= is not supported on differentiable values: results are "
                        "immutable. Assign the returned value instead.")
    for key, value in unsupported.items():
        if value is not None:
            raise TypeError(f"[{name}] {key}= is not supported on differentiable values. "
                            f"Select the elements first (e.g. with dnp.where) and reduce those.")

dnp.export(globals(), {np.linalg.norm: norm})
