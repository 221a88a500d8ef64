"""Functions the source transformer must differentiate: one per construct, most combined.

Argument names say the kind (STYLE.md section 6): `a, b, c` Python floats, `x, y` arrays,
`n` ints. CORPUS lists (function, argument spec, wrt); the spec strings are read by
tests/test_transforms_corpus.py: "s" a float in [0.5, 1.5], "v3" a vector of 3, "m23" a
2x3 matrix, an int literal is passed as is.
"""

import math

import numpy as np

SCALE = 0.5
OFFSETS = np.array([0.1, -0.2, 0.3])


def make_scaler(k):
    def scaled(a):
        return a * k + SCALE
    return scaled


scaled_by_three = make_scaler(3.0)


def helper_square(a):
    return a * a


def helper_two(a, b=2.0):
    c = a * b
    return c + math.sin(a)


def helper_array(x, w):
    return np.tanh(x * w)


def helper_pair(a, b):
    return a * b, a + b


def helper_loop(a, n):
    for _ in range(n):
        a = a * 0.9 + 0.1
    return a


# -- straight-line code --------------------------------------------------------------------

def poly(a):
    return 3.0 * a ** 3 - 2.0 * a + 1.0


def trig(a, b):
    return math.sin(a) * math.cos(b) + math.tan(a * 0.3)


def exp_log(a, b):
    return math.exp(a) / b + math.log(a + b) - math.sqrt(a)


def nested_calls(a):
    return math.sin(math.cos(math.exp(a * 0.5)))


def hyperbolic(a):
    return math.tanh(a) + math.sinh(a) * math.cosh(a) + math.atan(a)


def reassign(a):
    b = a * 2.0
    b = b * b
    b = math.sin(b) + a
    return b


def augmented(a, b):
    c = a
    c += b
    c *= a
    c -= 0.5 * b
    c /= 1.0 + b
    return c


def tuple_unpack(a, b):
    c, d = a * b, a + b
    c, d = d, c
    return c * d


def unpack_from_call(a, b):
    p, q = helper_pair(a, b)
    return p * q


def unary_ops(a):
    b = -a
    c = +b
    return -(-c) * a


def power_forms(a, b):
    return a ** 2 + a ** b + 2.0 ** a + pow(a, 3)


def builtin_abs_max(a, b):
    return abs(a - 2.0) + max(a, b) * min(a, b)


def cond_expr(a):
    b = a * a if a > 1.0 else -a
    return b * 3.0


def bool_ops(a, b):
    ok = a > 0.7 and b < 1.2 or a == b
    return a * b if ok else a + b


def constants_folded(a):
    return a * (2.0 * 0.5) + 0 * 1.0 + (3 - 2) * a


# -- arrays --------------------------------------------------------------------------------

def array_elementwise(x):
    return np.sum(np.sin(x) * np.exp(x))


def array_broadcast(x, y):
    return np.sum(x * y[:, None] + np.cos(y)[:, None])


def matmul_loss(m, x):
    return np.sum(np.tanh(m @ x) ** 2)


def dot_loss(x, y):
    return np.dot(x, y) + np.sum(x * y)


def mean_axis(m):
    return np.sum(np.mean(m, axis=0) ** 2) + np.mean(m)


def sum_keepdims(m):
    s = np.sum(m, axis=1, keepdims=True)
    return np.sum(m / s)


def reshape_transpose(m):
    r = np.reshape(m, (3, 2))
    t = np.transpose(m)
    return np.sum(r * t)


def methods(m):
    return (m.T * 2.0).sum() + m.sum(axis=0).mean() + m.reshape(6).dot(m.reshape(6))


def where_clip(x):
    y = np.where(x > 0.9, x * 2.0, x)
    return np.sum(np.clip(y, 0.7, 1.8) * x)


def mlp_like(x, m, y):
    h = np.tanh(m @ x + y[:2])
    return np.sum(h * h)


def globals_constants(x):
    return np.sum((x + OFFSETS) * SCALE)


def closure_constant(a):
    return scaled_by_three(a) * a


def relu_like(x):
    return np.sum(np.maximum(x, 0.8) * x)


