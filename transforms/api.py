"""`grad` and `vjp`: the public entry points, with per-(function, wrt, options) caching.

The returned object compiles one specialization per combination of argument types
(Python scalars get `math.*` derivatives and no `unbroadcast`), and shows the general
version as `.source`. `Transform` is what they share with forward mode (api_forward.py).
"""

import functools
import inspect

import numpy as np

from dualtape.core import dnp
from dualtape.core.dtypes import complex_error
from dualtape.core.duck import lazy_scalar, lazy_seed
from dualtape.core.traced import Traced

from . import pipeline
from .codegen import emit
from .frontend.dicts import dict_arguments
from .frontend.function_values import function_key
from .ir.analysis import value_kind
from .optimize.concrete import arg_value
from .cache import Guard, cache_on
from .ir.naming import fresh_function_name
from .frontend.parse import TransformError
from .runtime.revolve import parse_spec
from .runtime import shape_of
from .codegen.tracebacks import name_user_lines

MAX_SHAPES = 8  # shape specializations per combination of argument types; then the general version
_SCALAR_TYPES = (float, int, bool, np.float64, np.float32, np.int64, np.int32)


def arg_kinds(bound):
    return {k: value_kind(v) for k, v in bound.arguments.items()}


def type_key(value, _plain=frozenset(_SCALAR_TYPES) | {np.ndarray}):
    """One argument's part of a version's key: its type, and for a tensor or dual number its
    kind too: one made from a Python number (`c += v` rebinds it) and one made from an array
    (`c += v` may write into memory another name shares: refused) are one type, two versions."""
    kind = type(value)
    return kind if kind in _plain else (kind, value_kind(value))


