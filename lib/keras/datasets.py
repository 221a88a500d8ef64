"""`keras.datasets`: mnist, fashion_mnist and cifar10 read from Keras' local cache.

`load_data()` reads the files Keras downloaded before (under `$KERAS_HOME` or `~/.keras`,
in `datasets/`) and returns `(x_train, y_train), (x_test, y_test)` as Keras does. dualtape
never downloads: if a file is missing the error names it and the Keras call that fetches it.
"""

import gzip
import os
import pathlib
import pickle
import types

import numpy as np


def cache_dir():
    return pathlib.Path(os.environ.get("KERAS_HOME", pathlib.Path.home() / ".keras")).expanduser() / "datasets"


def missing(name, path):
    return FileNotFoundError(
        f"[keras.datasets.{name}] {path} is not there, and dualtape does not download. Fetch it once with "
        f"Keras (`keras.datasets.{name}.load_data()` in an environment with TensorFlow/Keras and network), "
        "or copy the file to that path (set KERAS_HOME to use another cache folder).")


def load_mnist(path="mnist.npz"):
    file = cache_dir() / path
    if not file.exists():
        raise missing("mnist", file)
    with np.load(file, allow_pickle=False) as f:
        return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])


def load_fashion_mnist():
    folder = cache_dir() / "fashion-mnist"
    arrays = []
    for name, offset in (("train-labels-idx1-ubyte.gz", 8), ("train-images-idx3-ubyte.gz", 16),
                         ("t10k-labels-idx1-ubyte.gz", 8), ("t10k-images-idx3-ubyte.gz", 16)):
        file = folder / name
        if not file.exists():
            raise missing("fashion_mnist", file)
        with gzip.open(file, "rb") as handle:
            arrays.append(np.frombuffer(handle.read(), np.uint8, offset=offset))
    y_train, x_train, y_test, x_test = arrays
    return (x_train.reshape(len(y_train), 28, 28), y_train), (x_test.reshape(len(y_test), 28, 28), y_test)


class NumpyOnlyUnpickler(pickle.Unpickler):
    """Unpickle NumPy arrays and plain containers only (the CIFAR batches), nothing executable."""

    ALLOWED = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
               ("numpy", "ndarray"), ("numpy", "dtype")}

    def find_class(self, module, name):
        if (module, name) in self.ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"[keras.datasets.cifar10] refusing to load {module}.{name} from a data file.")


def cifar_batch(file):
    with open(file, "rb") as handle:
        batch = NumpyOnlyUnpickler(handle, encoding="bytes").load()
    batch = {key.decode("utf8") if isinstance(key, bytes) else key: value for key, value in batch.items()}
    data = np.asarray(batch["data"]).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    return data, np.asarray(batch["labels"], np.uint8).reshape(-1, 1)


def load_cifar10():
    base = cache_dir()
    candidates = [base / "cifar-10-batches-py-target" / "cifar-10-batches-py",
                  base / "cifar-10-batches-py-target_extracted" / "cifar-10-batches-py",
                  base / "cifar-10-batches-py"]
    folder = next((c for c in candidates if (c / "test_batch").exists()), None)
    if folder is None:
        raise missing("cifar10", candidates[0] / "test_batch")
    parts = [cifar_batch(folder / f"data_batch_{i}") for i in range(1, 6)]
    x_train = np.concatenate([p[0] for p in parts])
    y_train = np.concatenate([p[1] for p in parts])
    return (x_train, y_train), cifar_batch(folder / "test_batch")


mnist = types.SimpleNamespace(load_data=load_mnist)
fashion_mnist = types.SimpleNamespace(load_data=load_fashion_mnist)
cifar10 = types.SimpleNamespace(load_data=load_cifar10)


__all__ = ["cifar10", "fashion_mnist", "mnist"]


def __dir__():
    return sorted(__all__)
