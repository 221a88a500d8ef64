"""Elementwise activations and selections: sigmoid, relu, elu, softplus, max/min, where, clip.

Kinks and ties follow TF: relu'(0) = 0, maximum and minimum give a tie to x, clip passes
the gradient to x at the bounds. The implementations are stable at inputs of +-1000.
"""

import math

import numpy as np

from ..core import dnp
from ..core.registry import elementwise_op
from ..core.rulekit import step, zeros_like

__all__ = ["sigmoid", "relu", "elu", "softplus", "gelu", "gelu_slope", "maximum", "minimum", "where", "clip"]


# -- activations ----------------------------------------------------------------------------

def _sigmoid(x):
    return np.exp(-np.logaddexp(0, -x))  # never overflows: stable at +-1000


def sigmoid_vjp(g, ans, x):
    return g * (ans * (1 - ans))


def sigmoid_jvp(dx, ans, x):
    return dx * (ans * (1 - ans))


SIGMOID = elementwise_op("Sigmoid", _sigmoid, vjp=sigmoid_vjp, jvp=sigmoid_jvp)


def _relu(x):
    return np.maximum(x, 0)


def relu_vjp(g, ans, x):
    return g * step(x)  # relu'(0) = 0, as TF


def relu_jvp(dx, ans, x):
    return dx * step(x)


RELU = elementwise_op("Relu", _relu, vjp=relu_vjp, jvp=relu_jvp, domain={"x": "nonzero"})


def _elu(x):
    # max(x, 0) + expm1(min(x, 0)): the same numbers as where(x > 0, x, expm1(min(x, 0)))
    # (one of the two terms is an exact zero), without np.where's data-dependent branch,
    # which costs 2-3x on a mask of mixed signs
    return np.maximum(x, 0) + np.expm1(np.minimum(x, 0))


# The slope min(ans, 0) + 1 is where(x > 0, 1, ans + 1) without the branch: ans = x > 0
# where x > 0, ans = expm1(x) <= 0 elsewhere. Its derivative in ans is the mask ans <= 0
# (Minimum gives a tie to its first argument), which is where's: x > 0 exactly where ans > 0.

def elu_vjp(g, ans, x):
    return g * (dnp.minimum(ans, 0) + 1)


def elu_jvp(dx, ans, x):
    return dx * (dnp.minimum(ans, 0) + 1)


ELU = elementwise_op("Elu", _elu, vjp=elu_vjp, jvp=elu_jvp, domain={"x": "nonzero"})


def _softplus(x):
    return np.logaddexp(0, x)


def softplus_vjp(g, ans, x):
    return g * dnp.sigmoid(x)


def softplus_jvp(dx, ans, x):
    return dx * dnp.sigmoid(x)


SOFTPLUS = elementwise_op("Softplus", _softplus, vjp=softplus_vjp, jvp=softplus_jvp)


# GELU, exact: x * Phi(x), Phi the standard normal CDF (tf.nn.gelu(approximate=False)). Its slope
# Phi(x) + x phi(x) is an op too, whose own slope phi(x) (2 - x^2) is plain exp arithmetic, so
# every order of derivative is exact (no erf is differentiated numerically).
def _normal_cdf(x):
    x = np.asarray(x)
    try:
        from scipy.special import ndtr  # (SciPy is optional: math.erfc per element otherwise)
    except ImportError:
        return (0.5 * np.frompyfunc(math.erfc, 1, 1)(-x / math.sqrt(2.0))).astype(x.dtype)
    return ndtr(x).astype(x.dtype, copy=False)


def _gelu(x):
    return x * _normal_cdf(x)


def _gelu_slope(x):
    return _normal_cdf(x) + x * np.exp(-0.5 * x * x) * np.asarray(0.3989422804014327, np.result_type(x))


def gelu_vjp(g, ans, x):
    return g * dnp.gelu_slope(x)


def gelu_jvp(dx, ans, x):
    return dx * dnp.gelu_slope(x)


def gelu_slope_vjp(g, ans, x):
    return g * ((2 - x * x) * dnp.exp(-0.5 * x * x) * 0.3989422804014327)


def gelu_slope_jvp(dx, ans, x):
    return dx * ((2 - x * x) * dnp.exp(-0.5 * x * x) * 0.3989422804014327)


