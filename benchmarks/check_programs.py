"""Long run of the random-program checker: N programs through every mode, then the counts.

    python benchmarks/check_programs.py [N=20000] [--exclude f1,f2] [--features f1,f2] [--seed S] [--show K]
                                        [--every P] [--live L] [--no-jit]

While it runs, on stderr: a progress line every P programs (default 50) or 30 s (programs so far,
wrong numbers and crashes, elapsed time, an estimate of the time left), and each failing
program as soon as it is found (mode, kind, message with the program's source and inputs: the
first L of each (mode, kind) class in full, default 3, then one line each). At the end: programs
checked, checks per mode, wrong numbers, crashes and refusals by construct
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

from dualtape.testing import ALL_MODES, Tally, check_modes, programs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("n", nargs="?", type=int, default=20000)
    parser.add_argument("--exclude", default="", help="features to leave out, comma-separated")
    parser.add_argument("--features", default="", help="draw only these features (and what they need), "
                        "comma-separated: focus a run on one construct, e.g. --features svd,matrix_inputs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=1, help="failing programs shown per class")
    parser.add_argument("--every", type=int, default=50, help="a progress line every this many programs "
                        "(and at least every 30 s)")
    parser.add_argument("--live", type=int, default=3, help="failing programs printed in full per class as "
                        "they are found (later ones: one line each)")
    parser.add_argument("--no-jit", action="store_true", help="leave out the numba-compiled modes "
                        "(jit.*: compiling takes seconds a program)")
    args = parser.parse_args(argv)
    modes = tuple(m for m in ALL_MODES if not (args.no_jit and m.startswith("jit.")))
    tally, failures = Tally(), defaultdict(list)
    exclude = {f for f in args.exclude.split(",") if f}
    features = {f for f in args.features.split(",") if f} or None
    start = time.time()
    progress = Progress(args.n, args.every, start)

    @hypothesis_seed(args.seed)
    @settings(max_examples=args.n, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(programs(features=features, exclude=exclude))
    def run(program):
        report = check_modes(program, modes=modes, raise_on_failure=False)
        tally.add(report)
        for mode, kind, message in report.failures:
            failures[(mode, kind)].append((len(program.source), message))
            live_failure(mode, kind, message, len(failures[(mode, kind)]), tally.programs, args.live)
        progress.update(tally)

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


def _err(text):
    print(text, file=sys.stderr, flush=True)


def live_failure(mode, kind, message, nth, program, live):
    """A failing program as soon as it is found (a long run may be stopped, or watched): the
    first `live` of its (mode, kind) class in full, later ones as one line with the count."""
    if nth <= live:
        _err(f"\n=== {mode} {kind} #{nth} (program {program}):\n{message}")
    else:
        first = message.splitlines()[0] if message else ""
        _err(f"=== {mode} {kind} #{nth} (program {program}; {live} shown in full): {first[:200]}")


class Progress:
    """A progress line every `every` programs or 30 s, whichever comes first."""

    def __init__(self, total, every, start, seconds=30.0):
        self.total, self.every, self.start, self.seconds = total, max(1, every), start, seconds
        self.last = start

    def update(self, tally):
        now, done = time.time(), tally.programs
        if done % self.every and now - self.last < self.seconds and done != self.total:
            return
        self.last = now
        elapsed = now - self.start
        left = elapsed / done * (self.total - done) if done else float("nan")
        wrong, crashes = sum(tally.wrong.values()), sum(tally.crashes.values())
        _err(f"... {done}/{self.total} programs, {wrong} wrong, {crashes} crashes, {tally.skipped} skipped; "
             f"{_duration(elapsed)} elapsed, about {_duration(left)} left ({elapsed / max(done, 1):.1f} s/program)")


def _duration(seconds):
    if seconds != seconds:  # nan
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"


if __name__ == "__main__":
    sys.exit(main())