class Transform:
    """What both modes share: checking `f` and `wrt`, the general module (`.source`, `.save`),
    and one compiled specialization per combination of argument types.

    A mode defines `_build(kinds, *extra, defer=False) -> (module, parameters)`, where `extra`
    (forward: the tangent layout) is part of the specialization key.
    """

    what = "Adjoint"  # `.save`'s header
    concrete = False  # compiles one version per argument shapes and dtypes (concrete.py)
    any_string_wrt = False  # reverse mode takes any string as `wrt`, forward only a parameter's name

    def __init__(self, f, wrt, mode, optimize, verbose, suffix):
        if not inspect.isfunction(f):
            raise TransformError(f"[transforms.{mode}] expects a Python function, got {type(f).__name__}.\n  "
                                 "Pass the function defined with `def`.")
        self.f, self.mode, self.optimize = f, mode, optimize
        self.api = f"transforms.{mode}"
        self.signature = inspect.signature(f)
        self.params = list(self.signature.parameters)
        wrt_tuple = wrt if isinstance(wrt, tuple) else (wrt,)
        names = []
        for w in wrt_tuple:
            if isinstance(w, str) and (self.any_string_wrt or w in self.params):
                names.append(w)
            elif isinstance(w, int) and -len(self.params) <= w < len(self.params):
                names.append(self.params[w])
            else:
                raise TransformError(f"[{self.api}] wrt={wrt!r} does not name a parameter of {f.__name__}"
                                     f"{self.signature}.\n  Pass an index or a tuple of indices of its parameters.")
        self.wrt, self.wrt_is_tuple = tuple(names), isinstance(wrt, tuple)
        defaults = {k: p.default for k, p in self.signature.parameters.items() if p.default is not p.empty}
        self._wrt_at = tuple((self.params.index(w), w, defaults.get(w)) for w in self.wrt if w in self.params)
        base = f"{f.__name__}_{suffix}"
        self.name = self.__name__ = fresh_function_name(base, f)
        self._compiled = {}
        self._variants = {}  # type key -> how many shape specializations were compiled
        self._plain = {}  # shape_key(args) -> grad's specialization for them, called at once (see _grad)
        self._general = None
        self._guard = Guard()  # the module globals the compiled versions were made from
        functools.update_wrapper(self, f, assigned=("__module__",), updated=())
        module = self._general_module()  # transform now: refusals surface at decoration time
        if self.name in module.namespace or self.name in module.user_names:
            # a called user function (another module's globals, its own names) sees the name
            self.name = self.__name__ = fresh_function_name(base, f, set(module.namespace) | module.user_names)
            self._general = None
            self._general_module()
        if verbose:
            print(self.source)

    def _general_module(self):
        """The all-array version, recording (not raising) refusals that hold for arrays only."""
        self._fresh()
        if self._general is None:
            self._general = self._watched(self._build({p: "array" for p in self.params}, defer=True))
        return self._general[0]

    def _watched(self, built):
        """`_build`'s (module, parameters), the globals its code was made from watched."""
        self._guard.watch(built[0].user_functions)
        return built

    def _fresh(self):
        """Drop every compiled version once a module global it was made from is rebound
        (cache.Guard): calls see the module's current globals, as plain Python does."""
        if not self._guard.holds():
            self._compiled.clear()
            self._variants.clear()
            self._plain.clear()
            self._general, self._guard = None, Guard()

    @property
    def module(self):
        return general_or_refusal(self._general_module())

    @property
    def source(self):
        """The generated module's source (the general version, valid for any argument types)."""
        return self.module.source()

    def save(self, path):
        """Write a self-contained module (numpy + dualtape.transforms.runtime) to `path`."""
        text = emit.module_source(self.module, f"{self.what} of {self.f.__module__}.{self.f.__name__}, "
                                  "generated by dualtape.transforms.")
        with open(path, "w") as fh:
            fh.write(text)
        return path

    def _bind(self, args, kwargs):
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return bound

    def _compiled_for(self, args, kwargs, *extra, bound=None, options=None, more=()):
        """(compiled function, parameters) for these argument types (bound only when compiling);
        `options` are keyword arguments of `_build` that make another version. With `concrete`,
        one version per argument shapes and dtypes (and `more` values: hvp's tangents), up to
        MAX_SHAPES of them per type key."""
        key = tuple(map(type_key, args)) + tuple((k, type_key(v)) for k, v in kwargs.items()) + extra + tuple(
            sorted((options or {}).items())) + function_key(args) + function_key(kwargs.values())
        if self.concrete:
            shaped = key + (shape_key(args), shape_key(kwargs.values()), shape_key(more))
            entry = self._compiled.get(shaped)
            if entry is not None:
                return entry
            types = key[:len(args) + len(kwargs)]  # (its options share the budget)
            if self._variants.get(types, 0) < MAX_SHAPES:
                self._variants[types] = self._variants.get(types, 0) + 1
                bound = self._bind(args, kwargs) if bound is None else bound
                with dict_arguments(self.f, bound):
                    module, params = self._watched(self._build(arg_kinds(bound), *extra, **(options or {}),
                                                               **self._specialize(bound, more)))
                entry = self._compiled[shaped] = (module.compile(self.name), params)
                return entry
        entry = self._compiled.get(key)
        if entry is None:
            bound = self._bind(args, kwargs) if bound is None else bound
            with dict_arguments(self.f, bound):
                module, params = self._watched(self._build(arg_kinds(bound), *extra, **(options or {}),
                                                           **self._specialize(bound)))
            entry = self._compiled[key] = (module.compile(self.name), params)
        return entry

    def _specialize(self, bound, more=None):
        """More `_build` options that the argument types (the cache key) decide; `more` (not
        None): the version for these argument shapes too."""
        return {}

    def _is_shaped(self, args, fn, *extra, options=None, more=()):
        """Whether `fn` is the shape specialization for `args` (not the general version), and
        every argument (and `more`) a real NumPy array or number: then a call with the same
        shape_key may run it at once (`_plain`)."""
        key = tuple(map(type_key, args)) + extra + tuple(sorted((options or {}).items())) + function_key(args)
        shaped = self._compiled.get(key + (shape_key(args), (), shape_key(more)))
        return shaped is not None and shaped[0] is fn and all(
            v is not None and v[2] is not complex and getattr(v[2], "kind", "") != "c"
            for v in map(arg_value, tuple(args) + tuple(more)))

    def refuse_complex(self, values):
        """Complex arguments (cotangents, tangents) are differentiated when every op of the
        function has complex rules, and refused, naming the first op that has none, otherwise
        (the generated code would apply its real rules: a wrong number)."""
        for value in values:
            dtype = getattr(value, "dtype", None)
            if isinstance(value, complex) or getattr(dtype, "kind", None) == "c":
                ops = self.module.real_only_ops
                if ops:
                    raise complex_error(ops[0], f"a value of {self.f.__name__} (an argument of type "
                                        f"{type(value).__name__}" + (f" and dtype {dtype}" if dtype is not None
                                                                     else "") + f", under {self.api})")
                return

    def real_parts(self, gradient, args, kwargs):
        """The gradient of a real argument is the real part of what the generated code gives
        (a real value meeting complex ones: docs/numerics.md); complex arguments' stay complex."""
        if not _has_complex(gradient):
            return gradient
        bound = self._bind(args, kwargs)
        values = [bound.arguments.get(w) for w in self.wrt]
        if self.wrt_is_tuple and isinstance(gradient, (tuple, list)) and len(gradient) == len(values):
            return type(gradient)(_real_like(g, v) for g, v in zip(gradient, values))
        return _real_like(gradient, values[0]) if len(values) == 1 else gradient

    def refuse_integers(self, args, kwargs):
        """A differentiated argument that is an integer or a bool (a Python or NumPy one, or an
        array of them) is refused as dualtape.grad refuses it (the generated code gave `n * n`
        at 3 the derivative 6.0); integer arguments that are not differentiated are fine."""
        for i, name, default in self._wrt_at:
            value = args[i] if i < len(args) else kwargs.get(name, default)
            if type(value) is float:
                continue
            dtype = getattr(value, "dtype", None)  # (NumPy's scalars and arrays, duck arrays)
            if dtype is None and isinstance(value, int):  # (bool too)
                dtype = np.result_type(value)
            if getattr(dtype, "kind", None) in ("b", "i", "u"):
                raise TypeError(f"[{self.api}] the differentiated argument `{name}` has dtype {dtype}, but only "
                                "floating inputs can be differentiated. Cast it first, e.g. np.asarray(x, "
                                f"dtype=float), or leave `{name}` out of argnums= (an integer argument that is not "
                                "differentiated is fine).")

    def __repr__(self):
        return f"<dualtape.transforms.{self.mode} of {self.f.__qualname__} wrt {self.wrt}>"


