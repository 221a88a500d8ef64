"""NumPy's array methods on `Tensor`, `Variable`, `Dual` (and vmap's and sparsity's values): each is a spelling of a dnp call.

`x.sum(axis=0)` is `dnp.sum(x, axis=0)`, `x.T` is `dnp.transpose(x)`, `x.reshape(2, 3)` is
`dnp.reshape(x, (2, 3))`: every mode (tapes, accumulators, dual numbers, the functional API)
records them as those registry ops, so no method carries derivative maths of its own.
Arguments follow NumPy's methods (`axis`, `keepdims`, `dtype`, `ddof`, `order`), so code
written for ndarrays runs unchanged on traced values.

Where TF's tensor API and NumPy's disagree, TF wins on tensors: `t.shape` is a TensorShape
(a tuple that prints as TF's), `t.dtype` a dualtape DType (`tf.float32`; compare it with
`np.float32` or read `t.dtype.as_numpy_dtype`), printing is TF's. Dual numbers, which only
the functional API's forward mode hands to user code, have NumPy's tuple shape and dtype.

`item()` turns a value into a plain Python number: on a value a functional transform
differentiates it is refused as `float()` is (it would drop the derivative); under a
user's recording GradientTape it is allowed, as `.numpy()` is (an explicit way out, where
`float()` of a recorded value is refused: reverse/tape_escapes.py), and the result is a constant.
"""

import numpy as np

from ..core import dnp
from ..batching import Batched
from ..forward.dual import Dual
from ..sparsity import Pattern
from ..reverse.tensor import Tensor, check_escape, escape_error, plain_value


def _cast(x, dtype):
    """`x` in `dtype` (a NumPy, Python or dualtape dtype), for the `dtype=` of reductions:
    NumPy computes in that dtype, which is the cast followed by the reduction."""
    return x if dtype is None else dnp.cast(x, dtype)


def _where(where):
    """NumPy's methods default `where=True`; dnp's functions take None for "everywhere"."""
    return None if where is True else where


def _sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    return dnp.sum(_cast(self, dtype), axis, None, out, keepdims, initial, _where(where))


def _mean(self, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    return dnp.mean(_cast(self, dtype), axis, None, out, keepdims, where=_where(where))


def _prod(self, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    return dnp.prod(_cast(self, dtype), axis, None, out, keepdims, initial, _where(where))


def _max(self, axis=None, out=None, keepdims=False, initial=None, where=True):
    return dnp.max(self, axis, out, keepdims, initial, _where(where))


def _min(self, axis=None, out=None, keepdims=False, initial=None, where=True):
    return dnp.min(self, axis, out, keepdims, initial, _where(where))


def _var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
         correction=None):
    return dnp.var(_cast(self, dtype), axis, None, out, ddof, keepdims, where=_where(where), mean=mean,
                   correction=correction)


def _std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
         correction=None):
    return dnp.std(_cast(self, dtype), axis, None, out, ddof, keepdims, where=_where(where), mean=mean,
                   correction=correction)


def _cumsum(self, axis=None, dtype=None, out=None):
    return dnp.cumsum(_cast(self, dtype), axis, None, out)


def _any(self, axis=None, out=None, keepdims=False, *, where=True):
    return dnp.any(self, axis, out, keepdims, where=_where(where))


def _all(self, axis=None, out=None, keepdims=False, *, where=True):
    return dnp.all(self, axis, out, keepdims, where=_where(where))


def _reshape(self, *shape, order="C", copy=None, **keywords):
    """`x.reshape(2, 3)`, `x.reshape((2, 3))`, `x.reshape(-1)` and `x.reshape(shape=(2, 3))`."""
    if "shape" in keywords:
        shape = (keywords.pop("shape"),) if not shape else None
    if keywords or not shape:
        raise TypeError(f"[reshape] takes the new shape, as x.reshape(2, 3) or x.reshape((2, 3)); "
                        f"got {shape!r} and keywords {sorted(keywords)}. Pass the shape once.")
    return dnp.reshape(self, shape[0] if len(shape) == 1 else shape, order)


