"""dualtape.transforms: source transformation of Python/NumPy functions (see issue #5)."""
