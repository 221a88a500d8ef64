"""`dualtape.math`: TF's math namespace (elementwise ops and reductions)."""

from .tf_ops import (abs, acos, add, argmax, argmin, asin, atan, atan2, ceil, cos, cosh, cumsum,  # noqa: F401,A004
                     divide, equal, exp, expm1, floor, floordiv, floormod, greater, greater_equal,
                     is_finite, is_nan, less, less_equal, log, log1p, logical_and, logical_not,
                     logical_or, maximum, minimum, mod, multiply, negative, not_equal, pow,
                     reciprocal, reduce_all, reduce_any, reduce_logsumexp, reduce_max, reduce_mean,
                     reduce_min, reduce_prod, reduce_std, reduce_sum, reduce_variance, round, sigmoid,
                     sign, sin, sinh, softplus, sqrt, square, subtract, tan, tanh, truediv)
