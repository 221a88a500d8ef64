"""No reference cycles (issue 13): gradients, tapes and dual numbers are freed by reference
counting alone.

Each test runs an API many times with the cyclic collector off, then checks that the
collector finds nothing to free, that no gc-tracked object is left over, and that traced
memory did not grow. A cycle anywhere (a closure calling itself, a closure over `self`
stored on `self`, an exception held by a frame of its own traceback) fails the first
check; a cache keyed by per-call objects fails the last two. Inputs are tiny, so the
1,000 calls per API stay cheap.
"""

import functools
import gc
import math
import pathlib
import tracemalloc
import types

import numpy as np
import pytest

import dualtape as tf
from dualtape import dnp

CALLS = 1000  # gradients, jvps and hvps, as the issue asks
FEWER = 200  # the costlier APIs (jacobians, custom rules, layers, generated code)
BYTES_PER_CALL = 16  # traced growth allowed per call: less than any object left behind
POOL_BYTES = 16 * 1024  # NumPy's small-allocation pools: they keep filling for thousands of calls

X = np.array([0.3, -1.2, 0.7])


def leftovers(fn, calls):
    """(objects the cyclic collector frees, gc-tracked objects left, bytes left) after
    `calls` calls of `fn` with the collector off."""
    enabled = gc.isenabled()
    gc.disable()
    # The objects made before (and any garbage among them) are frozen: out of every collection
    # and count below, which then see only what the calls make. (Collecting and counting the
    # whole heap of a full test run cost seconds a test, five times per test.)
    gc.freeze()
    tracemalloc.start()
    try:
        # As many calls first, traced too: they fill the caches (rule reads, compiled
        # specializations) and the bounded pools of NumPy and CPython, whose churn is no leak.
        for _ in range(calls):
            fn()
        gc.collect()  # also empties the free lists, whose contents tracemalloc counts
        objects = len(gc.get_objects())
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(calls):
            fn()
        left = len(gc.get_objects()) - objects
        cyclic = gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        gc.unfreeze()
        if enabled:
            gc.enable()
    return cyclic, left, grown


def assert_freed(fn, calls):
    cyclic, left, grown = leftovers(fn, calls)
    assert cyclic == 0, f"{cyclic} objects in reference cycles after {calls} calls"
    assert left <= 0, f"{left} gc-tracked objects left after {calls} calls"
    assert grown < BYTES_PER_CALL * calls + POOL_BYTES, f"memory grew by {grown} bytes over {calls} calls"


def f(x):
    return np.sum(np.tanh(x) ** 2)


def vector_f(x):
    return np.tanh(x) * x


# -- the functional API -------------------------------------------------------------------------

FUNCTIONAL = {
    "grad": lambda: tf.grad(f)(X),
    "grad_argnums_aux": lambda: tf.grad(lambda a, b: (np.sum(a * b), a), argnums=(0, 1),
                                        has_aux=True)(X, X),
    "grad_dict": lambda: tf.grad(lambda d: np.sum(d["a"] * np.sin(d["b"])))({"a": X, "b": X}),
    "value_and_grad": lambda: tf.value_and_grad(f)(X),
    "vjp_and_pullback": lambda: tf.vjp(vector_f, X)[1](np.ones(3)),
    "jvp": lambda: tf.jvp(f, (X,), (X,)),
    "jvp_vector": lambda: tf.jvp(vector_f, (X,), (X,)),
    "jvp_nested_input": lambda: tf.jvp(lambda d: d["a"] * d["b"], ({"a": X, "b": X},),
                                       ({"a": X, "b": X},)),
    "linearize": lambda: tf.linearize(vector_f, X)[1](X),
    "hvp": lambda: tf.hvp(f, (X,), (X,)),
    "hvp_nested_input": lambda: tf.hvp(lambda p: np.sum(np.tanh(p[0]) * p[1]), ([X, X],), ([X, X],)),
    "jvp_of_grad": lambda: tf.jvp(tf.grad(f), (X,), (X,)),
    "grad_of_grad": lambda: tf.grad(lambda a: np.sum(tf.grad(f)(a)))(X),
}

