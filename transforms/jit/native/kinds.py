"""What each name holds in the scalar subset the native backend compiles: the kinds
(native/kind_rules.py), inferred once per specialization from the arguments' types.

Each name holds one kind for the whole function (None and a float join to "o"). A name that is
an int and then a float, an array of any other kind, a call of anything but math's and NumPy's
functions on numbers, a few runtime helpers and plain functions (a `Program` reads their
source), leave the code to numba (`NotScalar`, with what it met).
"""

import ast
import builtins

from .kind_rules import (DTYPES, HELPERS, IDENTITIES, MATH1, MATH2, MATH_CONSTANTS, NUMPY1, NUMPY2,
                         NUMPY_CONSTANTS, OPTIONAL, PENDING_LIST, SCALARS, SHAPE, Buffer, NotScalar, Tup,
                         arithmetic, constant_kind, global_value, join, joined)


class Kinds:
    """Infer the kind of every name of `fn` (an ast FunctionDef) for arguments of `arg_kinds`:
    `self.names` name -> kind, `self.result` the kind returned (a scalar or a Tup),
    `self.calls` the functions it calls natively (a call node's id -> (Kinds, argument nodes))."""

    def __init__(self, fn, arg_kinds, namespace, program):
        self.fn, self.namespace, self.program = fn, namespace, program
        self.helpers = program.helpers
        self.calls = {}
        if fn.args.kwonlyargs or fn.args.vararg or fn.args.kwarg or fn.args.posonlyargs:
            raise NotScalar("keyword-only or star parameters")
        self.names = dict(zip([a.arg for a in fn.args.args], arg_kinds))
        self.locals = set(self.names) | {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
                                         and isinstance(n.ctx, ast.Store)}
        self.result = None
        for _ in range(20):  # (names assigned later in a loop are read earlier: to a fixed point)
            before = dict(self.names)
            self.block(fn.body)
            if self.names == before:
                break
        else:
            raise NotScalar("kinds that do not settle")
        unknown = sorted(self.locals - set(self.names))
        if unknown or PENDING_LIST in self.names.values() or self.result is None:
            raise NotScalar(f"names of no kind: {', '.join(unknown) or 'an empty list'}")

    # -- statements ----------------------------------------------------------------------------
    def block(self, body):
        for st in body:
            handler = getattr(self, "st_" + type(st).__name__, None)
            if handler is None:
                raise NotScalar(f"a statement {type(st).__name__}")
            handler(st)

    def st_Comment(self, st):
        pass

    st_Pass = st_Break = st_Continue = st_Comment

    def st_Assign(self, st):
        if len(st.targets) != 1:
            raise NotScalar("chained assignment")
        target, kind = st.targets[0], self.expr(st.value)
        if isinstance(target, ast.Tuple) or isinstance(st.value, ast.Name) and isinstance(target, ast.Name) \
                and (isinstance(self.names.get(st.value.id), Tup) or self.names.get(st.value.id) in OPTIONAL):
            kind = self.whole(st.value)  # (a, b = t unpacks a tuple name; t2 = t, a copy, is refused below)
        if isinstance(target, ast.Name):
            if isinstance(kind, Tup) and not self.holds_tuple(kind, st.value, target.id):
                raise NotScalar(f"a tuple held in `{target.id}` from other than a tuple display, "
                                "zeros_like or add_at to itself")
            if kind is not None:
                if isinstance(kind, Buffer) and not self.makes_buffer(st.value, target.id):
                    raise NotScalar(f"a stack assigned to `{target.id}` from another name")
                join(self.names, target.id, kind)
        elif isinstance(target, ast.Tuple):
            names = [t.id for t in target.elts if isinstance(t, ast.Name)]
            if len(names) != len(target.elts):
                raise NotScalar("a tuple target of other than names")
            if kind is None:
                return
            if not isinstance(kind, Tup) or len(kind.items) != len(names) \
                    or any(k not in SCALARS + OPTIONAL for k in kind.items):
                raise NotScalar("a tuple unpacked from other than a tuple of scalars")
            for name, k in zip(names, kind.items):
                join(self.names, name, k)
        elif isinstance(target, ast.Subscript):
            buffer = self.subscripted(target)
            if kind is not None and buffer is not None and not self.storable(buffer, target, kind):
                raise NotScalar("a value stored into an array of another kind")
        else:
            raise NotScalar(f"an assignment to {type(target).__name__}")

    def st_AugAssign(self, st):
        if not isinstance(st.target, ast.Name):
            raise NotScalar("an augmented assignment to other than a name")
        old, value = self.names.get(st.target.id), self.expr(st.value)
        if old is not None and value is not None:
            join(self.names, st.target.id, arithmetic(st.op, old, value))

    def st_For(self, st):
        call = st.iter
        if st.orelse or not isinstance(st.target, ast.Name) or not self.is_range(call):
            raise NotScalar("a for loop over other than range(...)")
        for arg in call.args:
            if self.expr(arg) not in ("i", "b", None):
                raise NotScalar("range of a float")
        join(self.names, st.target.id, "i")
        self.block(st.body)

    def st_While(self, st):
        if st.orelse:
            raise NotScalar("while ... else")
        self.truth(st.test)
        self.block(st.body)

    def st_If(self, st):
        known = self.known_test(st.test)
        if known == "later":
            return
        if known is None:
            self.truth(st.test)
        if known in (True, None):
            self.block(st.body)
        if known in (False, None):
            self.block(st.orelse)

    def known_test(self, test):
        """True or False for `shape_of(x) != ()` (or ==) of a scalar x, else None: the branch
        not taken (a return of None and the array) is not compiled."""
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq)) \
                and isinstance(test.comparators[0], ast.Tuple) and not test.comparators[0].elts:
            kind = self.expr(test.left)
            if kind == SHAPE:
                return isinstance(test.ops[0], ast.Eq)
            if kind is None:  # (x's kind comes in a later round: no branch until then)
                return "later"
        return None

    def st_Expr(self, st):
        value = st.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return
        if self.is_scalar_check(value):
            return
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                and value.func.attr == "append" and isinstance(value.func.value, ast.Name)
                and len(value.args) == 1 and not value.keywords):
            raise NotScalar("an expression statement other than list.append")
        name, kind = value.func.value.id, self.optional(value.args[0])
        old = self.names.get(name)
        if old is not None and not (isinstance(old, Buffer) and old.is_list):
            raise NotScalar(f"append to `{name}`, which is not a list")
        if kind is None:
            return
        if isinstance(kind, Tup) and all(k in SCALARS + OPTIONAL for k in kind.items):
            join(self.names, name, Buffer(kind.items, True, True))
        elif kind in SCALARS + OPTIONAL:
            join(self.names, name, Buffer((kind,), False, True))
        else:
            raise NotScalar("a list of other than scalars or tuples of scalars")

    def st_Return(self, st):
        if st.value is None:
            raise NotScalar("a return without a value")
        kind = self.expr(st.value)  # (a tuple name is refused: zeros_like's is an array in Python)
        if kind is None:
            return
        if isinstance(kind, Buffer) or kind in OPTIONAL:
            raise NotScalar("a return of a stack or of None")
        if self.result is not None and joined(self.result, kind) is None:
            raise NotScalar("returns of different kinds")
        self.result = kind if self.result is None else joined(self.result, kind)

    # -- expressions -----------------------------------------------------------------------------
    def truth(self, node):
        if self.expr(node) not in SCALARS + (None,):
            raise NotScalar("the truth of a non-scalar")

    def expr(self, node):
        """The kind of `node`, or None where it reads a name not seen assigned yet."""
        handler = getattr(self, "ex_" + type(node).__name__, None)
        if handler is None:
            raise NotScalar(f"an expression {type(node).__name__}")
        return handler(node)

    def ex_Constant(self, node):
        if node.value is None:
            return "n"
        kind = constant_kind(node.value)
        if kind is None or type(node.value) not in (bool, int, float):
            raise NotScalar(f"the constant {node.value!r}")
        return kind

    def ex_Name(self, node):
        if node.id in self.locals:
            kind = self.names.get(node.id)
            if isinstance(kind, Tup):  # (read whole only where `whole` allows: values, not aliases)
                raise NotScalar(f"the tuple `{node.id}` read whole")
            return "f" if kind in OPTIONAL else kind  # (read as a number: lowering checks it is one)
        return constant_kind(global_value(node.id, self.namespace))

    def optional(self, node):
        """The kind of `node`, "n" or "o" for a name that holds None or may (copied, pushed,
        popped: not read as a number)."""
        if isinstance(node, ast.Name) and self.names.get(node.id) in OPTIONAL:
            return self.names[node.id]
        return self.expr(node)

    def whole(self, node):
        """The kind of `node`, a tuple name too: where the values are read (unpacked, indexed,
        returned), never a second name for the same (maybe mutable) tuple."""
        if isinstance(node, ast.Name) and node.id in self.locals:
            return self.names.get(node.id)
        return self.expr(node)

    @staticmethod
    def holds_tuple(kind, value, name):
        """Whether `name = value` may hold the tuple `kind`: scalars in it, from a tuple display,
        zeros_like(...) or add_at(name, ...) (the adjoint of a tuple: an array Python adds into)."""
        if any(not isinstance(k, Tup) and k not in SCALARS for k in kind.items):
            return False
        if isinstance(value, ast.Tuple):
            return True
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            if value.func.id == "zeros_like":
                return True
            return value.func.id == "add_at" and isinstance(value.args[0], ast.Name) and value.args[0].id == name
        return False

    def ex_Attribute(self, node):
        if isinstance(node.value, ast.Name) and (node.attr in MATH_CONSTANTS and self.is_module(node.value.id, "math")
                                                 or node.attr in NUMPY_CONSTANTS
                                                 and self.is_module(node.value.id, "numpy")):
            return "f"
        raise NotScalar(f"the attribute .{node.attr}")

    def ex_BinOp(self, node):
        left, right = self.expr(node.left), self.expr(node.right)
        return None if None in (left, right) else arithmetic(node.op, left, right)

    def ex_UnaryOp(self, node):
        kind = self.expr(node.operand)
        if kind is None:
            return None
        if kind not in SCALARS or isinstance(node.op, ast.Invert):
            raise NotScalar(f"the operator {type(node.op).__name__}")
        if isinstance(node.op, ast.Not):
            return "b"
        return "i" if kind == "b" else kind

    def ex_Compare(self, node):
        if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Lt, ast.Gt, ast.LtE, ast.GtE, ast.Eq,
                                                               ast.NotEq)):
            raise NotScalar("a chained comparison or is / in")
        for side in (node.left, node.comparators[0]):
            if self.expr(side) not in SCALARS + (None,):
                raise NotScalar("a comparison of non-scalars")
        return "b"

    def ex_BoolOp(self, node):
        kinds = [self.expr(v) for v in node.values]
        if None in kinds:
            return None
        if len(set(kinds)) != 1 or kinds[0] not in SCALARS:
            raise NotScalar("and / or of values of different kinds")
        return kinds[0]

    def ex_IfExp(self, node):
        self.truth(node.test)
        body, orelse = self.expr(node.body), self.expr(node.orelse)
        if None in (body, orelse):
            return None
        if body != orelse or body not in SCALARS:
            raise NotScalar("a conditional expression of two kinds")
        return body

    def ex_Tuple(self, node):
        kinds = [self.optional(e) for e in node.elts]
        if any(isinstance(k, Buffer) for k in kinds):
            raise NotScalar("a tuple holding a stack")
        return None if None in kinds else Tup(tuple(kinds))

    def ex_List(self, node):
        if node.elts:
            raise NotScalar("a list display")
        return PENDING_LIST

    def ex_Subscript(self, node):
        if isinstance(node.value, ast.Name) and isinstance(self.names.get(node.value.id), Tup):
            return self.whole(node.value).items[self.tuple_index(node)]
        buffer = self.subscripted(node)
        if buffer is None:
            return None
        return buffer.items[self.slot(buffer, node)]

    def ex_Call(self, node):
        func, args = node.func, node.args
        if isinstance(func, ast.Name) and func.id not in self.locals and not self.is_helper(func.id) \
                and not self.is_builtin(func.id):
            return self.call(node)
        if node.keywords and not self.is_empty(node):
            raise NotScalar("a call with keywords")
        if isinstance(func, ast.Name) and func.id in ("zeros_like", "add_at") and self.is_helper(func.id):
            return self.tuple_helper(func.id, args)
        kinds = [self.expr(a) for a in args]
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            owner, attr = func.value.id, func.attr
            if self.is_module(owner, "math") and (attr in MATH1 and len(args) == 1 or attr in MATH2 and len(args) == 2):
                if any(k not in SCALARS + (None,) for k in kinds):
                    raise NotScalar(f"math.{attr} of a non-scalar")
                return "f"
            if self.is_module(owner, "numpy") and (attr in NUMPY1 and len(args) == 1 or attr in NUMPY2
                                                   and len(args) == 2):
                if any(k not in ("f", "i", None) for k in kinds):  # (np.sin(True) is a float16)
                    raise NotScalar(f"np.{attr} of other than floats and ints")
                return "f"
            if self.is_empty(node):
                return self.empty(node)
            if attr == "shape" and self.is_module(owner, "numpy") and len(args) == 1 and kinds[0] in SCALARS:
                return SHAPE
            if attr == "pop" and not args and owner in self.locals:
                buffer = self.names.get(owner)
                if buffer is None or buffer == PENDING_LIST:
                    return None
                if not (isinstance(buffer, Buffer) and buffer.is_list):
                    raise NotScalar(f"`{owner}.pop()` of a non-list")
                return Tup(buffer.items) if buffer.rows else buffer.items[0]
            raise NotScalar(f"the call {owner}.{attr}(...)")
        if not isinstance(func, ast.Name) or func.id in self.locals:
            raise NotScalar("a call of a value")
        name = func.id
        if not self.is_builtin(name) and not self.is_helper(name):
            raise NotScalar(f"a call of `{name}`")
        if None in kinds:
            return None
        if name == "shape_of" and self.is_helper(name) and len(args) == 1 and self.whole(args[0]) in OPTIONAL:
            return SHAPE  # (np.shape(None) is () too)
        if name in IDENTITIES and self.is_helper(name) and len(args) == IDENTITIES[name] \
                and all(k in SCALARS + (SHAPE,) for k in kinds) and kinds[0] in SCALARS:
            return SHAPE if name == "shape_of" else kinds[0]
        if name in HELPERS and self.is_helper(name) and len(args) == HELPERS[name][0] \
                and all(k in SCALARS for k in kinds) and kinds[HELPERS[name][1]] == "f":
            return HELPERS[name][2]
        if name == "abs" and len(args) == 1 and kinds[0] in SCALARS:
            return "f" if kinds[0] == "f" else "i"
        if name in ("min", "max") and len(args) >= 2 and len(set(kinds)) == 1 and kinds[0] in SCALARS:
            return kinds[0]
        if name in ("float", "bool") and len(args) == 1 and kinds[0] in SCALARS:
            return name[0]
        if name == "len" and len(args) == 1 and isinstance(kinds[0], Buffer):
            return "i"
        if name == "grow" and len(args) == 1 and isinstance(kinds[0], Buffer) and not kinds[0].is_list:
            return kinds[0]
        raise NotScalar(f"a call of `{name}`")

    # -- stacks ------------------------------------------------------------------------------------
    def is_module(self, name, module):
        value = self.namespace.get(name)
        return name not in self.locals and getattr(value, "__name__", None) == module

    def is_empty(self, node):
        func = node.func
        return isinstance(func, ast.Attribute) and func.attr == "empty" and isinstance(func.value, ast.Name) \
            and self.is_module(func.value.id, "numpy")

    def empty(self, node):
        """The Buffer `np.empty(n)`, `np.empty(n, dtype=np.int64 or np.bool_)` or `np.empty((n, k))`
        makes."""
        if len(node.args) != 1 or len(node.keywords) > 1:
            raise NotScalar("np.empty with other arguments")
        kind = "f"
        for keyword in node.keywords:
            dtype = keyword.value
            if keyword.arg != "dtype" or not (isinstance(dtype, ast.Attribute) and dtype.attr in DTYPES
                                             and isinstance(dtype.value, ast.Name)
                                             and self.is_module(dtype.value.id, "numpy")):
                raise NotScalar("np.empty of another dtype")
            kind = DTYPES[dtype.attr]
        shape = node.args[0]
        if isinstance(shape, ast.Tuple):
            if len(shape.elts) != 2 or not (isinstance(shape.elts[1], ast.Constant)
                                            and type(shape.elts[1].value) is int and shape.elts[1].value > 0):
                raise NotScalar("np.empty of other than (n, k) for a constant k")
            if self.expr(shape.elts[0]) != "i":
                raise NotScalar("np.empty of a non-integer length")
            return Buffer((kind,) * shape.elts[1].value, True, False)
        if self.expr(shape) != "i":
            raise NotScalar("np.empty of a non-integer length")
        return Buffer((kind,), False, False)

    def makes_buffer(self, value, name):
        """Whether `value`, assigned to `name`, makes its own stack (no second name for one)."""
        if isinstance(value, ast.List):
            return True
        if isinstance(value, ast.Call) and self.is_empty(value):
            return True
        return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "grow" \
            and isinstance(value.args[0], ast.Name) and value.args[0].id == name

    def tuple_index(self, node):
        """The item a constant index `t[k]` of a tuple name reads."""
        size = len(self.names[node.value.id].items)
        index = node.slice
        if not (isinstance(index, ast.Constant) and type(index.value) is int and -size <= index.value < size):
            raise NotScalar("a tuple indexed by other than a constant in range")
        return index.value % size

    def subscripted(self, node):
        """The array Buffer `node` (a subscript) indexes, or None where not known yet."""
        if not isinstance(node.value, ast.Name):
            raise NotScalar("a subscript of other than a name")
        buffer = self.expr(node.value)
        if buffer is None:
            return None
        if not isinstance(buffer, Buffer) or buffer.is_list:
            raise NotScalar(f"a subscript of `{node.value.id}`")
        self.slot(buffer, node)
        return buffer

    def slot(self, buffer, node):
        """The slot `node` reads of a row ([i] of a 1-D array, [i, k] of a 2-D one)."""
        index = node.slice
        if buffer.rows:
            if not (isinstance(index, ast.Tuple) and len(index.elts) == 2 and isinstance(index.elts[1], ast.Constant)
                    and type(index.elts[1].value) is int and 0 <= index.elts[1].value < len(buffer.items)):
                raise NotScalar("a row of a 2-D array indexed by other than [i, k]")
            index, k = index.elts[0], index.elts[1].value
        else:
            k = 0
        if self.expr(index) not in ("i", None):
            raise NotScalar("an index that is not an int")
        return k

    def storable(self, buffer, target, kind):
        """Whether `kind` stores into `buffer`'s slot as NumPy would store it, exactly."""
        item = buffer.items[self.slot(buffer, target)]
        return kind == item or item == "f" and kind in ("i", "b") or item == "i" and kind == "b"

    def call(self, node):
        """The kind a call of a generated or user function returns (its Kinds for these
        argument kinds, kept in `self.calls` for lowering.py)."""
        found = self.program.callee(node.func.id, self.namespace)
        if found is None:
            raise NotScalar(f"a call of `{node.func.id}`")
        fn, namespace, defaults = found
        params = [a.arg for a in fn.args.args]
        bound = dict(zip(params, node.args))
        for keyword in node.keywords:
            if keyword.arg not in params or keyword.arg in bound:
                raise NotScalar(f"a call of `{node.func.id}` with other keywords")
            bound[keyword.arg] = keyword.value
        if len(node.args) > len(params) or any(isinstance(a, ast.Starred) for a in node.args):
            raise NotScalar(f"a call of `{node.func.id}` with other arguments")
        values = fn.args.defaults if defaults is None else [ast.Constant(value=v) for v in defaults]
        for param, default in zip(params[len(params) - len(values):], values):
            bound.setdefault(param, default)
        if set(bound) != set(params):
            raise NotScalar(f"a call of `{node.func.id}` without all its arguments")
        nodes = [bound[p] for p in params]
        kinds = [self.expr(a) for a in nodes]
        if None in kinds:
            return None
        if any(k not in SCALARS for k in kinds):
            raise NotScalar(f"a call of `{node.func.id}` with other than numbers")
        callee = self.program.kinds(fn, kinds, namespace)
        self.calls[id(node)] = (callee, nodes)
        return callee.result

    def tuple_helper(self, name, args):
        """zeros_like(t): an array of zeros (a tuple of them, here) like the tuple of floats t,
        0.0 for a number or None; add_at(b, k, g): b with g added at the constant index k."""
        if not args or not isinstance(args[0], (ast.Name, ast.Tuple, ast.Constant)):
            raise NotScalar(f"{name} of other than a tuple")
        kind = self.whole(args[0])
        if kind is None:
            return None
        if name == "zeros_like" and len(args) == 1 and kind in ("f", "n", "o"):
            return "f"
        if not isinstance(kind, Tup) or any(k != "f" for k in kind.items):
            raise NotScalar(f"{name} of other than a tuple of floats")
        if name == "add_at":
            if len(args) != 3 or not isinstance(args[0], ast.Name):
                raise NotScalar("add_at of other than a name")
            self.tuple_index(ast.Subscript(value=args[0], slice=args[1]))
            if self.expr(args[2]) not in SCALARS + (None,):
                raise NotScalar("add_at of a non-scalar")
        elif len(args) != 1:
            raise NotScalar("zeros_like with a dtype")
        return kind

    def is_scalar_check(self, call):
        """Whether `call` is `check_scalar_output(x, name)` of a scalar x (which passes)."""
        return isinstance(call, ast.Call) and isinstance(call.func, ast.Name) \
            and call.func.id == "check_scalar_output" and self.is_helper("check_scalar_output") \
            and len(call.args) == 2 and self.expr(call.args[0]) in SCALARS + (None,)

    def is_helper(self, name):
        """Whether `name` is the runtime helper of that name (jit/runtime.py's NAMES)."""
        return name not in self.locals and name in self.helpers and self.namespace.get(name) is self.helpers[name]

    def is_builtin(self, name):
        """Whether `name` is the builtin of that name (not rebound by the module)."""
        return name not in self.locals and hasattr(builtins, name) \
            and self.namespace.get(name, getattr(builtins, name)) is getattr(builtins, name)

    def is_range(self, call):
        return isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "range" \
            and self.is_builtin("range") and 1 <= len(call.args) <= 3 and not call.keywords
