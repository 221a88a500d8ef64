"""Checkpointing long loops: peak memory and time of gradients with and without checkpoints.

Workloads (issue 14 item 2):

- a scalar loop `x = x + h * sin(x)` of 1,000,000 steps (Python floats: the transformer's
  `math.*` specialization), d(final x)/d(x0);
- a loop of 100,000 steps on a length-10 vector, `x = x + h * tanh(w * x)`, d(sum x)/d(x0, w);
- the runtime checkpoint (`dualtape.checkpoint` around blocks of the loop) on a smaller case.

`cases(quick)` gives the harness its timing cases (the floor: the unchecked generated gradient);
`memory(quick)` measures peak traced memory (tracemalloc) of each variant, and
`python benchmarks/wl_checkpoint.py [--quick]` prints both as markdown tables.
"""

import math
import sys
import time
import tracemalloc

import numpy as np

import dualtape
import dualtape.transforms as dt

try:
    from .harness import DUALTAPE, FLOOR, Case, Impl
except ImportError:
    from harness import DUALTAPE, FLOOR, Case, Impl

H = 1e-6


def scalar_loop(x, n):
    for i in range(n):
        x = x + 1e-6 * math.sin(x)
    return x


def vector_loop(x, w, n):
    for i in range(n):
        x = x + 1e-5 * np.tanh(w * x)
    return np.sum(x)


def runtime_loop(x, w, n, block):
    """The vector loop for the runtime modes, in `n / block` blocks (checkpointed or not)."""
    def step(x):
        for _ in range(block):
            x = x + 1e-5 * np.tanh(w * x)
        return x

    return step, n // block


SIZES = {"quick": (2000, 500, 200), "timing": (100_000, 10_000, 20_000), "memory": (1_000_000, 100_000, 20_000)}


