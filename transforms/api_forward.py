"""`jvp`, `jacfwd`, `hvp` and `hessian`: forward mode, and forward over (source) reverse.

`jvp(f)` writes `f_jvp(*args, d<x>=...)` returning `(value, tangent)`. `hvp(f)` is source
of source: the adjoint that `grad(f)` generates is compiled, then read back and transformed
by the forward transformer, giving one function `f_hvp` that returns the gradient and the
Hessian-vector product. One specialization is compiled per combination of argument types,
and per tangent layout (one direction, or a batch of k directions on a leading axis).
"""

import numpy as np

from dualtape.core import nest
from dualtape.sparsity import Plans, check_sparse_call

from . import pipeline
from .codegen import emit
from .api import arg_kinds, make, memo, Transform, param_values, resolve_argnums, shape_key
from .optimize.concrete import arg_value
from .frontend.parse import TransformError
from .codegen.tracebacks import name_user_lines



class ForwardTransformed(Transform):
    """A compiled tangent function of `f`: call it as `f_jvp(*args, tangents)`."""

    def __init__(self, f, wrt, mode, optimize, verbose):
        self.what = "Hessian-vector product" if mode == "hvp" else "Forward-mode derivative"
        self.concrete = mode == "hvp"  # one version per argument and tangent shapes (concrete.py)
        super().__init__(f, wrt, mode, optimize, verbose, "hvp" if mode in ("hvp", "hessian") else "jvp")

    # -- building --------------------------------------------------------------------------------
    def _target(self, kinds, defer=False, shapes=None):
        """The function the forward transformer reads: f itself, or (hvp) f's compiled adjoint,
        and the refusals its general version recorded (see api.general_or_refusal)."""
        if self.mode != "hvp":
            return self.f, kinds, []
        try:
            # preserve_result: the adjoint returns f's value too, which the hvp code checks is a scalar
            df = make("grad", self.f, self.wrt if self.wrt_is_tuple else self.wrt[0], True, self.optimize, False)
            # (its code is read back, not run: nothing written in place, which forward mode cannot read)
            read_back = None if shapes is None else dict(shapes, **{"<read back>": True})
            module, seed = df._build(kinds, defer, shapes=read_back)
            if shapes is not None and shapes["<seed>"]:
                shapes[seed] = ("a", (), float)
        except TransformError as exc:  # the refusal is about f: name the API the user called
            raise TransformError(self._rename(exc)) from None
        kinds = dict(kinds)
        kinds[seed] = "scalar" if any(k == "scalar" for k in kinds.values()) else "array"
        return module.compile(df.name), kinds, [TransformError(self._rename(e)) for e in module.deferred]

    def _rename(self, exc):
        return str(exc).replace("[transforms.grad]", f"[{self.api}]", 1)

    def _specialize(self, bound, more=None):
        """For a shape specialization (hvp): the arguments' and tangents' values (concrete.py)."""
        if more is None or not self.concrete:
            return {}
        return {"shapes": dict(param_values(bound, True), **{"<tangents>": tuple(map(arg_value, more))})}

    def _build(self, kinds, batch=False, defer=False, shapes=None, tangent_only=False):
        """`shapes`: a shape specialization's (concrete.py); `tangent_only`: the version whose
        caller keeps the tangent only."""
        shapes = None if shapes is None else dict(shapes, **{"<tangent only>": tangent_only})
        target, kinds, deferred = self._target(kinds, defer, shapes)
        traced = emit.traced_kinds(kinds)[1]
        module = pipeline.new_module(self.api)
        if shapes is not None and not traced:
            module.param_shapes = {self.name: shapes}
        module.defer = defer
        module.deferred.extend(deferred)
        module.names.add(self.name)
        tparams = pipeline.tangent_module(module, target, self.wrt, kinds, self.optimize, self.name, batch,
                                          value_only=1 if self.mode == "hvp" else 0)
        return module, tparams

    # -- calling ---------------------------------------------------------------------------------
    def _split(self, args, kwargs):
        if not args:
            raise TypeError(f"[{self.api}] call it as {self.name}(*args, tangents).")
        *args, tangents = args
        bound = self._bind(args, kwargs)
        ts = tangents if self.wrt_is_tuple else (tangents,)
        self.refuse_complex(list(args) + list(kwargs.values()) + list(ts))
        for t, w in zip(ts, self.wrt):
            primal = bound.arguments.get(w)
            if _is_complex(t) != _is_complex(primal) and not isinstance(primal, (list, tuple, dict)):
                raise TypeError(f"[{self.api}] the tangent of `{w}` is {'complex' if _is_complex(t) else 'real'} "
                                f"but `{w}` is {'complex' if _is_complex(primal) else 'real'}: a tangent has its "
                                "primal's dtype (as JAX's jvp). Cast the tangent to the argument's dtype.")
        self.refuse_integers(args, kwargs)
        if len(ts) != len(self.wrt):
            raise TypeError(f"[{self.api}] expected {len(self.wrt)} tangents (one per wrt argument "
                            f"{self.wrt}), got {len(ts)}. Pass a tuple of tangents when wrt is a tuple.")
        batch = any([self._batched(t, bound.arguments[w], w) for t, w in zip(ts, self.wrt)])
        return args, ts, bound, batch

    def _batched(self, t, x, name):
        """Whether the tangent `t` of the argument `x` carries a leading axis of directions. A
        list, tuple or dict argument (a list of (W, b) pairs) takes a tangent of its structure,
        read leaf by leaf: np.ndim of the whole read a dict as a 0-d object (a batch of
        directions went by as one direction: a wrong number) and a ragged list failed."""
        if not nest.is_nested(x):
            return np.ndim(t) == np.ndim(x) + 1
        if not _same_structure(x, t):
            raise TypeError(f"[{self.api}] the tangent of `{name}` must have the structure of `{name}` (a "
                            f"{type(x).__name__} of {len(nest.tree_flatten(x))} arrays: the same items or keys, "
                            "each of its array's shape, or with one more leading axis of directions).")
        flags = {np.ndim(tl) == np.ndim(xl) + 1 for tl, xl in zip(nest.tree_flatten(t), nest.tree_flatten(x))}
        if len(flags) > 1:
            raise TypeError(f"[{self.api}] the tangent of `{name}` has a leading axis of directions on some of "
                            "its arrays and not on others: give every array of it that axis (one batch), or none.")
        return flags == {True}

    def __call__(self, *args, **kwargs):
        try:
            if not self._guard.holds():
                self._fresh()
            if self.concrete and not kwargs and args:  # hvp, with shapes seen before: nothing to check
                ts = args[-1] if self.wrt_is_tuple else (args[-1],)
                hit = self._plain.get((shape_key(args[:-1]), shape_key(ts))) if type(ts) is tuple else None
                if hit is not None:
                    return hit[0](*args[:-1], **dict(zip(hit[1], ts)))[1]
            args, ts, bound, batch = self._split(args, kwargs)
            options = {"tangent_only": True} if self.mode == "hvp" else None
            fn, tparams = self._compiled_for(args, kwargs, batch, bound=bound, more=ts, options=options)
            if self.concrete and not kwargs and type(ts) is tuple and self._is_shaped(
                    args, fn, batch, options=options, more=ts):
                self._plain[(shape_key(args), shape_key(ts))] = (fn, tparams)
            kwargs = dict(kwargs)
            for p, t in zip(tparams, ts):
                kwargs[p] = t
            value, tangent = fn(*args, **kwargs)
            if self.mode == "hvp":
                return self.real_parts(tangent, args, kwargs)
            return value, tangent
        except Exception as exc:  # (an error inside generated code: name the user's line)
            name_user_lines(exc)
            raise

    def value_and_tangent(self, *args, **kwargs):
        """For hvp: (gradient, Hessian @ v) from the one generated function."""
        self._fresh()
        args, ts, bound, batch = self._split(args, kwargs)
        fn, tparams = self._compiled_for(args, kwargs, batch, bound=bound, more=ts)
        kwargs = dict(kwargs, **{p: t for p, t in zip(tparams, ts)})
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            name_user_lines(exc)
            raise

    def source_for(self, *args, **kwargs):
        """The source specialized for these arguments and tangents (what a call with them runs)."""
        args, ts, bound, batch = self._split(args, kwargs)
        options = {"tangent_only": True} if self.mode == "hvp" else {}
        return self._build(arg_kinds(bound), batch, **options, **self._specialize(bound, ts))[0].source()


