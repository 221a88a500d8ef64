"""Dicts in transformed code (transforms/frontend/dicts.py): dict displays with constant keys
over differentiated values, read by key, by `.get`, and in loops over keys, values and items;
dicts of arrays as arguments (every mode) and as results (vjp takes a dict cotangent, jvp gives
dict tangents), against the tape and finite differences. Dicts whose keys are known at run time
only: comprehensions (`{k: v - lr * g[k] for k, v in p.items()}`), displays with computed keys,
`dict(zip(keys, values))`, loops over a dict argument's keys, values and items, reads with a
key held by a variable; keys computed from differentiated values and `**` stay refused."""

import numpy as np
import pytest

import dualtape
import dualtape.transforms as dt
from dualtape.testing import check_modes
from dualtape.transforms import TransformError

X, W = np.array([0.3, 0.7]), np.array([1.1, -0.4])


def by_key(x, w):
    d = {"a": x, "b": x * w}
    return np.sum(d["a"] * np.sin(d["b"]))


def loop_over_keys(x, w):
    d = {"a": x, "b": x * w}
    s = 0.0
    for k in d:
        s = s + np.sum(d[k] ** 2)
    return s


def items_values_keys(x, w):
    d = {"a": x, "b": x * w, 3: np.cos(x)}
    s = 0.0
    for k, v in d.items():
        s = s + np.sum(v * w)
    for v in d.values():
        s = s + np.sum(v)
    for k in d.keys():
        s = s * np.sum(d[k])
    return s


def get(x, w):
    d = {"a": x, "b": x * w}
    return np.sum(d.get("a") * d.get("b", 2.0)) + np.sum(d.get("c", w))


def in_a_branch(x, w):
    d = {"a": x * 2.0, "b": np.sin(x)}
    if np.sum(w) > 0:
        y = d["a"] * w
    else:
        y = d["b"]
    return np.sum(y * d["b"])


def in_comprehensions(x, w):
    d = {"a": x, "b": x * w}
    ys = [np.sin(v) * 2.0 for v in d.values()]
    zs = [d[k] * w for k in d if k != "a"]
    return np.sum(np.stack(ys + zs))


CASES = [by_key, loop_over_keys, items_values_keys, get, in_a_branch, in_comprehensions]


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_every_mode_agrees(f):
    report = check_modes(f, [X, W])
    assert not report.refused and report.checked, report


def loss(p, x):
    h = np.tanh(x * p["w"] + p["b"])
    return np.sum(h ** 2)


P = {"w": np.array([0.3, 0.5]), "b": 0.2}
DP = {"w": np.array([1.0, -0.5]), "b": 0.7}


def test_dict_argument_in_every_mode():
    tape = dualtape.grad(loss)(P, X)
    for got in (dt.grad(loss)(P, X), dt.vjp(loss)(P, X, 1.0)):
        assert set(got) == {"w", "b"}
        for key in got:
            np.testing.assert_allclose(got[key], tape[key], rtol=1e-12)
    value, tangent = dt.jvp(loss)(P, X, DP)
    expected = dualtape.jvp(loss, (P, X), (DP, np.zeros(2)))[1]
    np.testing.assert_allclose(tangent, expected, rtol=1e-12)
    hvp = dt.hvp(loss)(P, X, DP)
    expected = dualtape.jvp(lambda p: dualtape.grad(loss)(p, X), (P,), (DP,))[1]
    for key in hvp:
        np.testing.assert_allclose(hvp[key], expected[key], rtol=1e-10)


def dict_result(x, w):
    l = np.sum(np.sin(x * w))
    return {"loss": l, "aux": x * 2.0}


