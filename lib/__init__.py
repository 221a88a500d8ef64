"""dualtape: differentiate NumPy code by tape, dual numbers and source transformation.

`import dualtape as tf` runs the TensorFlow autodiff guides: GradientTape, Variable,
constant, custom_gradient, math/nn/linalg functions, Module, and tf.keras (models, layers, losses,
metrics, optimizers, fit).
"""

import sys as _sys
import types as _types

# Floors, bottom up (docs/internals.md, "Layout"): core (registry, rulekit, dnp), ops, reverse,
# forward, functional and custom, surface (the TF-style API), testing.
from .core import dnp, errors, nest  # noqa: A004
from .core import dtypes as _dtypes, registry as _registry, rulekit as _rulekit
from . import ops  # noqa: F401  (declares every op, filling dnp)
from .reverse import dispatch as _dispatch  # noqa: F401  (installs the primitive binder)
from .surface import operators as _operators  # noqa: F401  (Tensor operators and NumPy protocols)
from .surface import image, linalg, math, nn, random, signal  # noqa: A004
from .custom.gradient import custom_gradient, grad_pass_through
from .custom.rules import custom_jvp, custom_vjp
from .custom.primitives import defjvp, defvjp, primitive
from .custom.checkpoint import checkpoint, recompute_grad, remat
from .core.dtypes import (DType, as_dtype, bool, complex64, complex128, double, float16, float32,  # noqa: A004
                     float64, int8, int16, int32, int64, string, uint8)
from .surface.module import Module
from .core.registry import REGISTRY, RegisterGradient, defop
from .reverse.tape import GradientTape, UnconnectedGradients
from .reverse.indexed_slices import IndexedSlices
from .reverse.tensor import Tensor, TensorShape, constant, convert_to_tensor, is_tensor
from .surface.tf_ops import (abs, add, argmax, argmin, broadcast_to, cast, clip_by_global_norm, clip_by_norm, clip_by_value,  # noqa: A004
                     concat, cos, cumsum, divide, einsum, equal, exp, expand_dims, eye, fill, gather,
                     greater, identity, less, linspace, log, matmul, maximum, minimum, multiply,
                     negative, norm, one_hot, ones, ones_like, pad, pow, range, rank, reduce_all,
                     reduce_any, reduce_logsumexp, reduce_max, reduce_mean, reduce_min, reduce_prod,
                     reduce_std, reduce_sum, reduce_variance, reshape, round, shape, sigmoid, sign,
                     sin, size, split, sqrt, square, squeeze, stack, stop_gradient, subtract, tanh,
                     tensordot, tile, transpose, vectorized_map, where, zeros, zeros_like)
from .surface.variables import Variable
from .surface.function import TensorSpec, function, numpy_function, py_function
from .surface import config, data
from .surface.control_flow import cond, foldl, foldr, scan, while_loop

newaxis = None  # tf.newaxis: x[:, tf.newaxis]
from . import optimizers

from . import keras  # noqa: E402  (tf.keras: models, layers, losses, metrics, fit)
from .keras import layers  # noqa: E402  (tf.layers, as before: keras' layers)

__version__ = "0.1.0"
from .forward import dual as _dual  # noqa: E402,F401  (forward mode: installs the dual-number binder)
from .surface import array_methods as _array_methods  # noqa: E402,F401  (x.sum(), x.T, ... on tensors and duals)
from .surface import autodiff  # noqa: E402
from .functional import grad, value_and_grad, jvp, vjp, jacfwd, jacrev, hessian, hvp, linearize, jacobian, vmap  # noqa: E402
from .core.nest import register_pytree_node, register_pytree_node_class  # noqa: E402  (JAX-style pytrees)

# Module paths of the flat layout that users import (`import dualtape.math`,
# `from dualtape.registry import defop`): the same module objects under their old names.
for _name, _module in {"math": math, "nn": nn, "linalg": linalg, "image": image, "random": random,
                       "signal": signal, "layers": layers, "autodiff": autodiff, "errors": errors, "nest": nest,
                       "numpy_api": dnp, "registry": _registry, "rulekit": _rulekit, "dtypes": _dtypes}.items():
    _sys.modules[f"{__name__}.{_name}"] = _module
    globals()[_name] = _module
del _name, _module


# TF's sub-namespaces; dualtape's own packages (core, ops, reverse, dnp, layers, transforms, ...)
# stay importable but are not listed by dir(tf), which shows TF's names and the functional API
_TF_NAMESPACES = {"autodiff", "config", "data", "dtypes", "errors", "image", "keras", "linalg", "math", "nest", "nn",
                  "optimizers", "random", "signal"}


def __dir__():
    return sorted(name for name, value in globals().items()
                  if not isinstance(value, _types.ModuleType) or name in _TF_NAMESPACES)