def make_forward(mode, f, wrt, optimize, verbose):
    return memo(ForwardTransformed, mode, f, wrt, verbose, optimize)


def jvp(f=None, argnums=None, *, wrt=None, optimize=True, verbose=False, jit=False):
    """Forward mode: `f_jvp(*args, tangents)` returns `(f(*args), J @ tangents)`.

    `tangents` has the shape of `args[argnums]` (a tuple of them when argnums is a tuple), or
    one more leading axis of k directions: then the tangent output carries that axis too.
    `wrt=` is an alias of `argnums=`.
    """
    wrt = resolve_argnums(argnums, wrt, "transforms.jvp")
    if jit:  # compiled with numba: see grad's `jit`
        from .jit.compile import jitted
        return jitted(lambda g: make_forward("jvp", g, wrt, optimize, False), f, jit, verbose)
    return make_forward("jvp", f, wrt, optimize, verbose)


def hvp(f=None, argnums=None, *, wrt=None, optimize=True, verbose=False, jit=False):
    """Hessian-vector product by forward over (source) reverse: `f_hvp(*args, v)` returns H @ v.
    `wrt=` is an alias of `argnums=`."""
    wrt = resolve_argnums(argnums, wrt, "transforms.hvp")
    if jit:  # compiled with numba: see grad's `jit`
        from .jit.compile import jitted
        return jitted(lambda g: make_forward("hvp", g, wrt, optimize, False), f, jit, verbose)
    return make_forward("hvp", f, wrt, optimize, verbose)


