"""Elementwise primitives: arithmetic, powers, exponentials, trigonometry, activations.

Every op here is `elementwise=True`: its rules are written for same-shaped operands and
the engine un-broadcasts VJP results (and broadcasts JVP results) in one place. Kinks and
ties follow TF: abs'(0) = 0, relu'(0) = 0, maximum gives a tie to x, minimum to x.
"""

import numpy as np

from .. import numpy_api as dnp
from ..registry import LINEAR, NOT_DIFFERENTIABLE, defop
from ..rulekit import log_where_positive, step, zeros_like

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "mod", "remainder",
    "power", "negative", "positive", "abs", "absolute", "sign", "exp", "log", "log1p", "expm1",
    "sqrt", "square", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
    "arctan2", "sinh", "cosh", "tanh", "sigmoid", "relu", "elu", "softplus", "maximum",
    "minimum", "where", "clip", "round", "floor", "ceil", "stop_gradient", "identity",
    "greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "logical_and",
    "logical_or", "logical_not", "isfinite", "isnan",
]


def _elementwise(name, impl, vjp=None, jvp=None, **kw):
    return defop(name, impl, vjp=vjp, jvp=jvp, elementwise=True, **kw)


# -- arithmetic ---------------------------------------------------------------------------

def add_vjp_x(g, ans, x, y):
    return g


def add_vjp_y(g, ans, x, y):
    return g


ADD = _elementwise("AddV2", np.add, vjp=(add_vjp_x, add_vjp_y), jvp=LINEAR)


def sub_vjp_y(g, ans, x, y):
    return -g


SUB = _elementwise("Sub", np.subtract, vjp=(add_vjp_x, sub_vjp_y), jvp=LINEAR)


def mul_vjp_x(g, ans, x, y):
    return g * y


def mul_vjp_y(g, ans, x, y):
    return g * x


def mul_jvp_x(dx, ans, x, y):
    return dx * y


def mul_jvp_y(dy, ans, x, y):
    return x * dy


MUL = _elementwise("Mul", np.multiply, vjp=(mul_vjp_x, mul_vjp_y), jvp=(mul_jvp_x, mul_jvp_y))


def div_vjp_x(g, ans, x, y):
    return g / y


def div_vjp_y(g, ans, x, y):
    return g * (-ans / y)  # reuse ans; one pass over g, which may be a batch


def div_jvp_x(dx, ans, x, y):
    return dx / y


def div_jvp_y(dy, ans, x, y):
    return dy * (-ans / y)


DIV = _elementwise("RealDiv", np.true_divide, vjp=(div_vjp_x, div_vjp_y),
                   jvp=(div_jvp_x, div_jvp_y), domain={"y": "nonzero"})

FLOORDIV = _elementwise("FloorDiv", np.floor_divide, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE)


def mod_vjp_y(g, ans, x, y):
    return g * -dnp.floor_divide(x, y)


def mod_jvp_x(dx, ans, x, y):
    return dx


def mod_jvp_y(dy, ans, x, y):
    return dy * -dnp.floor_divide(x, y)


MOD = _elementwise("FloorMod", np.mod, vjp=(add_vjp_x, mod_vjp_y), jvp=(mod_jvp_x, mod_jvp_y),
                   domain={"x": "away_from_multiples_of_y", "y": "nonzero"})


def pow_vjp_x(g, ans, x, y):
    return g * (y * dnp.power(x, y - 1))


def pow_vjp_y(g, ans, x, y):
    return g * (ans * log_where_positive(x))  # TF: log(x) where x > 0, else 0


def pow_jvp_x(dx, ans, x, y):
    return dx * (y * dnp.power(x, y - 1))


def pow_jvp_y(dy, ans, x, y):
    return dy * (ans * log_where_positive(x))


POW = _elementwise("Pow", np.power, vjp=(pow_vjp_x, pow_vjp_y), jvp=(pow_jvp_x, pow_jvp_y),
                   domain={"x": "positive"})


def neg_vjp(g, ans, x):
    return -g


NEG = _elementwise("Neg", np.negative, vjp=neg_vjp, jvp=LINEAR)


def identity_vjp(g, ans, x):
    return g


def _identity(x):
    return np.array(x, copy=True)


IDENTITY = _elementwise("Identity", _identity, vjp=identity_vjp, jvp=LINEAR)
STOP_GRADIENT = _elementwise("StopGradient", _identity, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE)


