"""Compiled generated code: `grad(f, jit=True)` (and vjp, jvp, hvp) hands the emitted code to numba.

The generated adjoint is plain Python on floats, NumPy arrays and `math`, plus a list `_stack`
of saved values and a few runtime helpers. numba compiles all of it once two things change:

* the stack: one typed stack per saved name, sized by a first uncompiled run (jit/stacks.py).
* the helpers: `unbroadcast`, `unreduce`, `zeros_like`, ... are replaced by twins that numba
  specialises on the argument types (jit/runtime.py); the source calls the same names.

Both rewrite the module's trees (jit/stacks.py); the result is rendered once and compiled.
Scalar code compiles natively instead (jit/native: LLVM directly, in milliseconds). What numba
refuses is put in words by jit/refusals.py (the one module that reads its error messages).

The result, `df.source`, is exactly the source compiled. One compiled version is kept
per combination of argument types (in memory). Where numba cannot compile a construct, a
TransformError names it with the generated line and the user's line it comes from; with
`jit="fallback"` the uncompiled generated code runs instead (`df.fallback_reason` says why).
Python containers the transformer accepts (lists of arrays, dicts, function values; see
`python_containers`) fall back under jit=True too, with the same warning: what the transformer accepts compiles
or runs uncompiled, loudly."""

import ast
import copy
import inspect
import time
import warnings

import numpy as np


from ..ir import syntax
from ..ir.analysis import value_kind
from ..frontend.function_values import is_function_value, jit_lifted_calls
from ..cache import Guard, cache_on, user_functions
from ..codegen.emit import run_module, source_of
from ..runtime.names import RUNTIME_HELPERS
from . import disk_cache, native
from .reductions import compiled_reductions
from .refusals import plain_text, python_containers, raised_compiling, refusal, untwinned_helpers, untyped_helper
from .stacks import RowsFull, StackProbe, jit_functions, positional_functions, probe_functions
from .fusion import fuse_functions, is_kernel, may_hold_arrays, record_kinds
from ..frontend.parse import TransformError
from ..runtime import shape_of
from ..calls.star_args import has_star_parameters
from ..codegen.tracebacks import name_user_lines

_FAST_TYPES = (float, int, bool, np.float64, np.int64)  # scalars: their type is the whole key
INSTALL = "pip install 'dualtape[jit]'"


def import_numba(api):
    """numba, or a TransformError saying how to install it (numba is an optional extra)."""
    try:
        import numba
    except ImportError:
        raise TransformError(
            f"[{api}] jit=True compiles the generated code with numba, which is not installed.\n  "
            f"Install it with `{INSTALL}` (or `pip install numba`), or call without jit=True.") from None
    return numba


def _arg_kinds(bound):
    return {k: value_kind(v) for k, v in bound.arguments.items()}


def refuse_complex(api, values):
    """Complex arguments (or cotangents, tangents) are refused by jit=True: its typed stacks
    and numba twins of the runtime helpers are real (the generated Python code, jit=False,
    differentiates complex values)."""
    for value in values:
        dtype = getattr(value, "dtype", None)
        if isinstance(value, complex) or getattr(dtype, "kind", None) == "c":
            raise TypeError(f"[{api}] an argument of type {type(value).__name__}"
                            + (f" and dtype {dtype}" if dtype is not None else "")
                            + " is complex, and jit=True compiles real code only (its stacks are "
                            "typed float arrays). Call without jit=True: the generated Python code "
                            "differentiates complex values.")


# -- compiling and calling -----------------------------------------------------------------------

def _namespace(module, overrides):
    ns = dict(module.namespace)
    ns.update(RUNTIME_HELPERS)
    ns.update(overrides)
    ns["__dualtape_user_functions__"] = user_functions(module.user_functions)  # (tracebacks.py)
    return ns


