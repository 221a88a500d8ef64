"""The lookup every module of this shim's autograd.scipy uses: a name from dualtape.scipy's
module first, then from SciPy's own for what dualtape lacks."""


def first_of(*modules):
    """A module-level `__getattr__` that finds a name in the first of `modules` that has it."""
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        for module in modules[:-1]:
            try:
                return getattr(module, name)
            except AttributeError:
                pass
        return getattr(modules[-1], name)
    return __getattr__
