"""`keras.backend`: `clear_session`, `epsilon`, `floatx`, `image_data_format`."""

from .naming import clear_session  # noqa: F401
from .losses import EPSILON


def epsilon():
    return EPSILON


def floatx():
    return "float32"


def image_data_format():
    return "channels_last"


def backend():
    return "dualtape"


__all__ = ["backend", "clear_session", "epsilon", "floatx", "image_data_format"]


def __dir__():
    return sorted(__all__)
