"""Python's list operators in differentiated code (issue 12): `ys + [v]` concatenates and
`[v] * 2` repeats. The transformer differentiated them as NumPy's elementwise add and product:
silently wrong gradients for lists of equal shapes (`[x] + [x * 2.0]`), crashes for a list grown
in a loop (`ys = ys + [v]`, the spelling its refusal of `.append` recommends). With vector
tangents, a write into a list item (`ys[1] = v`) crashed. Every mode is checked against every
other and against finite differences (dualtape.testing.check_modes)."""

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.testing import check_modes


def grown_in_a_loop(x):
    ys = []
    for k in range(2):
        ys = ys + [x * (k + 1.0)]
    return np.sum(ys[0] * ys[1])


def two_displays(x):
    ys = [x] + [x * 2.0]
    return np.sum(ys[0] * np.sin(ys[1]))


def name_and_display(x):
    a = [x]
    ys = a + [np.sin(x)]
    return np.sum(ys[0] * ys[1])


def repeated(x):
    ys = [x * 3.0] * 2
    return np.sum(ys[0] * np.cos(ys[1]))


def repeated_then_written(x):
    ys = [x, np.sin(x)] * 3
    ys[4] = ys[4] * 2.0
    return np.sum(ys[4] * ys[1] + ys[0])


def scalars(x):
    ys = [np.sum(x)] + [np.sum(x * x)]
    return ys[0] * ys[1]


def slices_concatenated(x):
    ys = [x, x * 2.0, x * 3.0]
    zs = ys[0:2] + ys[2:]
    zs[1] = np.cos(zs[2])
    return np.sum(zs[0] * zs[1]) + np.sum(zs[2])


def tuples(x):
    t = (x,) + (np.sin(x), 2.0)
    return np.sum(t[0] * t[1] * t[2])


def item_writes(x):
    ys = [0.0, 0.0]
    ys[1] = x * 2.0
    ys[0] = np.sin(x)
    return np.sum(ys[0] * ys[1])


def array_rows_written(x):
    ys = np.zeros((4, 3))
    ys[1:3] = np.stack([x, x * 2.0])
    ys[0] = np.sin(x)
    return np.sum(ys * ys)


def list_name_holding_an_array(x):
    v = [1.0, 2.0, 3.0]
    v = np.sin(x) * v
    return np.sum((v + x) * v)


def item_overwritten_with_a_constant(x):  # the program checker's G1: reverse and batched forward crashed
    ys = [np.ones((3, 3))]
    ys[0] = np.outer(x, x)
    ys[0] = np.ones((3, 3))
    return np.sum(ys[0]) * x


def vector_item_made_constant(x):
    ys = [x * 2.0]
    ys[0] = np.ones(3)
    return np.sum(ys[0]) * x


def item_changing_shape(x):
    ys = [x]
    ys[0] = np.outer(x, x)
    return np.sum(ys[0] * 2.0) + np.sum(x)


def display_item_made_constant(x):  # G1b: the overwritten item of the display depended on x
    ys = [np.ones(3), x + x]
    ys[1] = np.zeros(3)
    return np.sum(ys[0]) + np.sum(x)


def chain_of_three(x):  # G4: ([a] + ys) + [b], read as array arithmetic (an IndexError)
    ys = [x * 2.0]
    ys = [np.sin(x)] + ys + [x * 3.0]
    return np.sum(ys[2] * ys[1])


def chain_of_floats(x):  # G4 with float items: f's own value was wrong in every transformer mode
    ys = [0.1, 0.2]
    ys = [0.5] + ys + [np.sum(x)]
    zs = ys + ys
    return ys[0] * ys[1] * ys[3] + np.sum(x) * zs[7]


CASES = [display_item_made_constant, chain_of_three, chain_of_floats, item_overwritten_with_a_constant, vector_item_made_constant, item_changing_shape, grown_in_a_loop, two_displays, name_and_display, repeated, repeated_then_written, scalars,
         slices_concatenated, tuples, item_writes, array_rows_written, list_name_holding_an_array]


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_every_mode_agrees(f):
    check_modes(f, [np.array([0.3, 0.7, 1.1])])  # raises on a wrong number or a crash in any mode


def _pair(x):
    return [x, np.sin(x)]


def concatenated_call_results(x):
    a = _pair(x)
    b = a + _pair(x * 2.0)
    return np.sum(b[0] * b[3])


