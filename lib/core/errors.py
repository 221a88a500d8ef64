"""TF-compatible exception types (`dualtape.errors.InvalidArgumentError`, ...)."""


class OpError(Exception):
    """Base of the errors an op raises while running, as `tf.errors.OpError`."""


class InvalidArgumentError(OpError, ValueError):
    """An op got arguments of the wrong dtype or shape."""


class RefusalError(TypeError):
    """A documented refusal: a traced value leaving dualtape (float(), np.asarray, a write
    into a NumPy array) or a write into a tensor or dual number. A TypeError, as before; the
    subclass lets tools (dualtape.testing.check_modes) tell it from a crash."""