def abs_vjp(g, ans, x):
    return g * dnp.sign(x)  # abs'(0) = 0, as TF


def abs_jvp(dx, ans, x):
    return dx * dnp.sign(x)


ABS = _elementwise("Abs", np.abs, vjp=abs_vjp, jvp=abs_jvp, domain={"x": "nonzero"})


def sign_vjp(g, ans, x):
    return zeros_like(g)  # TF: the gradient of Sign is zeros, not None


def sign_jvp(dx, ans, x):
    return zeros_like(dx)


SIGN = _elementwise("Sign", np.sign, vjp=sign_vjp, jvp=sign_jvp, domain={"x": "nonzero"})
ROUND = _elementwise("Round", np.round, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE)
FLOOR = _elementwise("Floor", np.floor, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE)
CEIL = _elementwise("Ceil", np.ceil, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE)


# -- exponentials and powers -------------------------------------------------------------

def exp_vjp(g, ans, x):
    return g * ans


def exp_jvp(dx, ans, x):
    return dx * ans


EXP = _elementwise("Exp", np.exp, vjp=exp_vjp, jvp=exp_jvp)


def log_vjp(g, ans, x):
    return g / x


def log_jvp(dx, ans, x):
    return dx / x


LOG = _elementwise("Log", np.log, vjp=log_vjp, jvp=log_jvp, domain={"x": "positive"})


def log1p_vjp(g, ans, x):
    return g / (1 + x)


def log1p_jvp(dx, ans, x):
    return dx / (1 + x)


LOG1P = _elementwise("Log1p", np.log1p, vjp=log1p_vjp, jvp=log1p_jvp, domain={"x": "positive"})


def expm1_vjp(g, ans, x):
    return g * (ans + 1)


def expm1_jvp(dx, ans, x):
    return dx * (ans + 1)


EXPM1 = _elementwise("Expm1", np.expm1, vjp=expm1_vjp, jvp=expm1_jvp)


def sqrt_vjp(g, ans, x):
    return g * (0.5 / ans)


def sqrt_jvp(dx, ans, x):
    return dx * (0.5 / ans)


SQRT = _elementwise("Sqrt", np.sqrt, vjp=sqrt_vjp, jvp=sqrt_jvp, domain={"x": "positive"})


def square_vjp(g, ans, x):
    return g * (2 * x)


def square_jvp(dx, ans, x):
    return dx * (2 * x)


SQUARE = _elementwise("Square", np.square, vjp=square_vjp, jvp=square_jvp)


def reciprocal_vjp(g, ans, x):
    return g * (-ans * ans)


def reciprocal_jvp(dx, ans, x):
    return dx * (-ans * ans)


RECIPROCAL = _elementwise("Reciprocal", np.reciprocal, vjp=reciprocal_vjp, jvp=reciprocal_jvp,
                          domain={"x": "nonzero"})


# -- trigonometric and hyperbolic --------------------------------------------------------

def sin_vjp(g, ans, x):
    return g * dnp.cos(x)


def sin_jvp(dx, ans, x):
    return dx * dnp.cos(x)


SIN = _elementwise("Sin", np.sin, vjp=sin_vjp, jvp=sin_jvp)


def cos_vjp(g, ans, x):
    return g * -dnp.sin(x)


def cos_jvp(dx, ans, x):
    return dx * -dnp.sin(x)


COS = _elementwise("Cos", np.cos, vjp=cos_vjp, jvp=cos_jvp)


def tan_vjp(g, ans, x):
    return g * (1 + ans * ans)


def tan_jvp(dx, ans, x):
    return dx * (1 + ans * ans)


TAN = _elementwise("Tan", np.tan, vjp=tan_vjp, jvp=tan_jvp, domain={"x": "unit"})


def asin_vjp(g, ans, x):
    return g / dnp.sqrt(1 - x * x)


def asin_jvp(dx, ans, x):
    return dx / dnp.sqrt(1 - x * x)


ASIN = _elementwise("Asin", np.arcsin, vjp=asin_vjp, jvp=asin_jvp, domain={"x": "unit"})


def acos_vjp(g, ans, x):
    return g / -dnp.sqrt(1 - x * x)


def acos_jvp(dx, ans, x):
    return dx / -dnp.sqrt(1 - x * x)


ACOS = _elementwise("Acos", np.arccos, vjp=acos_vjp, jvp=acos_jvp, domain={"x": "unit"})


