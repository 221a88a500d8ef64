"""`tf.data`: an eager `Dataset` for input pipelines (slices, batch, shuffle, map, repeat, ...).

A dataset is a recipe for a Python iterator: each `for element in dataset` runs the chain of
transformations again, as TF does, and yields tensors in the structure of the source (a
tuple stays a tuple, a dict a dict; a list is data, converted to one tensor, as in TF).

Differences from TF: `map` and `filter` run their function eagerly on each element (no
tracing, so Python side effects happen per element); `shuffle` uses NumPy's generator, so
its order is a uniform random one from the same buffer algorithm but not TF's sequence for
the same seed; `prefetch` does nothing (nothing runs ahead); `cache` keeps the first full
pass in memory (a `filename` is ignored).
"""

import itertools as _itertools

import numpy as _np

from ..core import dtypes as _dtypes, nest as _nest
from ..core.registry import Traced as _Traced
from ..reverse.tensor import Tensor as _Tensor, wrap as _wrap
from .function import TensorSpec as _TensorSpec
from . import random as _random

__all__ = ["Dataset", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "experimental"]

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


def _is_structure(x):
    """Tuples, namedtuples and dicts are structure; lists are data, as in tf.data."""
    return isinstance(x, (tuple, dict))


def _map_structure(fn, x):
    if isinstance(x, dict):
        return {k: _map_structure(fn, v) for k, v in x.items()}
    if isinstance(x, tuple):
        parts = [_map_structure(fn, v) for v in x]
        return type(x)(*parts) if hasattr(x, "_fields") else tuple(parts)
    return fn(x)


def _leaves(x):
    if isinstance(x, dict):
        return [leaf for v in x.values() for leaf in _leaves(v)]
    if isinstance(x, tuple):
        return [leaf for v in x for leaf in _leaves(v)]
    return [x]


def _to_array(x):
    if isinstance(x, _Tensor):
        return x.numpy()
    if isinstance(x, _Traced):
        raise TypeError("[tf.data] a dataset element cannot hold a dual number; build datasets from "
                        "values, outside dualtape.jvp.")
    return _dtypes.to_array(x)


def _as_tensor(x):
    return _wrap(_np.array(x))  # a fresh array: the yielded tensor does not alias the dataset's


def _spec_of(x):
    return _map_structure(lambda a: _TensorSpec(a.shape, _dtypes.as_dtype(a.dtype)), x)


def _unbatched_spec(spec):
    return _map_structure(lambda s: _TensorSpec(s.shape[1:], s.dtype), spec)


def _batched_spec(spec, size):
    return _map_structure(lambda s: _TensorSpec((size,) + tuple(s.shape), s.dtype), spec)


def _call(fn, element):
    """Call a map/filter function as TF does: a tuple element is unpacked into arguments."""
    args = _map_structure(_as_tensor, element)
    return fn(*args) if isinstance(element, tuple) and not hasattr(element, "_fields") else fn(args)


