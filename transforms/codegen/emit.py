"""Build, compile and save generated modules: the main adjoint plus one per helper function.

Each compiled module is registered in `linecache` under `<dualtape f_vjp#N>`, so
tracebacks, `inspect` and `pdb` show the generated code.
"""

import builtins
import itertools
import linecache
import re
import weakref

from dualtape.core.scipy_hints import numpy_twin

from ..ir import syntax
from ..calls import opmap
from ..ir.syntax import nodes as n
from ..ir.analysis import TRACED_NUMBER
from ..cache import user_functions
from ..frontend.desugar import MethodRewriter
from ..ir.naming import alias_foreign_globals, identifier
from ..frontend.parse import FunctionInfo, TransformError
from ..reverse.simplify import index_expr
from .save import RUNTIME_NAMES, module_source  # noqa: F401  (module_source: for api.py)

_counter = itertools.count(1)


class Module:
    """The generated functions of one transformation: helpers first, the main adjoint last."""

    def __init__(self, api, adjoint=None, tangent=None):
        self.api = api
        # how a called user function's helper is made (pipeline.adjoint / pipeline.tangent)
        self.make_adjoint, self.make_tangent = adjoint, tangent
        self.functions = []
        self.helpers = {}
        self.namespace = {}
        self.names = set()
        self.in_progress = set()
        self.user_functions = []
        self.user_names = set()  # every name of every transformed function: helpers never shadow one
        self.generating = []  # the FunctionInfo of each function being generated, the innermost last
        self.scalar_output = False  # the main function's output is surely a scalar (kinds say so)
        # the general (all-array) version records refusals that depend on the argument types
        # (`c += v` on an array that may share memory) instead of raising them: see api.py
        self.defer = False
        self.deferred = []

    def add_namespace(self, fn):
        ns = dict(fn.__globals__)
        if fn.__closure__:
            for var, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                try:
                    ns[var] = cell.cell_contents
                except ValueError:
                    pass
        if opmap.in_package(fn, "dualtape"):  # a rule helper read by hvp: its globals must be its own
            clash = sorted(k for k in fn.__code__.co_names if k in ns and self.namespace.get(k, ns[k]) is not ns[k])
            if clash:
                raise TransformError(f"[{self.api}] the global `{clash[0]}` of your module shadows the one that "
                                     f"dualtape's rule helper `{fn.__module__}.{fn.__name__}` reads, and the "
                                     f"generated code runs in one namespace.\n  Rename your `{clash[0]}`.")
        for k, v in ns.items():
            self.namespace.setdefault(k, v)
        if fn not in self.user_functions:
            self.user_functions.append(fn)

    def unique(self, base):
        name, k = base, 1
        while name in self.names or name in self.namespace or name in self.user_names:
            k += 1
            name = f"{base}_{k}"
        self.names.add(name)
        return name

    def helper(self, fn, wrt, kinds, optimize, st):
        """(name, seed parameter name) of the adjoint function of a called user function."""
        key = (fn, wrt, tuple(sorted(kinds.items())), optimize)
        return self._helper(key, fn, "vjp", st,
                            lambda name: self.make_adjoint(self, fn, wrt, kinds, optimize, name, "1.0", tuple_out=True))

    def forward_helper(self, fn, wrt, kinds, optimize, batch, st):
        """(name, tangent parameter names) of the tangent function of a called user function."""
        key = ("jvp", fn, wrt, tuple(sorted(kinds.items())), optimize, batch)
        return self._helper(key, fn, "jvp", st,
                            lambda name: self.make_tangent(self, fn, wrt, kinds, optimize, name, batch))

    def _helper(self, key, fn, suffix, st, make):
        """Generate `fn`'s helper once per key with `make(name) -> (source, parameters)`;
        a recursive call is refused."""
        if key in self.helpers:
            return self.helpers[key]
        if fn in self.in_progress:
            raise TransformError(f"[{self.api}] {st.text!r}: the recursive call of {fn.__name__} cannot be "
                                 "transformed.\n  Rewrite the recursion as a loop, or wrap the function "
                                 "with dualtape.custom_gradient.")
        self.in_progress.add(fn)
        try:
            name = self.unique(identifier(f"{fn.__name__}_{suffix}"))
            source, params = make(name)
        except TransformError as exc:
            if opmap.in_package(fn, "scipy"):  # refused deep in SciPy's source: name the call
                raise scipy_refusal(self.api, self.generating[-1], st, fn, exc) from None
            raise
        finally:
            self.in_progress.discard(fn)
        self.helpers[key] = (name, params)
        self.functions.append(source)
        return name, params

    def source(self):
        return "\n\n\n".join(self.functions) + "\n"

    def compile(self, name):
        source = self.source()
        filename = f"<dualtape {name}#{next(_counter)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace = dict(self.namespace)
        namespace.update(RUNTIME_NAMES)
        namespace["__builtins__"] = builtins
        # (what cache.Guard watches, and where tracebacks.py finds the user's lines)
        namespace["__dualtape_user_functions__"] = made_from = user_functions(self.user_functions)
        exec(compile(source, filename, "exec"), namespace)
        fn = namespace[name]
        weakref.finalize(fn, linecache.cache.pop, filename, None)  # the source goes with the code
        fn.__dualtape_source__ = source
        fn.__dualtape_scalar_output__ = self.scalar_output
        fn.__dualtape_user_functions__ = made_from
        return fn


