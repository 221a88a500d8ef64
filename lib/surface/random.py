"""`dualtape.random`: seeded random tensors (normal, uniform), as `tf.random`."""

import numpy as _np

from ..core import dtypes as _dtypes
from ..core.registry import Traced as _Traced
from ..reverse.tensor import convert_to_tensor as _convert_to_tensor, wrap as _wrap

_generator = [_np.random.default_rng()]


def set_seed(seed):
    """Make every later random op reproducible, as tf.random.set_seed."""
    _generator[0] = _np.random.default_rng(seed)


def generator(seed=None):
    """The global generator, or a fresh one for an op-level `seed`."""
    return _generator[0] if seed is None else _np.random.default_rng(seed)


def _shape(shape):
    if isinstance(shape, (int, _np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    """Samples of N(mean, stddev**2) as a tensor of `shape` (float32 by default).

    A traced mean or stddev (a tensor a tape records) gives TF's samples * stddev + mean,
    differentiable in both, as in TF."""
    npd = _dtypes.as_numpy_dtype(dtype)
    if isinstance(mean, _Traced) or isinstance(stddev, _Traced):
        samples = _wrap(generator(seed).standard_normal(_shape(shape)).astype(npd))
        return samples * _convert_to_tensor(stddev, npd) + _convert_to_tensor(mean, npd)
    values = generator(seed).normal(float(mean), float(stddev), _shape(shape))
    return _wrap(values.astype(npd))


def uniform(shape, minval=0, maxval=None, dtype=_dtypes.float32, seed=None, name=None):
    """Samples of U[minval, maxval) (maxval defaults to 1 for floats), as tf.random.uniform."""
    npd = _dtypes.as_numpy_dtype(dtype)
    if npd.kind in "iu":
        if maxval is None:
            raise ValueError("[random.uniform] integer dtypes need an explicit maxval.")
        values = generator(seed).integers(int(minval), int(maxval), _shape(shape))
    elif isinstance(minval, _Traced) or isinstance(maxval, _Traced):  # TF's rnd * (max - min) + min
        samples = _wrap(generator(seed).uniform(0.0, 1.0, _shape(shape)).astype(npd))
        lo, hi = _convert_to_tensor(minval, npd), _convert_to_tensor(1.0 if maxval is None else maxval, npd)
        return samples * (hi - lo) + lo
    else:
        values = generator(seed).uniform(float(minval), 1.0 if maxval is None else float(maxval),
                                         _shape(shape))
    return _wrap(values.astype(npd))