def _same_structure(x, t):
    """Whether `t` has the list, tuple and dict structure of `x` (a list may stand for a tuple)."""
    if isinstance(x, dict):
        return isinstance(t, dict) and sorted(x) == sorted(t) and all(_same_structure(x[k], t[k]) for k in x)
    if isinstance(x, (list, tuple)):
        return isinstance(t, (list, tuple)) and len(x) == len(t) and all(map(_same_structure, x, t))
    return not nest.is_nested(t)


def _check_holomorphic_inputs(xs, holomorphic):
    """JAX's rule: complex inputs need holomorphic=True (a real basis direction of a complex
    input is one of two; f'(z) exists for holomorphic f only), which needs complex inputs."""
    for leaf in (leaf for x in xs for leaf in _leaves(x)):
        if _is_complex(leaf) and not holomorphic:
            raise TypeError(f"[transforms.jacfwd] jacfwd requires real-valued inputs (input dtype that is "
                            f"a sub-dtype of np.floating), but got {np.asarray(leaf).dtype}. For "
                            "holomorphic differentiation, pass holomorphic=True. For differentiation of "
                            "non-holomorphic functions involving complex inputs, use jvp directly.")
        if holomorphic and not _is_complex(leaf):
            raise TypeError(f"[transforms.jacfwd] jacfwd with holomorphic=True requires inputs with "
                            f"complex dtype, but got {np.asarray(leaf).dtype}. Pass complex inputs.")


def _directions(xs, dtype=float):
    """The basis directions of the arguments `xs` (arrays, or lists, tuples and dicts of them),
    as one batch of N = their total size: (each argument's tangent, each array of it of shape
    (N,) + its shape, and for each argument the slices of the N rows of its arrays)."""
    leaves = [_leaves(x) for x in xs]
    sizes = [int(np.prod(np.shape(leaf))) for each in leaves for leaf in each]
    total, ends = sum(sizes), np.cumsum([0] + sizes)
    rows = iter([slice(ends[k], ends[k + 1]) for k in range(len(sizes))])
    blocks = [[next(rows) for _ in each] for each in leaves]
    tangents = tuple(_pack(x, [np.eye(total, dtype=dtype)[:, block].reshape((total,) + np.shape(leaf))
                               for leaf, block in zip(each, bs)]) for x, each, bs in zip(xs, leaves, blocks))
    return tangents, blocks


def _pack(x, leaves):
    """`leaves` in the structure of `x` (the one leaf where x is an array)."""
    return nest.tree_unflatten(x, leaves) if nest.is_nested(x) else leaves[0]


def _leaves(x):
    return nest.tree_flatten(x) if nest.is_nested(x) else [x]


def _wrt_values(transform, args, kwargs):
    bound = transform._bind(args, kwargs)
    return [bound.arguments[w] for w in transform.wrt]


def jacfwd(f, argnums=None, *, wrt=None, optimize=True, holomorphic=False):
    """The Jacobian of f w.r.t. args[argnums] (shape out.shape + x.shape; a tuple of them when
    argnums is a tuple, as JAX's): one call of the generated tangent code, with all basis
    directions as one vector tangent. `wrt=`: an alias. holomorphic: f is complex-differentiable
    from complex inputs to complex outputs (without it, inputs must be real, as JAX's)."""
    fj = jvp(f, resolve_argnums(argnums, wrt, "transforms.jacfwd"), optimize=optimize)

    def jacobian(*args, **kwargs):
        xs = _wrt_values(fj, args, kwargs)
        _check_holomorphic_inputs(xs, holomorphic)
        tangents, blocks = _directions(xs, complex if holomorphic else float)
        _, dy = fj(*args, tangents if fj.wrt_is_tuple else tangents[0], **kwargs)
        dy = np.asarray(dy)
        if holomorphic and not _is_complex(dy):
            raise TypeError(f"[transforms.jacfwd] jacfwd with holomorphic=True requires outputs with "
                            f"complex dtype, but got {dy.dtype}. Drop holomorphic=True for a real-valued f.")
        out_shape = np.shape(dy)[1:]
        jacs = tuple(_pack(x, [np.moveaxis(dy[block], 0, -1).reshape(out_shape + np.shape(leaf))
                               for leaf, block in zip(_leaves(x), bs)]) for x, bs in zip(xs, blocks))
        return jacs if fj.wrt_is_tuple else jacs[0]

    return jacobian


