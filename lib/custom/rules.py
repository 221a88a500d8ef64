"""`custom_jvp` and `custom_vjp`: JAX's decorators for functions with their own derivatives.

    @dualtape.custom_jvp
    def f(x, y): ...
    @f.defjvp
    def f_jvp(primals, tangents): return f(*primals), tangent_out

    @dualtape.custom_vjp
    def g(x): ...
    g.defvjp(fwd, bwd)   # fwd(*args) -> (out, residuals); bwd(residuals, g) -> tuple per arg

Both work under the tape, `ForwardAccumulator` and every functional transform. Under
reverse mode a `custom_jvp` function is linearized and transposed: its JVP rule must be
linear in the tangents and written with dualtape ops on them. As in JAX, a `custom_vjp`
function cannot be differentiated in forward mode (`jvp`, `jacfwd`, an accumulator with no
tape inside it): that raises a TypeError; `hessian` and `hvp` work (forward over reverse
differentiates `fwd` and `bwd` as ordinary code).
"""

import functools
import inspect

import numpy as np

from ..core import nest
from ..sparsity.custom import dense_custom, holds_patterns
from ..core import dnp
from .bind import as_duals, dual_level, per_direction, rebind, split_level, transpose
from ..reverse.dispatch import STATE
from ..core.registry import Traced
from ..forward.dual import Dual


class _Custom:
    """What custom_jvp and custom_vjp share: argument handling and nondiff_argnums."""

    _kind = "custom"

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.__dualtape_opaque__ = f"a {self._kind} function"
        self._in_rule = 0  # > 0 while a rule runs: a call of the function inside it is plain

    def _run_rule(self, rule, *args):
        """Call a rule; the function called inside its own rule (`fwd` returning f(x), a JVP
        rule computing f(*primals)) evaluates as ordinary code, as in JAX."""
        self._in_rule += 1
        try:
            return rule(*args)
        finally:
            self._in_rule -= 1

    def _split(self, args, kwargs):
        """(nondiff args, diff args, their flat leaves) of a call, kwargs resolved by name."""
        if kwargs:
            bound = inspect.signature(self.fun).bind(*args, **kwargs)
            bound.apply_defaults()
            if bound.kwargs:
                raise TypeError(f"[{self._kind}] {self.__name__} got keyword-only arguments "
                                f"{sorted(bound.kwargs)}; pass them positionally (or close over them).")
            args = bound.args
        for i in self.nondiff_argnums:
            if not -len(args) <= i < len(args):
                raise ValueError(f"[{self._kind}] {self.__name__}: nondiff_argnums={self.nondiff_argnums} "
                                 f"but it was called with {len(args)} positional arguments.")
        nondiff = {i % len(args) for i in self.nondiff_argnums}
        static = [args[i] for i in sorted(nondiff)]
        diff = [a for i, a in enumerate(args) if i not in nondiff]
        return tuple(args), static, diff, nest.flatten(diff)

    def __get__(self, instance, owner=None):
        return self if instance is None else functools.partial(self, instance)


class custom_jvp(_Custom):  # noqa: N801 - JAX's name
    """Give `fun` its own JVP rule, used by forward mode and (transposed) by reverse mode.

    >>> @dualtape.custom_jvp
    ... def log1pexp(x):
    ...     return np.log1p(np.exp(x))
    >>> @log1pexp.defjvp
    ... def log1pexp_jvp(primals, tangents):
    ...     (x,), (dx,) = primals, tangents
    ...     return log1pexp(x), dx / (1 + np.exp(-x))   # stable for large x
    """

    _kind = "custom_jvp"

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp):
        """jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)."""
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        """One rule per argument, each `jvp(tangent, primal_out, *primals)`; None: no tangent."""
        if self.nondiff_argnums:
            raise TypeError("[custom_jvp] defjvps cannot be used with nondiff_argnums; use defjvp.")
        fun = self.fun  # not `self`: the rule is stored on self, and would make a cycle

        def jvp(primals, tangents):
            ans = fun(*primals)
            total = None
            for rule, t in zip(jvps, tangents):
                if rule is not None:
                    part = rule(t, ans, *primals)
                    total = part if total is None else total + part
            return ans, np.zeros(np.shape(ans)) if total is None else total

        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise AttributeError(f"[custom_jvp] no JVP defined for {self.__name__}: declare one with "
                                 f"@{self.__name__}.defjvp before calling it.")
        if self._in_rule:
            return self.fun(*args, **kwargs)
        if holds_patterns(args, kwargs):  # sparsity detection: the rule may differentiate anything
            return dense_custom(args, kwargs, lambda a, k: self.fun(*a, **k))
        args, static, diff, leaves = self._split(args, kwargs)
        level = dual_level(leaves)
        if level is not None:
            tag, batch = level
            primals, tangents = split_level(leaves, tag)
            outs = []

            def jvp_fn(ts):
                out, tangent_out = self._rule(static, diff, primals, ts)
                outs[:] = [out]
                return _flat_like(out, tangent_out)

            out_tangents = per_direction(jvp_fn, tangents, batch)
            return as_duals(outs[0], out_tangents, tag, batch)
        if not (STATE.tapes or STATE.accumulators):
            return self.fun(*args)
        result = self.fun(*args)
        outputs = nest.flatten(result)

        def tangent_fn(ts):
            out, tangent_out = self._rule(static, diff, leaves, ts)
            return _flat_like(out, tangent_out)

        def vjp_fn(upstreams):
            return transpose(tangent_fn, leaves, [_zero_if_none(u, o) for u, o in zip(upstreams, outputs)])

        return rebind(self.__name__, leaves, result, vjp_fn, jvp_fn=tangent_fn)

    def _rule(self, static, diff, primal_leaves, tangent_leaves):
        tangent_leaves = [_zeros_like(p) if t is None else t for p, t in zip(primal_leaves, tangent_leaves)]
        primals = tuple(nest.pack_sequence_as(diff, primal_leaves))
        tangents = tuple(nest.pack_sequence_as(diff, tangent_leaves))
        out = self._run_rule(self.jvp, *static, primals, tangents)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"[custom_jvp] the JVP rule of {self.__name__} must return a pair "
                            f"(primal_out, tangent_out), got {type(out).__name__}.")
        return out


