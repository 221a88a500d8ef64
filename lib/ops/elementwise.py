"""Elementwise arithmetic: + - * / // % **, negation, abs, sign, rounding, comparisons.

Every op here is elementwise: its rules are written for same-shaped operands and the
engine un-broadcasts VJP results (and broadcasts JVP results) in one place. abs'(0) = 0,
as in TF; rounding and comparisons have no gradient.
"""

import numpy as np

from ..core import dnp
from ..core.registry import LINEAR, NOT_DIFFERENTIABLE, elementwise_op
from ..core.rulekit import abs_cotangent, abs_tangent, log_where_positive, power_slope, zeros_like

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "mod", "remainder",
    "power", "negative", "positive", "abs", "absolute", "sign", "round", "floor", "ceil",
    "stop_gradient", "identity", "copy", "greater", "greater_equal", "less", "less_equal", "equal",
    "not_equal", "logical_and", "logical_or", "logical_not", "isfinite", "isnan",
]


def uniform_samples(name, *ranges):
    """Samples for an elementwise op whose inputs have a range: one (2, 3) array per input,
    each uniform in its (low, high) range, as a `samples=` tuple."""
    def sample(rng):
        return tuple(rng.uniform(lo, hi, (2, 3)) for lo, hi in ranges), {}
    sample.__name__ = sample.__qualname__ = f"_sample_{name}"
    return (sample,)


def complex_samples(name, radius=None, real_low=None, imag_low=None):
    """Complex samples for an elementwise op whose derivative has singular points or branch
    cuts off the real line (a `complex=` tuple): one (2, 3) complex array inside the disc of
    `radius` (arctan's and arcsinh's branch points are at +-i), with real parts above
    `real_low` (angle's cut is the negative real axis), or with imaginary parts of modulus
    above `imag_low` (arccosh's cut is the real axis left of 1)."""
    def sample(rng):
        if radius is not None:
            modulus = radius * np.sqrt(rng.uniform(0.01, 1.0, (2, 3)))
            return (modulus * np.exp(1j * rng.uniform(-np.pi, np.pi, (2, 3))),), {}
        if imag_low is not None:
            imag = rng.uniform(imag_low, 3, (2, 3)) * rng.choice([-1.0, 1.0], (2, 3))
            return (rng.uniform(-3, 3, (2, 3)) + 1j * imag,), {}
        return (rng.uniform(real_low, 3, (2, 3)) + 1j * rng.uniform(-3, 3, (2, 3)),), {}
    sample.__name__ = sample.__qualname__ = f"_sample_complex_{name}"
    return (sample,)


# -- arithmetic ---------------------------------------------------------------------------

def add_vjp_x(g, ans, x, y):
    return g


def add_vjp_y(g, ans, x, y):
    return g


ADD = elementwise_op("AddV2", np.add, vjp=(add_vjp_x, add_vjp_y), jvp=LINEAR, complex=True)


def sub_vjp_y(g, ans, x, y):
    return -g


SUB = elementwise_op("Sub", np.subtract, vjp=(add_vjp_x, sub_vjp_y), jvp=LINEAR, complex=True)


def mul_vjp_x(g, ans, x, y):
    return g * y


def mul_vjp_y(g, ans, x, y):
    return g * x


def mul_jvp_x(dx, ans, x, y):
    return dx * y


def mul_jvp_y(dy, ans, x, y):
    return x * dy


MUL = elementwise_op("Mul", np.multiply, vjp=(mul_vjp_x, mul_vjp_y), jvp=(mul_jvp_x, mul_jvp_y), complex=True)


def div_vjp_x(g, ans, x, y):
    return g / y


def div_vjp_y(g, ans, x, y):
    return g * (-ans / y)  # reuse ans; one pass over g, which may be a batch


def div_jvp_x(dx, ans, x, y):
    return dx / y


def div_jvp_y(dy, ans, x, y):
    return dy * (-ans / y)


DIV = elementwise_op("RealDiv", np.true_divide, vjp=(div_vjp_x, div_vjp_y),
                   jvp=(div_jvp_x, div_jvp_y), domain={"y": "nonzero"}, complex=True)

FLOORDIV = elementwise_op("FloorDiv", np.floor_divide, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE)


def mod_vjp_y(g, ans, x, y):
    return g * -dnp.floor_divide(x, y)


def mod_jvp_x(dx, ans, x, y):
    return dx


def mod_jvp_y(dy, ans, x, y):
    return dy * -dnp.floor_divide(x, y)