def test_dict_result_vjp_and_jvp():
    dy = {"loss": 0.5, "aux": np.array([1.0, -2.0])}
    got = dt.vjp(dict_result)(X, W, dy)
    np.testing.assert_allclose(got, dualtape.vjp(dict_result, X, W)[1](dy)[0], rtol=1e-12)
    value, tangent = dt.jvp(dict_result)(X, W, np.array([1.0, 0.5]))
    _, expected = dualtape.jvp(dict_result, (X, W), (np.array([1.0, 0.5]), np.zeros(2)))
    assert set(tangent) == {"loss", "aux"} and value["aux"] == pytest.approx(X * 2.0)
    for key in expected:
        np.testing.assert_allclose(tangent[key], expected[key], rtol=1e-12)
    _, batched = dt.jvp(dict_result)(X, W, np.eye(2))
    for j in range(2):
        one = dt.jvp(dict_result)(X, W, np.eye(2)[j])[1]
        for key in one:
            np.testing.assert_allclose(batched[key][j], one[key], rtol=1e-12)


# -- dicts with keys known at run time ------------------------------------------------------------

def key_from_a_list(x, w):
    keys = ["a", "b"]
    d = {keys[0]: x, keys[1]: x * w}
    return np.sum(d["a"] * np.sin(d["b"]))


def comprehension_over_range(x, w):
    d = {k: np.sin(x * w) * (k + 1.0) for k in range(3)}
    return np.sum(d[1] * d[2] + d[0])


def comprehension_with_filter(x, w):
    d = {k: x * w ** k for k in range(4) if k % 2 == 1}
    return np.sum(d[1] * d[3]) + len(d)


def comprehension_over_names(x, w):
    d = {name: x * (i + 1.0) + w for i, name in enumerate(("a", "b"))}
    s = 0.0
    for k in d:
        s = s + np.sum(np.cos(d[k]))
    return s * np.sum(d["b"])


def zipped_names(x, w):
    d = dict(zip(["a", "b", "c"], [x, x * w, np.exp(w)]))
    return np.sum(d["a"] * d["b"] + d["c"])


def repeated_keys(x, w):
    d = {k % 2: x * (k + 1.0) * w for k in range(3)}  # the last value of a key stays
    return np.sum(d[0] ** 2 + d[1])


def comprehension_in_a_loop(x, w):
    s = 0.0
    for i in range(2):
        d = {k: x * w * (k + i) for k in range(2)}
        s = s + np.sum(d[1] ** 2)
    return s


def built_by_writes(x, w):
    d = {}
    for k in range(3):
        d[k] = x * w * (k + 1.0)
    d[0] += np.sin(x)  # (a key it holds: its place kept, the value replaced)
    return np.sum(d[2] * d[0])


def overwritten_constant_key(x, w):
    d = {"a": x, "b": x * w}
    d["a"] = np.sin(d["b"]) * w
    return np.sum(d["a"] * d["b"])


def nested_comprehensions(x, w):
    d = {k: {j: x * (j + k + 1.0) for j in range(2)} for k in range(2)}
    return np.sum(d[1][0] * d[0][1] * w)


def scaled_by(p, s):
    return {k: v * s for k, v in p.items()}


def through_a_helper(x, w):
    q = scaled_by({"a": x, "b": w}, 2.0)
    return np.sum(q["a"] * q["b"])


def comprehension_over_zip(x, w):
    d = {k: v * 2.0 for k, v in zip(("a", "b"), [x, w])}
    return np.sum(d["a"] * np.sin(d["b"]))


def number_values(x, w):
    d = {i: x[i] * w[i] for i in range(2)}
    return d[0] * d[1] + sum(d[i] for i in d)


def items_of_a_comprehension(x, w):
    d = {k: x * (k + 1.0) for k in range(3)}
    s = 0.0
    for k, v in d.items():
        s = s + np.sum(v * w) * k
    return s + len(d)


RUNTIME_KEY_CASES = [key_from_a_list, comprehension_over_range, comprehension_with_filter,
                     comprehension_over_names, zipped_names, repeated_keys, comprehension_in_a_loop,
                     built_by_writes, overwritten_constant_key, nested_comprehensions, through_a_helper,
                     comprehension_over_zip, number_values, items_of_a_comprehension]