class custom_vjp(_Custom):  # noqa: N801 - JAX's name
    """Give `fun` its own VJP: `fwd(*args) -> (out, residuals)`, `bwd(residuals, g) -> grads`.

    >>> @dualtape.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (np.clip(g, -1.0, 1.0),))
    """

    _kind = "custom_vjp"

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd):
        """fwd(*args) -> (out, res); bwd(*nondiff_args, res, g) -> one cotangent per diff arg."""
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise AttributeError(f"[custom_vjp] no VJP defined for {self.__name__}: declare one with "
                                 f"{self.__name__}.defvjp(fwd, bwd) before calling it.")
        if self._in_rule:
            return self.fun(*args, **kwargs)
        if holds_patterns(args, kwargs):  # sparsity detection: the rule may differentiate anything
            return dense_custom(args, kwargs, lambda a, k: self.fun(*a, **k))
        args, static, diff, leaves = self._split(args, kwargs)
        if dual_level(leaves) is not None or any(_under_duals(leaf) for leaf in leaves):
            raise self._forward_error()
        if not (STATE.tapes or STATE.accumulators):
            return self.fun(*args)
        out = self._run_rule(self.fwd, *args)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"[custom_vjp] the fwd rule of {self.__name__} must return a pair "
                            f"(primal_out, residuals), got {type(out).__name__}.")
        result, residuals = out
        outputs = nest.flatten(result)

        def vjp_fn(upstreams):
            g = nest.pack_sequence_as(result, [_zero_if_none(u, o) for u, o in zip(upstreams, outputs)])
            grads = self._run_rule(self.bwd, *static, residuals, g)
            if not isinstance(grads, (tuple, list)) or len(grads) != len(diff):
                got = len(grads) if isinstance(grads, (tuple, list)) else type(grads).__name__
                raise TypeError(f"[custom_vjp] the bwd rule of {self.__name__} must return a tuple with "
                                f"one cotangent per differentiable argument ({len(diff)}), got {got}.")
            flat = []
            for arg, grad in zip(diff, grads):
                n = len(nest.flatten(arg))
                flat.extend([None] * n if grad is None else nest.flatten(grad))
            return flat

        return rebind(self.__name__, leaves, result, vjp_fn, forward_error=self._forward_error())

    def _forward_error(self):
        return TypeError(f"[custom_vjp] can't apply forward-mode autodiff (jvp, jacfwd, "
                         f"ForwardAccumulator) to the custom_vjp function {self.__name__}, as in JAX. "
                         "Use reverse mode (grad, vjp, jacrev, GradientTape), or give it a JVP with "
                         "custom_jvp instead.")


def _under_duals(x):
    """Whether a dual number is nested anywhere under `x` (a tensor a grad records, whose value
    a jacfwd or hessian differentiates): forward mode would go through the function's own
    code, not its VJP, so jacfwd(grad(f)) and hessian refuse a custom_vjp function, as in JAX."""
    while isinstance(x, Traced):
        if type(x) is Dual:
            return True
        x = x._value if hasattr(x, "_value") else x.primal
    return False


def _flat_like(out, tangent_out):
    flat_out = nest.flatten(out)
    flat_tangent = nest.flatten(tangent_out)
    if len(flat_tangent) != len(flat_out):
        raise TypeError(f"[custom_jvp] the JVP rule returned {len(flat_tangent)} tangents for "
                        f"{len(flat_out)} outputs; give tangent_out the structure of primal_out.")
    return flat_tangent


def _zeros_like(x):
    dtype = dnp.result_dtype(x)
    return np.zeros(tuple(dnp.shape(x)), dtype=dtype if dtype.kind in "fc" else np.float64)


def _zero_if_none(u, like):
    return _zeros_like(like) if u is None else u