class _Entry:
    """One specialization: the generated module for these argument types, its uncompiled
    function, and (after the first call) the compiled one and its source."""

    def __init__(self, owner, module, extra):
        self.owner, self.module, self.extra = owner, module, extra
        self.python = module.compile(owner.inner.name)
        self.signature = inspect.signature(self.python)
        self.source = None
        self.fn = self.uncompiled_fn = self.uncompiled_source = self.ir = None
        self.room = 1  # (a factor of the rows stacks' buffers: doubled where one was full)
        self.compile_seconds = None
        self.fallback_reason = None

    def rest(self, n):
        """The defaults of the parameters after the first n, passed explicitly: numba's fast
        dispatch matches no omitted argument (each call would go through its compiler path)."""
        tail = list(self.signature.parameters.values())[n:]
        if any(p.default is inspect.Parameter.empty for p in tail):
            return None
        return tuple(p.default for p in tail)

    def positional(self, args, kwargs):
        """The arguments in the order of the compiled function's parameters (all positional)."""
        if not kwargs:
            rest = self.rest(len(args))
            return args if rest is None else tuple(args) + rest
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.arguments[p] for p in self.signature.parameters)

    def build(self, args):
        """Probe, rewrite and compile (the first call); returns the result of this call."""
        name = self.owner.inner.name
        start = time.perf_counter()
        generated = self.module.functions
        probe_ns = _namespace(self.module, {"_Probe": StackProbe})
        probe, _ = run_module(probe_functions(generated), name, probe_ns, f"probe {name}")
        stacks = {}
        orig_probe = StackProbe

        class Recording(orig_probe):
            def __init__(self):
                super().__init__()
                stacks[len(stacks)] = self

        probe_ns["_Probe"] = Recording
        if may_hold_arrays(generated, probe_ns, args):
            with record_kinds(f"<dualtape probe {name}#") as kinds:  # (which names hold arrays: fusion.py)
                probe(*args)
        else:
            kinds = {}
            probe(*args)
        samples, peak = {}, {}
        for rec in stacks.values():
            for key, values in rec.samples.items():
                samples.setdefault(key, []).extend(values)
            for key, depth in rec.peak.items():
                peak[key] = max(peak.get(key, 0), depth)
        from . import runtime as jit_runtime
        functions = compiled_reductions(jit_functions(generated, samples, peak, self.room))
        made = native.compiled(functions, name, _namespace(self.module, jit_runtime.NAMES), args, self.rerun,
                               jit_runtime.NAMES)
        if made is not None:  # (scalar code: LLVM directly, numba's hundreds of milliseconds saved)
            (self.fn, self.ir), self.source = made, source_of(functions)
            self.compile_seconds = time.perf_counter() - start
            return self.fn(*args)
        fused = fuse_functions(copy.deepcopy(functions), kinds) if kinds else functions
        # (kernels: the fused code first, and the code as it was where numba refuses the fused code)
        for attempt in ([fused, functions] if len(fused) > len(functions) else [functions]):
            try:
                self.fn, result = self.compile_and_call(attempt, args)
            except Exception as exc:
                if not self.compile_error(exc):
                    raise
                error = refusal(self.owner.api, self.owner.inner.f, exc, self.source, self.filename)
                text = plain_text(exc)
                continue
            self.compile_seconds = time.perf_counter() - start
            return result
        if untyped_helper(text):  # (numba names the first only: name them all)
            error = TransformError(f"{error}\n  (every helper it calls without a compiled twin: "
                                   f"{', '.join(untwinned_helpers(functions, jit_runtime.NAMES))})")
        containers = python_containers(generated, args, self.namespace, text)
        if not self.owner.fallback and containers is None:
            raise error from None
        why = "jit='fallback'" if self.owner.fallback else "jit=True"
        if containers is not None:
            why = f"numba compiles no Python lists of arrays, dicts or function values, so {why}"
        return self.uncompiled(str(error) if containers is None else f"{error}\n  (it holds {containers})", why,
                               args, start)

    def plain_code(self):
        """(the uncompiled generated code's function, its source), taking positional arguments:
        rendered once, for the native code's reruns and for the fallback."""
        if self.uncompiled_fn is None:
            name = self.owner.inner.name
            self.uncompiled_fn, self.uncompiled_source = run_module(
                positional_functions(self.module.functions), name, _namespace(self.module, {}), f"uncompiled {name}")
        return self.uncompiled_fn, self.uncompiled_source

    def rerun(self, *args):
        """The uncompiled generated code's result for these (positional) arguments: where the
        native code stops, Python's own answer or error."""
        return self.plain_code()[0](*args)

    def compile_and_call(self, functions, args, cache=True):
        """Render `functions`, compile them with numba and call the result: (compiled, result).
        `self.source`, `self.filename` and `self.namespace` are the source compiled, its file
        name and its globals (what a refusal names)."""
        numba = self.owner.numba
        name = self.owner.inner.name
        from . import runtime as jit_runtime, vecmath
        used_names = {x.id for fn in functions for x in syntax.walk(fn) if isinstance(x, ast.Name)}
        attributes = {(x.value.id, x.attr) for fn in functions for x in syntax.walk(fn)
                      if isinstance(x, ast.Attribute) and isinstance(x.value, ast.Name)}
        place = (lambda text, globals_: disk_cache.place(text, globals_, used_names, attributes)) if cache else None
        python, self.source = run_module(functions, name, _namespace(self.module, {**jit_runtime.NAMES,
                                                                                  **vecmath.KERNEL_GLOBALS}),
                                         f"jit {name}", place=place)
        self.filename = python.__code__.co_filename
        self.namespace = namespace = python.__globals__
        cache = disk_cache.is_cached(python)  # (every global it reads has a key: numba may keep it on disk)
        for node in functions:  # the adjoints of called user functions too
            if is_kernel(node.name):  # (a fused loop: NumPy's error model, as the array statements it replaces)
                namespace[node.name] = numba.njit(error_model="numpy", cache=cache)(namespace[node.name])
            elif node.name != name:
                namespace[node.name] = numba.njit(cache=cache)(namespace[node.name])
        for used in used_names:  # user functions called
            value = namespace.get(used)
            if inspect.isfunction(value) and value.__module__ not in ("dualtape.transforms.jit.runtime",) \
                    and not getattr(value, "__module__", "").startswith(("numba", "numpy", "dualtape")) \
                    and value.__name__ != "<lambda>" and used != name \
                    and not has_star_parameters(value):  # (numba compiles no *args / **kwargs: a typing error)
                jit_lifted_calls(value, numba.njit)  # (a nested function calling another)
                namespace[used] = numba.njit(value)
        compiled = numba.njit(cache=cache)(python)
        try:
            return compiled, compiled(*args)
        except Exception as exc:  # noqa: BLE001  (a cache file numba cannot load: compile without the cache)
            if cache and disk_cache.raised_loading(exc):
                return self.compile_and_call(functions, args, cache=False)
            raise

    def compile_error(self, exc):
        """Whether `exc` is numba refusing the code (not an error of the compiled code's run);
        "unbox": numba's TypeError for an argument it cannot take (a list of arrays of two ndims)."""
        numba = self.owner.numba
        return isinstance(exc, numba.core.errors.NumbaError) or "unbox" in str(exc) or raised_compiling(exc)

    def uncompiled(self, reason, why, args, start):
        """Run (and keep) the uncompiled generated code, warning with `reason` and `why`."""
        self.fallback_reason = self.owner.fallback_reason = reason
        warnings.warn(f"{reason}\n  {why}: running the uncompiled generated code instead "
                      "(the same numbers, at Python's speed).", RuntimeWarning, stacklevel=7)
        self.fn, self.source = self.plain_code()
        self.compile_seconds = time.perf_counter() - start
        return self.fn(*args)

    def __call__(self, args, kwargs):
        args = self.positional(args, kwargs)
        self.owner._last = self
        if self.fn is None:
            return self.grown(args, 1)
        try:
            return self.fn(*args)
        except RowsFull:
            return self.grown(args)

    def grown(self, args, factor=2):
        """Build (probe, rewrite, compile) and call, with the rows stacks' buffers `factor`
        times as large, again and again while one is full (RowsFull: a later call pushes more
        than the probe did); the fast paths, which hold the old code, are emptied."""
        if factor != 1:  # (a new build: the fast paths hold this entry's old code)
            self.room *= factor
            self.owner._fast.clear()
            self.owner._fast_tangent.clear()
        while True:
            try:
                return self.build(args)
            except RowsFull:
                self.room *= 2