class Transformed(Transform):
    """A compiled adjoint of `f`: call it like `f` (plus `dy` last for vjp)."""

    any_string_wrt = True
    concrete = True

    def __init__(self, f, wrt, mode, preserve_result, optimize, checkpoint, verbose):
        self.preserve_result, self.checkpoint = preserve_result, checkpoint
        super().__init__(f, wrt, mode, optimize, verbose, "vjp")
        self.__doc__ = f"Gradient of {f.__name__} w.r.t. {', '.join(self.wrt)} (dualtape.transforms)."

    def _specialize(self, bound, more=None):
        """The parameters passed NumPy ndarrays (transforms/optimize/shapes.py proves shapes from them),
        and for a shape specialization their shapes and dtypes (concrete.py)."""
        options = {"ndarrays": frozenset(k for k, v in bound.arguments.items() if type(v) is np.ndarray)}
        if more is not None:
            options["shapes"] = param_values(bound, self.mode == "grad")
        return options

    def _build(self, kinds, defer=False, value=False, ndarrays=frozenset(), shapes=None):
        """`value`: the version grad calls where the output may not be a scalar: it returns f's value
        too, at once when it is not a scalar (see `_grad`). `shapes`: the arguments' (concrete.py)."""
        traced = emit.traced_kinds(kinds)[1]
        module = pipeline.new_module(self.api)
        module.ndarray_params = {self.name: ndarrays}
        if shapes is not None and not traced:
            module.param_shapes = {self.name: shapes}
        module.defer = defer
        module.checkpoint = self.checkpoint  # checkpointed loops (transforms/reverse/checkpoint.py)
        module.names.add(self.name)
        seed = pipeline.adjoint_module(module, self.f, self.wrt, kinds, self.optimize, self.name,
                                       "1.0" if self.mode == "grad" else None,
                                       tuple_out=self.wrt_is_tuple and len(self.wrt) == 1,
                                       preserve_result="check" if value else self.preserve_result)
        return module, seed

    def __call__(self, *args, **kwargs):
        try:
            if not self._guard.holds():
                self._fresh()
            if self.mode == "vjp":
                if not args:
                    raise TypeError(f"[{self.api}] call it as f_vjp(*args, dy).")
                *args, dy = args
                self.refuse_complex([dy])
            if self.mode == "grad" and not kwargs:
                fn = self._plain.get(shape_key(args))
                if fn is not None:  # real NumPy arrays and numbers of shapes seen before: nothing to check
                    return fn(*args)
            self.refuse_complex(list(args) + list(kwargs.values()))
            self.refuse_integers(args, kwargs)
            if self.mode == "grad":
                out = self._grad(args, kwargs)
                if self.preserve_result:
                    return self._structured(self.real_parts(out[0], args, kwargs), args, kwargs), out[1]
                return self._structured(self.real_parts(out, args, kwargs), args, kwargs)
            fn, seed = self._compiled_for(args, kwargs)
            if self.mode == "vjp":
                gradient = fn(*args, **dict(kwargs, **{seed: lazy_scalar(dy, args)}))
                return self._structured(self.real_parts(gradient, args, kwargs), args, kwargs)
            return fn(*args, **kwargs)
        except Exception as exc:  # (an error inside generated code: name the user's line)
            name_user_lines(exc)
            raise

    def _structured(self, gradient, args, kwargs):
        """The gradient of a tuple argument as a tuple (the generated code builds it as a list),
        nested likewise: the structure of the argument, as JAX, autograd and the tape give it."""
        if not any(isinstance(a, (tuple, list, dict)) for a in (*args, *kwargs.values())):
            return gradient
        bound = self._bind(args, kwargs)
        values = [bound.arguments.get(w) for w in self.wrt]
        if self.wrt_is_tuple and isinstance(gradient, tuple) and len(gradient) == len(values):
            return tuple(_like(g, v) for g, v in zip(gradient, values))
        return _like(gradient, values[0]) if len(values) == 1 else gradient

    def _grad(self, args, kwargs):
        """A gradient is of a scalar function: where the transformer cannot tell that the output
        is a scalar (for these argument types), the version that returns f's value too runs,
        and a non-scalar value is refused (JAX's grad does the same)."""
        fn, seed = self._compiled_for(args, kwargs)
        if fn.__dualtape_scalar_output__:
            gradient = fn(*args, **lazy_seed(kwargs, seed, args))
            if not kwargs and not self.preserve_result and self._is_shaped(args, fn) and not _has_complex(gradient):
                self._plain[shape_key(args)] = fn  # (a complex gradient of real arguments needs real_parts)
            return gradient
        fn, seed = self._compiled_for(args, kwargs, options={"value": True})
        gradient, value = fn(*args, **lazy_seed(kwargs, seed, args))
        shape = shape_of(value)
        if shape != ():
            code = self.f.__code__
            raise TransformError(
                f"[{self.api}] {code.co_filename}:{code.co_firstlineno} in {self.f.__name__}: it returned a "
                f"value of shape {shape}; grad needs a scalar output (it would otherwise differentiate the "
                f"sum of the outputs without a word).\n  Use transforms.vjp({self.f.__name__}) with a cotangent "
                "dy of that shape, or reduce the output first (e.g. return np.sum(y)).")
        return (gradient, value) if self.preserve_result else gradient

    def source_for(self, *args, **kwargs):
        """The source specialized for these argument types (what a call with them runs)."""
        if self.mode == "vjp":
            args = args[:-1]
        bound = self._bind(args, kwargs)
        return self._build(arg_kinds(bound), **self._specialize(bound, ()))[0].source()


