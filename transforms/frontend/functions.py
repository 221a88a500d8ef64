"""Functions as values in a transformed function, read before anything else.

    def f(x, act=np.tanh):           a function-valued parameter: the version per argument
        w = 2.0 * x                  types is a version per function passed (its kind is a
        def g(v):                    FunctionKind, function_values.py): `act(x)` is read as
            return v * w             `np.tanh(x)`, `relu(x)`, ...
        h = lambda v: np.sin(v)      nested functions and lambdas are lifted: module-level
        a = act                      functions whose free variables that are f's locals
        return np.sum(g(x) + h(a(x)))    become parameters passed at each call, so the callee
                                     sees their values at the call, as a closure does

A variable bound once to a known function (`a = act`, `a = relu`, `a = np.tanh`) is read
as that function. Each call of a lifted function becomes a call of a user function, which
the transformer differentiates through its helper (`g_vjp`, `g_jvp`). A lifted function
without free locals, a global function and a parameter's function may be passed to a user
function (which is specialized on it in turn).

Refused, each with its line and a fix: `nonlocal` / `global` in a nested function, a nested
function that calls itself, `yield`, a function value that escapes otherwise (returned,
stored), a variable bound to functions more than once, a function-valued parameter in `wrt`.
"""

import functools
import inspect
import types

import numpy as np

from ..calls.generators import collect_yields, follows
from ..calls.opmap import resolve
from ..ir import syntax
from ..ir.naming import reserved_names, unused_name
from ..ir.syntax import nodes as n
from .dicts import DICT_VIEWS
from .function_loops import FunctionLoops, constant_indices
from .function_values import LIBRARIES, FunctionKind, ObjectKind, is_function_value, is_user_object, lift, method_of


class Static:
    """A function known from the source or the argument kinds: called as `spelling(*first,
    args, *extras, **keywords_first)` (`keywords`: extras passed by name; `first` and
    `keywords_first`: a partial's arguments), or, for a stub, as its first argument; a
    `choice` (test name, Static, Static) is called as one or the other; a `sequence` (a tuple
    of functions) is not called itself."""

    def __init__(self, spelling, extras=(), keywords=False, stub=False, first=(), keywords_first=(), choice=None,
                 sequence=False):
        self.spelling, self.extras, self.keywords, self.stub = spelling, list(extras), keywords, stub
        self.first, self.keywords_first, self.choice, self.sequence = list(first), list(keywords_first), choice, sequence

    def partial(self, first, keywords_first):
        return Static(self.spelling, self.extras, self.keywords, self.stub, self.first + first,
                      self.keywords_first + keywords_first, self.choice)

    def call(self, node):
        """The call `node` (its arguments rewritten) as a call of this function."""
        if self.choice is not None:
            test, a, b = self.choice
            return n.IfExp(test=syntax.name(test), body=a.call(syntax.copy(node)), orelse=b.call(node))
        if self.stub:
            return node.args[0] if node.args else syntax.constant(0.0)
        node.func = syntax.copy(self.spelling)
        extras = [syntax.name(v) for v in self.extras]
        node.args = [syntax.name(v) for v in self.first] + node.args
        node.keywords = [n.keyword(arg=k, value=syntax.name(v)) for k, v in self.keywords_first] + node.keywords
        if self.keywords:
            node.keywords = node.keywords + [n.keyword(arg=v, value=e) for v, e in zip(self.extras, extras)]
        else:
            node.args = node.args + extras
        return node


def params_of(fn_node):
    args = fn_node.args
    return [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]


def function_values(info, api, fail, kinds=None, module=None, wrt=()):
    """Rewrite `info.node` so that no function value is left: see the module's doc."""
    FunctionValues(info, api, fail, kinds or {}, module, wrt).run()


def _called_names(node):
    return {c.func.id for c in syntax.walk(node) if isinstance(c, n.Call) and isinstance(c.func, n.Name)}


