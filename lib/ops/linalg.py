"""Linear algebra: matmul and einsum, and the products built on einsum (np.linalg's solve,
inv, det, slogdet and cholesky are in `linalg_np`).

`einsum` is the one general product primitive: tensordot, dot, outer, inner, trace and
diagonal are public functions that write their subscripts and call it, so they share its
rules. Its subscripts are normalized to an explicit form without ellipsis ("ij,jk->ik"),
which the VJP rule reads to swap the output's and the operand's subscripts.
"""

import string
from collections import Counter

import numpy as np

from ..core import dnp
from ..core.registry import defop
from ..core.rulekit import einsum_vjp_rows, matmul_cotangent_x, matmul_cotangent_y, replace_at
from ..core.rulekit.shapes import shape_of

__all__ = ["matmul", "einsum", "tensordot", "dot", "outer", "inner", "trace", "diagonal"]


# -- matmul ----------------------------------------------------------------------------------

def matmul_vjp_x(g, ans, x, y):
    return matmul_cotangent_x(g, x, y)


def matmul_vjp_y(g, ans, x, y):
    return matmul_cotangent_y(g, x, y)


def matmul_jvp_x(dx, ans, x, y):
    return dnp.matmul(dx, y)


def matmul_jvp_y(dy, ans, x, y):
    return dnp.matmul(x, dy)


def _sample_mm(rng):
    return (rng.standard_normal((3, 4)), rng.standard_normal((4, 2))), {}


def _sample_mv(rng):
    return (rng.standard_normal((3, 4)), rng.standard_normal(4)), {}


def _sample_vm(rng):
    return (rng.standard_normal(4), rng.standard_normal((4, 2))), {}


def _sample_batched(rng):
    return (rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))), {}


def _sample_broadcast_stacks(rng):
    return (rng.standard_normal((2, 1, 3, 4)), rng.standard_normal((3, 4, 2))), {}


def _sample_vv(rng):
    return (rng.standard_normal(4), rng.standard_normal(4)), {}


MATMUL = defop("MatMul", np.matmul, vjp=(matmul_vjp_x, matmul_vjp_y),
               jvp=(matmul_jvp_x, matmul_jvp_y), batch_vjp=True,
               samples=(_sample_mm, _sample_mv, _sample_vm, _sample_batched,
                        _sample_broadcast_stacks, _sample_vv), complex=True)

matmul = MATMUL


# -- einsum ----------------------------------------------------------------------------------

def _einsum(*operands, subscripts):
    return np.einsum(subscripts, *operands, optimize=len(operands) > 2)


def einsum_vjp_rule(g, ans, *operands, argnum, subscripts):
    return einsum_vjp_rows(g, operands, argnum, subscripts)


def einsum_jvp_rule(dx, ans, *operands, argnum, subscripts):
    return dnp.einsum(subscripts, *replace_at(operands, argnum, dx))  # linear in each operand


def _sample_einsum_matmul(rng):
    return (rng.standard_normal((3, 4)), rng.standard_normal((4, 2))), {"subscripts": "ij,jk->ik"}


def _sample_einsum_batch_diagonal(rng):  # the advanced-autodiff guide's 'bxby->bxy'
    return (rng.standard_normal((3, 2, 3, 4)),), {"subscripts": "bxby->bxy"}


def _sample_einsum_trace(rng):
    return (rng.standard_normal((3, 3)),), {"subscripts": "ii->"}


def _sample_einsum_three(rng):
    return (rng.standard_normal((2, 3)), rng.standard_normal((3, 4)),
            rng.standard_normal(4)), {"subscripts": "ij,jk,k->i"}


