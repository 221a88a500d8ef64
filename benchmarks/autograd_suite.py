"""HIPS autograd's own test suite, run against dualtape.

    python benchmarks/autograd_suite.py [test_numpy.py test_scipy.py ...] [--json out.json] [-v]

benchmarks/autograd_suite/tests/ holds autograd's tests/ as they are (MIT; the licence is
benchmarks/autograd_suite/license.txt; commit bff107b of github.com/HIPS/autograd).
benchmarks/autograd_suite/shim/autograd/ is a package named `autograd` that runs them on
dualtape: `autograd.numpy` is NumPy (dualtape records its calls on traced values),
`autograd.scipy` is `dualtape.scipy` (SciPy's own function where dualtape has none), and
autograd's differential operators and test_util (both autograd's code) are built on `make_vjp`,
which is dualtape's reverse mode (`dualtape.vjp`, a tape), and `make_jvp`, dualtape's forward
mode (`dualtape.jvp`, dual numbers). So `check_grads(f, modes=["fwd", "rev"], order=2)` is
strict: forward mode against finite differences, reverse mode by the dot-product test against
them, and, for order 2, the same checks of the jvp and vjp functions themselves (forward over
forward, reverse over reverse), as in autograd.

Each test ends as one of
  passed
  wrong       an AssertionError: a derivative, value or shape differs (the worst kind)
  refused     any other exception: dualtape refused the call (an op without rules, a complex
              input, ...) or the shim lacks something
  out of scope  autograd-internal APIs (benchmarks/autograd_suite/plugin.py, OUT_OF_SCOPE, with
              the reason for each)
and the script prints them per file and in total. pytest runs in a subprocess, with the shim
first on sys.path. Nothing in dualtape's own test suite needs this; tests/test_autograd_suite.py
runs it on three files.
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent / "autograd_suite"
TESTS = HERE / "tests"
KINDS = ("passed", "wrong", "error", "out_of_scope")
HEADINGS = {"passed": "passed", "wrong": "wrong", "error": "refused", "out_of_scope": "out of scope"}


def run(files=(), extra_args=(), timeout=None):
    """Run autograd's tests (all, or `files`) on dualtape: {nodeid: {"outcome", "detail"}}."""
    with tempfile.TemporaryDirectory() as tmp:
        results_path = Path(tmp) / "results.json"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(HERE / "shim"), str(HERE)] +
                                            ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env["AUTOGRAD_SUITE_RESULTS"] = str(results_path)
        targets = [str(TESTS / f) for f in files] if files else [str(TESTS)]
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "plugin",
                   "--rootdir", str(TESTS), "-o", "testpaths=", "-W", "ignore", *extra_args, *targets]
        subprocess.run(command, env=env, cwd=str(TESTS), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=timeout)
        return json.loads(results_path.read_text())


def tally(results):
    """{file: Counter(outcome)} and the total."""
    per_file = collections.defaultdict(collections.Counter)
    for nodeid, result in results.items():
        per_file[nodeid.split("::")[0]][result["outcome"]] += 1
    total = sum(per_file.values(), collections.Counter())
    return dict(sorted(per_file.items())), total


def report(results, verbose=False):
    per_file, total = tally(results)
    lines = [f"{'file':<24}" + "".join(f"{HEADINGS[k]:>14}" for k in KINDS)]
    for name, counts in [*per_file.items(), ("total", total)]:
        lines.append(f"{name:<24}" + "".join(f"{counts[k]:>14}" for k in KINDS))
    in_scope = total["passed"] + total["wrong"] + total["error"]
    lines.append(f"in scope: {in_scope}; passed {total['passed']} "
                 f"({100.0 * total['passed'] / max(in_scope, 1):.1f}%), wrong {total['wrong']}, "
                 f"refused {total['error']}")
    if verbose:
        for kind in ("wrong", "error", "out_of_scope"):
            lines.append(f"\n-- {HEADINGS[kind]} --")
            for nodeid, result in sorted(results.items()):
                if result["outcome"] == kind:
                    lines.append(f"{nodeid}\n    {result['detail'].splitlines()[0] if result['detail'] else ''}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="test files of autograd's suite (default: all)")
    parser.add_argument("--json", help="write every test's outcome and detail here")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the tests not passed, with the error")
    args = parser.parse_args(argv)
    results = run(args.files)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, sort_keys=True))
    print(report(results, args.verbose))


if __name__ == "__main__":
    main()