class Dataset:
    """A sequence of elements built from data and transformations (see the module doc).

    >>> ds = Dataset.from_tensor_slices(([1.0, 2.0, 3.0], [0, 1, 0])).batch(2)
    >>> [(x.numpy().tolist(), y.numpy().tolist()) for x, y in ds]
    [([1.0, 2.0], [0, 1]), ([3.0], [0])]
    """

    def __init__(self, make_iterator, cardinality, spec):
        self._make_iterator = make_iterator  # () -> iterator over elements of NumPy arrays
        self._cardinality = cardinality
        self._spec = spec  # element_spec, or a function computing it (map's, from its first element)

    # -- sources -----------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """One element per row of the leading axis of every tensor in `tensors` (a tensor,
        tuple or dict, nested); all leading axes must have one length."""
        data = _map_structure(_to_array, tensors)
        leaves = _leaves(data)
        if any(a.ndim == 0 for a in leaves):
            raise ValueError("[Dataset.from_tensor_slices] every component needs a leading axis to slice; got "
                             f"shapes {[a.shape for a in leaves]}. Use Dataset.from_tensors for one element.")
        lengths = {a.shape[0] for a in leaves}
        if len(lengths) > 1:
            raise ValueError(f"[Dataset.from_tensor_slices] the components have leading dimensions "
                             f"{[a.shape[0] for a in leaves]}; they must all be equal (one element per row).")
        n = lengths.pop() if lengths else 0
        return Dataset(lambda: (_map_structure(lambda a: a[i], data) for i in range(n)), n,
                       _unbatched_spec(_spec_of(data)))

    @staticmethod
    def from_tensors(tensors, name=None):
        """A dataset of exactly one element: `tensors` itself."""
        data = _map_structure(_to_array, tensors)
        return Dataset(lambda: iter([data]), 1, _spec_of(data))

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None,
                       name=None):
        """The elements a fresh `generator(*args)` yields on each pass, converted to the dtypes of
        `output_signature` (a tf.TensorSpec per component, in the elements' structure; or TF's
        older output_types / output_shapes) and checked against its shapes, as TF."""
        if output_signature is None:
            if output_types is None:
                raise TypeError("[Dataset.from_generator] pass output_signature= (a tf.TensorSpec per component "
                                "of an element), or output_types= (and output_shapes=).")
            output_signature = _signature(output_types, output_shapes)
        for spec in _leaves(output_signature):
            if not isinstance(spec, _TensorSpec):
                raise TypeError(f"[Dataset.from_generator] output_signature must hold tf.TensorSpec objects, got "
                                f"{type(spec).__name__}.")
        arguments = tuple(args or ())

        def make():
            for value in generator(*arguments):
                yield _conform_element(value, output_signature)

        return Dataset(make, UNKNOWN_CARDINALITY, output_signature)

    @staticmethod
    def range(*args, output_type=_dtypes.int64, name=None):
        """Integers as Python's range(start, stop, step), int64 tensors as in TF."""
        values = range(*args)
        npd = _dtypes.as_numpy_dtype(output_type)
        return Dataset(lambda: (_np.asarray(v, npd) for v in values), len(values), _TensorSpec((), output_type))

    @staticmethod
    def zip(*datasets, name=None):
        """Elements of several datasets side by side, as tuples (or a dict/tuple of datasets)."""
        structure = datasets[0] if len(datasets) == 1 and _is_structure(datasets[0]) else tuple(datasets)
        parts = _leaves(structure)
        counts = [d._cardinality for d in parts]
        finite = [c for c in counts if c >= 0]
        cardinality = min(finite) if finite else (UNKNOWN_CARDINALITY if UNKNOWN_CARDINALITY in counts
                                                  else INFINITE_CARDINALITY)
        if finite and UNKNOWN_CARDINALITY in counts:
            cardinality = UNKNOWN_CARDINALITY

        def make():
            for row in zip(*(iter(d._make_iterator()) for d in parts)):
                flat = iter(row)
                yield _map_structure(lambda _: next(flat), structure)

        return Dataset(make, cardinality, lambda: _map_structure(lambda d: d.element_spec, structure))

    # -- iteration ---------------------------------------------------------------------------
    def __iter__(self):
        for element in self._make_iterator():
            yield _map_structure(_as_tensor, element)

    def as_numpy_iterator(self):
        """The elements as NumPy arrays (a 0-d array becomes a NumPy scalar, as TF's)."""
        for element in self._make_iterator():
            yield _map_structure(lambda a: _np.array(a)[()], element)

    def __len__(self):
        if self._cardinality == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if self._cardinality == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return self._cardinality

    def __bool__(self):
        return True

    def cardinality(self):
        """The number of elements as an int64 tensor; INFINITE_CARDINALITY (-1) or
        UNKNOWN_CARDINALITY (-2) when not known ahead (after filter, for example)."""
        return _wrap(_np.asarray(self._cardinality, _np.int64))

    @property
    def element_spec(self):
        """A TensorSpec per component, in the element's structure (best effort: after `map`,
        read from the first element)."""
        if callable(self._spec):
            self._spec = self._spec()
        return self._spec

    def __repr__(self):
        return f"<Dataset element_spec={self.element_spec}>"

    # -- transformations ---------------------------------------------------------------------
    def _then(self, make, cardinality=None, spec=None):
        return Dataset(make, self._cardinality if cardinality is None else cardinality,
                       self._spec if spec is None else spec)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """`map_func` applied to every element (a tuple element is unpacked into arguments)."""
        def make():
            for element in self._make_iterator():
                out = _call(map_func, element)
                if isinstance(out, list):
                    out = tuple(out)  # TF turns a returned list into a tuple
                yield _map_structure(_to_array, out)

        def spec():
            first = next(iter(make()), None)
            if first is None:
                raise ValueError("[Dataset.element_spec] the dataset is empty, so map's output spec is unknown.")
            return _spec_of(first)

        return self._then(make, spec=spec)

    def filter(self, predicate, name=None):
        """The elements for which `predicate` returns True (a scalar bool)."""
        def make():
            for element in self._make_iterator():
                keep = _to_array(_call(predicate, element))
                if keep.shape != () or keep.dtype != _np.bool_:
                    raise TypeError(f"[Dataset.filter] the predicate must return a scalar bool tensor, got "
                                    f"shape {keep.shape} and dtype {keep.dtype}. Reduce it (tf.reduce_all) "
                                    "or compare (x > 0).")
                if keep:
                    yield element

        return self._then(make, UNKNOWN_CARDINALITY)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        """Consecutive elements stacked along a new leading axis, `batch_size` at a time; the
        last, shorter batch is kept unless `drop_remainder`."""
        batch_size = int(batch_size)
        if batch_size <= 0:
            raise ValueError(f"[Dataset.batch] batch_size must be positive, got {batch_size}.")

        def make():
            iterator = self._make_iterator()
            while True:
                rows = list(_itertools.islice(iterator, batch_size))
                if not rows or (drop_remainder and len(rows) < batch_size):
                    return
                yield _stack(rows)

        n = self._cardinality
        if n >= 0:
            n = n // batch_size if drop_remainder else -(-n // batch_size)
        spec = self._spec
        batched = (lambda: _batched_spec(self.element_spec, batch_size if drop_remainder else None))
        return Dataset(make, n, batched if callable(spec) else batched())

    def unbatch(self, name=None):
        """The rows of every element, one element each (the inverse of batch)."""
        def make():
            for element in self._make_iterator():
                n = _leaves(element)[0].shape[0]
                for i in range(n):
                    yield _map_structure(lambda a: a[i], element)

        return self._then(make, UNKNOWN_CARDINALITY, lambda: _unbatched_spec(self.element_spec))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """Elements in a random order from a buffer of `buffer_size` (TF's algorithm: fill the
        buffer, yield a random one, refill). `buffer_size` >= the dataset's size shuffles
        uniformly. The order differs from TF's for the same seed (NumPy's generator)."""
        buffer_size = int(buffer_size)
        if buffer_size <= 0:
            raise ValueError(f"[Dataset.shuffle] buffer_size must be positive, got {buffer_size}.")
        base = int(_random.generator(None).integers(2**63)) if seed is None else int(seed)
        epochs = _itertools.count()

        def make():
            rng = _np.random.default_rng([base, next(epochs) if reshuffle_each_iteration else 0])
            buffer = []
            for element in self._make_iterator():
                buffer.append(element)
                if len(buffer) == buffer_size:
                    i = int(rng.integers(len(buffer)))
                    buffer[i], buffer[-1] = buffer[-1], buffer[i]
                    yield buffer.pop()
            while buffer:
                i = int(rng.integers(len(buffer)))
                buffer[i], buffer[-1] = buffer[-1], buffer[i]
                yield buffer.pop()

        return self._then(make)

    def repeat(self, count=None, name=None):
        """The dataset `count` times over (forever for None or -1)."""
        count = None if count is None or int(count) < 0 else int(count)

        def make():
            for _ in (_itertools.count() if count is None else range(count)):
                yield from self._make_iterator()

        n = self._cardinality
        if n == 0 or count == 0:
            n = 0
        elif count is None:
            n = INFINITE_CARDINALITY if n != UNKNOWN_CARDINALITY else UNKNOWN_CARDINALITY
        elif n >= 0:
            n = n * count
        return self._then(make, n)

    def take(self, count, name=None):
        """The first `count` elements (all of them for -1)."""
        count = int(count)
        if count < 0:
            return self
        n = self._cardinality
        n = min(n, count) if n >= 0 else (count if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY)
        return self._then(lambda: _itertools.islice(self._make_iterator(), count), n)

    def skip(self, count, name=None):
        """All but the first `count` elements (-1 skips everything)."""
        count = int(count)
        n = self._cardinality
        if count < 0:
            return self._then(lambda: iter(()), 0 if n != INFINITE_CARDINALITY else INFINITE_CARDINALITY)
        n = max(n - count, 0) if n >= 0 else n
        return self._then(lambda: _itertools.islice(self._make_iterator(), count, None), n)

    def prefetch(self, buffer_size, name=None):
        """Does nothing: nothing runs ahead in an eager pipeline."""
        return self

    def cache(self, filename="", name=None):
        """Keep the elements of the first full pass in memory and replay them afterwards."""
        cached = {}

        def make():
            if "pass" in cached:
                yield from cached["pass"]
                return
            seen = []
            for element in self._make_iterator():
                seen.append(element)
                yield element
            cached["pass"] = seen  # only a complete pass is cached

        return self._then(make)

    def concatenate(self, dataset, name=None):
        """This dataset's elements, then `dataset`'s."""
        a, b = self._cardinality, dataset._cardinality
        n = a + b if a >= 0 and b >= 0 else (INFINITE_CARDINALITY if INFINITE_CARDINALITY in (a, b)
                                             else UNKNOWN_CARDINALITY)
        return self._then(lambda: _itertools.chain(self._make_iterator(), dataset._make_iterator()), n)

    def enumerate(self, start=0, name=None):
        """(index, element) pairs, the index an int64 tensor."""
        return self._then(lambda: ((_np.asarray(i, _np.int64), e) for i, e in
                                   enumerate(self._make_iterator(), start)),
                          spec=lambda: (_TensorSpec((), _dtypes.int64), self.element_spec))

    def reduce(self, initial_state, reduce_func, name=None):
        """Fold `reduce_func(state, element)` over the dataset, eagerly."""
        state = initial_state
        for element in self:
            state = reduce_func(state, element)
        return state

    def apply(self, transformation_func):
        return transformation_func(self)


