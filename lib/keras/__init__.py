"""`dualtape.keras` (as `tf.keras`, Keras 3 semantics, eager): models, layers, losses,
metrics, initializers, optimizers and callbacks, so a TF training script runs unchanged.

- `layers`: the layers (`layers/`, one module per kind) and `Layer`
- `models`: `Model` (subclassed or functional), `Sequential`, and `fit`/`evaluate`/`predict`
- `graph`: the symbolic `KerasTensor`s of the functional API
- `losses`, `metrics`, `initializers`, `activations`, `regularizers`: by class, function or name
- `optimizers`: `dualtape.optimizers` (Keras' classes); `callbacks`; `datasets` (local cache)
- `utils`, `backend`, `progbar`, `naming` (automatic layer names)
"""

from . import activations, backend, callbacks, datasets, initializers, layers, losses, metrics, regularizers, utils
from .layers import Input
from . import models
from .models import Model, Sequential
from .. import optimizers


__all__ = ["Input", "Model", "Sequential", "activations", "backend", "callbacks", "datasets", "initializers",
           "layers", "losses", "metrics", "models", "optimizers", "regularizers", "utils"]


def __dir__():
    return sorted(__all__)