def _sample_einsum_broadcast(rng):  # '...ij,...jk' with a size-1 batch axis
    return (rng.standard_normal((2, 1, 3, 4)), rng.standard_normal((5, 4, 2))), {
        "subscripts": explicit_subscripts("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)])}


def _sample_einsum_summed_away(rng):
    return (rng.standard_normal((3, 4)), rng.standard_normal(2)), {"subscripts": "ij,k->ki"}


EINSUM = defop("Einsum", _einsum, vjp=einsum_vjp_rule, jvp=einsum_jvp_rule, variadic=True,
               batch_vjp=True,
               samples=(_sample_einsum_matmul, _sample_einsum_batch_diagonal, _sample_einsum_trace,
                        _sample_einsum_three, _sample_einsum_broadcast, _sample_einsum_summed_away), complex=True)


def explicit_subscripts(subscripts, shapes):
    """'...ij,jk' -> 'aij,jk->aik': ellipses become letters, the implicit output explicit."""
    spec = subscripts.replace(" ", "")
    lhs, arrow, output = spec.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(shapes):
        raise ValueError(f"[Einsum] subscripts {subscripts!r} name {len(inputs)} operands but "
                         f"{len(shapes)} were given. Give one term per operand.")
    letters = [c for c in string.ascii_letters if c not in spec]
    width = max([len(s) - len(t.replace("...", "")) for t, s in zip(inputs, shapes) if "..." in t],
                default=0)
    ellipsis = "".join(letters[:width])
    terms = []
    for term, shape in zip(inputs, shapes):
        if "..." in term:
            term = term.replace("...", ellipsis[width - (len(shape) - len(term) + 3):])
        if len(term) != len(shape) or not term.isalpha() and term:
            raise ValueError(f"[Einsum] term {term!r} of {subscripts!r} does not fit an operand "
                             f"of shape {tuple(shape)}: give one letter per axis, or use '...'.")
        terms.append(term)
    if arrow:
        output = output.replace("...", ellipsis)
    else:  # NumPy's implicit output: the broadcast axes, then the letters used once, sorted
        counts = Counter(c for t in inputs for c in t if c.isalpha())
        output = ellipsis + "".join(sorted(c for c, n in counts.items() if n == 1))
    return ",".join(terms) + "->" + output




def _sublist_subscripts(args):
    """einsum(a, [0, 1], b, [1, 2], [0, 2]) as ('ab,bc->ac', (a, b)); Ellipsis is '...'. With no
    output list, NumPy's output is the labels used once in increasing order of the ints (not of
    the letters: 30 is 'E', which sorts before 'c'), after '...' if any."""
    def term(sub):
        return "".join("..." if s is Ellipsis else string.ascii_letters[int(s)] for s in sub)
    operands, subs = args[0:len(args) - len(args) % 2:2], args[1:len(args) - len(args) % 2:2]
    spec = ",".join(term(s) for s in subs)
    if len(args) % 2:
        return spec + "->" + term(args[-1]), tuple(operands)
    labels = Counter(int(s) for sub in subs for s in sub if s is not Ellipsis)
    output = [Ellipsis] * any(Ellipsis in list(sub) for sub in subs) + sorted(k for k, c in labels.items() if c == 1)
    return spec + "->" + term(output), tuple(operands)


def einsum(subscripts, *operands, out=None, optimize=False, **kwargs):
    """NumPy's einsum: any subscripts, including '...' and an implicit output.

    >>> dnp.einsum('ij,j->i', np.eye(2), np.array([1.0, 2.0]))
    array([1., 2.])
    """
    if not isinstance(subscripts, str) and out is None:  # the sublist form: a, [0, 1], b, [1, 2], [0, 2]
        subscripts, operands = _sublist_subscripts((subscripts,) + operands)
    if out is not None or not isinstance(subscripts, str):
        raise TypeError("[Einsum] only einsum('ij,jk->ik', a, b) and the sublist form without out= "
                        "are supported on differentiable values.")
    shapes = tuple([shape_of(o) for o in operands])
    key = (subscripts, shapes)
    explicit = _EXPLICIT.get(key)
    if explicit is None:
        explicit = explicit_subscripts(subscripts, shapes)
        if len(_EXPLICIT) > 1024:
            _EXPLICIT.clear()
        _EXPLICIT[key] = explicit
    return EINSUM(*operands, subscripts=explicit)


_EXPLICIT = {}  # (subscripts, shapes) -> explicit_subscripts: a rule's einsum parses them once


def tensordot(a, b, axes=2):
    if np.ndim(axes) == 0:
        n = int(axes)
        axes_a, axes_b = list(range(np.ndim(a) - n, np.ndim(a))), list(range(n))
    else:
        axes_a, axes_b = ([int(i)] if np.ndim(i) == 0 else [int(j) for j in i] for i in axes)
    if len(axes_a) != len(axes_b):
        raise ValueError(f"[tensordot] axes {axes!r} pair {len(axes_a)} axes of a with "
                         f"{len(axes_b)} of b. Give the same number of axes for each.")
    shape_a, shape_b = np.shape(a), np.shape(b)
    if [shape_a[i] for i in axes_a] != [shape_b[j] for j in axes_b]:
        raise ValueError(f"[tensordot] shape-mismatch for sum: axes {axes_a} of a {shape_a} "
                         f"and {axes_b} of b {shape_b} differ in size. Pair axes of equal size.")
    letters = iter(string.ascii_letters)
    term_a = [next(letters) for _ in range(np.ndim(a))]
    term_b = [next(letters) for _ in range(np.ndim(b))]
    for i, j in zip(axes_a, axes_b):
        term_b[j % np.ndim(b)] = term_a[i % np.ndim(a)]
    contracted = {term_a[i % np.ndim(a)] for i in axes_a}
    output = [c for c in term_a + term_b if c not in contracted]
    return EINSUM(a, b, subscripts=f"{''.join(term_a)},{''.join(term_b)}->{''.join(output)}")


def dot(a, b, out=None):
    if out is not None:
        raise TypeError("[dot] out= is not supported on differentiable values; use the result.")
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return dnp.multiply(a, b)
    if np.ndim(a) <= 2 and np.ndim(b) <= 2:
        return MATMUL(a, b)
    return tensordot(a, b, axes=([-1], [max(np.ndim(b) - 2, 0)]))


def outer(a, b, out=None):
    if out is not None:
        raise TypeError("[outer] out= is not supported on differentiable values; use the result.")
    return EINSUM(dnp.ravel(a), dnp.ravel(b), subscripts="i,j->ij")


def inner(a, b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return dnp.multiply(a, b)
    return tensordot(a, b, axes=([-1], [-1]))


def _diagonal_block(a, offset, axis1, axis2):
    """`a` with axis1, axis2 moved last and cut to the square block holding the diagonal."""
    x = dnp.moveaxis(a, (axis1, axis2), (-2, -1))
    rows, cols = np.shape(x)[-2:]
    row0, col0 = max(-offset, 0), max(offset, 0)
    size = max(0, min(rows - row0, cols - col0))
    if (row0, col0, size, size) == (0, 0, rows, cols):
        return x
    return dnp.getitem(x, (Ellipsis, slice(row0, row0 + size), slice(col0, col0 + size)))


def diagonal(a, offset=0, axis1=0, axis2=1):
    return EINSUM(_diagonal_block(a, offset, axis1, axis2),
                  subscripts=explicit_subscripts("...ii->...i", [np.shape(a)]))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    if dtype is not None or out is not None:
        raise TypeError("[trace] dtype= and out= are not supported on differentiable values.")
    return EINSUM(_diagonal_block(a, offset, axis1, axis2),
                  subscripts=explicit_subscripts("...ii->...", [np.shape(a)]))


dnp.export(globals())
