"""TF-compatible exception types (`dualtape.errors.InvalidArgumentError`, ...)."""


class OpError(Exception):
    """Base of the errors an op raises while running, as `tf.errors.OpError`."""


class InvalidArgumentError(OpError, ValueError):
    """An op got arguments of the wrong dtype or shape."""