def _signature(types, shapes):
    """TensorSpecs from TF's output_types and output_shapes (a shape is a tuple, not a structure)."""
    if isinstance(types, dict):
        return {k: _signature(t, None if shapes is None else shapes[k]) for k, t in types.items()}
    if isinstance(types, tuple):
        return tuple(_signature(t, None if shapes is None else s) for t, s in
                     zip(types, shapes if shapes is not None else [None] * len(types)))
    return _TensorSpec(None if shapes is None else tuple(shapes), types)


def _conform_element(value, signature):
    """A generated element as arrays of the signature's dtypes, its shapes checked (TF's messages)."""
    if isinstance(signature, dict):
        if not isinstance(value, dict) or set(value) != set(signature):
            raise TypeError(f"[Dataset.from_generator] `generator` yielded an element that did not match the "
                            f"expected structure: expected keys {sorted(signature)}, got {value!r}.")
        return {k: _conform_element(value[k], spec) for k, spec in signature.items()}
    if isinstance(signature, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(signature):
            raise TypeError(f"[Dataset.from_generator] `generator` yielded an element that did not match the "
                            f"expected structure: {len(signature)} components expected, got {value!r}.")
        return tuple(_conform_element(v, spec) for v, spec in zip(value, signature))
    if isinstance(value, (tuple, dict)):
        raise TypeError(f"[Dataset.from_generator] `generator` yielded an element that did not match the "
                        f"expected structure: one tensor ({signature}) expected, got {value!r}.")
    array = _np.asarray(value.numpy() if isinstance(value, _Tensor) else value,
                        _dtypes.as_numpy_dtype(signature.dtype))
    if not signature.is_compatible_with(_wrap(array)):
        raise TypeError(f"[Dataset.from_generator] `generator` yielded an element of shape {array.shape} where "
                        f"an element of shape {tuple(signature.shape)} was expected. Yield values of the declared "
                        "shape, or use None for a dimension that varies.")
    return array


def _stack(rows):
    first = rows[0]
    flat = [_leaves(r) for r in rows]
    stacked = []
    for parts in zip(*flat):
        shapes = {p.shape for p in parts}
        if len(shapes) > 1:
            raise ValueError(f"[Dataset.batch] cannot batch elements of different shapes {sorted(shapes)}. "
                             "Pad them to one shape first (Dataset.padded_batch is not available in dualtape).")
        stacked.append(_np.stack(parts))
    it = iter(stacked)
    return _map_structure(lambda _: next(it), first)


def _cardinality(dataset):
    return dataset.cardinality()


class _Experimental:
    """`tf.data.experimental`: AUTOTUNE, the cardinality constants and `cardinality(ds)`."""

    AUTOTUNE = AUTOTUNE
    INFINITE_CARDINALITY = INFINITE_CARDINALITY
    UNKNOWN_CARDINALITY = UNKNOWN_CARDINALITY
    cardinality = staticmethod(_cardinality)

    def __repr__(self):
        return "<module 'dualtape.data.experimental'>"


experimental = _Experimental()
