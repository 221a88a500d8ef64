"""LLVM IR for a function of the scalar subset (native/kinds.py): what numba would compile,
written straight from the generated code, in a few milliseconds instead of numba's hundreds.

The function becomes `i32 @f(<arguments>, ptr outf, ptr outi)`: floats as `double`, ints and
bools as `i64`; what it returns is written to `outf` (its floats) and `outi` (its ints and
bools), in order. It returns 0, or 1 where Python would do something else than the plain
arithmetic: raise (a division by zero, a math domain error, an index out of range, a name
read before it is assigned), or compute with ints beyond 64 bits, or compare an int and a
float that are not both exact in a double, or return nothing. The caller then runs the
uncompiled code, which does what Python does: the compiled code never answers there.

Every name lives in a stack slot (`alloca`) that LLVM's mem2reg turns into registers, with a
flag saying whether it was assigned: a read where some path leaves the name unassigned checks
it (Python's UnboundLocalError); where every path assigns it, nothing is checked. Stacks are
C buffers of 8-byte slots (malloc, realloc, freed on every exit). Floats follow IEEE arithmetic
without fast-math, as Python and numba do, and math's functions call the C library's, as
CPython does: the numbers are the uncompiled code's.
"""

import ast

from .emitter import (CHECKED, COMPARE_F, COMPARE_I, FLOAT_OPS, INT_MIN, TYPES, Emitter, double, flatten, literal,
                      output_allocas, returned)
from .kind_rules import (HELPERS, IDENTITIES, NUMPY1, NUMPY2, OPTIONAL, SCALARS, SHAPE, Buffer, Tup, arithmetic,
                         constant_kind, global_value)
from .stack_code import StackCode