MOD = elementwise_op("FloorMod", np.mod, vjp=(add_vjp_x, mod_vjp_y), jvp=(mod_jvp_x, mod_jvp_y),
                   domain={"x": "away_from_multiples_of_y", "y": "nonzero"})


def pow_vjp_x(g, ans, x, y):
    return g * power_slope(x, y)  # 0 at x == y == 0 (x ** 0 is 1 everywhere)


def pow_vjp_y(g, ans, x, y):
    return g * (ans * log_where_positive(x))  # TF: log(x) where x > 0, else 0


def pow_jvp_x(dx, ans, x, y):
    return dx * power_slope(x, y)


def pow_jvp_y(dy, ans, x, y):
    return dy * (ans * log_where_positive(x))


POW = elementwise_op("Pow", np.power, vjp=(pow_vjp_x, pow_vjp_y), jvp=(pow_jvp_x, pow_jvp_y),
                   domain={"x": "positive"}, complex=True)


def neg_vjp(g, ans, x):
    return -g


NEG = elementwise_op("Neg", np.negative, vjp=neg_vjp, jvp=LINEAR, complex=True)


def identity_vjp(g, ans, x):
    return g


def _identity(x):
    return np.array(x, copy=True)


IDENTITY = elementwise_op("Identity", _identity, vjp=identity_vjp, jvp=LINEAR, complex=True)
STOP_GRADIENT = elementwise_op("StopGradient", _identity, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE, complex=True)


def copy(a, order="K", subok=False):
    """np.copy (and `x.copy()`): a new array, with the identity derivative (the Identity op)."""
    return IDENTITY(a)


def abs_vjp(g, ans, x):
    return abs_cotangent(g, x, ans)  # g sign(x) on reals (abs'(0) = 0, as TF); Re(g) conj(z) / |z|


def abs_jvp(dx, ans, x):
    return abs_tangent(dx, x, ans)  # dx sign(x) on reals; Re(conj(z) dz) / |z|


ABS = elementwise_op("Abs", np.abs, vjp=abs_vjp, jvp=abs_jvp, domain={"x": "nonzero"}, complex=True)


def sign_vjp(g, ans, x):
    return zeros_like(g)  # TF: the gradient of Sign is zeros, not None


def sign_jvp(dx, ans, x):
    return zeros_like(dx)


SIGN = elementwise_op("Sign", np.sign, vjp=sign_vjp, jvp=sign_jvp, domain={"x": "nonzero"})
ROUND = elementwise_op("Round", np.round, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE)
FLOOR = elementwise_op("Floor", np.floor, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE)
CEIL = elementwise_op("Ceil", np.ceil, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE)


# -- comparisons and logic: never differentiable -------------------------------------------

def _comparison(name, impl, complex=False):
    """complex: well defined on complex values (equality, finiteness); orderings are not, so
    an ordering of a differentiated complex value is refused."""
    return elementwise_op(name, impl, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE, complex=complex)


GREATER = _comparison("Greater", np.greater)
GREATER_EQUAL = _comparison("GreaterEqual", np.greater_equal)
LESS = _comparison("Less", np.less)
LESS_EQUAL = _comparison("LessEqual", np.less_equal)
EQUAL = _comparison("Equal", np.equal, complex=True)
NOT_EQUAL = _comparison("NotEqual", np.not_equal, complex=True)
LOGICAL_AND = _comparison("LogicalAnd", np.logical_and)
LOGICAL_OR = _comparison("LogicalOr", np.logical_or)
LOGICAL_NOT = _comparison("LogicalNot", np.logical_not)
IS_FINITE = _comparison("IsFinite", np.isfinite, complex=True)
IS_NAN = _comparison("IsNan", np.isnan, complex=True)


# -- the dnp functions: NumPy's names and signatures ---------------------------------------
add, subtract, multiply, divide, floor_divide, mod, power = ADD, SUB, MUL, DIV, FLOORDIV, MOD, POW
true_divide, remainder = DIV, MOD
negative, abs, absolute, sign = NEG, ABS, ABS, SIGN  # noqa: A001
floor, ceil = FLOOR, CEIL
stop_gradient, identity, positive = STOP_GRADIENT, IDENTITY, IDENTITY
greater, greater_equal, less, less_equal = GREATER, GREATER_EQUAL, LESS, LESS_EQUAL
equal, not_equal, logical_and, logical_or, logical_not = EQUAL, NOT_EQUAL, LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT
isfinite, isnan = IS_FINITE, IS_NAN


def round(x, decimals=0):  # noqa: A001
    return ROUND(x) if decimals == 0 else ROUND(x * 10.0 ** decimals) / 10.0 ** decimals

dnp.export(globals())
