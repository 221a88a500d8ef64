"""Functions for tests/test_transforms_regressions.py (issue 9): the transformer reads source,
so they live in a module file. Each is a minimal program that gave a wrong reverse-mode
derivative, crashed, or was refused although it should work."""

import numpy as np


def rk4_step(y0, k):
    # a name reassigned several times per iteration, np.stack of subscripts
    y = y0
    for i in range(3):
        k1 = -k * y
        y1 = y + 0.05 * k1
        k2 = -k * y1
        y1 = y + 0.05 * k2
        k3 = -k * y1
        y = y + 0.1 * (k1 + 2 * k2 + k3) / 4
        z = np.stack([y[0], y[1] * y[0]])
        y = y + 0.01 * z
    return np.sum(y * y)


def constant_then_augmented(a):
    s = a
    for i in range(2):
        x = 0.99
        x += 0.5
        s = s * x
    return s


def loop_variable_rebound(x):
    ks = [1.0, 2.0]
    s = x
    for i, k in enumerate(ks):
        k = 1.15
        s = s * k + x
    return s


def filled_buffer(x):
    out = np.zeros(3)
    for i in range(3):
        out[i] = x[i] * x[(i + 1) % 3]
    return out


def generated_looking_names(x):
    _stack = x * 2
    bx = x * 3
    _t1 = x + 1
    _retval = x
    s = 0.0
    for i in range(2):
        s = s + _stack * bx * _t1
        if np.sum(s) > 100.0:
            return np.sum(s * _retval)
    return np.sum(s)


def shadows_helpers(x):
    unbroadcast = x * 2
    len = 3
    s = x
    for i in range(len):
        s = s * unbroadcast
    return np.sum(s)


def parameter_named_stack(_stack):
    return _stack * 2


def walrus_in_condition(x):
    if (y := x * 2) > 1:
        return y
    return x


def walrus_in_later_operand(x):
    if x > 0 and (y := x * 2) > 1:
        return y
    return x


def vector_output(x):
    return x * 2.0


def loop_over_rebound_array(x):
    s = 0.0
    for v in x:
        x = [v, v, 0.5]
        s = s + v * v * x[2]
    return s


def uses_sorted(x):
    ys = sorted([x, x * 2])
    return ys[0]


def uses_eval(x):
    return eval("x * 2")


def uses_full(x):
    return np.sum(np.full(3, x) ** 2)


def appends(xs, v):
    xs.append(v)


def calls_appender(a):
    xs = []
    appends(xs, a * 2)
    appends(xs, a * 3)
    return xs[0] * xs[1]


def pops(xs):
    return xs.pop()


def calls_popper(a):
    xs = [a, a * a]
    b = pops(xs)
    return b + xs[-1]


def writes_a_copy(x):
    x = x.copy()
    x[0] = 2.0
    return x


def calls_copier(x):
    return np.sum(writes_a_copy(x) * x)
