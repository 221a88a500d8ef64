"""Long run of the random-program checker: N programs through every mode, then the counts.

    python benchmarks/check_programs.py [N=20000] [--exclude f1,f2] [--features f1,f2] [--seed S] [--show K]

Prints programs checked, checks per mode, wrong numbers, crashes and refusals by construct
(dualtape.testing.Tally), and the K smallest failing programs of each (mode, kind) class.
Hypothesis draws the programs (derandomized by --seed, no shrinking: minimize a failure
with `hypothesis.find(programs(), ...)` or by hand, see docs/testing.md).
"""

import argparse
import signal
import sys
import time
from collections import defaultdict

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from dualtape.testing import Tally, check_modes, programs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("n", nargs="?", type=int, default=20000)
    parser.add_argument("--exclude", default="", help="features to leave out, comma-separated")
    parser.add_argument("--features", default="", help="draw only these features (and what they need), "
                        "comma-separated: focus a run on one construct, e.g. --features svd,matrix_inputs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=1, help="failing programs shown per class")
    args = parser.parse_args(argv)
    tally, failures = Tally(), defaultdict(list)
    exclude = {f for f in args.exclude.split(",") if f}
    features = {f for f in args.features.split(",") if f} or None
    start = time.time()

    @hypothesis_seed(args.seed)
    @settings(max_examples=args.n, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(programs(features=features, exclude=exclude))
    def run(program):
        report = check_modes(program, raise_on_failure=False)
        tally.add(report)
        for mode, kind, message in report.failures:
            failures[(mode, kind)].append((len(program.source), message))
            if len(failures[(mode, kind)]) == 1:  # the first of each class at once (a long run may be stopped)
                print(f"\n=== first {mode} {kind} (program {tally.programs}):\n{message}", file=sys.stderr)
        if tally.programs % 500 == 0:
            print(f"... {tally.programs} programs, {time.time() - start:.0f} s", file=sys.stderr)

    def stop(signum, frame):  # (a background job ignores SIGINT: SIGTERM stops it too)
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        run()
    except KeyboardInterrupt:  # `kill -INT` / `kill -TERM`: stop a long run early, still get its counts
        print("stopped early: the counts below are of the programs checked so far")
    print(f"{tally.summary()}\ntime: {time.time() - start:.0f} s")
    for (mode, kind), found in sorted(failures.items()):
        for _, message in sorted(found)[:args.show]:
            print(f"\n=== {mode} {kind} ({len(found)} programs); the smallest:\n{message}")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