def atan_vjp(g, ans, x):
    return g / (1 + x * x)


def atan_jvp(dx, ans, x):
    return dx / (1 + x * x)


ATAN = _elementwise("Atan", np.arctan, vjp=atan_vjp, jvp=atan_jvp)


def atan2_vjp_y(g, ans, y, x):
    return g * (x / (x * x + y * y))


def atan2_vjp_x(g, ans, y, x):
    return g * (-y / (x * x + y * y))


def atan2_jvp_y(dy, ans, y, x):
    return dy * (x / (x * x + y * y))


def atan2_jvp_x(dx, ans, y, x):
    return dx * (-y / (x * x + y * y))


ATAN2 = _elementwise("Atan2", np.arctan2, vjp=(atan2_vjp_y, atan2_vjp_x),
                     jvp=(atan2_jvp_y, atan2_jvp_x), domain={"x": "nonzero", "y": "nonzero"})


def sinh_vjp(g, ans, x):
    return g * dnp.cosh(x)


def sinh_jvp(dx, ans, x):
    return dx * dnp.cosh(x)


SINH = _elementwise("Sinh", np.sinh, vjp=sinh_vjp, jvp=sinh_jvp)


def cosh_vjp(g, ans, x):
    return g * dnp.sinh(x)


def cosh_jvp(dx, ans, x):
    return dx * dnp.sinh(x)


COSH = _elementwise("Cosh", np.cosh, vjp=cosh_vjp, jvp=cosh_jvp)


def tanh_vjp(g, ans, x):
    return g * (1 - ans * ans)  # d tanh = 1 - tanh^2: reuse ans


def tanh_jvp(dx, ans, x):
    return dx * (1 - ans * ans)


TANH = _elementwise("Tanh", np.tanh, vjp=tanh_vjp, jvp=tanh_jvp)


# -- activations ----------------------------------------------------------------------------

def _sigmoid(x):
    return np.exp(-np.logaddexp(0, -x))  # never overflows: stable at +-1000


def sigmoid_vjp(g, ans, x):
    return g * (ans * (1 - ans))


def sigmoid_jvp(dx, ans, x):
    return dx * (ans * (1 - ans))


SIGMOID = _elementwise("Sigmoid", _sigmoid, vjp=sigmoid_vjp, jvp=sigmoid_jvp)


def _relu(x):
    return np.maximum(x, 0)


def relu_vjp(g, ans, x):
    return g * step(x)  # relu'(0) = 0, as TF


def relu_jvp(dx, ans, x):
    return dx * step(x)


RELU = _elementwise("Relu", _relu, vjp=relu_vjp, jvp=relu_jvp, domain={"x": "nonzero"})


def _elu(x):
    return np.where(x > 0, x, np.expm1(np.minimum(x, 0)))


def elu_vjp(g, ans, x):
    return g * dnp.where(x > 0, 1, ans + 1)


def elu_jvp(dx, ans, x):
    return dx * dnp.where(x > 0, 1, ans + 1)


ELU = _elementwise("Elu", _elu, vjp=elu_vjp, jvp=elu_jvp, domain={"x": "nonzero"})


def _softplus(x):
    return np.logaddexp(0, x)


def softplus_vjp(g, ans, x):
    return g * dnp.sigmoid(x)


def softplus_jvp(dx, ans, x):
    return dx * dnp.sigmoid(x)


SOFTPLUS = _elementwise("Softplus", _softplus, vjp=softplus_vjp, jvp=softplus_jvp)


def maximum_vjp_x(g, ans, x, y):
    return g * (x >= y)  # TF: a tie sends the whole gradient to x


def maximum_vjp_y(g, ans, x, y):
    return g * (x < y)


def maximum_jvp_x(dx, ans, x, y):
    return dx * (x >= y)


def maximum_jvp_y(dy, ans, x, y):
    return dy * (x < y)


MAXIMUM = _elementwise("Maximum", np.maximum, vjp=(maximum_vjp_x, maximum_vjp_y),
                       jvp=(maximum_jvp_x, maximum_jvp_y), domain={"x": "no_ties"})


def minimum_vjp_x(g, ans, x, y):
    return g * (x <= y)  # TF: a tie sends the whole gradient to x


def minimum_vjp_y(g, ans, x, y):
    return g * (x > y)


def minimum_jvp_x(dx, ans, x, y):
    return dx * (x <= y)


