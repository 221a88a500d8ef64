"""`dualtape.image`: the image ops the guides use."""

from ..ops.image import ADJUST_CONTRAST as _ADJUST_CONTRAST
from .tf_ops import output_tensor as _out, to_tensor as _t


def adjust_contrast(images, contrast_factor):
    """(x - mean) * contrast_factor + mean per channel; has no gradient (AdjustContrastv2)."""
    images = _t(images)
    return _out(_ADJUST_CONTRAST(images, _t(contrast_factor, images.dtype)))
