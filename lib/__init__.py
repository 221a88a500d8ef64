"""dualtape: differentiate NumPy code by tape, dual numbers and source transformation.

`import dualtape as tf` runs the TensorFlow autodiff guides: GradientTape, Variable,
constant, custom_gradient, math/nn/linalg functions, Module and layers.
"""

from . import dispatch as _dispatch  # noqa: F401  (installs the primitive binder)
from . import numpy_api as dnp
from . import operators as _operators  # noqa: F401  (Tensor operators and NumPy protocols)
from .dtypes import (DType, as_dtype, bool, complex64, complex128, double, float16, float32,  # noqa: A004
                     float64, int8, int16, int32, int64, string, uint8)
from .registry import REGISTRY, RegisterGradient, defop
from .tape import GradientTape, UnconnectedGradients
from .tensor import Tensor, TensorShape, constant, convert_to_tensor, is_tensor
from .variables import Variable
from . import errors

__version__ = "0.1.0"
