"""Deterministic names for generated code: adjoints `bx`, versions `x_1`, temporaries `_cond1`.

A name already used in the user's function gets a numeric suffix (`bx_2`); nothing is
random, so golden tests of the emitted source are stable.
"""


class Namer:
    def __init__(self, taken):
        self.taken = set(taken)
        self._adjoints = {}
        self._counts = {}

    def fresh(self, base):
        """`base1`, `base2`, ... for numbered temporaries (`_cond1`), else `base` if free."""
        if base.endswith(("_cond", "_range", "_count", "_i", "_b")):
            k = self._counts.get(base, 0)
            while True:
                k += 1
                name = f"{base}{k}"
                if name not in self.taken:
                    self._counts[base] = k
                    self.taken.add(name)
                    return name
        return self.unique(base)

    def unique(self, base):
        name, k = base, 1
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name

    def adjoint(self, var):
        """The adjoint of `var`: `b` + var, suffixed if the user already uses that name."""
        if var not in self._adjoints:
            self._adjoints[var] = self.unique("b" + var)
        return self._adjoints[var]

    def version(self, var):
        """A fresh name for one more value of `var` inside a recomputed loop body."""
        k = self._counts.get(("v", var), 0)
        while True:
            k += 1
            name = f"{var}_{k}"
            if name not in self.taken:
                self._counts[("v", var)] = k
                self.taken.add(name)
                return name
