"""Build, compile and save generated modules: the main adjoint plus one per helper function.

Each compiled module is registered in `linecache` under `<dualtape f_vjp#N>`, so
tracebacks, `inspect` and `pdb` show the generated code.
"""

import ast
import builtins
import copy
import io
import itertools
import linecache
import tokenize
import weakref

import numpy as np

from dualtape.core.scipy_hints import numpy_twin

from ..ir import syntax
from ..calls import opmap
from ..ir.analysis import TRACED_NUMBER
from ..ir.code import Comment, numbered, render
from ..cache import user_functions
from ..frontend.desugar import MethodRewriter
from ..ir.naming import alias_foreign_globals, identifier, unused_name
from ..frontend.parse import FunctionInfo, TransformError
from ..reverse.simplify import index_expr
from ..runtime.names import RUNTIME_HELPERS
from .save import module_source  # noqa: F401  (for api.py)

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
        # a called user function's adjoint name -> its parameters whose adjoints may be lists or
        # dicts (added item by item where the caller adds two of them: reverse/adjoints.call_adjoint)
        self.container_adjoints = {}
        # the general (all-array) version records refusals that depend on the argument types
        # (`c += v` on an array that may share memory) instead of raising them: see api.py
        self.defer = False
        self.deferred = []
        self.real_only_ops = []  # ops without complex rules in its functions (pipeline.complex_ops)
        self.complex_literals = []  # (FunctionInfo, literal, statement): its functions' complex literals

    @property
    def functions(self):
        """The generated functions, each an `ast.FunctionDef` (helpers first, the main one last)."""
        return self._functions

    @functions.setter
    def functions(self, functions):
        self._functions = list(functions)
        self._text = None

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

    def __contains__(self, name):
        """Whether generated code or the user's functions already use `name`."""
        return name in self.names or name in self.namespace or name in self.user_names

    def unique(self, base):
        name = unused_name(base, self)
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
            caller = self.generating[-1] if self.generating else None
            where = f"{caller.filename}:{st.line} in {caller.name}: " if caller is not None else ""
            raise TransformError(f"[{self.api}] {where}{st.text.strip()!r}: the recursive call of {fn.__name__} "
                                 "cannot be transformed.\n  Rewrite the recursion as a loop, or wrap the function "
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
        """The module's text: the functions rendered, two blank lines apart (once: the text is
        kept while the module holds the same functions; passes never change a finished one)."""
        if not self._rendered():
            self._text = (tuple(self._functions), source_of(self._functions))
        return self._text[1]

    def _rendered(self):
        """Whether the kept text is of the functions the module holds now (the same trees)."""
        return (self._text is not None and len(self._text[0]) == len(self._functions)
                and all(a is b for a, b in zip(self._text[0], self._functions)))

    def compile(self, name):
        namespace = dict(self.namespace)
        namespace.update(RUNTIME_HELPERS)
        namespace["__dualtape_user_functions__"] = made_from = user_functions(self.user_functions)
        fn, source = run_module(self.functions, name, namespace, name)
        self._text = (tuple(self._functions), source)
        fn.__dualtape_source__ = source
        fn.__dualtape_tree__ = list(self.functions)
        fn.__dualtape_scalar_output__ = self.scalar_output
        fn.__dualtape_user_functions__ = made_from
        return fn


def numbered_source(functions):
    """(the module's text, {line: statement}): the functions rendered, two blank lines apart."""
    texts, statements, first = [], {}, 0
    for function in functions:
        text, lines = numbered(function)
        statements.update((first + k, st) for k, st in lines.items())
        texts.append(text)
        first += text.count("\n") + 3
    return "\n\n\n".join(texts) + "\n", statements


def source_of(functions):
    """The module's text: the functions rendered, two blank lines apart."""
    return "\n\n\n".join(render(function) for function in functions) + "\n"


def run_module(functions, name, namespace, tag, place=None):
    """Render the generated `functions` once, register the text in `linecache` (tracebacks,
    `inspect` and `pdb` show it; it goes with the function), run it in `namespace` and return
    (the function `name`, the text). The namespace keeps where each line's statement is
    (`__dualtape_statements__`, for tracebacks.py) and the user functions
    (`__dualtape_user_functions__`, which the caller sets: what cache.Guard watches).

    place: None, or place(text, namespace) -> a module whose file holds the text (jit's disk
    cache), or None; the text then runs in that module's globals, under its file's name."""
    source, statements = numbered_source(functions)
    module = place(source, namespace) if place is not None else None
    if module is not None:
        filename, namespace = module.__file__, module.__dict__
    else:
        filename = f"<dualtape {tag}#{next(_counter)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace["__builtins__"] = builtins
    namespace["__dualtape_statements__"] = statements
    exec(compile(source, filename, "exec"), namespace)
    fn = namespace[name]
    if module is None:
        weakref.finalize(fn, linecache.cache.pop, filename, None)
    return fn, source


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


class RespellTraced(ast.NodeTransformer):
    """The version of generated code run on tensors and dual numbers: `math.sin(x)` as
    `np.sin(x)` (math would turn them into floats, cutting the tape or dropping the tangent),
    `np.copy` / `np.array` as `copy_of` (a copy that keeps the value traced), and a subscript
    write `a[i] = v` as `a = set_item(a, i, v)`: tensors are immutable, and NumPy would silently
    drop the derivative of a traced `v` written into an array. A comment (the user's statement
    it comes from) has its calls spelled the same way."""

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            name = traced_spelling(func.value.id, func.attr)
            ufunc = getattr(np, name[3:], None) if name is not None and name.startswith("np.") else None
            if func.value.id == "math" and isinstance(ufunc, np.ufunc) and (len(node.args) != ufunc.nin or node.keywords):
                name = None  # math.log(x, base): np.log's second argument is `out`
            if name is not None:
                node.func = ast.Name(id=name, ctx=ast.Load()) if "." not in name else ast.Attribute(
                    value=ast.Name(id="np", ctx=ast.Load()), attr=name[3:], ctx=ast.Load())
        return node

    def visit_Comment(self, node):
        return Comment(respelled_comment(node.text))

    def visit_Assign(self, node):
        self.generic_visit(node)
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Subscript) \
                or not isinstance(node.targets[0].value, ast.Name):
            return node
        target = node.targets[0]
        index = syntax.to_ast(index_expr(syntax.from_ast(target.slice)))
        call = ast.Call(func=ast.Name(id="set_item", ctx=ast.Load()),
                        args=[ast.Name(id=target.value.id, ctx=ast.Load()), index, node.value], keywords=[])
        return ast.copy_location(ast.Assign(targets=[ast.Name(id=target.value.id, ctx=ast.Store())], value=call), node)


