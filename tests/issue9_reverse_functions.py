"""Functions for tests/test_transforms_regressions.py (issue 9): the transformer reads source,
so they live in a module file. Each is a minimal program that gave a wrong reverse-mode
derivative, crashed, or was refused although it should work."""

import numpy as np

import dualtape as tf


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


def long_sum(x):
    # one expression of 300 terms, written out
    return (x * 1 + x * 2 + x * 3 + x * 4 + x * 5 + x * 6 + x * 7 + x * 8 + x * 9 + x * 10 +
            x * 11 + x * 12 + x * 13 + x * 14 + x * 15 + x * 16 + x * 17 + x * 18 + x * 19 +
            x * 20 + x * 21 + x * 22 + x * 23 + x * 24 + x * 25 + x * 26 + x * 27 + x * 28 +
            x * 29 + x * 30 + x * 31 + x * 32 + x * 33 + x * 34 + x * 35 + x * 36 + x * 37 +
            x * 38 + x * 39 + x * 40 + x * 41 + x * 42 + x * 43 + x * 44 + x * 45 + x * 46 +
            x * 47 + x * 48 + x * 49 + x * 50 + x * 51 + x * 52 + x * 53 + x * 54 + x * 55 +
            x * 56 + x * 57 + x * 58 + x * 59 + x * 60 + x * 61 + x * 62 + x * 63 + x * 64 +
            x * 65 + x * 66 + x * 67 + x * 68 + x * 69 + x * 70 + x * 71 + x * 72 + x * 73 +
            x * 74 + x * 75 + x * 76 + x * 77 + x * 78 + x * 79 + x * 80 + x * 81 + x * 82 +
            x * 83 + x * 84 + x * 85 + x * 86 + x * 87 + x * 88 + x * 89 + x * 90 + x * 91 +
            x * 92 + x * 93 + x * 94 + x * 95 + x * 96 + x * 97 + x * 98 + x * 99 + x * 100 +
            x * 101 + x * 102 + x * 103 + x * 104 + x * 105 + x * 106 + x * 107 + x * 108 +
            x * 109 + x * 110 + x * 111 + x * 112 + x * 113 + x * 114 + x * 115 + x * 116 +
            x * 117 + x * 118 + x * 119 + x * 120 + x * 121 + x * 122 + x * 123 + x * 124 +
            x * 125 + x * 126 + x * 127 + x * 128 + x * 129 + x * 130 + x * 131 + x * 132 +
            x * 133 + x * 134 + x * 135 + x * 136 + x * 137 + x * 138 + x * 139 + x * 140 +
            x * 141 + x * 142 + x * 143 + x * 144 + x * 145 + x * 146 + x * 147 + x * 148 +
            x * 149 + x * 150 + x * 151 + x * 152 + x * 153 + x * 154 + x * 155 + x * 156 +
            x * 157 + x * 158 + x * 159 + x * 160 + x * 161 + x * 162 + x * 163 + x * 164 +
            x * 165 + x * 166 + x * 167 + x * 168 + x * 169 + x * 170 + x * 171 + x * 172 +
            x * 173 + x * 174 + x * 175 + x * 176 + x * 177 + x * 178 + x * 179 + x * 180 +
            x * 181 + x * 182 + x * 183 + x * 184 + x * 185 + x * 186 + x * 187 + x * 188 +
            x * 189 + x * 190 + x * 191 + x * 192 + x * 193 + x * 194 + x * 195 + x * 196 +
            x * 197 + x * 198 + x * 199 + x * 200 + x * 201 + x * 202 + x * 203 + x * 204 +
            x * 205 + x * 206 + x * 207 + x * 208 + x * 209 + x * 210 + x * 211 + x * 212 +
            x * 213 + x * 214 + x * 215 + x * 216 + x * 217 + x * 218 + x * 219 + x * 220 +
            x * 221 + x * 222 + x * 223 + x * 224 + x * 225 + x * 226 + x * 227 + x * 228 +
            x * 229 + x * 230 + x * 231 + x * 232 + x * 233 + x * 234 + x * 235 + x * 236 +
            x * 237 + x * 238 + x * 239 + x * 240 + x * 241 + x * 242 + x * 243 + x * 244 +
            x * 245 + x * 246 + x * 247 + x * 248 + x * 249 + x * 250 + x * 251 + x * 252 +
            x * 253 + x * 254 + x * 255 + x * 256 + x * 257 + x * 258 + x * 259 + x * 260 +
            x * 261 + x * 262 + x * 263 + x * 264 + x * 265 + x * 266 + x * 267 + x * 268 +
            x * 269 + x * 270 + x * 271 + x * 272 + x * 273 + x * 274 + x * 275 + x * 276 +
            x * 277 + x * 278 + x * 279 + x * 280 + x * 281 + x * 282 + x * 283 + x * 284 +
            x * 285 + x * 286 + x * 287 + x * 288 + x * 289 + x * 290 + x * 291 + x * 292 +
            x * 293 + x * 294 + x * 295 + x * 296 + x * 297 + x * 298 + x * 299 + x * 300)


