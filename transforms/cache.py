"""Where the transforms keep what they made: on the transformed object itself.

`dt.grad(f)` returns the same object on every call with the same options, and its compiled
specializations with it, so repeated calls are a dict lookup. The cache is a dict in
`f.__dict__`, so it lives exactly as long as `f`: a process that transforms many functions
(benchmarks/check_programs.py) frees each one's generated code with the function. A
module-level dict keyed by the function kept every function and its code forever (issue 13:
a long run grew to 1.8 GB).
"""

ATTRIBUTE = "__dualtape_transforms__"


class _Store(dict):
    """One object's cache; `owner` tells it apart from a copy that functools.wraps made (wraps
    copies the wrapped function's __dict__ into the wrapper, and so this store)."""

    __slots__ = ("owner",)

    def __reduce__(self):  # pickling the function (cloudpickle, by value) carries an empty cache
        return (_Store, ())


def cache_on(owner):
    """The cache dict kept on `owner` (a function, or any object with a __dict__), made on first
    use; a fresh, unkept dict for an object without a __dict__ (the transform refuses it anyway)."""
    attributes = getattr(owner, "__dict__", None)
    if not isinstance(attributes, dict):
        return {}
    store = attributes.get(ATTRIBUTE)
    if store is None or getattr(store, "owner", None) is not owner:
        store = attributes[ATTRIBUTE] = _Store()
        store.owner = owner
    return store