JACOBIANS = {
    "jacfwd": lambda: tf.jacfwd(vector_f)(X),
    "jacfwd_chunked": lambda: tf.jacfwd(vector_f, chunk_size=2)(X),
    "jacrev": lambda: tf.jacrev(vector_f)(X),
    "jacobian": lambda: tf.jacobian(vector_f)(X),
    "hessian": lambda: tf.hessian(f)(X),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONAL))
def test_functional_api_leaves_no_cycles(name):
    assert_freed(FUNCTIONAL[name], CALLS if name in ("grad", "jvp", "jvp_vector", "hvp") else FEWER)


@pytest.mark.parametrize("name", sorted(JACOBIANS))
def test_jacobians_leave_no_cycles(name):
    assert_freed(JACOBIANS[name], FEWER)


# -- GradientTape and ForwardAccumulator -------------------------------------------------------

V = tf.Variable(X)


def tape_gradient():
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.tanh(V) ** 2)
    return tape.gradient(y, V)


def tape_gradient_structure():
    c = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(c)
        y = np.sum(np.sin(c) * V)  # NumPy calls on tensors are recorded too
    return tape.gradient(y, {"c": c, "v": [V]})


def tape_persistent():
    with tf.GradientTape(persistent=True) as tape:
        y = tf.reduce_sum(V * V)
        z = y * y
    return tape.gradient(y, V), tape.gradient(z, V)


def tape_nested():
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.reduce_sum(V * V * V)
        g = inner.gradient(y, V)
    return outer.gradient(g, V)


def tape_jacobian():
    with tf.GradientTape(persistent=True) as tape:
        y = tf.tanh(V) * V
    return tape.jacobian(y, V), tape.jacobian(y, V, experimental_use_pfor=False)


def tape_batch_jacobian():
    c = tf.constant(np.reshape(np.linspace(0.1, 0.6, 6), (2, 3)))
    with tf.GradientTape() as tape:
        tape.watch(c)
        y = tf.tanh(c) * c
    return tape.batch_jacobian(y, c)


def accumulator():
    with tf.autodiff.ForwardAccumulator(V, tf.constant(X)) as acc:
        y = tf.reduce_sum(tf.tanh(V) ** 2)
    return acc.jvp(y)


def accumulator_over_tape():
    with tf.autodiff.ForwardAccumulator(V, tf.constant(X)) as acc:
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.tanh(V) ** 2)
        g = tape.gradient(y, V)
    return acc.jvp(g)


TAPES = {fn.__name__: fn for fn in (tape_gradient, tape_gradient_structure, tape_persistent,
                                    tape_nested, accumulator, accumulator_over_tape)}


@pytest.mark.parametrize("name", sorted(TAPES))
def test_tapes_leave_no_cycles(name):
    assert_freed(TAPES[name], CALLS if name in ("tape_gradient", "accumulator") else FEWER)


@pytest.mark.parametrize("fn", [tape_jacobian, tape_batch_jacobian], ids=lambda fn: fn.__name__)
def test_tape_jacobians_leave_no_cycles(fn):
    assert_freed(fn, FEWER)


# -- custom derivatives --------------------------------------------------------------------------

@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def backward(dy):
        return dy * (1 - 1 / (1 + e))

    return tf.math.log(1 + e), backward


@tf.custom_jvp
def softplus(x):
    return dnp.log1p(dnp.exp(x))


@softplus.defjvp
def softplus_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return softplus(x), dx / (1 + dnp.exp(-x))


@functools.partial(tf.custom_vjp, nondiff_argnums=(0,))
def clip_gradient(limit, x):
    return dnp.sin(x)


clip_gradient.defvjp(lambda limit, x: (dnp.sin(x), dnp.cos(x)),
                     lambda limit, cos, g: (dnp.clip(g * cos, -limit, limit),))


