"""Image primitives. AdjustContrastv2 deliberately has no gradient, as in TF."""

import numpy as np

from ..core.registry import defop


def _adjust_contrast(images, contrast_factor):
    mean = np.mean(images, axis=(-3, -2), keepdims=True)
    return ((images - mean) * contrast_factor + mean).astype(images.dtype)


# No rules: asking a tape for a gradient through it raises LookupError, as in TF.
ADJUST_CONTRAST = defop("AdjustContrastv2", _adjust_contrast)
