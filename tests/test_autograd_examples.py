"""The corpus of objectives after HIPS autograd's examples (benchmarks/autograd_examples.py):
(a) each tape gradient against central finite differences along random directions (the corpus
itself is right); (b) each objective the transformer accepts gives the tape's gradient, and
each one it refuses is refused with a TransformError (not another exception)."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import autograd_examples as corpus  # noqa: E402

from dualtape.transforms import TransformError  # noqa: E402

NAMES = [e.name for e in corpus.EXAMPLES]
EXAMPLES = dict(zip(NAMES, corpus.EXAMPLES))

# The GAN's value is the difference of two means of log-sigmoids of logits about 0.001 (terms
# of 0.69, a gradient of 1e-7, parameters of 0.001): its finite differences are taken in long
# double with a step of 1e-6, where they are good to about 2e-6 (1e-19 * 0.69 / 1e-6 of
# rounding, relu kinks within a step of some pre-activations), and checked within 1e-5; a wrong
# rule is off by far more. The others: float64, a step of 1e-5, within 1e-6.
LONG_DOUBLE = {"generative_adversarial_net": (1e-6, 1e-5)}

# Objectives accepted but wrong today (name -> why); each is a strict expected failure: the test
# fails once the transformer gets it right, to take it out of here.
KNOWN_WRONG = {}


def with_leaves(tree, values, dtype=float):
    """`tree` with its arrays and floats replaced, in corpus.leaves' order, by the next items of
    the iterator `values` (lists and tuples keep their type, dicts their keys)."""
    if isinstance(tree, dict):
        return {k: with_leaves(tree[k], values, dtype) for k in sorted(tree)}
    if isinstance(tree, (list, tuple)):
        return type(tree)(with_leaves(t, values, dtype) for t in tree)
    if isinstance(tree, np.ndarray):
        return np.array([next(values) for _ in range(tree.size)], dtype=dtype).reshape(tree.shape)
    return dtype(next(values))


def argnums(example):
    return example.argnums if isinstance(example.argnums, tuple) else (example.argnums,)


def moved(example, direction, h, dtype=float):
    """example.args with the differentiated ones moved by h * direction (one vector over all)."""
    args, start = list(example.args), 0
    for i in argnums(example):
        flat = corpus.leaves(args[i]).astype(dtype)
        step = dtype(h) * direction[start:start + flat.size].astype(dtype)
        args[i] = with_leaves(args[i], iter(flat + step), dtype)
        start += flat.size
    return args


@pytest.mark.parametrize("name", NAMES)
def test_tape_matches_finite_differences(name):
    example = EXAMPLES[name]
    g = corpus.tape_grad(example)
    g = corpus.leaves(g if isinstance(example.argnums, tuple) else (g,))
    rng = np.random.default_rng(7)
    dtype = np.longdouble if name in LONG_DOUBLE else float
    h, rtol = LONG_DOUBLE.get(name, (1e-5, 1e-6))
    for _ in range(3):
        v = rng.standard_normal(g.size)
        fd = (example.f(*moved(example, v, h, dtype)) - example.f(*moved(example, v, -h, dtype))) / (2 * h)
        assert np.isclose(float(fd), float(g @ v), rtol=rtol, atol=1e-8 * np.abs(g) @ np.abs(v)), (name, fd, g @ v)


@pytest.mark.parametrize("name", NAMES)
def test_transformer_equals_tape_or_refuses(name):
    example = EXAMPLES[name]
    want = corpus.tape_grad(example)
    try:
        got = corpus.transform_grad(example)
    except TransformError as error:
        assert str(error).strip(), name  # a refusal names what it refuses
        return
    if name in KNOWN_WRONG:
        pytest.xfail(KNOWN_WRONG[name]) if not corpus.equal(got, want) else None
        pytest.fail(f"{name} is now right: take it out of KNOWN_WRONG")
    assert corpus.equal(got, want), (name, corpus.max_rel_error(got, want))


def test_corpus_has_fifteen_objectives():
    assert len(corpus.EXAMPLES) == 15 and len(set(NAMES)) == 15


def test_gan_gradient_near_its_long_double_value():
    """The GAN's discriminator gradient (1e-7) is the difference of its real- and fake-data
    parts (0.5 each), and on fake data its batch-normalized columns vary by 1e-11 of their mean:
    in float64 it is still within 1e-8 (normwise) of the same rules evaluated in long double,
    the transformer's as the tape's."""
    example = EXAMPLES["generative_adversarial_net"]
    args = list(example.args)
    args[:3] = [with_leaves(a, iter(corpus.leaves(a)), np.longdouble) for a in args[:3]]
    exact = corpus.dualtape.grad(example.f, argnums=example.argnums)(*args)
    assert exact[1][0][0].dtype == np.longdouble
    exact = corpus.leaves(exact)  # (rounded to float64: 1e-16)
    scale = np.max(np.abs(exact))
    for grad in (corpus.tape_grad, corpus.transform_grad):
        got = corpus.leaves(grad(example))
        assert float(np.max(np.abs(got - exact)) / scale) < 1e-8, grad.__name__
