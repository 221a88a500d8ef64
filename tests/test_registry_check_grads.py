"""HIPS autograd's second-order check, generated from the registry (issue 10, "Done when").

autograd's `check_grads(f, modes=["fwd", "rev"], order=2)` checks f, then runs the same
first-order check on f's VJP as a function of (x, v) and on its JVP as a function of
(x, u): forward over reverse (a jvp through a pullback whose cotangent is a dual number),
reverse over reverse, reverse over forward and forward over forward, each against
central differences. `dualtape.testing.check_grads(order=2)` does the same; here it runs
on every registry op with rules, on the inputs its samples or domain give.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualtape import dnp
from dualtape.registry import REGISTRY
from dualtape.testing import check_grads, differentiable_argnums, inputs_for

DIFF_OPS = [op for op in REGISTRY.values() if op.has_rules]


@pytest.mark.parametrize("op", DIFF_OPS, ids=lambda op: op.name)
@settings(max_examples=max(2, settings().max_examples // 5))
@given(data=st.data())
def test_autograd_style_second_order_check(op, data):
    args, static = data.draw(inputs_for(op), label="args, static")
    argnums = differentiable_argnums(op, args)
    assert argnums, f"[{op.name}] has rules but its drawn inputs have no differentiable input."

    def op_on_differentiable_inputs(*xs):
        full = list(args)
        for i, x in zip(argnums, xs):
            full[i] = x
        return op(*full, **static)

    op_on_differentiable_inputs.__qualname__ = op.name
    check_grads(op_on_differentiable_inputs, [args[i] for i in argnums], order=2,
                modes=("fwd", "rev"))


def _flipped_cos_jvp(dx, ans, x):
    return dx * dnp.sin(x)  # deliberately wrong sign: d cos = -sin


def test_order_2_runs_forward_over_reverse():
    """Sin's VJP calls Cos: a wrong Cos JVP shows only in a jvp through sin's pullback,
    which order 1 and the nested tapes (reverse over reverse) never run."""
    cos = REGISTRY["Cos"]
    saved = cos.jvp
    cos.jvp = (_flipped_cos_jvp,)
    try:
        x = np.array([0.3, -1.2, 0.8])
        check_grads(dnp.sin, [x], order=2, modes=("rev",))
        with pytest.raises(AssertionError, match="forward-mode JVP of vjp_of_"):
            check_grads(dnp.sin, [x], order=2, modes=("rev", "fwd"))  # the pullback first
    finally:
        cos.jvp = saved