def _has_complex(gradient):
    if isinstance(gradient, (tuple, list)):
        return any(_has_complex(g) for g in gradient)
    if isinstance(gradient, dict):
        return any(_has_complex(g) for g in gradient.values())
    return isinstance(gradient, complex) or getattr(getattr(gradient, "dtype", None), "kind", None) == "c"


def _real_like(gradient, value):
    """`gradient`'s real part where `value` is real, through tuples, lists and dicts."""
    if isinstance(value, (tuple, list)) and isinstance(gradient, (tuple, list)) and len(gradient) == len(value):
        return type(gradient)(_real_like(g, v) for g, v in zip(gradient, value))
    if isinstance(value, dict) and isinstance(gradient, dict):
        return {k: _real_like(g, value[k]) if k in value else g for k, g in gradient.items()}
    value_complex = isinstance(value, complex) or getattr(getattr(value, "dtype", None), "kind", None) == "c"
    if value_complex or not _has_complex(gradient):
        return gradient
    return np.real(gradient) if not isinstance(gradient, Traced) else dnp.real(gradient)


def _like(gradient, value):
    """`gradient` with the containers of `value`: a list where `value` is a tuple becomes one."""
    if isinstance(value, (tuple, list)) and isinstance(gradient, (tuple, list)) and len(gradient) == len(value):
        items = [_like(g, v) for g, v in zip(gradient, value)]
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, dict) and isinstance(gradient, dict):
        return {k: _like(g, value[k]) if k in value else g for k, g in gradient.items()}
    return gradient


def shape_key(values, _nd=np.ndarray):
    """What a shape specialization is keyed on: each NumPy array's shape and dtype, the type of
    anything else."""
    return tuple([(v.shape, v.dtype) if type(v) is _nd else type(v) for v in values])


