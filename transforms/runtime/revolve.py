"""Checkpointing schedules for long loops: which loop states to keep, which iterations to redo.

Generated code (see transforms/reverse/checkpoint.py) drives a loop of `n` iterations through a
`Checkpoints` object. `forward()` and `backward()` yield actions `(action, lo, hi)`:

- `"save"`: keep the loop state now (it is the state before iteration `lo`);
- `"load"`: make the loop state the one kept for iteration `lo`;
- `"advance"`: run iterations `lo .. hi-1`, saving nothing for the backward sweep;
- `"reverse"`: run iterations `lo .. hi-1` saving their values, then their adjoints, newest first.

Schedules:

- `"sqrt"`: a state every `k ~ sqrt(n)` iterations; the backward sweep redoes each segment
  once. Memory `n/k` states plus `k` iterations' values; one extra forward pass.
- `("binomial", s)` (also `"revolve"`): Griewank's binomial checkpointing with `s` kept states
  besides the loop's entry: `n` up to `C(s+t, s)` iterations cost `t` extra forward passes at
  most. Memory `s + 1` states and one iteration's values: O(log n) for `s ~ log n`.
  `("binomial", s, b)` takes `b` iterations as one step (the values of `b` iterations are kept
  while they are reversed): fewer, longer actions, so less dispatch per iteration.

The schedules are generators: a million-step schedule never exists as a list.
"""

import math

import numpy as np


class _Discard:
    """The stack an `"advance"` runs with: what the forward body pushes is dropped."""

    __slots__ = ()

    def append(self, value):
        pass


def parse_spec(spec, api="transforms.grad"):
    """`checkpoint=` normalized: None, ("sqrt", k or None) or ("binomial", s or None, block or None).
    `True` is "sqrt", an int s the binomial schedule with s kept states."""
    if spec is None or spec is False:
        return None
    parts = (("sqrt",) if spec is True else ("binomial", spec) if _count(spec) is not None
             else (spec,) if isinstance(spec, str) else tuple(spec) if isinstance(spec, (tuple, list)) else (None,))
    kind, arg, block = (parts + (None, None))[:3]
    arg, block = (v if v is None else _count(v) or 0 for v in (arg, block))
    if kind == "revolve":
        kind = "binomial"
    if (kind not in ("sqrt", "binomial") or len(parts) > (3 if kind == "binomial" else 2)
            or any(v is not None and v < 1 for v in (arg, block))):
        raise ValueError(f"[{api}] checkpoint={spec!r} is not a checkpointing schedule.\n  Pass "
                         "checkpoint='sqrt' (or True), ('sqrt', k) for a state every k iterations, 'binomial' or "
                         "('binomial', s) (or the int s) for Griewank's schedule with s kept states (s >= 1), "
                         "('binomial', s, b) to treat b iterations as one step, or None.")
    return (kind, arg) if kind == "sqrt" or block in (None, 1) else (kind, arg, block)


def _count(value):
    """An integer (Python's or NumPy's, not a bool) as an int, else None."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    return None


def binomial(s, t):
    """beta(s, t) = C(s + t, s): the most iterations s states and t repetitions can reverse."""
    return math.comb(s + t, s)


class Checkpoints:
    """One run of a checkpointed loop: its schedule and the loop states kept so far."""

    discard = _Discard()

    def __init__(self, n, spec):
        self.n = int(n)
        self.kind, arg, *block = parse_spec(spec)
        self.block = block[0] if block else 1  # iterations per step of the binomial schedule
        if self.kind == "sqrt":
            self.every = arg or max(1, math.isqrt(max(self.n, 1)))
        else:
            steps = -(-self.n // self.block)
            self.snapshots = arg or max(1, math.ceil(math.log2(max(steps, 2))))
        self.states = {}
        self.max_states = 0  # the most states kept at once (tests and benchmarks read it)

    def save(self, key, values):
        """Keep the loop state before iteration `key` (arrays copied: the loop may write into them)."""
        self.states[key] = tuple(v.copy() if isinstance(v, np.ndarray) else v for v in values)
        self.max_states = max(self.max_states, len(self.states))

    def load(self, key):
        """The state kept for iteration `key`, as fresh copies (it may be loaded again)."""
        state = self.states[key]
        if not any(isinstance(v, np.ndarray) for v in state):
            return state  # floats and ints: immutable, no copy needed
        return tuple(v.copy() if isinstance(v, np.ndarray) else v for v in state)

    def drop(self, key):
        self.states.pop(key, None)

    # -- schedules ------------------------------------------------------------------------------
    def forward(self):
        """The forward sweep: advance through all iterations, saving states on the way."""
        if self.kind == "sqrt":
            for lo in range(0, self.n, self.every):
                yield "save", lo, lo
                yield "advance", lo, min(lo + self.every, self.n)
        else:
            yield "save", 0, 0
            yield "advance", 0, self.n

    def backward(self):
        """The backward sweep: every iteration's adjoint, newest first."""
        if self.kind == "sqrt":
            starts = list(range(0, self.n, self.every))
            for lo in reversed(starts):
                yield "load", lo, lo
                yield "reverse", lo, min(lo + self.every, self.n)
                self.drop(lo)
        elif self.n:
            yield from self._binomial(0, -(-self.n // self.block), self.snapshots)

    def _binomial(self, lo, hi, free):
        """Reverse steps lo..hi-1 (of `block` iterations each), the state before `lo` being kept,
        with `free` more states.

        The recursion (right part with one state fewer, then the left part) runs on an explicit
        stack of tasks, so that each action costs O(1) however deep the schedule is."""
        def at(step):  # a step's first iteration: steps are `block` iterations (the last may be short)
            return min(step * self.block, self.n)

        tasks = [(lo, hi, free)]
        while tasks:
            lo, hi, free = tasks.pop()
            if free is None:  # the right part is done: its first state is not needed any more
                self.drop(at(lo))
                continue
            if hi - lo > 1 and free > 0:
                steps, t = hi - lo, 1
                while binomial(free, t) < steps:
                    t += 1
                # the right part takes at most beta(free-1, t) steps, the left at most beta(free, t-1)
                mid = max(lo + 1, hi - binomial(free - 1, t))
                yield "load", at(lo), at(lo)
                yield "advance", at(lo), at(mid)
                yield "save", at(mid), at(mid)
                tasks += [(lo, mid, free), (mid, None, None), (mid, hi, free - 1)]
                continue
            for last in range(hi - 1, lo - 1, -1):  # no state to spare: redo from lo each time
                yield "load", at(lo), at(lo)
                if last > lo:
                    yield "advance", at(lo), at(last)
                yield "reverse", at(last), at(last + 1)


def checkpoint_schedule(n, spec):
    """The `Checkpoints` of a loop of `n` iterations under schedule `spec` (generated code calls it)."""
    return Checkpoints(n, spec)