@pytest.mark.parametrize("f", RUNTIME_KEY_CASES, ids=[f.__name__ for f in RUNTIME_KEY_CASES])
def test_runtime_keys_every_mode_agrees(f):
    report = check_modes(f, [X, W])
    assert not report.refused and report.checked, report
    for mode in (dt.jacfwd, dt.hessian):  # (not among check_modes' modes): against the tape's
        got = mode(f, argnums=(0, 1))(X, W)
        expected = (dualtape.jacobian if mode is dt.jacfwd else dualtape.hessian)(f, argnums=(0, 1))(X, W)
        np.testing.assert_allclose(np.concatenate([np.ravel(g) for g in got]),
                                   np.concatenate([np.ravel(e) for e in expected]), rtol=1e-10, atol=1e-12)


def sgd_step(params, x):
    grads = {"w": 2.0 * params["w"] * x, "b": np.sin(params["b"])}
    new = {k: v - 0.1 * grads[k] for k, v in params.items()}
    return np.sum(np.tanh(x * new["w"] + new["b"]) ** 2)


def doubled(p, x):
    d = {k: p[k] * 2.0 for k in p}
    return np.sum(d["w"] * x) * d["b"]


def filtered_items(p, x):
    d = {k: np.sin(v) * x for k, v in p.items() if k != "b"}
    return np.sum(d["w"] ** 2)


def loop_over_items(p, x):
    s = 0.0
    for k, v in p.items():
        s = s + np.sum(np.sin(v * x))
    return s


def loop_over_values(p, x):
    s = 1.0
    for v in p.values():
        s = s * np.sum(v * x + 1.0)
    return s


def loop_over_keys(p, x):
    s = 0.0
    for k in p:
        s = s + np.sum(p[k] ** 2 * x)
    return s / len(p)


def loop_over_keys_method(p, x):
    s = 0.0
    for k in p.keys():
        s = s + np.sum(np.cos(p[k]) * x)
    return s


def generator_over_keys(p, x):
    return sum(np.sum(p[k] ** 2 * x) for k in p)


def keyed_by_a_loop(p, x):
    s = 0.0
    for name in ["w", "b"]:
        s = s + np.sum(p[name] * x) ** 2
    return s


def generators_over_values_and_items(p, x):
    s = sum(np.sum(v * x) for v in p.values()) ** 2
    return s + sum(np.sum(v * x) * len(k) for k, v in p.items())


def largest_of_the_values(p, x):
    return max(np.sum(v * x) for v in p.values()) + np.sum(np.stack([np.sum(v) * x for v in p.values()]) ** 2)


DICT_ARGUMENT_CASES = [sgd_step, doubled, filtered_items, loop_over_items, loop_over_values, loop_over_keys,
                       loop_over_keys_method, generator_over_keys, keyed_by_a_loop, generators_over_values_and_items,
                       largest_of_the_values]


def _assert_dicts_close(got, expected, rtol=1e-10):
    assert set(got) == set(expected)
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], rtol=rtol, atol=1e-12)


def _shifted(p, dp, t):
    return {k: p[k] + t * dp[k] for k in p}


def _dot(a, b):
    return sum(np.sum(np.asarray(a[k]) * np.asarray(b[k])) for k in a)