def traced_spelling(module, attr):
    """How traced code calls `module.attr(...)` (`np.sin` for `math.sin`, `copy_of` for
    `np.copy` and `np.array`), or None where it stays."""
    if module == "math":
        name = opmap.MATH_TO_DNP.get(attr)
        return f"np.{name}" if name and name != "abs" and hasattr(np, name) else None  # (math.erf: dnp's only)
    if module == "np" and attr in ("copy", "array"):
        return "copy_of"
    return None


def respelled_comment(text):
    """A comment's text with each call `module.attr(` written as `traced_spelling` says: its
    tokens (up to any the text leaves open) are read, never parsed."""
    tokens = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            tokens.append(token)
    except (tokenize.TokenError, SyntaxError):
        pass
    edits = []
    for a, dot, b, paren in zip(tokens, tokens[1:], tokens[2:], tokens[3:]):
        if (a.type == b.type == tokenize.NAME and dot.string == "." and paren.string == "("
                and a.start[0] == paren.start[0] == 1 and a.end == dot.start and dot.end == b.start
                and b.end == paren.start):
            name = traced_spelling(a.string, b.string)
            if name is not None:
                edits.append((a.start[1], b.end[1], name))
    for start, end, name in reversed(edits):
        text = text[:start] + name + text[end:]
    return text


def respell_traced(function):
    """A copy of the generated function (a tree) respelled by RespellTraced."""
    return RespellTraced().visit(copy.deepcopy(function))


class RenameCalls(ast.NodeTransformer):
    """Calls of the functions named in `renames` call their new names instead."""

    def __init__(self, renames):
        self.renames = renames

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in self.renames:
            node.func = ast.Name(id=self.renames[node.func.id], ctx=ast.Load())
        return node


def calls(function, name):
    """Whether the tree `function` calls the name `name`."""
    return any(isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and x.func.id == name
               for x in syntax.walk(function))


def traced_module(module):
    """The version of a generated module run on tensors and dual numbers: every function
    respelled (RespellTraced), and the user functions its forward sweep calls for their
    values (`u = helper(x)`) replaced by traced copies, respelled the same way
    (`helper_traced`): the originals may copy with `.copy()` or write into arrays, which
    tensors and dual numbers do not allow."""
    functions = [respell_traced(fn) for fn in module.functions]
    called = [fn for fn in module.user_functions[1:]  # (the first is the transformed function)
              if any(calls(function, fn.__name__) for function in functions)]
    if not called:
        return functions
    renames = {fn.__name__: module.unique(f"{fn.__name__}_traced") for fn in called}
    copies = []
    for fn in called:
        info = FunctionInfo(fn, module.api)
        node = info.node
        locals_ = set(a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs) \
            | syntax.store_names(node)
        module.namespace.update(alias_foreign_globals(node, locals_, info.namespace, module.namespace))
        MethodRewriter(locals_).visit(node)
        node.name = renames[fn.__name__]
        nested = {x.name for x in syntax.walk(node) if isinstance(x, syntax.nodes.FunctionDef) and x is not node}
        own = RenameCalls({k: v for k, v in renames.items() if k not in locals_ | nested})
        copies.append(own.visit(respell_traced(syntax.to_ast(node))))  # (its nested functions: called as written)
    rename = RenameCalls(renames)
    return copies + [rename.visit(function) for function in functions]


def traced_kinds(kinds):
    """Kinds for code generation ("traced" is an array, a "traced number" one that `+=` rebinds),
    and whether to respell math.*."""
    traced = any(k in ("traced", "traced number") for k in kinds.values())
    return {k: "array" if v == "traced" else TRACED_NUMBER if v == "traced number" else v
            for k, v in kinds.items()}, traced