def scipy_refusal(api, caller, st, fn, exc):
    """The TransformError for a SciPy function whose source the transformer could not follow
    (scipy.linalg.eigh calls LAPACK through get_lapack_funcs): at the user's call, naming the
    function and its NumPy twin where dualtape differentiates one."""
    public = f"{'.'.join(p for p in fn.__module__.split('.') if not p.startswith('_'))}.{fn.__name__}"
    twin = numpy_twin(fn.__module__, fn.__name__)
    fix = (f"Call {twin} instead: the same values, differentiable." if twin else
           "Write it with np.* functions (dualtape.scipy lists the SciPy functions dualtape differentiates), "
           "or wrap it with dualtape.custom_gradient.")
    reason = str(exc).split("\n")[0].split("] ", 1)[-1].rstrip(".")
    return TransformError(f"[{api}] {caller.filename}:{st.line} in {caller.name}: {public} cannot be differentiated "
                          f"by the transformer ({st.text.strip()!r}): dualtape has no op for it, and its source "
                          f"does not transform ({reason}).\n  {fix}")


_MATH_CALL = re.compile(r"\bmath\.(\w+)\(")


def respell_math(source):
    """`math.sin(x)` -> `np.sin(x)`: the version run on tensors and dual numbers, which
    `math` would turn into floats (cutting the tape or dropping the tangent)."""
    def repl(m):
        name = opmap._MATH_TO_DNP.get(m.group(1))
        return f"np.{name}(" if name and name != "abs" else m.group(0)
    return _MATH_CALL.sub(repl, source)


_COPY_CALL = re.compile(r"\bnp\.(copy|array)\(")


def respell_traced(source):
    """The version of generated code run on tensors and dual numbers: `math.*` spelled `np.*`
    (respell_math), copies that keep the value traced (`copy_of`), and subscript writes
    `a[i] = v` as `a = set_item(a, i, v)`: tensors are immutable, and NumPy would silently drop
    the derivative of a traced `v` written into an array (issue 9)."""
    lines = []
    for line in _COPY_CALL.sub("copy_of(", respell_math(source)).split("\n"):
        stripped = line.strip()
        if "] = " in stripped and not stripped.startswith("#"):
            try:
                tree = syntax.parse(stripped).body
            except SyntaxError:
                tree = []
            st = tree[0] if len(tree) == 1 else None
            if (isinstance(st, n.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], n.Subscript)
                    and isinstance(st.targets[0].value, n.Name)):
                target = st.targets[0]
                indent = line[:len(line) - len(line.lstrip())]
                index = syntax.unparse(index_expr(target.slice))
                line = (f"{indent}{target.value.id} = set_item({target.value.id}, {index}, "
                        f"{syntax.unparse(st.value)})")
        lines.append(line)
    return "\n".join(lines)


def traced_module(module):
    """The version of a generated module run on tensors and dual numbers: every function
    respelled (respell_traced), and the user functions its forward sweep calls for their
    values (`u = helper(x)`) replaced by traced copies, respelled the same way
    (`helper_traced`): the originals may copy with `.copy()` or write into arrays, which
    tensors and dual numbers do not allow (issue 9)."""
    functions = [respell_traced(fn) for fn in module.functions]
    called = [fn for fn in module.user_functions[1:]  # (the first is the transformed function)
              if any(re.search(rf"(?<![\w.]){fn.__name__}\(", source) for source in functions)]
    if not called:
        return functions
    renames = {fn.__name__: module.unique(f"{fn.__name__}_traced") for fn in called}
    pattern = re.compile(rf"(?<![\w.])({'|'.join(map(re.escape, renames))})\(")
    copies = []
    for fn in called:
        info = FunctionInfo(fn, module.api)
        node = info.node
        locals_ = set(a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs) \
            | syntax.store_names(node)
        module.namespace.update(alias_foreign_globals(node, locals_, info.namespace, module.namespace))
        MethodRewriter(locals_).visit(node)
        node.name = renames[fn.__name__]
        copies.append(respell_traced(syntax.unparse(node)))
    def rename(source):
        return "\n".join(line if line.lstrip().startswith("#") else pattern.sub(lambda m: renames[m.group(1)] + "(", line)
                         for line in source.split("\n"))
    return [rename(source) for source in copies + functions]


def traced_kinds(kinds):
    """Kinds for code generation ("traced" is an array, a "traced number" one that `+=` rebinds),
    and whether to respell math.*."""
    traced = any(k in ("traced", "traced number") for k in kinds.values())
    return {k: "array" if v == "traced" else TRACED_NUMBER if v == "traced number" else v
            for k, v in kinds.items()}, traced


