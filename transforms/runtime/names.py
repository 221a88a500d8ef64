"""The names generated code imports from dualtape.transforms.runtime: never reused for variables."""

from .. import runtime

RUNTIME_NAMES = frozenset(k for k in vars(runtime) if not k.startswith("_"))
