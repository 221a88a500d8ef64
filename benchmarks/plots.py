"""The benchmark run's pictures, drawn from its own measurements (never from hand-typed numbers).

- `workloads(records, path)`: every workload's CPU time per call for the best dualtape variant,
  the hand-written floor and each peer's best variant, on a log axis, with the spread over
  rounds as a bar. `records` is what `run_all.py` writes to `results.json`.
- `tradeoff(points, path)`: the checkpointing trade-off of one long loop, peak memory against
  time for each checkpoint setting (`wl_checkpoint.tradeoff` measures the points).

run_all.py calls both after a full run (`--no-plots` skips them); they need matplotlib (the
`docs` extra): without it the run says so and writes the tables only. Run
`python benchmarks/plots.py [results.json]` to redraw from a saved run.
"""

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
PLOTS = HERE.parent / "docs" / "plots"
FAMILIES = [("dualtape", "best dualtape", "#1f77b4", "o"), ("floor", "hand-written NumPy", "#2ca02c", "s"),
            ("torch", "torch eager", "#d62728", "v"), ("autograd", "autograd", "#9467bd", "^"),
            ("jax", "JAX eager", "#8c564b", "<"), ("jax.jit", "JAX jit", "#ff7f0e", "D")]


def best_per_family(record):
    """{family: (median, min, max) in µs per unit} of the fastest timed implementation of each family."""
    best = {}
    for impl in record["impls"]:
        if impl["cpu_us"] is None:
            continue
        family = impl["family"]
        if family not in best or impl["cpu_us"][0] < best[family][0]:
            best[family] = impl["cpu_us"]
    return best


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def workloads(records, path):
    """One row per workload, one marker per family, log-scaled time axis."""
    plt = _pyplot()
    rows = [(r["name"], cells) for r in records if (cells := best_per_family(r))]
    fig, ax = plt.subplots(figsize=(9.5, 0.42 * len(rows) + 1.6))
    offsets = {f: (k - (len(FAMILIES) - 1) / 2) * 0.11 for k, (f, *_) in enumerate(FAMILIES)}
    for family, label, color, marker in FAMILIES:
        ys, xs, lo, hi = [], [], [], []
        for row, (_, cells) in enumerate(rows):
            cell = cells.get(family)
            if cell is None:
                continue
            med, low, high = cell
            ys.append(len(rows) - 1 - row + offsets[family])
            xs.append(med)
            lo.append(med - low)
            hi.append(high - med)
        if xs:
            ax.errorbar(xs, ys, xerr=[lo, hi], fmt=marker, color=color, label=label, markersize=5,
                        capsize=2, linewidth=1)
    ax.set_xscale("log")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([_short(name) for name, _ in reversed(rows)], fontsize=8)
    ax.set_xlabel("CPU µs per call (median over rounds; bars: min–max), log scale")
    ax.grid(axis="x", which="both", alpha=0.25)
    ax.legend(fontsize=7, loc="lower right", framealpha=0.9)
    ax.set_title("Time per call by workload and peer (one core, one thread)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _short(name, width=58):
    return name if len(name) <= width else name[:width - 1] + "…"


def tradeoff(points, path, title):
    """Peak memory (x, log) against time (y) for each checkpoint setting, labelled."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    mem = [p["peak_bytes"] / 2**20 for p in points]
    sec = [p["seconds"] for p in points]
    ax.plot(mem, sec, "-o", color="#1f77b4", markersize=4)  # the points come sorted by memory
    for p, x, y in zip(points, mem, sec):
        ax.annotate(p["label"], (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("peak traced memory of one gradient (MiB, log scale)")
    ax.set_ylabel("seconds per gradient")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.25, which="both")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def draw(data, out=PLOTS):
    """Both pictures from a run's JSON (`{"workloads": [...], "tradeoff": {...}}`); the paths drawn."""
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    drawn = [workloads(data["workloads"], out / "benchmarks.png")]
    if data.get("tradeoff"):
        drawn.append(tradeoff(data["tradeoff"]["points"], out / "checkpoint_tradeoff.png",
                              data["tradeoff"]["title"]))
    return drawn


if __name__ == "__main__":  # python benchmarks/plots.py [results.json]
    source = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else HERE / "results.json")
    for p in draw(json.loads(source.read_text(encoding="utf-8"))):
        print(f"wrote {p}")