def variants(sizes):
    """(case name, {variant: zero-argument gradient function}) for each workload."""
    n_scalar, n_vector, n_runtime = SIZES[sizes]
    x10, w10 = np.linspace(-1.0, 1.0, 10), np.linspace(0.5, 1.5, 10)
    out = []
    scalar = {"transforms.grad (unchecked)": (dt.grad(scalar_loop), None)}
    for spec in ("sqrt", ("binomial", 20), ("binomial", 20, 100)):
        scalar[f"transforms.grad checkpoint={spec!r}"] = (dt.grad(scalar_loop, checkpoint=spec), spec)
    out.append((f"scalar loop, {n_scalar} steps", {k: (lambda g=g: g(0.5, n_scalar)) for k, (g, _) in scalar.items()}))
    vector = {"transforms.grad (unchecked)": dt.grad(vector_loop, wrt=(0, 1)),
              "transforms.grad checkpoint='sqrt'": dt.grad(vector_loop, wrt=(0, 1), checkpoint="sqrt"),
              "transforms.grad checkpoint=('binomial', 20)": dt.grad(vector_loop, wrt=(0, 1),
                                                                    checkpoint=("binomial", 20)),
              "transforms.grad checkpoint=('binomial', 20, 100)": dt.grad(vector_loop, wrt=(0, 1),
                                                                         checkpoint=("binomial", 20, 100))}
    out.append((f"length-10 vector loop, {n_vector} steps",
                {k: (lambda g=g: g(x10, w10, n_vector)) for k, g in vector.items()}))
    block = max(1, math.isqrt(n_runtime))
    n_runtime = block * (n_runtime // block)  # whole blocks

    def runtime(checkpointed):
        def loss(x, w):
            step, blocks = runtime_loop(x, w, n_runtime, block)
            step = dualtape.checkpoint(step) if checkpointed else step
            for _ in range(blocks):
                x = step(x)
            return np.sum(x)
        g = dualtape.grad(loss, argnums=(0, 1))
        return lambda: g(x10, w10)

    out.append((f"length-10 vector loop, {n_runtime} steps, runtime (blocks of {block})",
                {"transforms.grad (unchecked)": lambda: vector["transforms.grad (unchecked)"](x10, w10, n_runtime),
                 "dualtape.grad (unchecked)": runtime(False),
                 "dualtape.grad + dualtape.checkpoint per block": runtime(True)}))
    return out


def cases(quick):
    """Timing cases for run_all.py: the unchecked generated gradient is the floor. The loops are
    10x shorter than in `memory` (run_all times every variant many times)."""
    result = []
    for name, fns in variants("quick" if quick else "timing"):
        impls = []
        for k, (label, fn) in enumerate(fns.items()):
            impls.append(Impl(label, FLOOR if k == 0 else DUALTAPE, (lambda fn=fn: fn)))
        result.append(Case(name, impls, rtol=1e-9, atol=1e-12, description="checkpointing (issue 14)"))
    return result


def measure_time(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure(fn):
    """(peak traced memory in bytes, seconds): the time from a call without tracemalloc (which
    slows allocation down), the peak from a second call under it."""
    seconds = measure_time(fn)
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1], seconds
    finally:
        tracemalloc.stop()


def memory(quick, only=()):
    """Markdown table of peak memory and time of one call of each variant (those whose
    "workload | variant" contains one of `only`, when given)."""
    for _, fns in variants("quick"):  # compile every specialization first, on the small sizes
        for fn in fns.values():
            fn()
    lines = ["| workload | variant | peak memory | time (s) |", "|---|---|---:|---:|"]
    for name, fns in variants("quick" if quick else "memory"):
        for label, fn in fns.items():
            if only and not any(text in f"{name} | {label}" for text in only):
                continue
            peak, seconds = measure(fn)
            lines.append(f"| {name} | {label} | {_bytes(peak)} | {seconds:.2f} |")
            print(lines[-1], file=sys.stderr, flush=True)
    return "\n".join(lines)


def tradeoff(quick):
    """The memory-time curve of the length-10 vector loop's gradient: one point per checkpoint
    setting (none, binomial with s snapshots for several s, sqrt), each the peak traced memory
    and the time of one call (`measure`). For run_all.py's picture (plots.tradeoff)."""
    n = 400 if quick else 20_000
    x10, w10 = np.linspace(-1.0, 1.0, 10), np.linspace(0.5, 1.5, 10)
    settings = [("no checkpoints", None)] + [(f"binomial s={s}", ("binomial", s)) for s in (4, 8, 16, 32, 64, 128)]
    settings.append(("sqrt", "sqrt"))
    expected, points = None, []
    for label, spec in settings:
        g = dt.grad(vector_loop, wrt=(0, 1)) if spec is None else dt.grad(vector_loop, wrt=(0, 1), checkpoint=spec)
        value = g(x10, w10, 50)  # compile the specialization first, on a short loop
        value = g(x10, w10, n)
        if expected is None:
            expected = value
        else:  # the same gradient whatever the checkpoints (values checked, as in every benchmark)
            for a, b in zip(value, expected):
                np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
        peak, seconds = measure(lambda: g(x10, w10, n))
        seconds = sorted([seconds] + [measure_time(lambda: g(x10, w10, n)) for _ in range(2)])[1]  # median of 3
        points.append({"label": label, "peak_bytes": peak, "seconds": seconds})
    points.sort(key=lambda p: p["peak_bytes"])
    return {"title": f"Checkpointing a {n}-step loop on a length-10 vector: memory against time", "points": points}


def _bytes(b):
    return f"{b / 2**20:.1f} MiB" if b >= 2**20 else f"{b / 2**10:.1f} KiB"


if __name__ == "__main__":  # python benchmarks/wl_checkpoint.py [--quick] [--only TEXT]...
    args = sys.argv[1:]
    print(memory("--quick" in args, [args[k + 1] for k, a in enumerate(args) if a == "--only"]))