@tf.primitive
def erf(x):
    return np.vectorize(math.erf, otypes=[float])(x)


tf.defvjp(erf, lambda ans, x: lambda g: g * 2 / np.sqrt(np.pi) * np.exp(-x * x))


def custom_tape():
    with tf.GradientTape() as tape:
        y = (tf.reduce_sum(log1pexp(V)) + tf.reduce_sum(softplus(V))
             + tf.reduce_sum(clip_gradient(1.0, V)) + tf.reduce_sum(erf(V)))
    return tape.gradient(y, V)


CUSTOM = {
    "tape": custom_tape,
    "grad": lambda: tf.grad(lambda a: dnp.sum(log1pexp(a) + softplus(a) + clip_gradient(1.0, a)
                                              + erf(a)))(X),
    "jvp": lambda: tf.jvp(lambda a: log1pexp(a) + softplus(a) + erf(a), (X,), (X,)),
    # regression: #13, the rule-read cache of hvp kept every call's custom-gradient op alive
    "hvp_custom_gradient": lambda: tf.hvp(lambda a: dnp.sum(log1pexp(a)), (X,), (X,)),
    "hvp_custom_jvp": lambda: tf.hvp(lambda a: dnp.sum(softplus(a)), (X,), (X,)),
    "jacrev_grad_custom_vjp": lambda: tf.jacrev(tf.grad(lambda a: dnp.sum(clip_gradient(1.0, a) * a)))(X),
    "hvp_custom_vjp_refused": lambda: _refused(lambda: tf.hvp(lambda a: dnp.sum(clip_gradient(1.0, a)), (X,), (X,))),
    "hessian_primitive": lambda: tf.hessian(lambda a: dnp.sum(erf(a)))(X),
}


def _refused(call):
    """Forward over reverse through a custom_vjp is refused (as in JAX): the error, caught."""
    try:
        call()
    except TypeError as error:
        assert "can't apply forward-mode autodiff" in str(error)
    else:
        raise AssertionError("hvp of a custom_vjp function was not refused")


@pytest.mark.parametrize("name", sorted(CUSTOM))
def test_custom_derivatives_leave_no_cycles(name):
    assert_freed(CUSTOM[name], FEWER)


def new_rules():
    """Custom rules declared per call (inside a function): the rules hold no cycle either."""
    @tf.custom_jvp
    def sin(x):
        return dnp.sin(x)

    sin.defjvps(lambda t, ans, x: t * dnp.cos(x))  # regression: #13, the rule closed over self
    square = tf.primitive(lambda x: x * x)
    tf.defvjp(square, lambda ans, x: lambda g: 2 * g * x)  # regression: #13, rules held the op
    return tf.grad(lambda a: dnp.sum(sin(a) + square(a)))(X)


def test_rules_declared_per_call_leave_no_cycles():
    assert_freed(new_rules, FEWER)


def refused_forward_mode():
    # regression: #13, the refusal was raised from a local of a frame its traceback holds
    t = tf.constant(X)
    try:
        with tf.autodiff.ForwardAccumulator(t, tf.constant(np.ones(3))):
            clip_gradient(1.0, t)
    except TypeError:
        return
    raise AssertionError("custom_vjp under an accumulator should be refused")