def _fast_type(value):
    """Whether the fast path takes an argument like `value`: a real scalar, or a real float array
    of one or more axes (its dtype and ndim in `_fast_key`; no container, so no restructuring)."""
    if type(value) is np.ndarray:
        return value.ndim > 0 and value.dtype.kind == "f"
    return isinstance(value, _FAST_TYPES)


def _fast_key(args):
    """The fast path's key: the arguments' types, then each array's dtype and ndim."""
    key = tuple(map(type, args))
    if np.ndarray in key:
        return key + tuple((a.dtype, a.ndim) for a in args if type(a) is np.ndarray)
    return key


def _type_key(value):
    if isinstance(value, np.ndarray):
        return (np.ndarray, value.dtype.str, value.ndim)
    if isinstance(value, tuple):
        return (tuple,) + tuple(_type_key(v) for v in value)
    if is_function_value(value):  # a version per function passed (frontend/functions.py)
        return value
    return type(value)


def _plain_key(args):
    """The type key of arguments that are real floats, ints and arrays of at least one axis, or
    tuples of them, only (what a jvp or hvp may call its compiled version for again without
    binding or checking them: every check of `_split` depends on types, dtypes and ndims
    alone there); None for anything else."""
    key = []
    for value in args:
        if isinstance(value, tuple):
            inner = _plain_key(value)
            if inner is None:
                return None
            key.append((tuple,) + inner)
        elif type(value) is np.ndarray:
            if value.ndim == 0 or value.dtype.kind not in "fiu":
                return None
            key.append((np.ndarray, value.dtype.str, value.ndim))
        elif type(value) in (float, int):
            key.append(type(value))
        else:
            return None
    return tuple(key)