@pytest.mark.parametrize("f", DICT_ARGUMENT_CASES, ids=[f.__name__ for f in DICT_ARGUMENT_CASES])
def test_dict_argument_read_at_run_time_in_every_mode(f):
    """grad, vjp, jacfwd against the tape's gradient; jvp (one tangent and a batch of them)
    against the tape's and central differences; hvp against the tape's forward over reverse and
    the differences of the gradient; hessian against hvp."""
    eps = 1e-6
    tape = dualtape.grad(f)(P, X)
    for got in (dt.grad(f)(P, X), dt.vjp(f)(P, X, 1.0), dt.jacfwd(f)(P, X)):
        _assert_dicts_close(got, tape)
    value, tangent = dt.jvp(f)(P, X, DP)
    assert value == pytest.approx(f(P, X), rel=1e-12)
    np.testing.assert_allclose(tangent, dualtape.jvp(f, (P, X), (DP, np.zeros(2)))[1], rtol=1e-10)
    np.testing.assert_allclose(tangent, (f(_shifted(P, DP, eps), X) - f(_shifted(P, DP, -eps), X)) / (2 * eps),
                               rtol=1e-6)
    np.testing.assert_allclose(tangent, _dot(tape, DP), rtol=1e-10)
    batch = {"w": np.stack([DP["w"], np.array([0.0, 1.0])]), "b": np.array([DP["b"], -1.0])}
    _, tangents = dt.jvp(f)(P, X, batch)
    for j in range(2):
        one = dt.jvp(f)(P, X, {k: batch[k][j] for k in batch})[1]
        np.testing.assert_allclose(tangents[j], one, rtol=1e-10)
    hvp = dt.hvp(f)(P, X, DP)
    _assert_dicts_close(hvp, dualtape.jvp(lambda q: dualtape.grad(f)(q, X), (P,), (DP,))[1])
    ahead, behind = dualtape.grad(f)(_shifted(P, DP, eps), X), dualtape.grad(f)(_shifted(P, DP, -eps), X)
    _assert_dicts_close(hvp, {k: (ahead[k] - behind[k]) / (2 * eps) for k in P}, rtol=1e-5)
    hessian = dt.hessian(f)(P, X)
    for k in P:
        row = sum(np.tensordot(hessian[k][j], DP[j], axes=np.ndim(DP[j])) for j in P)
        np.testing.assert_allclose(row, hvp[k], rtol=1e-10, atol=1e-12)


def string_key(p, x, name):
    return np.sum(p[name] * x) ** 2


def test_key_in_a_string_argument():
    for name in ("w", "b"):
        tape = dualtape.grad(string_key)(P, X, name)
        _assert_dicts_close(dt.grad(string_key)(P, X, name), tape)
        tangent = dt.jvp(string_key)(P, X, name, DP)[1]
        np.testing.assert_allclose(tangent, _dot(tape, DP), rtol=1e-10)
        _assert_dicts_close(dt.hvp(string_key)(P, X, name, DP),
                            dualtape.jvp(lambda q: dualtape.grad(string_key)(q, X, name), (P,), (DP,))[1])


def scaled(p, x):
    return {k: v * x for k, v in p.items()}


def comprehension_result(x, w):
    return {k: np.sin(x * w) * (k + 1.0) for k in range(2)}


def test_comprehension_results_vjp_and_jvp():
    dy = {0: np.array([1.0, -2.0]), 1: np.array([0.5, 0.25])}
    got = dt.vjp(comprehension_result)(X, W, dy)
    np.testing.assert_allclose(got, dualtape.vjp(comprehension_result, X, W)[1](dy)[0], rtol=1e-12)
    value, tangent = dt.jvp(comprehension_result)(X, W, np.array([1.0, 0.5]))
    _, expected = dualtape.jvp(comprehension_result, (X, W), (np.array([1.0, 0.5]), np.zeros(2)))
    _assert_dicts_close(value, comprehension_result(X, W), rtol=1e-15)
    _assert_dicts_close(tangent, expected)
    _, batched = dt.jvp(comprehension_result)(X, W, np.eye(2))
    for j in range(2):
        _assert_dicts_close({k: v[j] for k, v in batched.items()},
                            dt.jvp(comprehension_result)(X, W, np.eye(2)[j])[1])
    # a dict argument in, a dict out: a missing key of the cotangent counts as zero
    dy = {"w": np.array([1.0, 2.0])}
    _assert_dicts_close(dt.vjp(scaled)(P, X, dy), dualtape.vjp(scaled, P, X)[1]({"w": dy["w"], "b": np.zeros(2)})[0])
    value, tangent = dt.jvp(scaled)(P, X, DP)
    _assert_dicts_close(tangent, {k: DP[k] * X for k in P})


