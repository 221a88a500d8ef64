"""User-defined primitives, autograd-style: `primitive`, `defvjp`, `defjvp`.

    digamma = dualtape.primitive(scipy.special.digamma)
    dualtape.defvjp(digamma, lambda ans, x: lambda g: g * scipy.special.polygamma(1, x))
    dualtape.defjvp(digamma, lambda g, ans, x: g * scipy.special.polygamma(1, x))

The primitive runs its function on plain values (so it may call any Python), and its rules
are used by the tape, dual numbers, `ForwardAccumulator` and the functional API. Unlike
`defop`'s rules, which are single-return templates the source transformer inlines, these
rules may be any Python: the primitive is marked `opaque` (runtime only), and the
transformer refuses it. Give one mode's rules and the other is derived by transposition
(the rules must then be linear in `g`, written with dualtape ops on it). Second order works
where the rules themselves are differentiable through dualtape ops.
"""

import inspect
import itertools
import weakref

from .bind import transpose
from ..core.registry import NOT_DIFFERENTIABLE, Primitive, Traced


def primitive(fun):
    """Make `fun` a primitive: traced values are unwrapped before it runs on plain values.

    >>> square = dualtape.primitive(lambda x: x * x)
    >>> dualtape.defvjp(square, lambda ans, x: lambda g: 2 * g * x)
    >>> dualtape.grad(square)(3.0)
    array(6.)
    """
    name = getattr(fun, "__name__", None) or type(fun).__name__
    op = Primitive(name=name, impl=fun, vjp=None, jvp=None, elementwise=False, variadic=False, domain={}, samples=(),
                   nondiff_argnums=(), batch_jvp=False)
    op.opaque = True
    _RULES[op] = ({}, {})
    return op


def defvjp(fun, *vjpmakers, argnums=None):
    """Declare VJPs: `maker(ans, *args, **kwargs)` returns `g -> gradient of args[argnum]`.

    One maker per argument, in order (or for the positions in `argnums`); None: that
    argument gets no gradient.
    """
    vjps, _ = _rules(fun, "defvjp")
    for argnum, maker in zip(_positions(argnums), vjpmakers):
        vjps[argnum] = NOT_DIFFERENTIABLE if maker is None else _from_maker(fun, maker)
    _refresh(fun)


def defjvp(fun, *jvpfuns, argnums=None):
    """Declare JVPs: `jvp(g, ans, *args, **kwargs)` is the output's tangent for a tangent
    `g` of args[argnum]. "same" applies `fun` itself to `g` (linear arguments); None: no
    tangent flows from that argument."""
    _, jvps = _rules(fun, "defjvp")
    for argnum, rule in zip(_positions(argnums), jvpfuns):
        if rule is None:
            jvps[argnum] = NOT_DIFFERENTIABLE
        elif rule == "same":
            jvps[argnum] = _same(fun, argnum)
        else:
            jvps[argnum] = _checked(fun, rule)
    _refresh(fun)


_RULES = weakref.WeakKeyDictionary()  # user primitive -> ({argnum: VJP rule}, {argnum: JVP rule}), as declared


def _rules(fun, api):
    if not (isinstance(fun, Primitive) and fun in _RULES):
        raise TypeError(f"[{api}] expects a primitive made by dualtape.primitive, got "
                        f"{getattr(fun, '__name__', type(fun).__name__)}. Wrap the function first: "
                        "f = dualtape.primitive(f).")
    return _RULES[fun]


def _positions(argnums):
    return itertools.count() if argnums is None else ([argnums] if isinstance(argnums, int) else argnums)


# The rules below hold the primitive's name, or a weak reference to it, never the primitive:
# it holds them (op.vjp, op.jvp, _RULES), so a strong one would make a cycle, and keep the
# primitive and its _RULES entry alive for good.

def _from_maker(op, maker):
    name = op.name

    def vjp(g, ans, *args, **kwargs):
        with _higher_order_context(name, "VJP", ans, args):
            return maker(ans, *args, **kwargs)(g)

    return vjp


def _checked(op, rule):
    name = op.name

    def jvp(g, ans, *args, **kwargs):
        with _higher_order_context(name, "JVP", ans, args):
            return rule(g, ans, *args, **kwargs)

    return jvp


class _higher_order_context:
    """Name the primitive when its rule fails on traced values (a higher-order derivative
    differentiates the rule itself, which then must be written with dualtape ops)."""

    def __init__(self, name, kind, ans, args):
        self.name, self.kind, self.traced = name, kind, any(isinstance(a, Traced) for a in (ans, *args))

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if self.traced and isinstance(error, TypeError):
            raise TypeError(f"[{self.name}] its {self.kind} rule failed on traced values: a "
                            "higher-order derivative differentiates the rule itself, so it must be "
                            f"written with dualtape ops (dnp) on its arguments. {error}") from error
        return False


def _same(op, argnum):
    op_ref = weakref.ref(op)  # the rule only runs while the primitive does

    def jvp(g, ans, *args, **kwargs):
        args = list(args)
        args[argnum] = g
        return op_ref()(*args, **kwargs)

    jvp.same = True
    return jvp


def _refresh(op):
    """Rebuild the op's rule tuples: declared rules, the other mode's transposed, or errors."""
    vjps, jvps = _RULES[op]
    n = max(list(vjps) + list(jvps) + [_arity(op.impl) - 1]) + 1
    op.vjp = tuple(_vjp_rule(op, i, vjps, jvps) for i in range(n))
    op.jvp = tuple(_jvp_rule(op, i, vjps, jvps) for i in range(n))


def _vjp_rule(op, i, vjps, jvps):
    if i in vjps:
        return vjps[i]
    jvp = jvps.get(i)
    if jvp is NOT_DIFFERENTIABLE:
        return NOT_DIFFERENTIABLE
    if jvp is None:
        return _missing(op, i, "VJP", "defvjp")
    if getattr(jvp, "same", False):
        # Transposing `fun` itself would record `fun` again and ask for this same VJP.
        return _missing(op, i, "VJP", "defvjp", why=' (its "same" JVP cannot be transposed into one)')

    def transposed_jvp(g, ans, *args, **kwargs):
        return transpose(lambda us: [jvp(us[0], ans, *args, **kwargs)], [args[i]], [g])[0]

    return transposed_jvp


def _jvp_rule(op, i, vjps, jvps):
    if i in jvps:
        return jvps[i]
    vjp = vjps.get(i)
    if vjp is NOT_DIFFERENTIABLE:
        return NOT_DIFFERENTIABLE
    if vjp is None:
        return _missing(op, i, "JVP", "defjvp")

    def transposed_vjp(t, ans, *args, **kwargs):
        return transpose(lambda us: [vjp(us[0], ans, *args, **kwargs)], [ans], [t])[0]

    return transposed_vjp


def _missing(op, i, kind, api, why=""):
    name = op.name

    def missing(*args, **kwargs):
        raise LookupError(f"[{name}] has no {kind} rule for argument {i}{why}: declare one with "
                          f"dualtape.{api}({name}, ..., argnums=[{i}]), or pass the argument "
                          "through dualtape.stop_gradient.")

    return missing


def _arity(fun):
    """The number of positional parameters of `fun` (0 when unknown or variadic)."""
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return 0
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return 0
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
               for p in params)
