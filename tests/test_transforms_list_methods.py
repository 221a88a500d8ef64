"""`append`, `extend`, `insert` and `pop` on lists the function creates, and `np.stack` /
`np.concatenate` of such a list (transforms/frontend/list_methods.py, list_sequences.py):
every mode against every other, the tape and finite differences (dualtape.testing.check_modes).
A list the caller or another name may hold keeps its refusal."""

import numpy as np
import pytest

import dualtape
import dualtape.transforms as dt
from dualtape.testing import check_modes
from dualtape.transforms import TransformError


def appended_then_stacked(h, w):
    out = []
    for i in range(3):
        out.append(h * w[i:] + w[i])
    m = np.stack([out[0][:1], out[1][:1]] + out[2:])
    c = np.concatenate(out, axis=0)
    return np.sum(m * m) + np.sum(np.sin(c))


def appended_in_a_branch(x):
    rows = []
    for i in range(3):
        rows.append(np.sin(x) * i)
    if np.sum(x) > 0:
        rows.append(x)
    return np.sum(np.stack(rows, axis=1) ** 2)


def every_method(h, w):
    out = []
    for i in range(3):
        out.append(h * w[i])
    a = out[-1]
    b = out.pop(0)
    out.insert(1, a * b)
    out.extend([h, 2.0 * h])
    s = 0.0
    for v in out:
        s = s + np.sum(v)
    p, q, r, t, u = out
    return a * s + p * q * r * t * u


def popped_with_a_variable_index(h, w):
    xs = [h * w, h + w, np.sin(w)]
    k = 1
    v = xs.pop(k)
    xs.insert(-1, v * 2.0)
    last = xs.pop()
    return np.sum(np.stack(xs) * last) + np.sum(v)


def scalars_in_a_while(h, w):
    acc = [h]
    k = 0
    while k < 3:
        acc.append(acc[-1] * h + np.sum(w))
        k += 1
    acc.extend(acc[:2])
    return np.sum(np.stack(acc) ** 2)


def vstacked(h, w):
    rows = []
    for i in range(2):
        rows.append(h * w[i:i + 2])  # 1-d items are rows
    rows.append(np.outer(w[:2], w[1:]) * h)  # a 2-d item brings its rows
    return np.sum(np.vstack(rows) ** 2 * np.arange(8.0).reshape(4, 2))


def unpacked_parts(w):
    return w[:2], w[1:] * 2.0, np.sin(w[::2])


def zipped_from_a_call(h, w):
    total = []
    for a, b, c in zip(*unpacked_parts(w)):
        total.append(h * a * b + c)
    return np.sum(np.vstack(total))


CASES = [appended_then_stacked, appended_in_a_branch, every_method, popped_with_a_variable_index, scalars_in_a_while,
         vstacked, zipped_from_a_call]


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_every_mode_agrees(f):
    args = [np.array([0.3, 0.7, 1.1])] if f is appended_in_a_branch else [0.7, np.array([0.3, -0.2, 1.1])]
    report = check_modes(f, args)
    assert not report.refused and not report.skipped and report.checked, report


def test_gradient_matches_the_tape():
    args = (0.7, np.array([0.3, -0.2, 1.1]))
    np.testing.assert_allclose(dt.grad(every_method)(*args), dualtape.grad(every_method)(*args), rtol=1e-12)
    for f in (vstacked, zipped_from_a_call):
        for got, want in zip(dt.grad(f, argnums=(0, 1))(*args), dualtape.grad(f, argnums=(0, 1))(*args)):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def into_a_parameter(xs, x):
    xs.append(x * 2.0)
    return np.sum(np.stack(xs))


def through_an_alias(x):
    a = []
    b = a
    a.append(x * 2.0)
    return np.sum(np.stack(b))


def held_by_another_list(x):
    row = []
    rows = [row]
    row.append(x * 2.0)
    return np.sum(np.stack(rows[0]))


def passed_to_a_user_function(x):
    a = []
    keep(a)
    a.append(x * 2.0)
    return np.sum(np.stack(a))


def keep(a):
    return len(a)


@pytest.mark.parametrize("f", [into_a_parameter, through_an_alias, held_by_another_list, passed_to_a_user_function])
def test_shared_lists_stay_refused(f):
    with pytest.raises(TransformError, match=r"\.append\(\.\.\.\)"):
        dt.grad(f, argnums=len(f.__code__.co_varnames[:f.__code__.co_argcount]) - 1)(
            *([[np.ones(2)]] if f is into_a_parameter else []), np.ones(2))


def test_saved_module_needs_only_numpy(tmp_path):
    df = dt.grad(appended_in_a_branch)
    path = tmp_path / "saved.py"
    df.save(str(path))
    text = path.read_text()
    assert "import dualtape" not in text and "from dualtape" not in text
    namespace = {}
    exec(compile(text, str(path), "exec"), namespace)
    x = np.array([0.3, 0.7, 1.1])
    np.testing.assert_allclose(namespace["appended_in_a_branch_vjp"](x), df(x), rtol=1e-12)


def built_by_concatenation(x):
    ys = []
    for v in [x, 2.0 * x]:
        ys = ys + [np.sin(v)]
    return np.sum(np.stack(ys) ** 3)


def built_by_append(x):
    ys = []
    for v in [x, 2.0 * x]:
        ys.append(np.sin(v))
    return np.sum(np.stack(ys) ** 3)


def built_from_a_named_list(x):
    vs = [x, 2.0 * x, x * x]
    ys = []
    for v in vs:
        ys.append(np.sin(v) * v)
    return np.prod(np.stack(ys))


BUILT = [built_by_concatenation, built_by_append, built_from_a_named_list]


@pytest.mark.parametrize("f", BUILT, ids=[f.__name__ for f in BUILT])
@pytest.mark.parametrize("x", [0.7, np.array([0.3, -0.7, 1.1]), np.array([[0.3, 0.1], [0.2, 0.5]])],
                         ids=["scalar", "vector", "matrix"])
def test_a_list_built_from_empty_in_second_order_and_batched_modes(f, x):
    # the generated hvp code differentiates the adjoint of `ys + [v]` whose `ys` starts as `[]`:
    # the vector tangent of an empty list holds no array, so it cannot tell the number of directions
    np.testing.assert_allclose(dt.hessian(f)(x), dualtape.hessian(f)(x), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dt.jacfwd(f)(x), dualtape.jacfwd(f)(x), rtol=1e-10, atol=1e-12)
    size = int(np.size(x))
    directions = np.eye(size).reshape((size,) + np.shape(x))
    rows = dt.jvp(f)(x, directions)
    rows = rows[1] if isinstance(rows, tuple) else rows
    np.testing.assert_allclose(np.ravel(rows), np.ravel(dualtape.grad(f)(x)), rtol=1e-10, atol=1e-12)
    report = check_modes(f, [x])
    assert not report.failures and not report.refused and not report.skipped and report.checked, report


def test_vector_tangents_of_empty_lists():
    from dualtape.transforms.runtime import batch_size, each
    rows = np.arange(6.0).reshape(3, 2)
    assert batch_size([[], rows]) == 3  # an empty item says nothing of k: the next one does
    assert each(lambda d: list(d), []) == []  # only empty lists: the rule's (empty) result
    np.testing.assert_array_equal(each(lambda a, b: b + 1.0, [], rows), rows + 1.0)
    with pytest.raises(ValueError):
        batch_size([])