def test_lists_it_cannot_see_are_refused_not_summed():
    # `a + _pair(...)`: neither operand is visibly a list, so the transformer reads NumPy's add;
    # its adjoint then meets a list and says so, instead of summing the items (a wrong number)
    with pytest.raises(TypeError, match="is a Python list"):
        dt.grad(concatenated_call_results)(np.array([0.3, 0.7, 1.1]))


# A list a loop rebuilds with `.append` (issue 19): the loop's backward sweep recomputed
# `acc1 = []; v4 = sum(acc1)` without the append (an impure statement), so v4 was 0 and the
# gradient 0 for 0.5. A mutator method call now writes its receiver: pushed as a copy
# (`saved(acc)`) where the list outlives the iteration, replayed on a version in the recomputation.
def rebuilt_each_iteration(x0, x1):  # the program: d/dx1 is 0.5, grad gave 0
    for i0 in range(1):
        acc1 = []
        acc1.append(0.5)
        v4 = sum(acc1)
        x0 = x1 * v4
    return np.sum(x0)


def rebuilt_twice(x0, x1):
    for i0 in range(2):
        acc1 = []
        acc1.append(0.5)
        acc1.append(1.5)
        v4 = sum(acc1)
        x0 = x0 * x1 * v4
    return np.sum(x0)


def grown_across_iterations(x0, x1):  # the backward sweep read the final list in every pass
    acc = []
    for i in range(3):
        acc.append(0.5)
        v = sum(acc)
        x0 = x0 * v + x1
    return np.sum(x0)


def read_after_the_loop(x0, x1):
    for i in range(2):
        acc = []
        acc.append(0.5 + i)
        x0 = x0 * x1
    return np.sum(x0) * sum(acc)


def other_mutators_in_a_while(x0, x1):
    k = 0
    while k < 2:
        acc = [0.5]
        acc.extend([1.0, 2.0 + k])
        acc.reverse()
        v = acc[0]
        x0 = x0 * x1 * v
        k += 1
    return np.sum(x0)


def popped_in_a_loop(x0, x1):
    acc = [1.0, 2.0, 3.0, 4.0]
    for i in range(3):
        v = acc.pop()
        x0 = x0 * v + x1 * x0
    return x0


APPENDED = [rebuilt_each_iteration, rebuilt_twice, grown_across_iterations, read_after_the_loop,
            other_mutators_in_a_while, popped_in_a_loop]


@pytest.mark.parametrize("f", APPENDED, ids=[f.__name__ for f in APPENDED])
def test_lists_changed_in_place_in_a_loop(f):
    check_modes(f, [0.7, 1.3])


def test_rebuilt_list_gradient():
    assert dt.grad(rebuilt_each_iteration, argnums=(0, 1))(1.0, 3.0) == (0.0, 0.5)


V1 = np.array([0.3, -0.2])


def module_functions_named_like_methods(x0, x1):  # the program checker (seed 11, program 597)
    for i in range(2):
        s = np.sort(V1)  # np.sort is NumPy's function, not a list's .sort(): `np` was saved as a
        x0 = x0 * x1 + s[0]  # value the call changes, and the forward sweep read np = None
    return np.sum(x0)


def test_a_module_function_is_not_a_mutator():
    check_modes(module_functions_named_like_methods, [0.7, 1.3])


def push(acc, v):
    acc.append(v * 1.0)


def take(acc):
    return acc.pop()


def pushed_by_a_helper(x0, x1):  # the program checker's list_mutation, in a loop: a wrong gradient
    for i0 in range(2):
        acc1 = [0.25]
        push(acc1, 0.5)
        v4 = np.sum(np.stack(acc1))
        x0 = x1 * v4 * x0
    return np.sum(x0)


def pushed_and_taken_by_helpers(x0, x1):  # ... and a crash (the recomputed take() popped [0.25] empty)
    for i0 in range(2):
        acc1 = [0.25]
        push(acc1, 0.5)
        s = take(acc1) * np.sum(np.stack(acc1))
        x0 = x1 * s * x0
    return np.sum(x0)


@pytest.mark.parametrize("f", [pushed_by_a_helper, pushed_and_taken_by_helpers])
def test_lists_changed_by_a_called_function_in_a_loop(f):
    check_modes(f, [0.7, 1.3])