class FunctionValues:

    def __init__(self, info, api, fail, kinds, module, wrt):
        self.info, self.api, self.fail, self.kinds, self.module, self.wrt = info, api, fail, kinds, module, wrt
        self.node = info.node
        self.params = params_of(self.node)
        self.defs = {}  # name -> (FunctionDef, the statement binding it)
        self.bindings = {}  # name -> Static
        self.lifting = set()
        self.namespace = None  # the lifted functions' globals (made on the first one)
        self._temps = set()
        self.aliases = {}  # a method's function -> the global it is called by
        self.instances = {}  # a variable bound once to an instance made in f -> its class

    # -- finding them ---------------------------------------------------------------------
    def run(self):
        node = self.node
        nested = any(isinstance(x, (n.FunctionDef, n.Lambda, n.AsyncFunctionDef)) for x in syntax.walk(node)
                     if x is not node)
        stores = syntax.store_names(node)
        names = _called_names(node)
        called = names & (set(self.params) | stores)
        function_params = [p for p in self.params if isinstance(self.kinds.get(p), (FunctionKind, ObjectKind))]
        if not (nested or called or function_params or "map" in names or any(
                isinstance(x, n.Call) and (isinstance(x.func, n.Subscript) or isinstance(x.func, n.Attribute)
                                           and isinstance(x.func.value, n.Name) and self._may_be_object(x.func.value.id, stores))
                for x in syntax.walk(node))):
            return
        self.locals, self.stores = set(self.params) | stores, stores
        receivers = {x.func.value.id for x in syntax.walk(node) if isinstance(x, n.Call) and isinstance(
            x.func, n.Attribute) and isinstance(x.func.value, n.Name) and not hasattr(np.ndarray, x.func.attr)
            and x.func.attr not in DICT_VIEWS}  # (`p.items()`: a dict's, frontend/dicts.py)
        for p in self.params:
            self._bind_parameter(p, (p in called or p in receivers) and p not in stores)
        loops = FunctionLoops(self)  # loops over functions written out, `acts[1]` read
        node.body = loops.rewrite(node.body)
        constant_indices(loops, node.body)
        for name in loops.sequences:
            self.bindings[name] = Static(None, sequence=True)
        self.counts = self._binding_counts(node)
        self._find_instances(node)
        self._collect(node.body)
        for name in list(self.defs):
            self._lift(name)
        node.body = self._rewrite_block(node.body, set())

    def _may_be_object(self, name, stores):
        return name in stores or name not in self.params and is_user_object(self.info.namespace.get(name))

    def _find_instances(self, node):
        """Variables bound once to `Model(...)` of a user's class with arguments that read no
        local variable (so the instance holds no differentiated value)."""
        for x in syntax.walk(node):
            if (isinstance(x, n.Assign) and len(x.targets) == 1 and isinstance(x.targets[0], n.Name)
                    and self.counts.get(x.targets[0].id) == 1 and isinstance(x.value, n.Call)):
                cls = resolve(x.value.func, self.locals, self.info.namespace)
                if (isinstance(cls, type) and (cls.__module__ or "").split(".")[0] not in LIBRARIES
                        and not syntax.load_names(x.value) & self.locals):
                    self.instances[x.targets[0].id] = cls

    def _binding_counts(self, node):
        counts = {}
        for x in syntax.walk(node):
            if x is node:
                continue
            if isinstance(x, n.Name) and isinstance(x.ctx, n.Store):
                counts[x.id] = counts.get(x.id, 0) + 1
            elif isinstance(x, (n.FunctionDef, n.AsyncFunctionDef)):
                counts[x.name] = counts.get(x.name, 0) + 1
        return counts

    def _bind_parameter(self, p, called):
        kind = self.kinds.get(p)
        if isinstance(kind, ObjectKind) and p in self.wrt:
            raise self.fail(self.node, f"the parameter `{p}` is an instance of {kind.cls.__name__}, which is not "
                            "differentiated (the transformer reads its methods)", f"Leave `{p}` out of wrt / argnums, "
                            "and pass the arrays to differentiate as arguments of their own.")
        if isinstance(kind, ObjectKind):
            return  # (its methods are read at each call: `method`)
        default = inspect.signature(self.info.fn).parameters[p].default if called else None
        if isinstance(kind, FunctionKind):
            fn = kind.fn
        elif called and (kind is None or self.module is not None and self.module.defer) and is_function_value(default):
            fn = default  # (not passed by the caller, or the general version: the default)
        elif called and self.module is not None and self.module.defer:
            # no function to read: .source asks for arguments (the versions per call work)
            self.module.deferred.append(self.fail(self.node, f"the parameter `{p}` is called as a function (or its "
                                                  "methods are), and the version for any arguments cannot know which",
                                                  "Use .source_for(*args) to see the version for a call."))
            self.bindings[p] = Static(None, stub=True)
            return
        else:
            return
        if p in self.wrt:
            raise self.fail(self.node, f"the parameter `{p}` holds a function ({_name_of(fn)}), which cannot be "
                            "differentiated", f"Leave `{p}` out of wrt / argnums: the transformer specializes on it.")
        self.bindings[p] = self._static_of_value(fn, p)

    def _static_of_value(self, fn, hint):
        """The Static of a function passed as an argument: a function, NumPy's, a partial of one
        (its arguments read as constants), a method of a user object (its receiver too)."""
        if isinstance(fn, functools.partial):
            first = [self._constant(f"{hint}_arg", v) for v in fn.args]
            keywords = [(k, self._constant(f"{hint}_{k}", v)) for k, v in fn.keywords.items()]
            return self._static_of_value(fn.func, hint).partial(first, keywords)
        if inspect.ismethod(fn) and inspect.isfunction(fn.__func__) and is_user_object(fn.__self__):
            cls = type(fn.__self__)
            name = self._method_alias(fn.__func__, f"{cls.__name__}_{fn.__func__.__name__.strip('_')}")
            return Static(syntax.name(name), first=[self._constant(f"{hint}_self", fn.__self__)])
        return Static(self._spell(fn, hint))

    def _constant(self, base, value):
        name = unused_name(base, set(self.info.namespace) | self.locals | self.module_names())
        self._register(name, value)
        return name

    def _collect(self, body):
        """The nested functions, lambdas and function aliases bound by statements of `body`."""
        for s in body:
            if isinstance(s, n.AsyncFunctionDef):
                raise self.fail(s, "a nested `async def` is not supported", "Differentiate a synchronous function.")
            if isinstance(s, n.FunctionDef):
                self._check_once(s.name, s)
                if s.decorator_list:
                    raise self.fail(s, f"the decorated nested function `{s.name}` cannot be transformed",
                                    "Define it without decorators, or at module level.")
                self.defs[s.name] = (s, s)
                continue
            if isinstance(s, n.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], n.Name):
                target, value = s.targets[0].id, s.value
                if isinstance(value, n.Lambda):
                    self._check_once(target, s)
                    self.defs[target] = (self._as_def(target, value, s), s)
                    s._dualtape_function_alias = True
                    continue
                temps = []
                fn = self._known_binding(value, target, temps)
                if fn is not None:
                    self._check_once(target, s)
                    self.bindings[target] = fn
                    s._dualtape_function_alias = temps or True
                    continue
            for field in ("body", "orelse"):
                if isinstance(s, (n.If, n.For, n.While)):
                    self._collect(getattr(s, field))

    def _check_once(self, name, s):
        if self.counts.get(name, 0) > 1 or name in self.params:
            raise self.fail(s, f"`{name}` is bound to a function and bound again elsewhere in the function",
                            "Give each function its own name (the transformer reads the function a name holds "
                            "from the source).")

    def _known(self, value):
        """The Static a function expression names (`relu`, `np.tanh`, a parameter's function,
        another nested function or alias), or None."""
        if isinstance(value, n.Name) and value.id in self.bindings:
            return self.bindings[value.id]
        if isinstance(value, n.Name) and value.id in self.defs:
            return self._lift(value.id)
        if isinstance(value, (n.Name, n.Attribute)):
            chain = value
            while isinstance(chain, n.Attribute):
                chain = chain.value
            if isinstance(chain, n.Name) and chain.id not in self.locals:
                obj = resolve(value, self.locals, self.info.namespace)
                if obj is not None and is_function_value(obj) and not isinstance(obj, type):
                    return Static(syntax.copy(value))
        return None

    def _known_binding(self, value, target, temps):
        """`_known`, and also `functools.partial(fn, a, k=b)` and `fa if test else fb`: their
        values are kept in new variables (`temps` gets the assignments), read at each call."""
        if isinstance(value, n.Call) and value.args and resolve(value.func, self.locals, self.info.namespace) \
                is functools.partial and not any(isinstance(a, n.Starred) for a in value.args) \
                and all(k.arg is not None for k in value.keywords):
            inner = self._known_binding(value.args[0], target, temps)
            if inner is None or inner.choice is not None or inner.stub:
                return None
            first = [self._temp(f"{target}_arg", a, value, temps) for a in value.args[1:]]
            keywords = [(k.arg, self._temp(f"{target}_{k.arg}", k.value, value, temps)) for k in value.keywords]
            return inner.partial(first, keywords)
        if isinstance(value, n.IfExp):
            a, b = self._known_binding(value.body, target, temps), self._known_binding(value.orelse, target, temps)
            if a is None or b is None:
                return None
            return Static(None, choice=(self._temp(f"{target}_flag", value.test, value, temps), a, b))
        return self._known(value)

    def _temp(self, base, value, where, temps):
        name = unused_name(base, self.locals | set(self.info.namespace) | self._temps)
        self._temps.add(name)
        assign = n.Assign(targets=[syntax.name(name, store=True)], value=value, type_comment=None)
        assign.lineno, assign.col_offset = where.lineno, getattr(where, "col_offset", 0)
        temps.append(assign)
        return name

    def _as_def(self, name, lam, s):
        node = n.FunctionDef(name=name, args=lam.args, body=[n.Return(value=lam.body)], decorator_list=[],
                             returns=None, type_comment=None, type_params=[])
        for x in (node, node.body[0]):
            x.lineno, x.col_offset = s.lineno, getattr(s, "col_offset", 0)
        return node

    # -- lifting ----------------------------------------------------------------------------
    def _lift(self, name):
        if name in self.bindings:
            return self.bindings[name]
        node, s = self.defs[name]
        if name in self.lifting:
            raise self.fail(s, f"the nested function `{name}` calls itself (directly or through another nested "
                            "function), which the transformer cannot follow", "Define it at module level (recursion "
                            "is refused there too: write it as a loop), or write the recursion as a loop.")
        self.lifting.add(name)
        for x in syntax.walk(node):
            if isinstance(x, (n.Global, n.Nonlocal)):
                raise self.fail(x, f"`{'global' if isinstance(x, n.Global) else 'nonlocal'}` in the nested "
                                f"function `{name}` is not supported", "Return the value from the nested function "
                                "instead of writing an enclosing variable.")
            if isinstance(x, (n.Yield, n.YieldFrom)) and not follows(node):
                raise self.fail(x, f"the nested function `{name}` is a generator that must run lazily (`while "
                                "True`, `x = yield`, `yield from`, `return` or a function inside), which cannot be "
                                "differentiated", "Yield from loops that end, or return a list instead.")
        own = set(params_of(node)) | {a.id for a in (node.args.vararg, node.args.kwarg) if a is not None}
        own |= syntax.store_names(node) | {x.name for x in syntax.walk(node) if isinstance(x, n.FunctionDef)
                                          and x is not node}
        for d in node.args.defaults + node.args.kw_defaults:
            if d is not None and syntax.load_names(d) & self.locals:
                raise self.fail(node, f"a default of the nested function `{name}` reads a local variable",
                                "Pass the value at the call instead.")
        lifted = syntax.copy(node)
        lifted.decorator_list = []
        if any(isinstance(x, n.Yield) for x in syntax.walk(node)):  # (a generator: the list of what it yields)
            collect_yields(lifted)
        lifted.body = self._rewrite_block(lifted.body, own, top=False)
        free = []
        for x in syntax.walk(lifted):
            if (isinstance(x, n.Name) and isinstance(x.ctx, n.Load) and x.id in self.locals and x.id not in own
                    and x.id not in self.bindings and x.id not in self.defs and x.id not in free):
                free.append(x.id)
        if name in self.params:
            raise self.fail(s, f"`{name}` is a parameter and a nested function", "Rename one of them.")
        taken = ((set(self.info.namespace) | self.locals | self.module_names()) - set(self.defs)) | reserved_names()
        lifted.name = unused_name(name if name != "<lambda>" else "lambda_fn", taken | self._lifted_names())
        keywords = bool(node.args.defaults or node.args.kwonlyargs)
        extra = [n.Name(id=v, ctx=n.Param(), annotation=None, type_comment=None) for v in free]
        if keywords:
            lifted.args.kwonlyargs = lifted.args.kwonlyargs + extra
            lifted.args.kw_defaults = lifted.args.kw_defaults + [None] * len(extra)
        else:
            lifted.args.args = lifted.args.args + extra
        ns = self._namespace()
        fn = lift(lifted, ns, self.info.filename, self.info.first_line, self.info.source_lines)
        ns[lifted.name] = self.info.namespace[lifted.name] = fn
        if self.module is not None:
            self.module.namespace[lifted.name] = fn
        static = self.bindings[name] = Static(syntax.name(lifted.name), free, keywords)
        self.lifting.discard(name)
        return static

    def _lifted_names(self):
        return {b.spelling.id for b in self.bindings.values() if isinstance(b.spelling, n.Name)}

    def module_names(self):
        return set(self.module.namespace) | self.module.user_names if self.module is not None else set()

    def _namespace(self):
        if self.namespace is None:
            self.namespace = dict(self.info.namespace)
        return self.namespace

    def _spell(self, fn, hint):
        """An expression naming `fn`: a global that holds it, `np.<name>`, or a new global."""
        for k, v in self.info.namespace.items():
            if v is fn and k not in self.locals and not k.startswith("__"):
                return syntax.name(k)
        name = getattr(fn, "__name__", None)
        if (name and getattr(np, name, None) is fn and "np" not in self.locals
                and self.info.namespace.get("np", np) is np):
            return syntax.attribute("np", name)
        alias = unused_name(f"{hint}_fn", set(self.info.namespace) | self.locals | self.module_names())
        self.info.namespace[alias] = fn
        self._namespace()[alias] = fn
        if self.module is not None:
            self.module.namespace[alias] = fn
        return syntax.name(alias)

    # -- rewriting --------------------------------------------------------------------------
    def _rewrite_block(self, body, shadowed, top=True):
        """`body` with calls of known functions rewritten; in f itself (`top`), the statements
        that bind them go (they are read from the bindings)."""
        rewriter = _Rewriter(self, shadowed, top)
        out = []
        for s in body:
            new = rewriter.visit(s)
            out.extend(new if isinstance(new, list) else [] if new is None else [new])
        return out or [n.Pass()]

    def method(self, receiver, attr, shadowed):
        """The Static of `receiver.attr(...)` (`receiver(...)` for attr None: `__call__`) where the
        receiver is an instance of a user's class: a parameter, a global or one made in f."""
        r = receiver.id
        if r in shadowed:
            return None
        if r in self.bindings:  # (the general version's stand-in for an object parameter)
            return self.bindings[r] if self.bindings[r].stub and attr is not None else None
        cls = self.instances.get(r)
        if r in self.params and r not in self.stores and isinstance(self.kinds.get(r), ObjectKind):
            cls = self.kinds[r].cls
        elif cls is None and r not in self.locals and is_user_object(self.info.namespace.get(r)):
            cls = type(self.info.namespace[r])
        fn = method_of(cls, attr or "__call__") if cls is not None else None
        if fn is None:
            return None
        if fn not in self.aliases:
            self.aliases[fn] = self._method_alias(fn, f"{cls.__name__}_{(attr or 'call').strip('_')}")
        return Static(syntax.name(self.aliases[fn]), first=[r])

    def _method_alias(self, fn, base):
        """The global name of a copy of the method `fn` named `base` (`Model_apply`: the helpers
        are `Model_apply_vjp`, ...), one per module."""
        for space in (self.module.namespace if self.module is not None else {}, self.info.namespace):
            for name, value in space.items():
                if getattr(value, "__dualtape_method_of__", None) is fn:
                    self._register(name, value)
                    return name
        name = unused_name(base, set(self.info.namespace) | self.locals | self.module_names())
        copy = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__, fn.__closure__)
        copy.__kwdefaults__, copy.__qualname__, copy.__module__ = fn.__kwdefaults__, name, fn.__module__
        copy.__dualtape_method_of__ = fn
        self._register(name, copy)
        return name

    def _register(self, name, fn):
        self.info.namespace[name] = self._namespace()[name] = fn
        if self.module is not None:
            self.module.namespace[name] = fn

    def static(self, name, shadowed):
        if name in shadowed:
            return None
        if name in self.defs and name not in self.bindings:
            return self._lift(name)
        return self.bindings.get(name)


