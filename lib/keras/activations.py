"""`keras.activations`: elementwise activation functions on tensors, by function or by name.

>>> dualtape.keras.activations.get("relu")(dualtape.constant([-1.0, 2.0])).numpy()
array([0., 2.], dtype=float32)
"""

from ..core import dnp
from ..surface import nn
from ..surface.tf_ops import cast, to_tensor


def linear(x):
    return to_tensor(x)


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """max(x, 0), with Keras' optional slope below `threshold` and cap at `max_value`."""
    x = to_tensor(x)
    if negative_slope == 0.0 and max_value is None and threshold == 0.0:
        return dnp.relu(x)
    y = dnp.where(x >= threshold, x, negative_slope * (x - threshold))
    return y if max_value is None else dnp.minimum(y, cast(max_value, y.dtype))


def relu6(x):
    return dnp.clip(to_tensor(x), 0.0, 6.0)


def leaky_relu(x, negative_slope=0.2):
    return nn.leaky_relu(to_tensor(x), alpha=negative_slope)


def sigmoid(x):
    return dnp.sigmoid(to_tensor(x))


def hard_sigmoid(x):
    return dnp.clip(to_tensor(x) / 6.0 + 0.5, 0.0, 1.0)


def tanh(x):
    return dnp.tanh(to_tensor(x))


def softmax(x, axis=-1):
    return dnp.softmax(to_tensor(x), axis=axis)


def log_softmax(x, axis=-1):
    return dnp.log_softmax(to_tensor(x), axis=axis)


def elu(x, alpha=1.0):
    x = to_tensor(x)
    return dnp.where(x > 0, x, alpha * dnp.expm1(dnp.minimum(x, 0.0)))


def selu(x):
    return nn.selu(to_tensor(x))


def softplus(x):
    return dnp.softplus(to_tensor(x))


def softsign(x):
    x = to_tensor(x)
    return x / (1.0 + dnp.abs(x))


def silu(x):
    x = to_tensor(x)
    return x * dnp.sigmoid(x)


def gelu(x, approximate=False):
    """x * Phi(x) (the normal CDF); `approximate=True` is the tanh form, as Keras."""
    return nn.gelu(to_tensor(x), approximate=approximate)


def exponential(x):
    return dnp.exp(to_tensor(x))


swish = silu
ALL = {f.__name__: f for f in (linear, relu, relu6, leaky_relu, sigmoid, hard_sigmoid, tanh, softmax,
                               log_softmax, elu, selu, softplus, softsign, silu, gelu, exponential)}
ALL["swish"] = silu


def get(identifier):
    """The activation for a name ('relu'), a callable, or None (linear)."""
    if identifier is None:
        return linear
    if callable(identifier):
        return identifier
    if isinstance(identifier, str) and identifier in ALL:
        return ALL[identifier]
    raise ValueError(f"[keras.activations] unknown activation {identifier!r}; use one of {sorted(ALL)} "
                     "or a callable.")


__all__ = sorted(ALL) + ["get"]


def __dir__():
    return sorted(__all__)
