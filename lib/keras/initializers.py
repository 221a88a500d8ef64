"""`keras.initializers`: the starting values of a layer's weights, by class or by name.

An initializer is called with `(shape, dtype)` and returns an array. The variance-scaling
family (Glorot, He, LeCun) reads the fans as Keras does: a kernel of shape `(..., in, out)`
has `fan_in = in * receptive field` and `fan_out = out * receptive field`.
A seeded initializer returns the same values on every call (Keras 3's rule); an unseeded one
draws from `tf.random`'s global generator, so `tf.random.set_seed` makes it reproducible.

>>> dualtape.keras.initializers.get("ones")((2,), "float32")
array([1., 1.], dtype=float32)
"""

import math

import numpy as np

from ..surface import random


def compute_fans(shape):
    """(fan_in, fan_out) of a weight shape, as Keras' `compute_fans`."""
    shape = tuple(int(s) for s in shape)
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = math.prod(shape[:-2])
    return shape[-2] * receptive, shape[-1] * receptive


class Initializer:
    """Base class: `__call__(shape, dtype=None)` returns a NumPy array of `shape`."""

    def __call__(self, shape, dtype=None):
        raise NotImplementedError(f"[{type(self).__name__}] an initializer implements __call__(shape, dtype).")

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _dtype(dtype):
    return np.dtype("float32" if dtype is None else getattr(dtype, "as_numpy_dtype", dtype))


class RandomInitializer(Initializer):
    """An initializer drawing from a generator: a fresh one from `seed`, else the global one."""

    def __init__(self, seed=None):
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise ValueError(f"[{type(self).__name__}] `seed` must be an integer or None, got {seed!r}.")
        self.seed = seed

    def generator(self):
        return random.generator(self.seed)

    def get_config(self):
        return {"seed": self.seed}


class Zeros(Initializer):
    def __call__(self, shape, dtype=None):
        return np.zeros(shape, _dtype(dtype))


class Ones(Initializer):
    def __call__(self, shape, dtype=None):
        return np.ones(shape, _dtype(dtype))


class Constant(Initializer):
    """Every element `value` (a scalar, or an array broadcast to the shape)."""

    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        value = np.asarray(self.value)
        try:
            return np.broadcast_to(value, shape).astype(_dtype(dtype))
        except ValueError:
            raise ValueError(f"[Constant] cannot fill a weight of shape {tuple(shape)} with a value of shape "
                             f"{value.shape}; pass a scalar or an array of that shape.") from None

    def get_config(self):
        return {"value": self.value}


class RandomNormal(RandomInitializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None):
        return self.generator().normal(self.mean, self.stddev, shape).astype(_dtype(dtype))


class RandomUniform(RandomInitializer):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def __call__(self, shape, dtype=None):
        return self.generator().uniform(self.minval, self.maxval, shape).astype(_dtype(dtype))


def truncated_normal(generator, shape, mean, stddev):
    """Normal samples redrawn until within two standard deviations of the mean (TF's rule)."""
    values = generator.standard_normal(shape)
    outside = np.abs(values) > 2
    while outside.any():
        values[outside] = generator.standard_normal(int(outside.sum()))
        outside = np.abs(values) > 2
    return values * stddev + mean


class TruncatedNormal(RandomInitializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None):
        return truncated_normal(self.generator(), shape, self.mean, self.stddev).astype(_dtype(dtype))


