"""Snapshot tests of the generated source for lists the function builds: `append` in a loop,
`pop`, `np.stack` of a list held by a name, a list comprehension; a dict display read by
key and in a loop over its items; a dict comprehension over a dict argument's items and over a
range, and a loop over a dict argument's items (tests/golden/lists_*.py).

A diff in those files *is* the change in readability; review it like code. Regenerate with
`DUALTAPE_UPDATE_GOLDEN=1 pytest tests/test_transforms_golden_lists.py`.
"""


import numpy as np
import pytest

import dualtape.transforms as dt
from test_transforms_golden import assert_golden



def appended(h, w):
    out = []
    for i in range(3):
        out.append(h * w[i])
    return np.sum(np.stack(out) ** 2)


def popped(x):
    ys = [x, np.sin(x), x * 2.0]
    last = ys.pop()
    return np.sum(ys[0] * ys[1] * last)


def comprehension(x, w):
    ys = [x * w[i] for i in range(3) if i != 1]
    return np.sum(np.concatenate(ys))


def dict_display(x, w):
    d = {"a": x, "b": x * w}
    s = np.sum(d["a"])
    for k, v in d.items():
        s = s + np.sum(np.sin(v))
    return s


def dict_comprehension(params, x):
    new = {k: v - 0.1 * x for k, v in params.items()}
    return np.sum(new["w"] * new["b"])


def dict_comprehension_range(x, w):
    d = {k: x * w ** k for k in range(3) if k != 1}
    return np.sum(d[0] * d[2])


def dict_argument_loop(p, x):
    s = 0.0
    for k, v in p.items():
        s = s + np.sum(np.sin(v) * x)
    return s


CASES = {
    "lists_dict": (dict_display, (0, 1), None),
    "lists_dict_comprehension": (dict_comprehension, 0, None),
    "lists_dict_comprehension_jvp": (dict_comprehension_range, (0, 1), "jvp"),
    "lists_dict_argument_loop": (dict_argument_loop, 0, None),
    "lists_append": (appended, (0, 1), None),
    "lists_append_jvp": (appended, (0, 1), "jvp"),
    "lists_pop": (popped, 0, None),
    "lists_comprehension": (comprehension, (0, 1), None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_source(name):
    fn, wrt, mode = CASES[name]
    df = dt.jvp(fn, wrt=wrt) if mode == "jvp" else dt.grad(fn, wrt=wrt)
    source = df.source
    assert_golden(name, source)
