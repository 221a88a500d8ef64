"""`keras.regularizers`: penalties on weights (`kernel_regularizer=`, `bias_regularizer=`, ...)
and on a layer's outputs (`activity_regularizer=`), added to the loss by `fit` (`model.losses`).

>>> float(dualtape.keras.regularizers.L2(0.5)(dualtape.constant([1.0, 2.0])))
2.5
"""

from ..core import dnp
from ..surface.tf_ops import to_tensor


class Regularizer:
    """Base class: `__call__(x)` returns a scalar penalty."""

    def __call__(self, x):
        return 0.0

    def get_config(self):
        return {}


class L1L2(Regularizer):
    """l1 * sum(|x|) + l2 * sum(x ** 2)."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x):
        x = to_tensor(x)
        penalty = None
        if self.l1:
            penalty = self.l1 * dnp.sum(dnp.abs(x))
        if self.l2:
            term = self.l2 * dnp.sum(dnp.square(x))
            penalty = term if penalty is None else penalty + term
        return penalty if penalty is not None else dnp.sum(x * 0.0)

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    def __init__(self, l1=0.01):
        super().__init__(l1=l1)


class L2(L1L2):
    def __init__(self, l2=0.01):
        super().__init__(l2=l2)


l1, l2, l1_l2 = L1, L2, L1L2
NAMES = {"l1": L1, "l2": L2, "l1_l2": L1L2, "L1": L1, "L2": L2, "L1L2": L1L2}


def get(identifier):
    """A regularizer from a name ('l2'), an instance or a callable; None stays None."""
    if identifier is None or callable(identifier) and not isinstance(identifier, type):
        return identifier
    if isinstance(identifier, str) and identifier in NAMES:
        return NAMES[identifier]()
    raise ValueError(f"[keras.regularizers] unknown regularizer {identifier!r}; use 'l1', 'l2', 'l1_l2', an instance "
                     "such as keras.regularizers.L2(0.01), or a callable weight -> scalar.")


__all__ = ["L1", "L1L2", "L2", "Regularizer", "get", "l1", "l1_l2", "l2"]


def __dir__():
    return sorted(__all__)
