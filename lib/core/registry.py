"""The primitive registry: every op declared once, with its NumPy implementation and rules.

A `Primitive` holds the NumPy implementation, one VJP rule and one JVP rule per
differentiable input, and the metadata tests need to sample it. The tape calls the VJP
rules, dual numbers and `ForwardAccumulator` call the JVP rules, and the source
transformer inlines both as templates. Rules are small pure functions whose body is one
`return` expression calling `dnp` (so an outer tape records them) and `rulekit` helpers.
"""

import ast
import inspect
import textwrap

from . import rulekit
from .traced import Traced

class _Sentinel:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


NOT_DIFFERENTIABLE = _Sentinel("NOT_DIFFERENTIABLE")  # gradient is None / tangent is zero
LINEAR = _Sentinel("LINEAR")  # JVP: apply the op itself to the tangents

REGISTRY = {}  # TF op name -> Primitive
GRADIENT_OVERRIDES = {}  # TF op name -> fn(op, grad), from RegisterGradient


class RuleError(Exception):
    """A rule breaks the registry's contract (see STYLE.md section 1)."""


tensor_bind = [None]  # set by dispatch.py: bind(op, args, static) for traced arguments
dual_bind = [None]  # set by dual.py: its bind, for a call whose first traced argument is a Dual
dual_class = [None]  # the Dual class, once dual.py is imported
batched_class = [None]  # vmap's Batched, once batching/bind.py is imported (routed as a Dual is)


class Primitive:
    """One differentiable (or explicitly non-differentiable) operation.

    Call it like the NumPy function: plain arrays go straight to `impl`; tensors and
    dual numbers go through `dispatch.bind`, which records or propagates derivatives.
    """

    __slots__ = ("name", "impl", "vjp", "jvp", "elementwise", "variadic", "domain",
                 "samples", "nondiff_argnums", "batch_jvp", "batch_vjp", "custom_vjp",
                 "opaque", "complex", "__weakref__")

    def __init__(self, *, name, impl, vjp, jvp, elementwise=False, variadic=False, domain=None, samples=(),
                 nondiff_argnums=(), batch_jvp=False):
        self.name = name
        self.impl = impl
        self.vjp = vjp
        self.jvp = jvp
        self.elementwise = elementwise
        self.variadic = variadic
        self.domain = {} if domain is None else domain
        self.samples = samples
        self.nondiff_argnums = nondiff_argnums
        self.batch_jvp = batch_jvp
        self.batch_vjp = elementwise  # VJP rules accept cotangents with a leading batch axis
        self.custom_vjp = None  # custom_gradient: fn(g, values) -> one cotangent per input
        self.opaque = False  # dualtape.primitive: rules are any Python, runtime only (no templates)
        self.complex = False  # its rules hold for complex values too (see defop's `complex`)

    def __call__(self, *args, **static):
        for a in args:
            if isinstance(a, Traced):
                cls = a.__class__
                if cls is dual_class[0] or cls is batched_class[0]:  # what dispatch.bind would do
                    return dual_bind[0](self, args, static)
                return tensor_bind[0](self, args, static)
        return self.impl(*args, **static)

    def __repr__(self):
        return f"<Primitive {self.name}>"

    @property
    def has_rules(self):
        """True when both modes can differentiate through this op."""
        return callable(self.vjp) or isinstance(self.vjp, tuple)

    def vjp_rule(self, argnum):
        """The VJP rule for input `argnum`: a function, NOT_DIFFERENTIABLE, or None (no rule)."""
        if self.vjp is None or self.vjp is NOT_DIFFERENTIABLE:
            return self.vjp
        if argnum in self.nondiff_argnums:
            return NOT_DIFFERENTIABLE
        if self.variadic:
            return self.vjp
        if argnum >= len(self.vjp):
            return NOT_DIFFERENTIABLE
        return self.vjp[argnum]

    def jvp_rule(self, argnum):
        """The JVP rule for input `argnum`, or LINEAR, NOT_DIFFERENTIABLE, None."""
        if self.jvp is None or self.jvp is NOT_DIFFERENTIABLE or self.jvp is LINEAR:
            return self.jvp
        if argnum in self.nondiff_argnums:
            return NOT_DIFFERENTIABLE
        if self.variadic:
            return self.jvp
        if argnum >= len(self.jvp):
            return NOT_DIFFERENTIABLE
        return self.jvp[argnum]


_ALLOWED_GLOBALS = {"dnp", "np", "rulekit"}