GELU = elementwise_op("Gelu", _gelu, vjp=gelu_vjp, jvp=gelu_jvp)
GELU_SLOPE = elementwise_op("GeluGrad", _gelu_slope, vjp=gelu_slope_vjp, jvp=gelu_slope_jvp)


def maximum_vjp_x(g, ans, x, y):
    return g * (x >= y)  # TF: a tie sends the whole gradient to x


def maximum_vjp_y(g, ans, x, y):
    return g * (x < y)


def maximum_jvp_x(dx, ans, x, y):
    return dx * (x >= y)


def maximum_jvp_y(dy, ans, x, y):
    return dy * (x < y)


MAXIMUM = elementwise_op("Maximum", np.maximum, vjp=(maximum_vjp_x, maximum_vjp_y),
                       jvp=(maximum_jvp_x, maximum_jvp_y), domain={"x": "no_ties"})


def minimum_vjp_x(g, ans, x, y):
    return g * (x <= y)  # TF: a tie sends the whole gradient to x


def minimum_vjp_y(g, ans, x, y):
    return g * (x > y)


def minimum_jvp_x(dx, ans, x, y):
    return dx * (x <= y)


def minimum_jvp_y(dy, ans, x, y):
    return dy * (x > y)


MINIMUM = elementwise_op("Minimum", np.minimum, vjp=(minimum_vjp_x, minimum_vjp_y),
                       jvp=(minimum_jvp_x, minimum_jvp_y), domain={"x": "no_ties"})


def where_vjp_x(g, ans, condition, x, y):
    return dnp.where(condition, g, zeros_like(g))


def where_vjp_y(g, ans, condition, x, y):
    return dnp.where(condition, zeros_like(g), g)


def where_jvp_x(dx, ans, condition, x, y):
    return dnp.where(condition, dx, zeros_like(dx))


def where_jvp_y(dy, ans, condition, x, y):
    return dnp.where(condition, zeros_like(dy), dy)


WHERE = elementwise_op("SelectV2", np.where, vjp=(None, where_vjp_x, where_vjp_y),
                     jvp=(None, where_jvp_x, where_jvp_y), nondiff_argnums=(0,),
                     domain={"condition": "bool"}, complex=True)


# Which operand the output follows: x where lo <= x <= hi (TF: the bounds themselves pass the
# gradient to x), lo below it, hi above it; where lo >= hi NumPy's clip is hi everywhere (a
# constant of x: clip(x, a, a) has derivative 0 in x, 1 in a). (Written out in each rule: the
# transformer inlines rules as templates.)
def clip_vjp_x(g, ans, x, lo, hi):
    return g * ((x >= lo) & (x <= hi) & (lo < hi))


def clip_vjp_lo(g, ans, x, lo, hi):
    return g * ((x < lo) & (lo < hi))


def clip_vjp_hi(g, ans, x, lo, hi):
    return g * ((x > hi) | (lo >= hi))


def clip_jvp_x(dx, ans, x, lo, hi):
    return dx * ((x >= lo) & (x <= hi) & (lo < hi))


def clip_jvp_lo(dlo, ans, x, lo, hi):
    return dlo * ((x < lo) & (lo < hi))


def clip_jvp_hi(dhi, ans, x, lo, hi):
    return dhi * ((x > hi) | (lo >= hi))


def _clip(x, lo, hi):
    return np.minimum(np.maximum(x, lo), hi)


CLIP = elementwise_op("ClipByValue", _clip, vjp=(clip_vjp_x, clip_vjp_lo, clip_vjp_hi),
                    jvp=(clip_jvp_x, clip_jvp_lo, clip_jvp_hi),
                    domain={"lo": "below_hi", "x": "no_ties"})


# -- the dnp functions: NumPy's names and signatures ---------------------------------------
sigmoid, relu, elu, softplus, maximum, minimum = SIGMOID, RELU, ELU, SOFTPLUS, MAXIMUM, MINIMUM
gelu, gelu_slope = GELU, GELU_SLOPE


def where(condition, x=None, y=None):
    """np.where(condition, x, y); the one-argument form returns indices (not differentiable)."""
    if x is None and y is None:
        return np.where(np.asarray(condition))
    return WHERE(condition, x, y)


def clip(x, a_min=None, a_max=None):
    """np.clip: gradient flows to x inside [a_min, a_max] (bounds included), else to the bound."""
    lo = -np.inf if a_min is None else a_min
    hi = np.inf if a_max is None else a_max
    return CLIP(x, lo, hi)

dnp.export(globals())