class VarianceScaling(RandomInitializer):
    """Samples with variance `scale / n`, n the fan named by `mode` ('fan_in', 'fan_out', 'fan_avg')."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        super().__init__(seed)
        if scale <= 0:
            raise ValueError(f"[VarianceScaling] `scale` must be positive, got {scale}.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"[VarianceScaling] `mode` must be 'fan_in', 'fan_out' or 'fan_avg', got {mode!r}.")
        if distribution not in ("truncated_normal", "untruncated_normal", "uniform"):
            raise ValueError("[VarianceScaling] `distribution` must be 'truncated_normal', "
                             f"'untruncated_normal' or 'uniform', got {distribution!r}.")
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def __call__(self, shape, dtype=None):
        fan_in, fan_out = compute_fans(shape)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[self.mode]
        scale = self.scale / max(1.0, fan)
        if self.distribution == "truncated_normal":
            # 0.8796...: the standard deviation of a unit normal truncated to [-2, 2]
            values = truncated_normal(self.generator(), shape, 0.0, math.sqrt(scale) / 0.87962566103423978)
        elif self.distribution == "untruncated_normal":
            values = self.generator().normal(0.0, math.sqrt(scale), shape)
        else:
            limit = math.sqrt(3.0 * scale)
            values = self.generator().uniform(-limit, limit, shape)
        return values.astype(_dtype(dtype))

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution, "seed": self.seed}


class GlorotUniform(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "uniform", seed)

    def get_config(self):
        return {"seed": self.seed}


class GlorotNormal(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self.seed}


class HeNormal(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(2.0, "fan_in", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self.seed}


class HeUniform(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(2.0, "fan_in", "uniform", seed)

    def get_config(self):
        return {"seed": self.seed}


class LecunNormal(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_in", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self.seed}


class LecunUniform(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_in", "uniform", seed)

    def get_config(self):
        return {"seed": self.seed}


class Identity(Initializer):
    """`gain` times the identity matrix (2-D shapes only)."""

    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None):
        if len(shape) != 2:
            raise ValueError(f"[Identity] the identity initializer needs a 2-D shape, got {tuple(shape)}.")
        return (self.gain * np.eye(*shape)).astype(_dtype(dtype))

    def get_config(self):
        return {"gain": self.gain}


class Orthogonal(RandomInitializer):
    """An orthogonal matrix (the Q of a QR decomposition of normal samples), times `gain`."""

    def __init__(self, gain=1.0, seed=None):
        super().__init__(seed)
        self.gain = gain

    def __call__(self, shape, dtype=None):
        if len(shape) < 2:
            raise ValueError(f"[Orthogonal] needs a shape of rank 2 or more, got {tuple(shape)}.")
        rows, cols = math.prod(shape[:-1]), shape[-1]
        flat = self.generator().standard_normal((max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(flat)
        q = q * np.sign(np.diag(r))  # the sign fix makes Q uniformly distributed
        if rows < cols:
            q = q.T
        return (self.gain * q.reshape(shape)).astype(_dtype(dtype))

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


ALL = {cls.__name__: cls for cls in (Zeros, Ones, Constant, RandomNormal, RandomUniform, TruncatedNormal,
                                     VarianceScaling, GlorotUniform, GlorotNormal, HeNormal, HeUniform,
                                     LecunNormal, LecunUniform, Identity, Orthogonal)}
# Keras' snake_case names ('glorot_uniform', 'he_normal', ...)
NAMES = {"zeros": Zeros, "ones": Ones, "constant": Constant, "random_normal": RandomNormal,
         "random_uniform": RandomUniform, "truncated_normal": TruncatedNormal, "variance_scaling": VarianceScaling,
         "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal, "he_normal": HeNormal,
         "he_uniform": HeUniform, "lecun_normal": LecunNormal, "lecun_uniform": LecunUniform,
         "identity": Identity, "orthogonal": Orthogonal}


def get(identifier):
    """An initializer from a name ('glorot_uniform'), a class name, an instance or a callable."""
    if identifier is None:
        return None
    if isinstance(identifier, Initializer) or callable(identifier) and not isinstance(identifier, type):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if isinstance(identifier, str):
        cls = NAMES.get(identifier) or ALL.get(identifier)
        if cls is not None:
            return cls()
    raise ValueError(f"[keras.initializers] unknown initializer {identifier!r}; use one of {sorted(NAMES)}, "
                     "an Initializer instance or a callable (shape, dtype) -> array.")


__all__ = sorted(ALL) + ["Initializer", "get"]


def __dir__():
    return sorted(__all__)
