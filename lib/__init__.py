"""dualtape: differentiate NumPy code by tape, dual numbers and source transformation.

`import dualtape as tf` runs the TensorFlow autodiff guides: GradientTape, Variable,
constant, custom_gradient, math/nn/linalg functions, Module, layers and keras.optimizers.
"""

import types as _types

from . import dispatch as _dispatch  # noqa: F401  (installs the primitive binder)
from . import numpy_api as dnp
from . import operators as _operators  # noqa: F401  (Tensor operators and NumPy protocols)
from . import errors, image, layers, linalg, math, nest, nn, random  # noqa: A004
from .custom import custom_gradient
from .custom_rules import custom_jvp, custom_vjp
from .primitives import defjvp, defvjp, primitive
from .dtypes import (DType, as_dtype, bool, complex64, complex128, double, float16, float32,  # noqa: A004
                     float64, int8, int16, int32, int64, string, uint8)
from .module import Module
from .registry import REGISTRY, RegisterGradient, defop
from .tape import GradientTape, UnconnectedGradients
from .tensor import Tensor, TensorShape, constant, convert_to_tensor, is_tensor
from .tf_ops import (abs, add, argmax, argmin, broadcast_to, cast, clip_by_norm, clip_by_value,  # noqa: A004
                     concat, cos, cumsum, divide, einsum, equal, exp, expand_dims, eye, fill, gather,
                     greater, identity, less, linspace, log, matmul, maximum, minimum, multiply,
                     negative, norm, one_hot, ones, ones_like, pad, pow, range, rank, reduce_all,
                     reduce_any, reduce_logsumexp, reduce_max, reduce_mean, reduce_min, reduce_prod,
                     reduce_std, reduce_sum, reduce_variance, reshape, round, shape, sigmoid, sign,
                     sin, size, split, sqrt, square, squeeze, stack, stop_gradient, subtract, tanh,
                     tensordot, tile, transpose, where, zeros, zeros_like)
from .variables import Variable
from . import optimizers

keras = _types.SimpleNamespace(layers=layers, optimizers=optimizers,
                               backend=_types.SimpleNamespace(clear_session=layers.clear_session))

__version__ = "0.1.0"
from . import dual as _dual  # noqa: E402,F401  (forward mode: installs the dual-number binder)
from . import array_methods as _array_methods  # noqa: E402,F401  (x.sum(), x.T, ... on tensors and duals)
from . import autodiff  # noqa: E402
from .functional import grad, value_and_grad, jvp, vjp, jacfwd, jacrev, hessian, hvp, linearize  # noqa: E402
from .jacobians import jacobian  # noqa: E402