def hessian(f, argnums=None, *, wrt=None, optimize=True, sparsity=None, sparse_output=False, jit=False):
    """The Hessian of scalar f w.r.t. args[argnums] (with a tuple, the tuple of tuples of blocks
    d2f / dx_i dx_j of shape x_i.shape + x_j.shape, as JAX's): one call of the generated hvp
    code with all basis directions as one vector tangent. `wrt=`: an alias of `argnums=`.

    sparsity: "auto" (detected by running f once per shape), a boolean (n, n) array or a
    scipy.sparse matrix, as `dualtape.hessian`'s: the generated hvp code then runs on one
    direction per color (3 for a tridiagonal Hessian) instead of n. sparse_output=True returns
    a scipy.sparse CSR matrix.

    jit=True: the hvp code compiled by numba (see `grad`), called once per direction (numba
    compiles the one-direction code; the batched code's per-row loops fall back)."""
    argnums = resolve_argnums(argnums, wrt, "transforms.hessian")
    fh = hvp(f, argnums, optimize=optimize)
    run = _per_direction(hvp(f, argnums, optimize=optimize, jit=jit), fh.wrt_is_tuple) if jit else fh
    if sparsity is not None or sparse_output:
        return _sparse_hessian(f, fh, run, sparsity, sparse_output)

    def hess(*args, **kwargs):
        xs = _wrt_values(fh, args, kwargs)
        tangents, blocks = _directions(xs)
        rows = run(*args, tangents if fh.wrt_is_tuple else tangents[0], **kwargs)
        rows = [[np.asarray(r) for r in _leaves(row)] for row in (rows if fh.wrt_is_tuple else (rows,))]
        # d2f / dx_i dx_j: for each array of x_i, the blocks of x_j's arrays in x_j's structure
        out = tuple(tuple(_pack(xi, [_pack(xj, [_block(r, leaf_i, leaf_j, block) for leaf_j, block in
                                                zip(_leaves(xj), bs)]) for r, leaf_i in zip(row, _leaves(xi))])
                          for xj, bs in zip(xs, blocks)) for row, xi in zip(rows, xs))
        return out if fh.wrt_is_tuple else out[0][0]

    return hess


def _per_direction(fj, wrt_is_tuple):
    """fj (a compiled hvp) called on a batch of directions one direction at a time: the rows
    the batched call gives, each array stacked along a new first axis."""
    def run(*args, **kwargs):
        *args, tangents = args
        k = len(tangents[0] if wrt_is_tuple else tangents)
        outs = [fj(*args, tuple(t[j] for t in tangents) if wrt_is_tuple else tangents[j], **kwargs)
                for j in range(k)]
        if not wrt_is_tuple:
            return np.stack([np.asarray(o) for o in outs])
        return tuple(np.stack([np.asarray(o[i]) for o in outs]) for i in range(len(outs[0])))
    return run


def _sparse_hessian(f, fh, run, sparsity, sparse_output):
    """transforms.hessian(f, sparsity=...): the generated hvp code on the colors' directions."""
    api = "transforms.hessian"
    check_sparse_call(sparsity, sparse_output, 0 if len(fh.wrt) == 1 and not fh.wrt_is_tuple else (0, 1), api)
    plans = Plans(f, "hessian", sparsity, api)
    name = fh.wrt[0]

    def hess(*args, **kwargs):
        position = fh.params.index(name) if name in fh.params else len(args)
        if position >= len(args):
            raise TypeError(f"[{api}] sparsity= needs the differentiated argument `{name}` passed "
                            "positionally.")
        x = np.asarray(args[position])
        if x.dtype.kind != "f":
            raise TypeError(f"[{api}] sparsity= differentiates one floating array; `{name}` has dtype "
                            f"{x.dtype}.")
        _, compression = plans.plan(args, position, kwargs)
        seeds = compression.seeds(x.dtype)
        if len(seeds) == 0:
            seeds = np.zeros((1, x.size), dtype=x.dtype)
        rows = np.asarray(run(*args, seeds.reshape((len(seeds),) + x.shape), **kwargs))
        return compression.result(rows.reshape(len(seeds), x.size), sparse_output, x.shape + x.shape, api)

    return hess


def _block(rows, xi, xj, block):
    """d2f / dx_i dx_j from the rows H·e_k (each of x_i's shape) of x_j's directions e_k."""
    size_i, size_j = int(np.prod(np.shape(xi))), block.stop - block.start
    if not size_i or not size_j:
        return np.zeros(np.shape(xi) + np.shape(xj))
    return rows[block].reshape((size_j, size_i)).T.reshape(np.shape(xi) + np.shape(xj))


def _is_complex(value):
    dtype = getattr(value, "dtype", None)
    return isinstance(value, complex) or getattr(dtype, "kind", None) == "c"