class Lowering(Emitter, StackCode):
    """The IR of one function (`kinds.fn`, an ast FunctionDef, with the kinds `kinds`, a
    kinds.Kinds): `self.text` its definition, named `kinds.symbol`; `self.libm` the C
    library's functions it calls (`declarations` declares them for the module)."""

    def __init__(self, kinds):
        fn = kinds.fn
        self.kinds, self.namespace = kinds, kinds.namespace
        self.lines, self.entry = [], []
        self.counter = 0
        self.open = True
        self.loops = []  # (label to continue at, label to break to)
        self.defined = {a.arg for a in fn.args.args}  # names every path to here assigns
        self.libm = set()
        self.buffers = sorted(n for n, k in kinds.names.items() if isinstance(k, Buffer))
        self.values = sorted(n for n, k in kinds.names.items() if not isinstance(k, Buffer))
        # a scalar name has one slot, a tuple name one per item (flattened), a shape () none
        self.leaves = {n: [] if k == SHAPE else [(n if k in SCALARS else f"{n}.{j}", leaf)
                                                 for j, leaf in enumerate(flatten(k))]
                       for n, k in kinds.names.items() if not isinstance(k, Buffer)}
        # a stack's element: the slots of each item (None or a float takes two, None none)
        self.offsets = {n: self.item_slots(k.items) for n, k in kinds.names.items() if isinstance(k, Buffer)}
        params = [a.arg for a in fn.args.args]
        self.allocate_names(params)
        self.outputs = self.slots(returned(kinds.result))
        self.block(fn.body)
        self.jump("error")  # (falling off the end returns None: the uncompiled code says so)
        body = "\n".join(["entry:"] + ["  " + x for x in self.entry] + ["  br label %start", "start:"]
                         + self.lines + self.exits())
        signature = ", ".join([f"{'double' if kinds.names[p] == 'f' else 'i64'} %\"a.{p}\"" for p in params]
                              + ["ptr %outf", "ptr %outi"])
        self.text = f"define i32 @\"{kinds.symbol}\"({signature}) {{\n{body}\n}}\n"

    def allocate_names(self, params):
        """The entry block: a slot and an assigned flag per name (slots zeroed: no undefined
        value is ever read), a null pointer per stack, the error flag, the parameters stored."""
        for name in self.values:
            for slot, kind in self.leaves[name]:
                self.entry += [f'%"v.{slot}" = alloca {TYPES[kind]}',
                               f'store {TYPES[kind]} {literal(kind, 0)}, ptr %"v.{slot}"']
            self.entry += [f'%"d.{name}" = alloca i1', f'store i1 false, ptr %"d.{name}"']
        for name in self.buffers:
            self.entry += [f'%"p.{name}" = alloca ptr', f'%"c.{name}" = alloca i64', f'%"n.{name}" = alloca i64',
                           f'%"d.{name}" = alloca i1', f'store i1 false, ptr %"d.{name}"',
                           f'store ptr null, ptr %"p.{name}"']
        self.entry += ["%err = alloca i1", "store i1 false, ptr %err"]
        for p in params:
            value = f'%"a.{p}"'
            if self.kinds.names[p] == "b":
                value = self.op(f'icmp ne i64 {value}, 0', into=self.entry)
            self.entry += [f'store {TYPES[self.kinds.names[p]]} {value}, ptr %"v.{p}"',
                           f'store i1 true, ptr %"d.{p}"']

    def exits(self):
        """The blocks `done` (status 0) and `error` (status 1): each frees every stack."""
        lines = []
        for label, status in (("done", 0), ("error", 1)):
            lines.append(f"{label}:")
            for name in self.buffers:
                lines += [f'  %"{label}.{name}" = load ptr, ptr %"p.{name}"',
                          f'  call void @free(ptr %"{label}.{name}")']
            lines.append(f"  ret i32 {status}")
        return lines

    @staticmethod
    def slots(kinds):
        """(kind, "outf" or "outi", index) for each scalar returned."""
        counts, slots = {"outf": 0, "outi": 0}, []
        for kind in kinds:
            where = "outf" if kind == "f" else "outi"
            slots.append((kind, where, counts[where]))
            counts[where] += 1
        return slots

    # -- statements ------------------------------------------------------------------------------
    def block(self, body):
        for st in body:
            if not self.open:  # (after a return, break or continue: code no path reaches)
                self.lines.append(f"{self.label('dead')}:")
                self.open = True
            handler = getattr(self, "st_" + type(st).__name__)
            handler(st)

    def st_Comment(self, st):
        pass

    def st_Pass(self, st):
        pass

    def st_Break(self, st):
        self.jump(self.loops[-1][1])

    def st_Continue(self, st):
        self.jump(self.loops[-1][0])

    @staticmethod
    def item_slots(items):
        """[(first slot, slot kinds)] of each item of a stack's element."""
        out, first = [], 0
        for item in items:
            out.append((first, flatten(item)))
            first += len(flatten(item))
        return out

    def coerce(self, value, kind):
        """The slot values that hold `value` as a `kind` (flatten's order)."""
        if isinstance(kind, Tup):
            return [leaf for item, k in zip(value[1], kind.items) for leaf in self.coerce(item, k)]
        if kind == "n":
            return []
        if kind == "o":
            if value[0] == "o":
                return [("f", value[1][0]), ("b", value[1][1])]
            if value[0] == "n":
                return [("f", "0.0"), ("b", "true")]
            return [("f", self.to_f(value)), ("b", "false")]
        return [value]

    def plain(self, value):
        """A number read from None or a float: failing where it is None (Python's TypeError)."""
        if value[0] == "o":
            self.fail_if(value[1][1])
            return ("f", value[1][0])
        if value[0] == "n":
            self.fail_if("true")
            return ("f", "0.0")
        return value

    def optional(self, node):
        """`node`'s value, None or a float kept as one (copied, pushed, popped)."""
        if isinstance(node, ast.Name) and self.kinds.names.get(node.id) in OPTIONAL:
            return self.load(node.id)
        return self.expr(node)

    def store(self, name, value):
        for (slot, kind), leaf in zip(self.leaves[name], self.coerce(value, self.kinds.names[name])):
            reg = self.to_f(leaf) if kind == "f" else self.to_i(leaf) if kind == "i" else leaf[1]
            self.emit(f'store {TYPES[kind]} {reg}, ptr %"v.{slot}"')
        self.emit(f'store i1 true, ptr %"d.{name}"')
        self.defined.add(name)

    def st_Assign(self, st):
        target, value = st.targets[0], st.value
        if isinstance(target, ast.Name) and isinstance(self.kinds.names[target.id], Buffer):
            self.make_buffer(target.id, value)
        elif isinstance(target, ast.Name):
            self.store(target.id, self.optional(value))
        elif isinstance(target, ast.Tuple):
            values = self.expr(value)[1]  # (every value first, then the names: a, b = b, a)
            for t, v in zip(target.elts, values):
                self.store(t.id, v)
        else:
            self.store_item(target, self.expr(value))

    def st_AugAssign(self, st):
        name = st.target.id
        self.store(name, self.binop(st.op, self.load(name), self.expr(st.value)))

    def st_If(self, st):
        known = self.kinds.known_test(st.test)
        if known is not None:
            self.block(st.body if known else st.orelse)
            return
        yes, no, end = self.label("then"), self.label("else"), self.label("endif")
        self.branch(self.truth(self.expr(st.test)), yes, no)
        before, through = set(self.defined), []  # (what each branch that falls through defines)
        self.start(yes)
        self.block(st.body)
        through += [self.defined] if self.open else []
        self.jump(end)
        self.lines.append(f"{no}:")
        self.open, self.defined = True, set(before)
        self.block(st.orelse)
        through += [self.defined] if self.open else []
        self.defined = set.intersection(*through) if through else before
        self.start(end)

    def st_While(self, st):
        head, body, end = self.label("while"), self.label("body"), self.label("endwhile")
        self.start(head)
        self.check_failed()  # (every loop's head: no error goes round a loop)
        self.branch(self.truth(self.expr(st.test)), body, end)
        self.lines.append(f"{body}:")
        self.open = True
        self.loops.append((head, end))
        before = set(self.defined)
        self.block(st.body)
        self.defined = before  # (the body may not run)
        self.loops.pop()
        self.jump(head)
        self.lines.append(f"{end}:")
        self.open = True

    def st_For(self, st):
        """for v in range(...): the bounds read once; the counter is its own, so the body may
        rebind v; past the largest int the loop ends (no int of the range is there)."""
        values = [self.to_i(self.expr(a)) for a in st.iter.args]
        start, stop, step = ["0", values[0], "1"] if len(values) == 1 else (values + ["1"])[:3]
        self.fail_now(self.op(f"icmp eq i64 {step}, 0"))  # (range's ValueError)
        counter = self.fresh("i")
        self.entry.append(f"{counter} = alloca i64")
        self.emit(f"store i64 {start}, ptr {counter}")
        head, body, latch, end = self.label("for"), self.label("body"), self.label("next"), self.label("endfor")
        self.start(head)
        self.check_failed()
        i = self.op(f"load i64, ptr {counter}")
        up = self.op(f"icmp sgt i64 {step}, 0")
        more = self.op(f"select i1 {up}, i1 {self.op(f'icmp slt i64 {i}, {stop}')}, "
                       f"i1 {self.op(f'icmp sgt i64 {i}, {stop}')}")
        self.branch(more, body, end)
        self.lines.append(f"{body}:")
        self.open = True
        before = set(self.defined)
        self.store(st.target.id, ("i", i))
        self.loops.append((latch, end))
        self.block(st.body)
        self.defined = before  # (the body may not run)
        self.loops.pop()
        self.start(latch)
        i = self.op(f"load i64, ptr {counter}")
        pair = self.op(f"call {{i64, i1}} @llvm.sadd.with.overflow.i64(i64 {i}, i64 {step})")
        self.emit(f"store i64 {self.op(f'extractvalue {{i64, i1}} {pair}, 0')}, ptr {counter}")
        self.branch(self.op(f"extractvalue {{i64, i1}} {pair}, 1"), end, head)
        self.lines.append(f"{end}:")
        self.open = True

    def st_Return(self, st):
        values = [self.plain(v) for v in self.flat(self.expr(st.value))]
        for (slot_kind, where, index), value in zip(self.outputs, values):
            reg = self.to_f(value) if slot_kind == "f" else self.to_i(value)
            ty = "double" if slot_kind == "f" else "i64"
            self.emit(f"store {ty} {reg}, ptr {self.op(f'getelementptr {ty}, ptr %{where}, i64 {index}')}")
        self.check_failed()
        self.jump("done")

    def flat(self, value):
        kind, reg = value
        if kind == "tuple":
            return [v for item in reg for v in self.flat(item)]
        return [value]

    def st_Expr(self, st):
        call = st.value
        if isinstance(call, ast.Constant) or self.kinds.is_scalar_check(call):
            return
        self.append(call.func.value.id, self.optional(call.args[0]))

    # -- expressions -----------------------------------------------------------------------------
    def expr(self, node):
        """(kind, register or literal) of `node`; ("tuple", [values]) for a tuple."""
        return getattr(self, "ex_" + type(node).__name__)(node)

    def ex_Constant(self, node):
        if node.value is None:
            return ("n", None)
        kind = constant_kind(node.value)
        return (kind, literal(kind, node.value))

    def load(self, name):
        self.check_defined(name)  # (UnboundLocalError)
        leaves = iter(self.leaves[name])

        def build(kind):
            if isinstance(kind, Tup):
                return ("tuple", [build(item) for item in kind.items])
            if kind in (SHAPE, "n"):
                return (kind, None)
            if kind == "o":
                (value, _), (none, _) = next(leaves), next(leaves)
                return ("o", (self.op(f'load double, ptr %"v.{value}"'), self.op(f'load i1, ptr %"v.{none}"')))
            slot, kind = next(leaves)
            return (kind, self.op(f'load {TYPES[kind]}, ptr %"v.{slot}"'))
        return build(self.kinds.names[name])

    def ex_Name(self, node):
        if node.id in self.kinds.locals:
            return self.plain(self.load(node.id))  # (a number: kinds.py reads None or a float as one)
        value = global_value(node.id, self.namespace)
        kind = constant_kind(value)
        return (kind, literal(kind, value))

    def ex_Attribute(self, node):
        return ("f", double(getattr(self.namespace[node.value.id], node.attr)))

    def ex_Tuple(self, node):
        return ("tuple", [self.optional(e) for e in node.elts])

    def ex_BinOp(self, node):
        return self.binop(node.op, self.expr(node.left), self.expr(node.right))

    def binop(self, op, left, right):
        kind = arithmetic(op, left[0], right[0])
        if kind == "i":
            return ("i", self.int_op(op, self.to_i(left), self.to_i(right)))
        if isinstance(op, ast.Div) and left[0] != "f" and right[0] != "f":  # int / int: exact in doubles only
            a, b = self.exact_f(left), self.exact_f(right)
        else:
            a, b = self.to_f(left), self.to_f(right)
        if type(op) in FLOAT_OPS:
            return ("f", self.op(f"{FLOAT_OPS[type(op)]} double {a}, {b}"))
        if isinstance(op, ast.Div):
            self.fail_if(self.op(f"fcmp oeq double {b}, 0.0"))  # (ZeroDivisionError)
            return ("f", self.op(f"fdiv double {a}, {b}"))
        # (**: 0.0 ** negative is ZeroDivisionError, a negative ** a fraction is complex)
        self.fail_if(self.zero_to_negative(a, b))
        return ("f", self.libm_call("pow", [a, b]))

    def zero_to_negative(self, a, b):
        """i1: a == 0 and b < 0 (0.0 ** -1 raises in Python, and is inf in NumPy)."""
        return self.op(f"and i1 {self.op(f'fcmp oeq double {a}, 0.0')}, {self.op(f'fcmp olt double {b}, 0.0')}")

    def int_op(self, op, a, b):
        if type(op) in CHECKED:
            return self.checked(CHECKED[type(op)], a, b)
        # //, %: Python floors (the remainder takes the divisor's sign)
        zero = self.op(f"icmp eq i64 {b}, 0")
        wraps = self.op(f"and i1 {self.op(f'icmp eq i64 {a}, {INT_MIN}')}, {self.op(f'icmp eq i64 {b}, -1')}")
        bad = self.op(f"or i1 {zero}, {wraps}")
        self.fail_if(bad)
        b = self.op(f"select i1 {bad}, i64 1, i64 {b}")  # (LLVM's sdiv of those is undefined)
        quotient, remainder = self.op(f"sdiv i64 {a}, {b}"), self.op(f"srem i64 {a}, {b}")
        signs = self.op(f"icmp slt i64 {self.op(f'xor i64 {remainder}, {b}')}, 0")
        adjust = self.op(f"and i1 {self.op(f'icmp ne i64 {remainder}, 0')}, {signs}")
        if isinstance(op, ast.FloorDiv):
            return self.op(f"sub i64 {quotient}, {self.op(f'zext i1 {adjust} to i64')}")
        return self.op(f"add i64 {remainder}, {self.op(f'select i1 {adjust}, i64 {b}, i64 0')}")

    def ex_UnaryOp(self, node):
        value = self.expr(node.operand)
        if isinstance(node.op, ast.Not):
            return ("b", self.op(f"xor i1 {self.truth(value)}, true"))
        if value[0] == "f":
            return value if isinstance(node.op, ast.UAdd) else ("f", self.op(f"fneg double {value[1]}"))
        reg = self.to_i(value)
        return ("i", reg if isinstance(node.op, ast.UAdd) else self.checked("ssub", "0", reg))

    def compare(self, op, left, right):
        if left[0] != "f" and right[0] != "f":
            return self.op(f"icmp {COMPARE_I[type(op)]} i64 {self.to_i(left)}, {self.to_i(right)}")
        a, b = self.exact_f(left), self.exact_f(right)  # (Python compares an int and a float exactly)
        return self.op(f"fcmp {COMPARE_F[type(op)]} double {a}, {b}")

    def ex_Compare(self, node):
        return ("b", self.compare(node.ops[0], self.expr(node.left), self.expr(node.comparators[0])))

    def choose(self, kind, make_first, rest):
        """A value computed along branches, through a slot of its own: `rest` takes the slot,
        the first value and the label to go to when done."""
        slot = self.fresh("s")
        self.entry.append(f"{slot} = alloca {TYPES[kind]}")
        end = self.label("join")
        rest(slot, make_first(), end)
        self.start(end)
        return (kind, self.op(f"load {TYPES[kind]}, ptr {slot}"))

    def ex_BoolOp(self, node):
        """`a and b`: a where a is false, else b; `a or b`: a where a is true, else b."""
        kind = self.kinds.expr(node)
        is_and = isinstance(node.op, ast.And)

        def rest(slot, first, end):
            value = first
            for operand in node.values[1:]:
                self.emit(f"store {TYPES[kind]} {value[1]}, ptr {slot}")
                more = self.label("more")
                truth = self.truth(value)
                self.branch(truth, more, end) if is_and else self.branch(truth, end, more)
                self.lines.append(f"{more}:")
                self.open = True
                value = self.expr(operand)
            self.emit(f"store {TYPES[kind]} {value[1]}, ptr {slot}")
        return self.choose(kind, lambda: self.expr(node.values[0]), rest)

    def ex_IfExp(self, node):
        kind = self.kinds.expr(node)

        def rest(slot, test, end):
            yes, no = self.label("yes"), self.label("no")
            self.branch(self.truth(test), yes, no)
            for label, branch in ((yes, node.body), (no, node.orelse)):
                self.lines.append(f"{label}:")
                self.open = True
                self.emit(f"store {TYPES[kind]} {self.expr(branch)[1]}, ptr {slot}")
                self.jump(end)
        return self.choose(kind, lambda: self.expr(node.test), rest)

    def ex_Subscript(self, node):
        name = node.value.id
        if isinstance(self.kinds.names[name], Tup):
            return self.load(name)[1][self.kinds.tuple_index(node)]
        buffer = self.kinds.names[name]
        row, k = self.index(buffer, node)
        return self.read(self.address(name, row, k), buffer.items[k])

    def ex_Call(self, node):
        func = node.func
        if id(node) in self.kinds.calls:
            return self.call(*self.kinds.calls[id(node)])
        if isinstance(func, ast.Attribute):
            if func.attr == "pop":
                return self.pop(func.value.id)
            if func.attr == "shape":
                return (SHAPE, None)
            name = func.attr if self.kinds.is_module(func.value.id, "math") else {**NUMPY1, **NUMPY2}[func.attr]
            return ("f", self.libm_call(name, [self.to_f(self.expr(a)) for a in node.args]))
        name = func.id
        if name == "shape_of":
            return (SHAPE, None)
        if name in IDENTITIES:  # (unbroadcast, broadcast_tangent, saved of a number: the number)
            return self.expr(node.args[0])
        if name == "zeros_like":  # (of a tuple of floats: zeros; of a number or None: 0.0)
            kind = self.kinds.whole(node.args[0])
            return ("tuple", [("f", "0.0") for _ in kind.items]) if isinstance(kind, Tup) else ("f", "0.0")
        if name == "add_at":  # (b[k] += g on the tuple's array)
            items = list(self.load(node.args[0].id)[1])
            k = self.kinds.tuple_index(ast.Subscript(value=node.args[0], slice=node.args[1]))
            items[k] = self.binop(ast.Add(), items[k], self.expr(node.args[2]))
            return ("tuple", items)
        if name == "len":
            buffer = node.args[0].id
            self.check_defined(buffer)
            which = "n" if self.kinds.names[buffer].is_list else "c"
            return ("i", self.op(f'load i64, ptr %"{which}.{buffer}"'))
        values = [self.expr(a) for a in node.args]
        if name in HELPERS:
            return getattr(self, "helper_" + name)(*values)
        if name == "float":
            return ("f", self.to_f(values[0]))
        if name == "bool":
            return ("b", self.truth(values[0]))
        if name == "abs":
            if values[0][0] == "f":
                return ("f", self.op(f"call double @llvm.fabs.f64(double {values[0][1]})"))
            reg = self.to_i(values[0])
            self.fail_if(self.op(f"icmp eq i64 {reg}, {INT_MIN}"))
            return ("i", self.op(f"call i64 @llvm.abs.i64(i64 {reg}, i1 false)"))
        # min, max: the first of the largest (smallest), as Python's loop keeps it
        better = ast.Gt() if name == "max" else ast.Lt()
        current = values[0]
        for item in values[1:]:
            take = self.compare(better, item, current)
            ty = TYPES[current[0]]
            current = (current[0], self.op(f"select i1 {take}, {ty} {item[1]}, {ty} {current[1]}"))
        return current

    def call(self, callee, nodes):
        """A call of another function of the module (callee, a Kinds, its argument nodes): its
        outputs in slots of this frame; its failure is this function's, at once."""
        args = []
        for node, param in zip(nodes, callee.fn.args.args):
            kind, value = self.expr(node)
            args.append(f"double {value}" if kind == "f" else f"i64 {self.to_i((kind, value))}")
        outputs = self.slots(returned(callee.result))
        outf, outi = self.fresh("cf"), self.fresh("ci")
        self.entry += output_allocas(outputs, outf, outi)
        status = self.op(f"call i32 @\"{callee.symbol}\"({', '.join(args + [f'ptr {outf}', f'ptr {outi}'])})")
        self.fail_now(self.op(f"icmp ne i32 {status}, 0"))
        slots = iter(outputs)

        def build(kind):
            if isinstance(kind, Tup):
                return ("tuple", [build(item) for item in kind.items])
            slot_kind, where, index = next(slots)
            pointer = self.op(f"getelementptr i64, ptr {outf if where == 'outf' else outi}, i64 {index}")
            return self.read(pointer, slot_kind)
        return build(callee.result)

    # -- runtime helpers on scalars (lib/core/rulekit) ------------------------------------------------
    def helper_step(self, x):
        """x > 0: relu's derivative."""
        return ("b", self.compare(ast.Gt(), x, ("i", "0")))

    def helper_abs_cotangent(self, g, x, ans):
        """g * np.sign(x): np.sign is 1, -1, 0 (at -0.0 too) or nan."""
        x = x[1]
        zero_or_nan = self.op(f"fmul double {x}, 0.0")  # (nan stays nan; -0.0 is 0.0 below)
        negative = self.op(f"select i1 {self.op(f'fcmp olt double {x}, 0.0')}, double -1.0, double {zero_or_nan}")
        rest = self.op(f"select i1 {self.op(f'fcmp oeq double {x}, 0.0')}, double 0.0, double {negative}")
        sign = self.op(f"select i1 {self.op(f'fcmp ogt double {x}, 0.0')}, double 1.0, double {rest}")
        return ("f", self.op(f"fmul double {self.to_f(g)}, {sign}"))

    helper_abs_tangent = helper_abs_cotangent

    def helper_power_slope(self, x, y):
        """y * x ** (y - 1) (y * x where y == 2); y == 0 is NumPy's guarded where: the uncompiled
        code computes it."""
        self.fail_if(self.compare(ast.Eq(), y, ("i", "0")))
        if y[0] == "f":
            two = self.op(f"fcmp oeq double {y[1]}, 2.0")
            less = self.op(f"fsub double {y[1]}, 1.0")
        else:
            two = self.op(f"icmp eq i64 {self.to_i(y)}, 2")
            less = self.to_f(("i", self.checked("ssub", self.to_i(y), "1")))
        self.fail_if(self.zero_to_negative(x[1], less))
        power = self.libm_call("pow", [x[1], less])
        factor = self.op(f"select i1 {two}, double {x[1]}, double {power}")
        return ("f", self.op(f"fmul double {self.to_f(y)}, {factor}"))