def minimum_jvp_y(dy, ans, x, y):
    return dy * (x > y)


MINIMUM = _elementwise("Minimum", np.minimum, vjp=(minimum_vjp_x, minimum_vjp_y),
                       jvp=(minimum_jvp_x, minimum_jvp_y), domain={"x": "no_ties"})


def where_vjp_x(g, ans, condition, x, y):
    return dnp.where(condition, g, zeros_like(g))


def where_vjp_y(g, ans, condition, x, y):
    return dnp.where(condition, zeros_like(g), g)


def where_jvp_x(dx, ans, condition, x, y):
    return dnp.where(condition, dx, zeros_like(dx))


def where_jvp_y(dy, ans, condition, x, y):
    return dnp.where(condition, zeros_like(dy), dy)


WHERE = _elementwise("SelectV2", np.where, vjp=(None, where_vjp_x, where_vjp_y),
                     jvp=(None, where_jvp_x, where_jvp_y), nondiff_argnums=(0,),
                     domain={"condition": "bool"})


def clip_vjp_x(g, ans, x, lo, hi):
    return g * ((x >= lo) & (x <= hi))  # TF: the bounds themselves pass the gradient to x


def clip_vjp_lo(g, ans, x, lo, hi):
    return g * (x < lo)


def clip_vjp_hi(g, ans, x, lo, hi):
    return g * (x > hi)


def clip_jvp_x(dx, ans, x, lo, hi):
    return dx * ((x >= lo) & (x <= hi))


def clip_jvp_lo(dlo, ans, x, lo, hi):
    return dlo * (x < lo)


def clip_jvp_hi(dhi, ans, x, lo, hi):
    return dhi * (x > hi)


def _clip(x, lo, hi):
    return np.minimum(np.maximum(x, lo), hi)


CLIP = _elementwise("ClipByValue", _clip, vjp=(clip_vjp_x, clip_vjp_lo, clip_vjp_hi),
                    jvp=(clip_jvp_x, clip_jvp_lo, clip_jvp_hi),
                    domain={"lo": "below_hi", "x": "no_ties"})


# -- comparisons and logic: never differentiable -------------------------------------------

def _comparison(name, impl):
    return _elementwise(name, impl, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE)


GREATER = _comparison("Greater", np.greater)
GREATER_EQUAL = _comparison("GreaterEqual", np.greater_equal)
LESS = _comparison("Less", np.less)
LESS_EQUAL = _comparison("LessEqual", np.less_equal)
EQUAL = _comparison("Equal", np.equal)
NOT_EQUAL = _comparison("NotEqual", np.not_equal)
LOGICAL_AND = _comparison("LogicalAnd", np.logical_and)
LOGICAL_OR = _comparison("LogicalOr", np.logical_or)
LOGICAL_NOT = _comparison("LogicalNot", np.logical_not)
IS_FINITE = _comparison("IsFinite", np.isfinite)
IS_NAN = _comparison("IsNan", np.isnan)


# -- the dnp functions: NumPy's names and signatures ---------------------------------------
add, subtract, multiply, divide, floor_divide, mod, power = ADD, SUB, MUL, DIV, FLOORDIV, MOD, POW
true_divide, remainder = DIV, MOD
negative, abs, absolute, sign = NEG, ABS, ABS, SIGN  # noqa: A001
exp, log, log1p, expm1, sqrt, square, reciprocal = EXP, LOG, LOG1P, EXPM1, SQRT, SQUARE, RECIPROCAL
sin, cos, tan, arcsin, arccos, arctan, arctan2 = SIN, COS, TAN, ASIN, ACOS, ATAN, ATAN2
sinh, cosh, tanh, sigmoid, relu, elu, softplus = SINH, COSH, TANH, SIGMOID, RELU, ELU, SOFTPLUS
maximum, minimum, floor, ceil = MAXIMUM, MINIMUM, FLOOR, CEIL
stop_gradient, identity, positive = STOP_GRADIENT, IDENTITY, IDENTITY
greater, greater_equal, less, less_equal = GREATER, GREATER_EQUAL, LESS, LESS_EQUAL
equal, not_equal, logical_and, logical_or, logical_not = EQUAL, NOT_EQUAL, LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT
isfinite, isnan = IS_FINITE, IS_NAN


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


def round(x, decimals=0):  # noqa: A001
    return ROUND(x) if decimals == 0 else ROUND(x * 10.0 ** decimals) / 10.0 ** decimals