def check_rule(fn, op_name):
    """Enforce the template contract: one `return` expression, no closures or globals.

    The source transformer inlines rule bodies, so a rule must be a single expression over
    its parameters, `dnp`, `np.shape`/`np.ndim` and `rulekit` helpers.
    """
    if fn.__closure__:
        raise RuleError(f"[{op_name}] {fn.__name__} closes over variables; rules must be pure. "
                        "Pass the value as a keyword-only static argument instead.")
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):  # defined in a REPL: nothing to check against
        return
    func = ast.parse(source).body[0]
    body = [s for s in func.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        raise RuleError(f"[{op_name}] {fn.__name__} cannot be used as a template: its body has "
                        f"{len(body)} statements. Write a single `return <expr>`, moving the "
                        "work into a rulekit helper.")
    params = set(inspect.signature(fn).parameters)
    for node in ast.walk(body[0]):
        if isinstance(node, ast.Name) and node.id not in params:
            if node.id not in _ALLOWED_GLOBALS and not hasattr(rulekit, node.id):
                raise RuleError(f"[{op_name}] {fn.__name__} uses the free name `{node.id}`. "
                                "Rules may only use their parameters, dnp, np.shape/np.ndim and "
                                "rulekit helpers; add a rulekit helper for anything else.")


def _check_rules(name, rules, kind):
    if rules is None or rules is NOT_DIFFERENTIABLE or rules is LINEAR:
        return rules
    if callable(rules):
        rules = (rules,)
    for rule in rules:
        if rule is not None and rule is not NOT_DIFFERENTIABLE:
            check_rule(rule, name)
    return tuple(NOT_DIFFERENTIABLE if r is None else r for r in rules)


def defop(name, impl, vjp=None, jvp=None, *, elementwise=False, variadic=False, domain=None,
          samples=(), nondiff_argnums=(), batch_jvp=None, batch_vjp=None, complex=False):
    """Declare a primitive and register it under its TF op name.

    vjp / jvp: a tuple with one rule per input (None for an input with no gradient), a
    single rule (one-input ops, or `variadic` ops, whose rule receives `argnum=`),
    `NOT_DIFFERENTIABLE`, `LINEAR` (jvp only), or None (no rule: asking raises LookupError).
    elementwise: the engine unbroadcasts VJP results and broadcasts JVP results.
    samples: functions `rng -> (args, static)` the generated tests draw inputs from.
    batch_jvp: True when the JVP rules accept tangents with one leading batch axis.
    batch_vjp: True when the VJP rules accept cotangents with one leading batch axis (with
    rulekit.BATCH_NDIM set); elementwise ops always do. Other ops are looped per row.
    complex: True when the rules are right for complex values, in JAX's convention (the
    VJP is the transpose of the JVP without conjugation: docs/numerics.md, "Complex
    numbers"); or a tuple of complex samples, for ops whose inputs need a structure the
    generic complex sampling breaks (Hermitian matrices). Without it, every mode refuses a
    complex value differentiated through the op.
    """
    if name in REGISTRY:
        raise RuleError(f"[{name}] is declared twice; op names are unique TF op names.")
    vjp_rules = _check_rules(name, vjp, "vjp")
    jvp_rules = _check_rules(name, jvp, "jvp")
    if variadic:
        vjp_rules = vjp_rules[0] if isinstance(vjp_rules, tuple) else vjp_rules
        jvp_rules = jvp_rules[0] if isinstance(jvp_rules, tuple) else jvp_rules
    elif isinstance(vjp_rules, tuple) and isinstance(jvp_rules, tuple) and len(vjp_rules) != len(jvp_rules):
        raise RuleError(f"[{name}] has {len(vjp_rules)} VJP rules but {len(jvp_rules)} JVP rules; "
                        "declare one of each per input.")
    if batch_jvp is None:
        batch_jvp = elementwise
    op = Primitive(name=name, impl=impl, vjp=vjp_rules, jvp=jvp_rules, elementwise=elementwise, variadic=variadic,
                   domain=domain or {}, samples=tuple(samples), nondiff_argnums=tuple(nondiff_argnums),
                   batch_jvp=batch_jvp)
    if isinstance(vjp_rules, tuple) and nondiff_argnums:  # fold them in: one lookup per input
        op.vjp = tuple(NOT_DIFFERENTIABLE if i in nondiff_argnums else r for i, r in enumerate(vjp_rules))
    if batch_vjp is not None:
        op.batch_vjp = batch_vjp
    op.complex = complex
    REGISTRY[name] = op
    return op


def elementwise_op(name, impl, vjp=None, jvp=None, **kw):
    """`defop` for an elementwise primitive: the engine handles broadcasting for its rules."""
    return defop(name, impl, vjp=vjp, jvp=jvp, elementwise=True, **kw)


class RegisterGradient:
    """Decorator registering a gradient function for an op name, globally, as in TF.

        @dualtape.RegisterGradient("AdjustContrastv2")
        def _adjust_contrast_grad(op, grad):
            return grad * op.inputs[1], None

    The function gets an object with `.inputs`, `.outputs`, `.name`, `.get_attr(name)` and
    the output's cotangent, and returns one gradient (or None) per input.
    """

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError(f"[RegisterGradient] op_type must be a string, got {type(op_type).__name__}.")
        self._op_type = op_type

    def __call__(self, fn):
        if self._op_type in GRADIENT_OVERRIDES:
            raise KeyError(f"Registering two gradient with name '{self._op_type}'! "
                           f"(Previous registration was in {GRADIENT_OVERRIDES[self._op_type].__module__})")
        GRADIENT_OVERRIDES[self._op_type] = fn
        return fn


def unregister_gradient(op_type):
    """Remove a RegisterGradient registration (tests and notebooks re-running cells)."""
    GRADIENT_OVERRIDES.pop(op_type, None)