ERRORS = {
    "custom_vjp_forward_mode": refused_forward_mode,
    "escape": lambda: tf.grad(lambda a: float(np.sum(a)))(X),
    "op_error": lambda: tf.jvp(lambda a: a @ np.ones((4, 4)), (X,), (X,)),
    "bad_tangent": lambda: tf.jvp(np.sin, (X,), (np.ones(4),)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_leave_no_cycles(name):
    def call():
        try:
            ERRORS[name]()
        except (TypeError, ValueError):
            pass

    assert_freed(call, FEWER)


# -- Module and layers -----------------------------------------------------------------------------

class Affine(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.ones((3, 2), dtype=np.float32))
        self.parts = [tf.Variable(1.0), {"b": tf.Variable(np.zeros(2, dtype=np.float32))}]

    def __call__(self, x):
        return tf.matmul(x, self.w) * self.parts[0] + self.parts[1]["b"]


BATCH = tf.constant(np.reshape(np.linspace(-1.0, 1.0, 6), (2, 3)).astype(np.float32))
DENSE = tf.keras.layers.Dense(4, activation="tanh")
NORM = tf.keras.layers.BatchNormalization()
AFFINE = Affine()


def layers_gradient():
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(NORM(DENSE(BATCH), training=True) ** 2) + tf.reduce_sum(AFFINE(BATCH))
    return tape.gradient(y, DENSE.trainable_variables + NORM.trainable_variables
                         + list(AFFINE.trainable_variables))  # keras lists, tf.Module tuples (as TF)


def test_modules_and_layers_leave_no_cycles():
    assert_freed(layers_gradient, FEWER)
    assert_freed(lambda: Affine().variables, FEWER)


# -- generated code ----------------------------------------------------------------------------------

SOURCE = '''
import math
import numpy as np

def f(x, y):
    z = x * y
    s = np.sin(z)
    return np.sum(s + x)

def loop(a, n):
    s = 0.0
    for i in range(n):
        s = s + math.sin(a * i)
    return s

def h(x):
    return np.sum(np.tanh(x) ** 2)

def jumps(a, n):
    s = 0.0
    for i in range(n):
        if i > 2:
            break
        if i == 1:
            continue
        if (b := a * i) > 0.1:
            s = s + math.sin(b)
    return s
'''


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    import importlib.util

    import dualtape.transforms as dt

    path = pathlib.Path(tmp_path_factory.mktemp("no_cycles")) / "no_cycles_example.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("no_cycles_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {
        "module": module,
        "grad": functools.partial(dt.grad(module.f, wrt=(0, 1)), X, X),
        "grad_scalars": functools.partial(dt.grad(module.f, wrt=(0, 1)), 0.5, 2.0),
        "grad_loop": functools.partial(dt.grad(module.loop), 0.5, 4),
        "jvp": functools.partial(dt.jvp(module.h), X, X),
        "hvp": functools.partial(dt.hvp(module.h), X, X),
    }


@pytest.mark.parametrize("name", ["grad", "grad_scalars", "grad_loop", "jvp", "hvp"])
def test_generated_code_leaves_no_cycles(generated, name):
    assert_freed(generated[name], FEWER)


def test_transforming_leaves_no_cycles(generated):
    """Transforming (parse, desugar, dead code, emit) leaves no cycle: regression #13, the
    passes' recursive helpers called themselves through their closure cells. Each transform
    stays in its function's cache and the functions are kept, so only the passes' garbage is
    counted (a transform is freed with its function: tests/test_transforms_cache.py)."""
    import dualtape.transforms as dt

    module = generated["module"]
    kept = []

    def transform():
        for name in ("f", "jumps"):  # a fresh function object each time: no cache hit
            original = getattr(module, name)
            fresh = types.FunctionType(original.__code__, original.__globals__, name)
            kept.append(fresh)
            dt.grad(fresh)
            dt.jvp(fresh)

    assert leftovers(transform, 10)[0] == 0


# -- the detector itself -------------------------------------------------------------------------------

def test_detector_sees_a_cycle_and_a_leak():
    """The checks above can fail: a closure calling itself, or a growing cache, is caught."""
    def cyclic():
        def build(n):
            return 0 if n == 0 else build(n - 1)
        return build(2)

    cache = []
    assert leftovers(cyclic, 100)[0] > 0
    assert leftovers(lambda: cache.append(np.ones(3)), 200)[2] >= BYTES_PER_CALL * 200 + POOL_BYTES
    assert leftovers(lambda: cache.append([]), 200)[1] >= 200  # gc-tracked objects left behind
