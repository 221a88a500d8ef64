"""Hypothesis strategies for gradient tests: arrays, broadcastable shapes, registry inputs.

`inputs_for(op)` draws (args, static) for any registry primitive: elementwise ops from
their rule signature and `domain`, every other op from its `samples`. Re-exported by
`dualtape.testing`; hypothesis is imported only when a strategy is built.
"""

import functools
import inspect

import numpy as np



def arrays(dtype=np.float64, shape=(), low=-3.0, high=3.0):
    """Arrays of `dtype` and `shape` with finite values in [low, high] (no subnormals, no NaN)."""
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return hnp.arrays(dtype, shape, elements=st.booleans())
    if dtype.kind in "iu":
        return hnp.arrays(dtype, shape, elements=st.integers(int(np.ceil(low)), int(np.floor(high))))
    elements = st.floats(low, high, allow_nan=False, allow_infinity=False, allow_subnormal=False)
    return hnp.arrays(np.float64, shape, elements=elements).map(lambda a: a.astype(dtype))


def broadcastable_shapes(n, max_dims=3, max_side=3):
    """n shapes that broadcast together: size-1 axes, missing leading axes and 0-d included."""
    from hypothesis.extra import numpy as hnp
    return hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=max_dims,
                                             min_side=1, max_side=max_side).map(
        lambda b: tuple(tuple(s) for s in b.input_shapes))


def tangents_like(args, argnums):
    """One standard-normal array per argument in `argnums` (None elsewhere), seeded by hypothesis."""
    from hypothesis import strategies as st

    def build(seed):
        rng = np.random.default_rng(seed)
        return [rng.standard_normal(np.shape(a)).astype(a.dtype) if i in argnums else None
                for i, a in enumerate(args)]
    return st.integers(0, 2**32 - 1).map(build)


def cotangent_like(ans):
    """A standard-normal array shaped and typed like the op's output."""
    from hypothesis import strategies as st
    ans = np.asarray(ans)
    return st.integers(0, 2**32 - 1).map(
        lambda seed: np.random.default_rng(seed).standard_normal(ans.shape).astype(ans.dtype))


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def input_names(op):
    """The names of an elementwise op's inputs: its rules' parameters after (g, ans), else impl's.

    None when they cannot be known (variadic rules).
    """
    for rules in (op.vjp, op.jvp):
        for rule in (rules if isinstance(rules, tuple) else (rules,)):
            if callable(rule):
                params = list(inspect.signature(rule).parameters.values())[2:]
                if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
                    return None
                return [p.name for p in params if p.kind in _POSITIONAL]
    nin = getattr(op.impl, "nin", None)  # a NumPy ufunc
    if nin is not None:
        return ["x", "y", "z"][:nin] if nin <= 3 else [f"x{i}" for i in range(nin)]
    try:
        params = inspect.signature(op.impl).parameters.values()
    except (TypeError, ValueError):
        return None
    return [p.name for p in params if p.kind in _POSITIONAL and p.default is p.empty]


def _positive(b):
    return 0.1 + np.abs(b) * (2.9 / 3.0)  # [0.1, 3]


def _nonzero(b):
    return np.where(b >= 0, b * (2.9 / 3.0) + 0.1, b * (2.9 / 3.0) - 0.1)  # 0.1 <= |x| <= 3


def _unit(b):
    return b * 0.3  # |x| <= 0.9 < 1


def _off_multiples(b):
    # Odd multiples of 1/4 (+-0.04): x / y stays >= 0.1 away from integers for |y| in {1/2, 1, 2}.
    whole = np.floor(b)
    return (2 * whole + 1) / 4 + (b - whole - 0.5) * 0.08


def _power_of_two(b):
    return np.where(b >= 0, 1.0, -1.0) * 2.0 ** np.clip(np.round(np.abs(b)) - 1, -1, 1)


_ELEMENT_DOMAINS = {None: lambda b: b, "positive": _positive, "nonzero": _nonzero, "unit": _unit}
_RELATIONAL = ("away_from_multiples_of_y", "no_ties", "below_hi", "bool")
DOMAIN_KEYWORDS = tuple(k for k in _ELEMENT_DOMAINS if k) + _RELATIONAL


