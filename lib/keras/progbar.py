"""Keras' progress line: `3/3 ━━━━━━━━━━━━━━━━━━━━ 0s 18ms/step - accuracy: 0.3750 - loss: 1.1441`.

On a terminal the line is redrawn after each step (bold count, green bar, as Keras draws
it); elsewhere (a log file, a notebook capture, a test) only the finished line of each epoch
is printed, in plain text. `verbose=2` prints one line per epoch:
`3/3 - 0s - 18ms/step - loss: 1.1441`.
"""

import math
import sys
import time

WIDTH = 20


def format_time(seconds_per_step):
    if seconds_per_step >= 1 or seconds_per_step == 0:
        return f"{seconds_per_step:.0f}s/step"
    if seconds_per_step >= 1e-3:
        return f"{seconds_per_step * 1e3:.0f}ms/step"
    return f"{seconds_per_step * 1e6:.0f}us/step"


def format_value(value, signed=True):
    """4 decimals, or 4 significant digits for small values (Keras' verbose=2 line tests the
    value itself, so a negative one is printed in e-notation there)."""
    return f"{value:.4f}" if (abs(value) if signed else value) > 1e-3 else f"{value:.4e}"


def metrics_text(logs, signed=True):
    return "".join(f" - {key}: {format_value(value, signed)}" for key, value in logs.items())


class Progbar:
    """One epoch's progress: `update(step, logs)` after each step, `finish(logs)` at the end."""

    def __init__(self, target, verbose=1, stream=None):
        self.target, self.verbose = target, verbose
        self.stream = stream or sys.stdout
        self.dynamic = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.perf_counter()
        self.width = 0

    def count(self, step):
        if not self.target:
            return f"{step:7d}/Unknown"
        digits = int(math.log10(self.target)) + 1
        return f"{step:{digits}d}/{self.target}"

    def line(self, step, logs, finished, color):
        elapsed = time.perf_counter() - self.start
        per_step = elapsed / step if step else 0.0
        count = self.count(step)
        if self.target:
            done = int(WIDTH * step / self.target)
            bar = (f"\x1b[1m{count}\x1b[0m \x1b[32m{'━' * done}\x1b[0m\x1b[37m{'━' * (WIDTH - done)}\x1b[0m"
                   if color else f"{count} {'━' * WIDTH}")
        else:
            bar = count
        if finished or not self.target:
            clock = f"{elapsed:.0f}s"
        else:
            eta = per_step * (self.target - step)
            clock = f"{eta:.0f}s" if eta < 60 else f"{eta // 60:.0f}:{eta % 60:02.0f}"
        clock = f"\x1b[1m{clock}\x1b[0m" if color else clock
        return f"{bar} {clock} {format_time(per_step)}{metrics_text(logs)}"

    def update(self, step, logs):
        if self.verbose == 1 and self.dynamic:
            text = self.line(step, logs, False, True)
            self.stream.write("\r" + text + " " * max(self.width - len(text), 0))
            self.width = len(text)
            self.stream.flush()

    def finish(self, step, logs):
        if self.target is None:
            self.target = step
        if self.verbose == 1:
            text = self.line(step, logs, True, self.dynamic)
            pad = " " * max(self.width - len(text), 0)
            self.stream.write(("\r" if self.dynamic else "") + text + pad + "\n")
        elif self.verbose == 2:
            elapsed = time.perf_counter() - self.start
            per_step = elapsed / step if step else 0.0
            self.stream.write(f"{self.count(step)} - {elapsed:.0f}s - {format_time(per_step)}"
                              f"{metrics_text(logs, signed=False)}\n")
        self.stream.flush()
