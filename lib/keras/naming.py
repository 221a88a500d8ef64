"""Keras' names: automatic layer names ('dense', 'dense_1', ...) and the snake_case rule."""

import collections
import re

name_counts = collections.Counter()


def clear_session():
    """Reset automatic layer names (the next Dense is 'dense' again), as Keras does."""
    name_counts.clear()


def snake_case(name):
    """Keras' layer-name rule: 'Conv2D' -> 'conv2d', 'ReLU' -> 're_lu', 'BatchNormalization' ->
    'batch_normalization'."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def unique_name(base):
    count = name_counts[base]
    name_counts[base] += 1
    return base if count == 0 else f"{base}_{count}"