def _check_domain(op, names):
    for key, keyword in op.domain.items():
        if key not in names:
            raise ValueError(f"[{op.name}] domain names the input `{key}`, but its inputs are "
                             f"{names}. Use the rule's parameter names.")
        if keyword not in DOMAIN_KEYWORDS:
            raise ValueError(f"[{op.name}] domain keyword {keyword!r} for `{key}` is unknown to "
                             f"dualtape.testing; known: {DOMAIN_KEYWORDS}. Add it to testing.py.")


def _elementwise_inputs(op, names, dtype):
    """Broadcast-compatible arrays honoring `op.domain`; static is always {}."""
    from hypothesis import strategies as st
    _check_domain(op, names)
    domain = op.domain
    n = len(names)
    role = [domain.get(name) for name in names]
    partner = {}  # index of the input a relational keyword refers to
    for i, r in enumerate(role):
        if r == "away_from_multiples_of_y":
            partner[i] = names.index("y") if "y" in names else (i + 1) % n
        elif r == "below_hi":
            partner[i] = names.index("hi") if "hi" in names else i + 1
    divisors = set(partner[i] for i, r in enumerate(role) if r == "away_from_multiples_of_y")
    highs = set(partner[i] for i, r in enumerate(role) if r == "below_hi")
    no_ties = [i for i, r in enumerate(role) if r == "no_ties"]
    if len(no_ties) > 1:
        raise ValueError(f"[{op.name}] no_ties on one input means it never equals the others; "
                         "declare it on one input only.")
    for i, r in enumerate(role):
        if no_ties and i not in no_ties and (r not in (None, "below_hi") or i in divisors):
            raise ValueError(f"[{op.name}] dualtape.testing cannot combine no_ties with {r!r} on "
                             f"`{names[i]}` yet; extend _elementwise_inputs in testing.py.")

    @st.composite
    def draw(draw_):
        shapes = draw_(broadcastable_shapes(n))
        split = draw_(st.floats(-1.0, 1.0)) if highs else 0.0  # below_hi: lo < split < hi
        args = []
        for i, (shape, r) in enumerate(zip(shapes, role)):
            if r == "bool":
                args.append(draw_(arrays(np.bool_, shape), label=names[i]))
                continue
            b = draw_(arrays(np.float64, shape), label=names[i])
            if r == "away_from_multiples_of_y":
                x = _off_multiples(b)
            elif i in divisors:
                x = _power_of_two(b)
            elif r == "below_hi":
                x = split - 0.3 - np.abs(b) * (1.7 / 3.0)
            elif i in highs:
                x = split + 0.3 + np.abs(b) * (1.7 / 3.0)
            elif r == "no_ties":
                x = np.round((b - 0.1) / 0.2) * 0.2 + 0.1  # odd multiples of 0.1 ...
            else:
                x = _ELEMENT_DOMAINS[r](b)
            if no_ties and r != "no_ties":
                x = np.round(x / 0.2) * 0.2  # ... the others even ones: never closer than 0.1
            args.append(np.asarray(x, dtype=dtype))
        return tuple(args), {}
    return draw()


def _sample_inputs(op, dtype):
    from hypothesis import strategies as st

    def build(choice):
        index, seed = choice
        args, static = op.samples[index](np.random.default_rng(seed))
        return tuple(_cast(a, dtype) for a in args), dict(static)
    return st.tuples(st.integers(0, len(op.samples) - 1), st.integers(0, 2**32 - 1)).map(build)


def _cast(a, dtype):
    if isinstance(a, np.generic):
        a = np.asarray(a)
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        return a.astype(dtype)
    return a


@functools.lru_cache(maxsize=None)
def inputs_for(op, dtype=np.float64):
    """A strategy of (args, static) for registry primitive `op`, floats as `dtype`.

    Elementwise ops: arrays of mutually broadcastable shapes, one per input of its rules,
    sampled where `op.domain` allows. Other ops: one of `op.samples`, run on a default_rng
    whose seed hypothesis draws.
    """
    from hypothesis import strategies as st
    dtype = np.dtype(dtype)
    names = input_names(op) if op.elementwise else None
    options = []
    if names is not None:
        options.append(_elementwise_inputs(op, names, dtype))
    if op.samples:
        options.append(_sample_inputs(op, dtype))
    if not options:
        raise ValueError(f"[{op.name}] has no samples and its inputs cannot be generated "
                         "(not elementwise, or variadic). Declare samples=(fn(rng) -> (args, "
                         "static), ...) in its defop.")
    return options[0] if len(options) == 1 else st.one_of(*options)