def param_values(bound, seed):
    """parameter -> concrete.arg_value, plus "<seed>" (grad's seed is its default 1.0) where
    every argument is a NumPy array or a number (no duck array gets a lazy seed)."""
    values = {k: arg_value(v) for k, v in bound.arguments.items()}
    return dict(values, **{"<seed>": seed and all(v is not None for v in values.values())})


def general_or_refusal(module):
    """The general module, or the refusal it recorded: `c += v` where `c` may share an array.

    Such a function may still be transformed for Python floats (immutable: `+=` rebinds), so
    the refusal is raised by `.source`, `.save` and calls with arrays, not at decoration time.
    """
    if module.deferred:
        raise TransformError(f"{module.deferred[0]}\n  (This holds when the arguments are arrays; with "
                             "Python floats `+=` makes a new float, and `.source_for(1.0, ...)` shows that "
                             "version.)")
    return module


def memo(cls, mode, f, wrt, verbose, *options):
    """`cls(f, wrt, mode, *options, verbose)`, made once per (f, wrt, mode, *options); with f=None,
    the decorator that makes it."""
    if f is None:
        return lambda g: memo(cls, mode, g, wrt, verbose, *options)
    cache, key = cache_on(f), (cls, wrt, mode) + options  # kept on f, freed with it (cache.py)
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = cls(f, wrt, mode, *options, verbose)
    elif verbose:
        print(hit.source)
    return hit


def resolve_argnums(argnums, wrt, api):
    """`argnums=` (the name the functional API and JAX use) or its alias `wrt=`, not both."""
    if argnums is not None and wrt is not None:
        raise TypeError(f"[{api}] got both argnums={argnums!r} and wrt={wrt!r}: wrt= is an alias of argnums=. "
                        "Pass only argnums=.")
    return argnums if argnums is not None else (0 if wrt is None else wrt)


def make(mode, f, wrt, preserve_result, optimize, verbose, checkpoint=None):
    return memo(Transformed, mode, f, wrt, verbose, preserve_result, optimize, checkpoint)


def _checkpoint_option(checkpoint, jit, api):
    """`checkpoint=` normalized (hashable: it is part of the cache key); refused with `jit=`."""
    spec = parse_spec(checkpoint, api)
    if spec is not None and jit:
        raise TransformError(f"[{api}] checkpoint={checkpoint!r} cannot be combined with jit={jit!r} yet.\n  "
                             "Drop jit= (checkpointing already bounds the memory), or checkpoint=.")
    return spec


def grad(f=None, argnums=None, *, wrt=None, preserve_result=False, optimize=True, verbose=False, jit=False,
         checkpoint=None):
    """Gradient of a scalar-valued `f` w.r.t. argument(s) `argnums`, as generated Python code.

    `df = grad(f)`; `df(x, y)` returns df/dx; `argnums=(0, 1)` returns a tuple (indices or
    parameter names; `wrt=` is an alias); keyword arguments of the call go to f;
    `preserve_result=True` returns `(gradient, value)`. `df.source` shows the code.
    `jit=True` compiles it with numba (`pip install dualtape[jit]`; see transforms/jit/compile.py),
    `jit="fallback"` runs the uncompiled code where numba cannot compile it.
    `checkpoint="sqrt"` or `("binomial", s)` keeps outermost `for ... in range(...)` loops'
    states at checkpoints only and recomputes segments in the backward sweep (docs/transforms.md).
    """
    wrt = resolve_argnums(argnums, wrt, "transforms.grad")
    checkpoint = _checkpoint_option(checkpoint, jit, "transforms.grad")
    if jit:
        from .jit.compile import jitted
        return jitted(lambda g: make("grad", g, wrt, preserve_result, optimize, False), f, jit, verbose)
    return make("grad", f, wrt, preserve_result, optimize, verbose, checkpoint)


def vjp(f=None, argnums=None, *, wrt=None, preserve_result=False, optimize=True, verbose=False, jit=False,
        checkpoint=None):
    """Vector-Jacobian product: `f_vjp(*args, dy)` returns dy . df/d(args[argnums]). `wrt=`, `jit`: as grad's."""
    wrt = resolve_argnums(argnums, wrt, "transforms.vjp")
    checkpoint = _checkpoint_option(checkpoint, jit, "transforms.vjp")
    if jit:
        from .jit.compile import jitted
        return jitted(lambda g: make("vjp", g, wrt, preserve_result, optimize, False), f, jit, verbose)
    return make("vjp", f, wrt, preserve_result, optimize, verbose, checkpoint)