def test_saved_module_and_jit_fallback(tmp_path):
    import warnings
    df = dt.grad(sgd_step)
    path = tmp_path / "saved.py"
    df.save(str(path))
    text = path.read_text()
    assert "import dualtape" not in text and "from dualtape" not in text and "def dict_adjoint" in text
    namespace = {}
    exec(compile(text, str(path), "exec"), namespace)
    _assert_dicts_close(namespace["sgd_step_vjp"](P, X), df(P, X), rtol=1e-15)
    tangents = dt.jvp(comprehension_result)
    tangents.save(str(path))
    text = path.read_text()
    assert "import dualtape" not in text and "def dict_tangent" in text
    namespace = {}
    exec(compile(text, str(path), "exec"), namespace)
    for got, expected in zip(namespace["comprehension_result_jvp"](X, W, np.ones(2)), tangents(X, W, np.ones(2))):
        _assert_dicts_close(got, expected, rtol=1e-15)
    with pytest.warns(Warning, match="numba cannot compile the generated code of sgd_step"):
        _assert_dicts_close(dt.grad(sgd_step, jit="fallback")(P, X), df(P, X), rtol=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(dt.grad(comprehension_over_range, jit="fallback", argnums=(0, 1))(X, W),
                                   dt.grad(comprehension_over_range, argnums=(0, 1))(X, W), rtol=1e-15)


def key_from_a_value(x, w):
    d = {float(np.sum(v)): v for v in [x, w]}
    return np.sum(d[float(np.sum(x))])


def unpacked(x, w):
    base = {"a": x}
    d = {**base, "b": x * w}
    return np.sum(d["b"])


def written_into_an_argument(p, x):
    p["w"] = p["w"] * x
    return np.sum(p["w"])


@pytest.mark.parametrize("f, construct", [
    (key_from_a_value, "the keys .* of a dict depend on differentiated values"),
    (unpacked, r"`\*\*` unpacking in a dict display"),
])
def test_keys_from_differentiated_values_stay_refused(f, construct):
    with pytest.raises(TransformError, match=construct):
        dt.grad(f, argnums=(0, 1))(X, W)


def written_through_an_alias(x, w):
    d = {k: x * k for k in range(2)}
    e = d
    d[1] = x * w
    return np.sum(e[1])


def test_writing_into_a_shared_dict_stays_refused():
    with pytest.raises(TransformError, match=r"test_transforms_dicts.py:\d+ in written_into_an_argument: `p\['w'\] = "
                                             r"\.\.\.` writes into `p`"):
        dt.grad(written_into_an_argument)({"w": X.copy(), "b": 0.2}, X)
    with pytest.raises(TransformError, match=r"`d\[1\] = \.\.\.` writes into `d`, but `e`"):
        dt.grad(written_through_an_alias, argnums=(0, 1))(X, W)


def updated(x, w):
    d = {k: x * k for k in range(2)}
    d.update({2: w})
    return np.sum(d[2])


def popped(x, w):
    d = {k: x * k for k in range(3)}
    v = d.pop(1)
    return np.sum(v * d[2])


def deleted(x, w):
    d = {k: x * k for k in range(3)}
    del d[1]
    return np.sum(d[2])


@pytest.mark.parametrize("f, construct", [(updated, r"`\.update\(\.\.\.\)`"), (popped, "`d.pop`"), (deleted, "`del`")])
def test_dict_changes_in_place_stay_refused(f, construct):
    with pytest.raises(TransformError, match=rf"test_transforms_dicts.py:\d+ in {f.__name__}: .*{construct}"):
        dt.grad(f, argnums=(0, 1))(X, W)


def rebound_to_a_list(p, x):
    p = p["layers"]  # (a dict's item: a list, iterated as one)
    s = 0.0
    for w in p:
        s = s + np.sum(w * x)
    return s


def dict_or_list(p, x):
    if isinstance(p, dict):
        return np.sum(p["w"] * x)
    s = 0.0
    for w in p:  # read as a loop over a dict's keys: the source reads `p["w"]`
        s = s + np.sum(w * x)
    return s


def test_a_list_is_never_read_as_a_dict():
    layers = {"layers": [np.array([1.0, 2.0]), np.array([3.0, 4.0])]}
    got, expected = dt.grad(rebound_to_a_list)(layers, X), dualtape.grad(rebound_to_a_list)(layers, X)
    for g, e in zip(got["layers"], expected["layers"]):
        np.testing.assert_allclose(g, e, rtol=1e-15)
    _assert_dicts_close(dt.grad(dict_or_list)({"w": W}, X), {"w": X})
    with pytest.raises(AttributeError, match="'list' object has no attribute 'keys'"):  # (never a zero gradient)
        dt.grad(dict_or_list)([W, W], X)


def test_runtime_helpers_of_the_dict_op():
    from dualtape.transforms.runtime import dict_adjoint, dict_keys, key_list
    assert key_list(k for k in "ab") == ["a", "b"]
    with pytest.raises(ValueError, match="gave 3 values but 2 keys"):  # an iterable read once only
        key_list(iter(["a", "b"]), 3)
    with pytest.raises(TypeError, match="a loop over the keys of a dict met a list"):
        dict_keys([1.0, 2.0])
    # the last of a repeated key takes the adjoint, a missing key gives zeros, values past the keys too
    got = dict_adjoint({"a": 1.0, "b": np.ones(2)}, ["a", "b", "a", "c"], [0.5, np.zeros(2), 2.0, 3.0, np.ones(3)])
    assert got[0] == 0.0 and got[2] == 1.0 and got[3] == 0.0
    np.testing.assert_array_equal(got[1], np.ones(2))
    np.testing.assert_array_equal(got[4], np.zeros(3))


def keys_only(p, x):
    t = 0.0
    for k in p:  # (the keys, as Python iterates a dict; nothing here says p is a dict)
        t = t + k * np.sum(x * x)
    return t + p[0] * 2.0


def test_a_loop_over_a_dict_argument_reads_its_keys_whatever_its_keys():
    """A dict argument with int keys 0..n-1, iterated bare: the loop was read as one over a
    sequence (`k = p[_i]`, the values): a silent wrong gradient, differentiated or not. The
    version built for a dict argument iterates its keys."""
    import dualtape
    p, x, u = {0: 5.0, 1: 7.0}, np.array([0.3, -0.5]), np.array([1.0, 2.0])
    got = dt.grad(keys_only, argnums=(0, 1))(p, x)
    want = dualtape.grad(keys_only, argnums=(0, 1))(p, x)
    assert got[0].keys() == want[0].keys() and all(np.isclose(got[0][k], want[0][k]) for k in p)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    np.testing.assert_allclose(dt.grad(keys_only, argnums=1)(p, x), 2 * x, rtol=1e-12)
    np.testing.assert_allclose(dt.jvp(keys_only, argnums=1)(p, x, u)[1], np.sum(2 * x * u), rtol=1e-12)
    np.testing.assert_allclose(dt.hvp(keys_only, argnums=1)(p, x, u), 2 * u, rtol=1e-12)
    np.testing.assert_allclose(dt.grad(keys_only, argnums=1)([0.0, 2.0], x), 4 * x, rtol=1e-12)  # a list: its items


M_CONST = np.array([[0.0, -0.3], [0.924, -0.182]])


def constant_dict_loop(x):  # (the checker's shrunk program, seed 8008)
    d = {"a": M_CONST[0], "b": np.cos(np.linspace(0.0, 0.09, 2))}
    s = {k: np.sin(v) * 2.0 for k, v in d.items()}
    out = s["a"] * 0.5
    for k in s:  # (not differentiated itself, but kept in the sweep: out is)
        out = out + np.cos(s[k])
    out = out * x
    return np.sum(out)


def test_a_loop_over_a_dict_not_differentiated_reads_its_keys():
    """A loop over a dict that is not differentiated, in a loop the sweep keeps, was read by
    position (`k = s[_i]`: KeyError 0 in every source mode); a visible dict iterates its keys."""
    from dualtape.testing import check_modes
    x = np.array([0.3, -0.5])
    report = check_modes(constant_dict_loop, [x])
    assert not report.refused and report.checked, report