# -- complex inputs: for ops declared with complex=True ------------------------------------------

def _imaginary_scale(role):
    return 0.3 if role == "unit" else 1.0  # |z| < 1 stays true for "unit" (|x| <= 0.9 too)


@functools.lru_cache(maxsize=None)
def complex_inputs_for(op, dtype=np.complex128):
    """A strategy of (args, static) with complex inputs for an op declared `complex=True`.

    Elementwise ops: the real parts as `inputs_for` draws them (honoring `op.domain`: a
    "positive" input keeps a real part >= 0.1, away from log's and sqrt's branch cut on the
    negative reals), imaginary parts drawn in [-3, 3] (scaled to keep |z| < 1 for "unit");
    with several inputs, a drawn subset of them stays real (a real input meets a complex
    one), never all. Other ops: `op.complex` when it is a tuple of samples (inputs that need
    a structure, as Hermitian matrices), else `op.samples` with an imaginary part added to
    every float array.
    """
    from hypothesis import strategies as st
    dtype = np.dtype(dtype)
    real_dtype = np.finfo(dtype).dtype
    if not op.complex:
        raise ValueError(f"[{op.name}] does not declare complex rules (defop(..., complex=True)); "
                         "dualtape.testing draws complex inputs only for ops that do.")
    if isinstance(op.complex, tuple):
        return st.tuples(st.integers(0, len(op.complex) - 1), st.integers(0, 2**32 - 1)).map(
            lambda choice: _complex_sample(op.complex[choice[0]], choice[1], dtype, given=True))
    names = input_names(op) if op.elementwise else None
    if names is None:
        return st.tuples(st.integers(0, len(op.samples) - 1), st.integers(0, 2**32 - 1)).map(
            lambda choice: _complex_sample(op.samples[choice[0]], choice[1], dtype))
    roles = [op.domain.get(name) for name in names]
    for name, role in zip(names, roles):
        if role not in (None, "positive", "nonzero", "unit", "bool"):
            raise ValueError(f"[{op.name}] domain {role!r} of `{name}` has no complex sampling in "
                             "dualtape.testing; give complex samples (defop(..., complex=(fn, ...))).")

    @st.composite
    def draw(draw_):
        args, static = draw_(inputs_for(op, real_dtype))
        n = len(args)
        floats = [np.asarray(a).dtype.kind == "f" for a in args]
        mask = draw_(st.lists(st.booleans(), min_size=n, max_size=n).filter(
            lambda m: any(c and f for c, f in zip(m, floats)))) if sum(floats) > 1 else floats
        out = []
        for a, role, is_complex, name in zip(args, roles, mask, names):
            if not is_complex or role == "bool":
                out.append(a)
                continue
            b = draw_(arrays(np.float64, np.shape(a)), label=f"imaginary part of {name}")
            out.append(np.asarray(a + 1j * _imaginary_scale(role) * b, dtype=dtype))
        return tuple(out), static
    return draw()


def _complex_sample(sample, seed, dtype, given=False):
    """A sample's (args, static) with complex float arrays: as given (complex samples), or
    with an imaginary part of half the real part's spread added to each float array."""
    rng = np.random.default_rng(seed)
    args, static = sample(rng)
    out = []
    for a in args:
        if isinstance(a, np.generic):
            a = np.asarray(a)
        if isinstance(a, np.ndarray) and a.dtype.kind == "c":
            out.append(a.astype(dtype))
        elif isinstance(a, np.ndarray) and a.dtype.kind == "f" and not given:
            spread = max(float(np.std(a)) if a.size > 1 else float(np.abs(a).max(initial=1.0)), 0.5)
            out.append(np.asarray(a + 0.5j * spread * rng.standard_normal(a.shape), dtype=dtype))
        else:
            out.append(a)
    return tuple(out), dict(static)