def _ravel(self, order="C"):
    return dnp.ravel(self, order)


def _flatten(self, order="C"):
    return dnp.copy(dnp.ravel(self, order))  # ravel may be a view; flatten always copies


def _squeeze(self, axis=None):
    return dnp.squeeze(self, axis)


def _transpose(self, *axes):
    """`x.transpose()`, `x.transpose(1, 0)`, `x.transpose((1, 0))`, `x.transpose(None)`."""
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return dnp.transpose(self, axes or None)


def _T(self):  # noqa: N802  (NumPy's name)
    return dnp.transpose(self)


def _swapaxes(self, axis1, axis2):
    return dnp.swapaxes(self, axis1, axis2)


def _astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    return dnp.cast(self, dtype)


def _copy(self, order="C"):
    return dnp.copy(self)


def _dot(self, b, out=None):
    return dnp.dot(self, b, out)


def _clip(self, min=None, max=None, out=None, **keywords):  # noqa: A002  (NumPy's names)
    """`x.clip(lo, hi)`, `x.clip(min=lo)`, `x.clip(a_max=hi)`: dnp.clip's rules."""
    min = keywords.pop("a_min", min)  # noqa: A001
    max = keywords.pop("a_max", max)  # noqa: A001
    if out is not None or keywords:
        raise TypeError(f"[clip] out= and {sorted(keywords) or 'ufunc keywords'} are not supported on "
                        "differentiable values. Use the returned value, and dnp.cast for another dtype.")
    return dnp.clip(self, min, max)


def _tensor_item(self, *args):
    if dnp.result_dtype(self).kind in "fc":  # an integer or bool drops a zero derivative, as int()
        check_escape(self, ".item()")
    return plain_value(self).item(*args)


def _dual_item(self, *args):
    if dnp.result_dtype(self).kind in "fc":
        raise escape_error("jvp", ".item()")
    return plain_value(self).item(*args)


def _cumprod(self, axis=None, dtype=None, out=None):
    return dnp.cumprod(_cast(self, dtype), axis)


def _diagonal(self, offset=0, axis1=0, axis2=1):
    return dnp.diagonal(self, offset, axis1, axis2)


def _trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return dnp.trace(_cast(self, dtype), offset, axis1, axis2, None, out)


def _round(self, decimals=0, out=None):
    return dnp.round(self, decimals)


def _conj(self):
    return dnp.conj(self)


def _argsort(self, axis=-1, kind=None, order=None, *, stable=None):
    return dnp.argsort(self, axis, kind, order, stable=stable)


def _argmax(self, axis=None, out=None, *, keepdims=False):
    return dnp.argmax(self, axis, out, keepdims=keepdims)


def _argmin(self, axis=None, out=None, *, keepdims=False):
    return dnp.argmin(self, axis, out, keepdims=keepdims)


def _repeat(self, repeats, axis=None):
    return dnp.repeat(self, repeats, axis)


METHODS = {
    "sum": _sum, "mean": _mean, "prod": _prod, "max": _max, "min": _min, "var": _var, "std": _std,
    "cumsum": _cumsum, "any": _any, "all": _all, "reshape": _reshape, "ravel": _ravel,
    "flatten": _flatten, "squeeze": _squeeze, "transpose": _transpose, "swapaxes": _swapaxes,
    "astype": _astype, "copy": _copy, "dot": _dot, "clip": _clip, "T": property(_T),
    "cumprod": _cumprod, "diagonal": _diagonal, "trace": _trace, "round": _round, "conj": _conj,
    "conjugate": _conj, "real": property(dnp.real), "imag": property(dnp.imag), "argsort": _argsort,
    "argmax": _argmax, "argmin": _argmin, "repeat": _repeat,
}

def _batched_item(self, *args):
    return self.primal  # refused: one value per example (batching/batched.py)


for _cls, _item in ((Tensor, _tensor_item), (Dual, _dual_item), (Batched, _batched_item), (Pattern, Pattern.item)):
    for _name, _method in METHODS.items():
        setattr(_cls, _name, _method)
    _cls.item = _item