def _name_of(fn):
    return getattr(fn, "__name__", type(fn).__name__)


class _Rewriter(syntax.NodeTransformer):
    """Calls of known functions spelled as calls of what they hold; other uses refused."""

    def __init__(self, values, shadowed, top):
        self.values, self.shadowed, self.top = values, shadowed, top

    def visit_FunctionDef(self, node):
        if self.top:
            return n.Pass()  # (lifted: read from the bindings)
        raise self.values.fail(node, f"the function `{node.name}` is nested in a nested function, which the "
                               "transformer does not follow yet", "Define it in the outer function (or at module "
                               "level), passing the values it reads as arguments.")

    def visit_Lambda(self, node):
        if self.top:
            return node
        raise self.values.fail(node, "a lambda inside a nested function is not supported by the transformer yet",
                               "Define the lambda in the outer function (or a function at module level).")

    def visit_Assign(self, node):
        replaced = getattr(node, "_dualtape_function_alias", False)
        if self.top and replaced:
            if replaced is True:
                return n.Pass()
            return [self.visit(temp) for temp in replaced]  # (a partial's arguments, a choice's test)
        return self.generic_visit(node)

    def visit_Call(self, node):
        func = node.func
        static = None
        if isinstance(func, n.Lambda):
            self.visit_Lambda(func)  # (refused in a nested function)
            values = self.values
            name = unused_name("lambda_fn", set(values.defs) | values.locals)
            values.defs[name] = (values._as_def(name, func, node), node)
            static = values._lift(name)
        elif isinstance(func, n.Name):
            static = self.values.static(func.id, self.shadowed) or self.values.method(func, None, self.shadowed)
        elif isinstance(func, n.Attribute) and isinstance(func.value, n.Name):
            static = self.values.method(func.value, func.attr, self.shadowed)
        node.args = [self._argument(a) for a in node.args]
        for k in node.keywords:
            k.value = self._argument(k.value)
        if static is None:
            node.func = self.visit(func)
            return node
        if static.sequence:
            raise self.values.fail(node, f"the tuple of functions `{func.id}` is called", "Call one of its functions.")
        return static.call(node)

    def _argument(self, a):
        if isinstance(a, n.Lambda):
            self.visit_Lambda(a)
            values = self.values
            name = unused_name("lambda_fn", set(values.defs) | values.locals)
            values.defs[name] = (values._as_def(name, a, a), a)
            a = syntax.name(name)
        if isinstance(a, n.Name) and isinstance(a.ctx, n.Load):
            static = self.values.static(a.id, self.shadowed)
            if static is not None:
                if static.extras or static.stub or static.first or static.keywords_first or static.choice \
                        or static.sequence:
                    raise self.values.fail(a, f"the function value `{a.id}` (a function reading local variables, a partial, "
                                       "a choice of functions or a tuple of them) is passed to another function, "
                                       "which the transformer cannot follow", "Pass the values it reads as "
                                       "arguments, and the function itself (a module-level one) by its name.")
                return syntax.copy(static.spelling)
            return a
        return self.visit(a)

    def visit_Name(self, node):
        if isinstance(node.ctx, n.Load) and self.values.static(node.id, self.shadowed) is not None:
            raise self.values.fail(node, f"the function value `{node.id}` is used other than by calling it or "
                                   "passing it to a function (returned, stored or compared), which the transformer "
                                   "cannot follow", f"Call `{node.id}` where it is defined, or return its result.")
        return node
