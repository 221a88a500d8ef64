"""The names generated code imports from dualtape.transforms.runtime: never reused for variables."""

from .. import runtime

# name -> helper: the namespace generated code runs in (codegen/emit.py) and what saved modules copy
RUNTIME_HELPERS = {k: v for k, v in vars(runtime).items() if not k.startswith("_")}
RUNTIME_NAMES = frozenset(RUNTIME_HELPERS)
