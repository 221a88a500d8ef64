"""How long the transformer takes to write code: this tree against another commit.

Run: python benchmarks/transform_time.py [--against REV] [--programs N] [--rounds R] [--seed S]

The same N random programs (dualtape.testing.programs, drawn once by this tree and written to
files, so both trees read the same code) go through `transforms.grad` (the general source, the
source for the arguments' types, `save`), `transforms.jvp` (general and specialized) and
`transforms.hvp` (each step timed even where an earlier one was refused), in a fresh process
per tree and round. Rounds alternate the trees (ABAB...),
pinned to one core with one BLAS thread (run_all.pin), and each process reports the CPU time
(`time.process_time`) of the transformations alone, not of drawing or importing. Values are
checked: each program's gradient from the generated code must agree between the trees.
`--against REV` checks REV out into a temporary git worktree; each tree is imported through a
temporary folder of links (dualtape -> lib/, dualtape/transforms -> transforms/), ahead of the
editable install. Prints a table: CPU seconds per tree (median over rounds, min-max), by part.
"""

import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

if __name__ == "__main__" and "--child" not in sys.argv:
    from run_all import pin
    PINNING = pin()

import argparse  # noqa: E402
import json  # noqa: E402
import pickle  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

ROOT = HERE.parent
PARTS = ("grad", "grad_for", "save", "jvp", "jvp_for", "hvp")


def draw(n, seed, folder):
    """Write n seeded random programs into `folder` (prog_K.py, and their arguments in args.pkl)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fixed_seed

    from dualtape.testing import programs
    found = []

    @fixed_seed(seed)
    @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(programs())
    def collect(program):
        found.append((program.source, program.name, program.args))

    collect()
    for k, (source, _, _) in enumerate(found):
        (folder / f"prog_{k}.py").write_text(source)
    (folder / "args.pkl").write_bytes(pickle.dumps([(name, args) for _, name, args in found]))
    return len(found)


def link_farm(tree, folder):
    """A folder to put first on sys.path that imports `dualtape` from `tree`'s sources."""
    package = folder / "dualtape"
    package.mkdir(parents=True)
    for entry in (tree / "lib").iterdir():
        (package / entry.name).symlink_to(entry)
    (package / "transforms").symlink_to(tree / "transforms")
    return folder


def child(programs_dir):
    """Transform every program; print {part: CPU seconds, "values": [gradients]} as JSON."""
    import importlib.util
    import time

    import numpy as np

    import dualtape.transforms as dt
    folder = pathlib.Path(programs_dir)
    all_args = pickle.loads((folder / "args.pkl").read_bytes())
    cpu = dict.fromkeys(PARTS, 0.0)
    values = []

    def timed(part, work):
        start = time.process_time()
        try:
            return work()
        finally:
            cpu[part] += time.process_time() - start

    def flat(value):
        if isinstance(value, (tuple, list)):
            return [x for item in value for x in flat(item)]
        return np.asarray(value, dtype=float).ravel().tolist()

    for k, (name, args) in enumerate(all_args):
        spec = importlib.util.spec_from_file_location(f"prog_{k}", folder / f"prog_{k}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # (inspect finds a function's source through its module)
        spec.loader.exec_module(module)
        f = getattr(module, name)
        value = None
        path = folder / f"saved_{os.getpid()}.py"
        made = {}

        def make(kind):
            if kind not in made:
                made[kind] = getattr(dt, kind)(f)
            return made[kind]

        steps = [("grad", lambda: make("grad").source), ("grad_for", lambda: make("grad").source_for(*args)),
                 ("save", lambda: make("grad").save(str(path))), ("jvp", lambda: make("jvp").source),
                 ("jvp_for", lambda: make("jvp").source_for(*args, *args)), ("hvp", lambda: make("hvp").source)]
        for part, work in steps:  # (a refusal costs its time too, and the next steps still run)
            try:
                timed(part, work)
            except Exception:
                pass
        try:
            value = flat(make("grad")(*args))
        except Exception as exc:  # the kind of a refusal is compared
            value = type(exc).__name__
        values.append(value)
    print(json.dumps({"cpu": cpu, "values": values, "file": dt.__file__}))


def run_tree(farm, programs_dir):
    env = dict(os.environ, PYTHONPATH=str(farm))
    command = [sys.executable, str(HERE / "transform_time.py"), "--child", str(programs_dir)]
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=False, cwd=str(programs_dir))
    if out.returncode:
        raise SystemExit(f"the transformation process failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def same_values(a, b):
    import numpy as np
    bad = 0
    for x, y in zip(a, b):
        if isinstance(x, str) or isinstance(y, str) or x is None or y is None:
            bad += x != y
        elif len(x) != len(y) or not np.allclose(x, y, rtol=1e-6, atol=1e-9, equal_nan=True):
            bad += 1
    return bad


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", help="a git revision to compare with (default: this tree alone)")
    parser.add_argument("--programs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="dualtape_transform_time_") as tmp:
        tmp = pathlib.Path(tmp)
        programs_dir = tmp / "programs"
        programs_dir.mkdir()
        n = draw(args.programs, args.seed, programs_dir)
        trees = {"this tree": ROOT}
        if args.against:
            other = tmp / "against"
            subprocess.run(["git", "worktree", "add", "--detach", str(other), args.against], cwd=ROOT,
                           check=True, capture_output=True)
            trees[args.against] = other
        try:
            farms = {name: link_farm(tree, tmp / f"farm_{k}") for k, (name, tree) in enumerate(trees.items())}
            results = {name: [] for name in trees}
            for r in range(args.rounds):
                for name in (list(trees) if r % 2 == 0 else list(reversed(trees))):
                    results[name].append(run_tree(farms[name], programs_dir))
        finally:
            if args.against:
                subprocess.run(["git", "worktree", "remove", "--force", str(tmp / "against")], cwd=ROOT,
                               check=False, capture_output=True)
    print(f"{n} random programs (seed {args.seed}), {args.rounds} rounds per tree, {PINNING}; "
          "CPU seconds, median (min-max) over rounds")
    print("| tree | total | " + " | ".join(PARTS) + " |")
    print("|---|---|" + "---|" * len(PARTS))
    for name, runs in results.items():
        totals = [sum(run["cpu"].values()) for run in runs]
        cells = [f"{statistics.median(totals):.2f} ({min(totals):.2f}-{max(totals):.2f})"]
        cells += [f"{statistics.median(run['cpu'][p] for run in runs):.2f}" for p in PARTS]
        print(f"| {name} | " + " | ".join(cells) + " |")
    if args.against:
        first, second = (results[name][0]["values"] for name in trees)
        bad = same_values(first, second)
        print(f"gradients compared on {len(first)} programs: {bad} differ")
        base = statistics.median(sum(run["cpu"].values()) for run in results[args.against])
        mine = statistics.median(sum(run["cpu"].values()) for run in results["this tree"])
        print(f"this tree / {args.against}: {mine / base:.3f}")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    if "--child" in sys.argv:
        child(sys.argv[sys.argv.index("--child") + 1])
    else:
        sys.exit(main())
