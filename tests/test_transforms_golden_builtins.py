"""Snapshot tests of the code generated for builtins over differentiated values
(calls/builtins.py) and *args / **kwargs (calls/star_args.py), as tests/test_transforms_golden.py: review a diff in tests/golden/builtins_*.py
like code. Regenerate with `DUALTAPE_UPDATE_GOLDEN=1 pytest tests/test_transforms_golden_builtins.py`.
"""

import math

import numpy as np
import pytest

import dualtape.transforms as dt
from test_transforms_golden import assert_golden



def sum_generator(x):
    return sum(v * v for v in x)


def sum_display(a, b):
    return sum([a, b * b], 1.0)


def max_iterable(x):
    return max(x)


def sorted_list(a, b, c):
    ys = sorted([a, b, c])
    return ys[0] * ys[2]


def enumerate_zip(x, y):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, y), 1):
        s = s + i * a * b
    return s


def math_functions(a, b):
    return math.hypot(a, b) + math.log2(a) + math.prod([a, b])


def spread(*values, **options):
    total = values[0]
    for v in values:
        total = total * options["decay"] + v
    return total


def star_args(a, b):
    return spread(a, b, decay=0.5) + spread(*[b, a], **{"decay": a})


CASES = {
    "builtins_sum_generator": (sum_generator, "grad", 0, (np.ones(3),)),
    "builtins_sum_display": (sum_display, "grad", (0, 1), (1.0, 2.0)),
    "builtins_max_iterable": (max_iterable, "grad", 0, (np.ones(3),)),
    "builtins_sorted_list": (sorted_list, "grad", (0, 1, 2), (1.0, 2.0, 3.0)),
    "builtins_enumerate_zip": (enumerate_zip, "grad", (0, 1), (np.ones(3), np.ones(3))),
    "builtins_math_functions": (math_functions, "grad", (0, 1), (1.0, 2.0)),
    "builtins_star_args": (star_args, "grad", (0, 1), (1.0, 2.0)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_source(name):
    fn, mode, wrt, args = CASES[name]
    source = getattr(dt, mode)(fn, wrt=wrt).source_for(*args)
    assert_golden(name, source)