# -- branches ------------------------------------------------------------------------------

def if_else(a):
    if a > 1.0:
        b = a * a
    else:
        b = math.sin(a)
    return b + a


def if_elif_else(a, b):
    if a > 1.2:
        c = a * b
    elif a > 0.8:
        c = a + b * b
    else:
        c = math.exp(a - b)
    return c * a


def if_no_else(a):
    b = a * 2.0
    if a > 1.0:
        b = b * a
    return b


def nested_if(a, b):
    c = a
    if a > 0.8:
        if b > 1.0:
            c = c * b
        else:
            c = c + b
    return c * c


def branch_on_array(x):
    s = np.sum(x)
    if s > 3.0:
        y = x * s
    else:
        y = x / s
    return np.sum(y)


def early_return(a):
    if a > 1.0:
        return a * a
    b = math.sin(a)
    return b * a


def early_return_in_loop(a, n):
    for i in range(n):
        a = a * 1.1
        if a > 2.0:
            return a * 3.0
    return a


# -- loops ---------------------------------------------------------------------------------

def for_range(a, n):
    s = 0.0
    for i in range(n):
        s = s + a * i
    return s


def for_range_args(a):
    p = 1.0
    for i in range(1, 7, 2):
        p = p * (a + i)
    return p


def for_accumulate_pow(a, n):
    x = a
    for _ in range(n):
        x = math.sin(x) + a
    return x


def for_over_array(x):
    s = 0.0
    for v in x:
        s = s + v * v
    return s


def for_over_list(a, b):
    total = 0.0
    for v in [a, b, a * b]:
        total = total + math.sin(v)
    return total


def for_enumerate(x):
    s = 0.0
    for i, v in enumerate(x):
        s = s + v * (i + 1.0)
    return s


def for_zip(x, y):
    s = 0.0
    for u, v in zip(x, y):
        s = s + u * v
    return s


def nested_loops(a, n):
    s = 0.0
    for i in range(n):
        for j in range(i):
            s = s + a * (i - j)
    return s


def loop_with_branch(a, n):
    s = a
    for i in range(n):
        if i % 2 == 0:
            s = s * a
        else:
            s = s + math.sin(s)
    return s


def while_loop(a):
    s = a
    k = 0
    while k < 5:
        s = s * 0.9 + a * 0.1
        k = k + 1
    return s


def while_cond_on_value(a):
    s = a
    while s < 10.0:
        s = s * 1.7
    return s


def loop_break(a, n):
    s = a
    for i in range(n):
        s = s * 1.3
        if s > 2.5:
            break
    return s


def loop_continue(a, n):
    s = 0.0
    for i in range(n):
        if i % 3 == 0:
            continue
        s = s + a * i
    return s


def while_break(a):
    s = a
    while True:
        s = s * 1.2 + 0.1
        if s > 3.0:
            break
    return s


def loop_reassign_array(x, n):
    for _ in range(n):
        x = np.tanh(x) * 1.5
    return np.sum(x)


def loop_carried_two(a, b, n):
    p, q = a, b
    for _ in range(n):
        p, q = q, p * 0.5 + q
    return p + q


# -- subscripts ----------------------------------------------------------------------------

def subscript_read(x):
    return x[0] * x[1] + x[-1] ** 2


def subscript_slice(m):
    return np.sum(m[0, :] * m[1, :]) + np.sum(m[:, 1:])


def subscript_write(x):
    y = x * 1.0
    y[0] = x[1] * x[2]
    return np.sum(y * y)


def subscript_write_loop(x):
    y = np.zeros(3)
    for i in range(3):
        y[i] = x[i] * (i + 1.0)
    return np.sum(y ** 2)


def subscript_overwrite(x):
    y = x * 2.0
    y[1] = y[1] * y[0]
    y[1] = y[1] + 1.0
    return np.sum(y)


def row_write(m):
    z = m * 1.0
    z[0, :] = np.sin(m[1, :])
    return np.sum(z * m)


def copy_then_write(x):
    y = x.copy()
    y[0] = 5.0
    return np.sum(y * y * x)


