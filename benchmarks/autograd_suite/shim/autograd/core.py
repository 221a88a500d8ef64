"""autograd.core on dualtape: `make_vjp` and `make_jvp` (the two operators every other one is
built from, as in autograd) run dualtape's reverse mode (a tape: `dualtape.vjp`) and forward
mode (dual numbers: `dualtape.jvp`); `vspace` is a small re-implementation of autograd's vector
spaces (shape, dtype and the arithmetic test_util needs), over plain and traced values."""

import numpy as np

import dualtape
from dualtape.core.duck import primal_of
from dualtape.core.traced import Traced


def make_vjp(fun, x):
    """(vjp, ans): dualtape's reverse mode at x, with autograd's calling convention."""
    ans, pullback = dualtape.vjp(fun, x)

    def vjp(g):
        return pullback(g)[0]

    return vjp, ans


def make_jvp(fun, x):
    """jvp(v) -> (ans, tangent): dualtape's forward mode (dual numbers) at x."""

    def jvp(v):
        return dualtape.jvp(fun, (x,), (v,))

    return jvp


class VSpace:
    """What autograd's test_util and differential operators ask of a vector space."""

    iscomplex = False

    def __eq__(self, other):
        return type(self) is type(other) and self.key() == other.key()

    def __hash__(self):
        return hash((type(self), self.key()))

    def add(self, x, y):
        return self._add(x, y)

    def scalar_mul(self, x, a):
        return self._scalar_mul(x, a)

    def inner_prod(self, x, y):
        return self._inner_prod(x, y)

    def __repr__(self):
        return f"{type(self).__name__}_{self.key()}"


class ArrayVSpace(VSpace):
    def __init__(self, value):
        value = primal_of(value)
        dtype = np.result_type(value)
        if dtype.kind in "biu":
            dtype = np.dtype(np.float64)
        self.shape = np.shape(value)
        self.dtype = dtype
        self.iscomplex = dtype.kind == "c"

    def key(self):
        return (self.shape, self.dtype)

    @property
    def size(self):
        return int(np.prod(self.shape))

    @property
    def ndim(self):
        return len(self.shape)

    def zeros(self):
        return np.zeros(self.shape, dtype=self.dtype)

    def ones(self):
        return np.ones(self.shape, dtype=self.dtype)

    def standard_basis(self):
        for idxs in np.ndindex(*self.shape):
            vect = np.zeros(self.shape, dtype=self.dtype)
            vect[idxs] = 1
            yield vect

    def randn(self):
        out = np.random.randn(*self.shape)
        if self.iscomplex:
            out = out + 1j * np.random.randn(*self.shape)
        return np.array(out).astype(self.dtype)

    def _add(self, x, y):
        return x + y

    def _scalar_mul(self, x, a):
        return x * a

    def _inner_prod(self, x, y):
        if self.iscomplex:
            return np.real(np.dot(np.conj(np.ravel(x)), np.ravel(y)))
        return np.dot(np.ravel(x), np.ravel(y))

    def covector(self, x):
        return np.conj(x) if self.iscomplex else x


class ContainerVSpace(VSpace):
    def __init__(self, value):
        self.kind = type(value) if not isinstance(value, dict) else dict
        items = value.items() if isinstance(value, dict) else enumerate(value)
        self.shape = {k: vspace(v) for k, v in items} if isinstance(value, dict) else \
            [vspace(v) for v in value]

    def key(self):
        if isinstance(self.shape, dict):
            return (self.kind, tuple(sorted((k, s.key()) for k, s in self.shape.items())))
        return (self.kind, tuple(s.key() for s in self.shape))

    def _pairs(self):
        return self.shape.items() if isinstance(self.shape, dict) else enumerate(self.shape)

    def _build(self, pairs):
        if isinstance(self.shape, dict):
            return dict(pairs)
        values = [v for _, v in pairs]
        return self.kind(values) if self.kind in (tuple, list) else tuple(values)

    @property
    def size(self):
        return sum(s.size for _, s in self._pairs())

    @property
    def iscomplex(self):
        return any(s.iscomplex for _, s in self._pairs())

    def zeros(self):
        return self._build([(k, s.zeros()) for k, s in self._pairs()])

    def ones(self):
        return self._build([(k, s.ones()) for k, s in self._pairs()])

    def randn(self):
        return self._build([(k, s.randn()) for k, s in self._pairs()])

    def standard_basis(self):
        for k, s in self._pairs():
            for basis in s.standard_basis():
                yield self._build([(j, basis if j == k else t.zeros()) for j, t in self._pairs()])

    def _add(self, x, y):
        return self._build([(k, s.add(x[k], y[k])) for k, s in self._pairs()])

    def _scalar_mul(self, x, a):
        return self._build([(k, s.scalar_mul(x[k], a)) for k, s in self._pairs()])

    def _inner_prod(self, x, y):
        return sum(s.inner_prod(x[k], y[k]) for k, s in self._pairs())

    def covector(self, x):
        return self._build([(k, s.covector(x[k])) for k, s in self._pairs()])


def vspace(value):
    """The vector space of a value: arrays, numbers and traced values; tuples, lists, dicts."""
    if isinstance(value, (tuple, list, dict)):
        return ContainerVSpace(value)
    if isinstance(value, (Traced, np.ndarray, np.generic, float, int, complex, bool)):
        return ArrayVSpace(value)
    raise TypeError(f"Can't find vector space for value {value} of type {type(value)}. Valid types are "
                    "arrays, numbers, tuples, lists and dicts (autograd shim on dualtape).")


def primitive(fun):
    """autograd.core.primitive: dualtape.primitive."""
    return dualtape.primitive(fun)


primitive_vjps = {}  # autograd's internal table: no dualtape equivalent (test_logic is out of scope)