def explicit_scheme(u0):
    u = u0.copy()
    for t in range(3):
        un = u.copy()
        for i in range(1, 4):
            un[i] = u[i] + 0.1 * (u[i - 1] - 2 * u[i] + u[i + 1]) + 0.05 * u[i] ** 2
        u = un
    return np.sum(u * u)


def explicit_scheme_shared(u0):
    u = u0.copy()
    for t in range(3):
        un = u.copy()
        v = un
        for i in range(1, 4):
            un[i] = u[i] + 0.1 * u[i + 1]
        u = v * 2.0
    return np.sum(u * u)


def explicit_scheme_no_copy(u0):
    u = u0.copy()
    un = u.copy()
    for t in range(3):
        for i in range(1, 4):
            un[i] = u[i] + 0.1 * u[i + 1]
        u = un
    return np.sum(u * u)


def tf_functions(x):
    total = tf.reduce_sum(tf.sin(x) * x, axis=0) + tf.reduce_mean(tf.multiply(x, x))
    return total + tf.reduce_logsumexp(x)


def ravel_and_copy(x):
    y = np.copy(x)
    z = np.ravel(y)
    return np.sum(z * z * z)


def nested_targets(x):
    (a, b), c = (x, x * 2), x * 3
    pair = (a * b, (c, a))
    d, (e, f) = pair
    return d * e + f


def dict_argument(d):
    return d["a"] * d["b"] + np.sum(d["c"] ** 2)


def augmented_floats(x):
    s = 0.0
    for i in range(3):
        s += x[i] * x[i]
    t = float(x[0])
    t *= x[1]
    u = np.sum(x)
    u /= 2.0
    return s + t + u


def reassigning_loop_in_a_branch(x, flag):
    s = x
    if flag:
        for i in range(2):
            y = s * 2
            y = y * s
            y = y + 1.0
            s = y * s
    return np.sum(s)


def constant_then_augmented_in_a_branch(x, flag):
    s = x
    y = x
    if flag:
        for i in range(2):
            y = 0.5
            y += s
            s = s * y
    return np.sum(s * y)


def parameter_rebound_to_another(x, y):
    a, x = np.sum(np.sin(y * 0.0)), y
    return x + x + y + a


def subtract_itself_then_rebind(a):
    s = a
    for i in range(2):
        x = a * 2.0
        x -= x
        s = s + x
        x = 3.0
        s = s * x
    return np.sum(s)


rows = 3.0  # named like runtime helpers the generated code imports (`rows`, `step`)


def step(y, h):
    return y + h * np.sin(y) * rows


def integrate_with_step(y0):
    y = y0
    for i in range(3):
        y = step(y, 0.1)
    return np.sum(y * y)


def parameter_named_like_a_helper(x, bt):
    return np.sin(x) * bt


def fills_a_buffer_from_fresh_arrays(x, y):
    u = np.zeros(2)
    for j in range(2):
        u[j] = np.ones(2)[j] * x
    return np.sum(u) + y


def swaps_a_user_name_spelled_like_a_temporary(x, y):
    for i1 in range(3):
        _sin_x = (x if x > 0.0 else i1)
        _sin_x, x = x, _sin_x
    return np.linspace(0.0, 0.0, 9).reshape(3, 3) + x * np.ones((3, 3)) + y * np.ones((3, 3))


def rebinds_a_float_parameter_to_a_matrix_after_a_loop(x, y):
    for i in range(3):
        (x, z), y = (np.linspace(0.135, 0.259, 3), np.ones((3, 3))), 0.432
    a2, y = np.ones(2), np.ones((3, 3))
    return np.sum(x) + np.sum(y) + np.sum(a2)


def rebinds_a_float_parameter_to_a_matrix_in_one_branch(x, y):
    if x[0] > -5.0:
        y = np.ones((3, 3))
    else:
        y = y * 2.0
    return np.sum(x) + np.sum(y)


def returns_a_buffer_written_in_a_branch(x):
    out = np.zeros((3, 3))
    out[2] = np.stack([1.559, 2.0, 1.5])
    if x[0, 0] > -5.0:
        out[0, 2] += np.sum(x)
    return out


def returns_a_view_of_a_buffer_early(x):
    k = 0
    while k < 1:
        k += 1
        u = np.zeros((3, 3))
        u[0] = x
        for i, s in enumerate(np.arctan(x)):
            if x[0] > -5.0:
                return u[:, 0]
    return x