def _layout(entry, n_args, tparams):
    """Where each parameter of the compiled function comes from, in order: ("arg", i) the i-th
    primal, ("tangent", j) the j-th tangent, (None, value) a default."""
    layout = []
    for position, (name, parameter) in enumerate(entry.signature.parameters.items()):
        if name in tparams:
            layout.append(("tangent", tparams.index(name)))
        elif position < n_args:
            layout.append(("arg", position))
        else:
            layout.append((None, parameter.default))
    return tuple(layout)


class Jitted:
    """`transforms.grad(f, jit=True)` and friends: the generated code compiled by numba.

    Call it like the uncompiled transform. `.source` is the source numba compiled for the
    latest call (before any call: the general version, every stack a list);
    `.source_for(*args)` the one for these arguments; `.compile_seconds` what the latest
    specialization's probe, rewrite and compilation (with its first call) took.
    """

    def __init__(self, inner, jit):
        if jit not in (True, "fallback"):
            raise TransformError(f"[{inner.api}] jit={jit!r}: pass jit=True (compile with numba, refuse what it "
                                 "cannot compile) or jit='fallback' (run the uncompiled code there).")
        self.numba = import_numba(inner.api)
        self.inner, self.fallback = inner, jit == "fallback"
        self.api, self.mode, self.name = inner.api, inner.mode, inner.name
        self.__name__ = inner.name
        self.__doc__ = inner.__doc__
        self.wrt = inner.wrt
        self._entries = {}
        self._fast = {}  # argument types -> (compiled gradient, its entry, the defaults after them)
        self._fast_tangent = {}  # jvp, hvp: _plain_key of the arguments -> (entry, _layout)
        self._last = None
        self.fallback_reason = None
        self._guard = Guard(contents=True)  # the globals the compiled versions were made from (numba freezes them)

    def __repr__(self):
        return repr(self.inner)[:-1] + ", jit>"

    # -- what was compiled ---------------------------------------------------------------------
    @property
    def source(self):
        if self._last is not None and self._last.source is not None:
            return self._last.source
        return source_of(jit_functions(self.inner.module.functions))

    @property
    def compile_seconds(self):
        return None if self._last is None else self._last.compile_seconds

    def source_for(self, *args, **kwargs):
        """The compiled source for these arguments (compiling it if no call did yet)."""
        self(*args, **kwargs)
        return self._last.source

    # -- calling ---------------------------------------------------------------------------------
    def _entry(self, args, kwargs, extra=(), options=None, bound=None):
        key = tuple(_type_key(a) for a in args) + tuple((k, _type_key(v)) for k, v in kwargs.items()) \
            + extra + tuple(sorted((options or {}).items()))
        entry = self._entries.get(key)
        if entry is None:  # (the key holds the types and dtypes: a differentiated integer is refused here)
            self.inner.refuse_integers(args, kwargs)
            kinds = _arg_kinds(self.inner._bind(args, kwargs) if bound is None else bound)
            module, params = self.inner._build(kinds, *extra, **(options or {}))
            self._guard.watch(module.user_functions)
            entry = self._entries[key] = (_Entry(self, module, extra), params)
        return entry

    def __call__(self, *args, **kwargs):
        if not self._guard.holds():  # a global was rebound: compile again from the current ones
            self._entries.clear()
            self._fast.clear()
            self._fast_tangent.clear()
            self._last, self._guard = None, Guard(contents=True)
        if not kwargs:  # the fast path: a gradient compiled for these argument types already
            key = tuple(map(type, args))  # (scalars: their types are the key, with no call of _fast_key)
            hit = self._fast.get(_fast_key(args) if np.ndarray in key else key)
            if hit is not None:
                self._last = hit[1]
                try:
                    return hit[0](*args, *hit[2])
                except RowsFull:
                    return hit[1].grown(args + hit[2])
            if self._fast_tangent:
                key = _plain_key(args)
                hit = self._fast_tangent.get(key) if key is not None else None
                if hit is not None:  # (jvp, hvp: the checks _split made passed for these types)
                    entry, layout = hit
                    self._last = entry
                    *primals, tangents = args
                    tangents = tangents if self.inner.wrt_is_tuple else (tangents,)
                    positional = tuple(primals[i] if where == "arg" else tangents[i] if where == "tangent" else i
                                       for where, i in layout)
                    try:
                        value, tangent = entry.fn(*positional)
                    except RowsFull:
                        value, tangent = entry.grown(positional)
                    return tangent if self.mode == "hvp" else (value, tangent)
        try:
            return self._call(args, kwargs)
        except Exception as exc:  # (an error inside the uncompiled generated code: name the user's line)
            name_user_lines(exc)
            raise

    def _call(self, args, kwargs):
        original = args
        # a 0-d array is a scalar to numba (np.sin of one is a float): pass its value
        args = tuple(a[()] if isinstance(a, np.ndarray) and a.ndim == 0 else a for a in args)
        kwargs = {k: v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v for k, v in kwargs.items()}
        if self.mode in ("jvp", "hvp"):
            refuse_complex(self.api, list(args) + list(kwargs.values()))
            args, ts, bound, batch = self.inner._split(args, kwargs)
            refuse_complex(self.api, ts)
            entry, tparams = self._entry(args, kwargs, (batch,), bound=bound)
            key = None if kwargs else _plain_key(original)
            kwargs = dict(kwargs, **{p: t for p, t in zip(tparams, ts)})
            value, tangent = entry(args, kwargs)
            if key is not None and entry.fn is not None:
                self._fast_tangent[key] = (entry, _layout(entry, len(args), tparams))
            return tangent if self.mode == "hvp" else (value, tangent)
        if self.mode == "vjp":
            if not args:
                raise TypeError(f"[{self.api}] call it as f_vjp(*args, dy).")
            *args, dy = args
            refuse_complex(self.api, (dy,))
        refuse_complex(self.api, args)
        refuse_complex(self.api, kwargs.values())
        args = tuple(args)
        if self.mode == "vjp":
            entry, seed = self._entry(args, kwargs)
            return self.inner._structured(entry(args, dict(kwargs, **{seed: dy})), args, kwargs)
        entry, _ = self._entry(args, kwargs)
        if entry.python.__dualtape_scalar_output__:
            result = entry(args, kwargs)
            if self.inner.preserve_result:
                result = self.inner._structured(result[0], args, kwargs), result[1]
            else:
                result = self.inner._structured(result, args, kwargs)
            if not kwargs and entry.fn is not None and all(_fast_type(a) for a in args):
                rest = entry.rest(len(args))
                if rest is not None:
                    self._fast[_fast_key(args)] = (entry.fn, entry, rest)
            return result
        entry, _ = self._entry(args, kwargs, options={"value": True})
        gradient, value = entry(args, kwargs)
        if shape_of(value) != ():
            code = self.inner.f.__code__
            raise TransformError(
                f"[{self.api}] {code.co_filename}:{code.co_firstlineno} in {self.inner.f.__name__}: it returned a "
                f"value of shape {shape_of(value)}; grad needs a scalar output.\n  Use transforms.vjp, or reduce "
                "the output first (e.g. return np.sum(y)).")
        gradient = self.inner._structured(gradient, args, kwargs)
        return (gradient, value) if self.inner.preserve_result else gradient


def jitted(make, f, jit, verbose=False):
    """The Jitted transform of `make(f)` (the uncompiled transform), made once per (transform, jit);
    with f=None, the decorator."""
    if f is None:
        return lambda g: jitted(make, g, jit, verbose)
    inner = make(f)
    cache, key = cache_on(inner), ("jit", jit)  # kept on the transform, freed with f (cache.py)
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = Jitted(inner, jit)
    if verbose:
        print(hit.source)
    return hit