def copy_param_then_write(x):
    x = np.copy(x)
    x[0] = x[1] * x[2]
    x[1:] += 2.0 * x[0]
    return np.sum(x * x)


def write_inactive_after_use(x):
    a = np.ones(3)
    r = np.sum(x * x * a)
    a[0] = 2.0
    return r + np.sum(a * x)


def list_index(a, b):
    xs = [a, b, a * b]
    return xs[0] * xs[2] + xs[1]


# -- calls ---------------------------------------------------------------------------------

def calls_helper(a):
    return helper_square(a) + helper_square(a * 2.0)


def calls_helper_default(a, b):
    return helper_two(a) * helper_two(a, b=b)


def calls_array_helper(x, y):
    return np.sum(helper_array(x, y) * y)


def calls_helper_in_loop(a, n):
    s = a
    for _ in range(n):
        s = helper_square(s) * 0.5 + a
    return s


def calls_helper_with_loop(a):
    return helper_loop(a, 4) * a


def keyword_defaults(a, b=2.0, *, c=0.5):
    return a * b + c * a * a


def inactive_code(a, n):
    count = 0
    names = []
    for i in range(n):
        count = count + i
    d = a * count
    unused = math.exp(a) * 100.0
    return d + a


CORPUS = [
    (poly, "s", 0), (trig, "s s", (0, 1)), (exp_log, "s s", (0, 1)), (nested_calls, "s", 0),
    (hyperbolic, "s", 0), (reassign, "s", 0), (augmented, "s s", (0, 1)),
    (tuple_unpack, "s s", (0, 1)), (unpack_from_call, "s s", (0, 1)), (unary_ops, "s", 0),
    (power_forms, "s s", (0, 1)), (builtin_abs_max, "s s", (0, 1)), (cond_expr, "s", 0),
    (bool_ops, "s s", (0, 1)), (constants_folded, "s", 0),
    (array_elementwise, "v3", 0), (array_broadcast, "m23 v2", (0, 1)), (matmul_loss, "m23 v3", (0, 1)),
    (dot_loss, "v3 v3", (0, 1)), (mean_axis, "m23", 0), (sum_keepdims, "m23", 0),
    (reshape_transpose, "m23", 0), (methods, "m23", 0), (where_clip, "v3", 0),
    (mlp_like, "v3 m23 v3", (0, 1, 2)), (globals_constants, "v3", 0), (closure_constant, "s", 0),
    (relu_like, "v3", 0),
    (if_else, "s", 0), (if_elif_else, "s s", (0, 1)), (if_no_else, "s", 0), (nested_if, "s s", (0, 1)),
    (branch_on_array, "v3", 0), (early_return, "s", 0), (early_return_in_loop, "s 6", 0),
    (for_range, "s 5", 0), (for_range_args, "s", 0), (for_accumulate_pow, "s 6", 0),
    (for_over_array, "v3", 0), (for_over_list, "s s", (0, 1)), (for_enumerate, "v3", 0),
    (for_zip, "v3 v3", (0, 1)), (nested_loops, "s 4", 0), (loop_with_branch, "s 5", 0),
    (while_loop, "s", 0), (while_cond_on_value, "s", 0), (loop_break, "s 8", 0),
    (loop_continue, "s 7", 0), (while_break, "s", 0), (loop_reassign_array, "v3 3", 0),
    (loop_carried_two, "s s 4", (0, 1)),
    (subscript_read, "v3", 0), (subscript_slice, "m23", 0), (subscript_write, "v3", 0),
    (subscript_write_loop, "v3", 0), (subscript_overwrite, "v3", 0), (row_write, "m23", 0),
    (copy_then_write, "v3", 0), (copy_param_then_write, "v3", 0), (write_inactive_after_use, "v3", 0),
    (list_index, "s s", (0, 1)),
    (calls_helper, "s", 0), (calls_helper_default, "s s", (0, 1)), (calls_array_helper, "v3 v3", (0, 1)),
    (calls_helper_in_loop, "s 3", 0), (calls_helper_with_loop, "s", 0), (keyword_defaults, "s", 0),
    (inactive_code, "s 4", 0),
]
