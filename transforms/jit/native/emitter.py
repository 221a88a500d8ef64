"""The building blocks of native/lowering.py's IR: registers, labels and blocks, conversions
between kinds, checked int arithmetic, the C library's math functions with CPython's errors,
and the two ways of failing (status 1: the uncompiled code runs the call instead).

`fail_now` leaves at once (before memory would be touched wrongly); `fail_if` only records
the failure, which the next loop head or return acts on: the code in between computes on
without side effects outside its own stacks, and one branch per block lets LLVM merge the
block's sin and cos of one x into one sincos.
"""

import ast
import struct

from .kind_rules import MATH1, OPTIONAL, Tup

TYPES = {"f": "double", "i": "i64", "b": "i1"}
EXACT = 2 ** 53  # ints a double holds exactly
INT_MIN = -2 ** 63
INTRINSICS = {"fabs": "llvm.fabs.f64", "copysign": "llvm.copysign.f64"}
COMPARE_F = {ast.Lt: "olt", ast.Gt: "ogt", ast.LtE: "ole", ast.GtE: "oge", ast.Eq: "oeq", ast.NotEq: "une"}
COMPARE_I = {ast.Lt: "slt", ast.Gt: "sgt", ast.LtE: "sle", ast.GtE: "sge", ast.Eq: "eq", ast.NotEq: "ne"}
CHECKED = {ast.Add: "sadd", ast.Sub: "ssub", ast.Mult: "smul"}
INF = "0x7FF0000000000000"
# math functions whose error (CPython's ValueError) is the argument on one side of a bound:
# (fcmp predicate true on error, bound), "inf" comparing |x| with infinity; None: no error
DOMAINS = {"sin": ("oeq", "inf"), "cos": ("oeq", "inf"), "tan": ("oeq", "inf"), "log": ("ole", 0.0),
           "log2": ("ole", 0.0), "log10": ("ole", 0.0), "log1p": ("ole", -1.0), "sqrt": ("olt", 0.0),
           "acosh": ("olt", 1.0), "atan": (None, 0), "asinh": (None, 0), "tanh": (None, 0), "erf": (None, 0),
           "erfc": (None, 0), "atan2": (None, 0)}
FLOAT_OPS = {ast.Add: "fadd", ast.Sub: "fsub", ast.Mult: "fmul"}


def double(value):
    """A float64 as LLVM writes it exactly: its bits in hex."""
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", float(value)))[0]


def literal(kind, value):
    return double(value) if kind == "f" else ("true" if value else "false") if kind == "b" else str(int(value))


def flatten(kind):
    """The kinds of the slots that hold a value of `kind`, in order (a Tup's items depth first;
    None or a float: the float and a bool saying None; None: nothing)."""
    if isinstance(kind, Tup):
        return [k for item in kind.items for k in flatten(item)]
    return {"o": ["f", "b"], "n": []}.get(kind, [kind])


def returned(kind):
    """The kinds of the scalars a value of `kind` returns (None or a float: a float, checked)."""
    if isinstance(kind, Tup):
        return [k for item in kind.items for k in returned(item)]
    return ["f" if kind in OPTIONAL else kind]


def output_allocas(outputs, outf, outi):
    """The allocas of the slots a call's outputs (Lowering.slots) are written to: `outf` its
    floats, `outi` its ints and bools (one each at least)."""
    n_f = sum(1 for _, where, _ in outputs if where == "outf")
    return [f"{outf} = alloca double, i64 {max(n_f, 1)}", f"{outi} = alloca i64, i64 {max(len(outputs) - n_f, 1)}"]


def declarations(libm):
    """The C library's functions called (#0: they read and write no memory, errno unread, so
    LLVM merges the sin and cos of one x into one sincos), malloc's family, intrinsics."""
    lines = [f"declare double @{name}({', '.join(['double'] * (1 if name in MATH1 else 2))}) #0"
             for name in sorted(libm)]
    lines += ["declare ptr @malloc(i64)", "declare ptr @realloc(ptr, i64)", "declare void @free(ptr)",
              "declare double @llvm.fabs.f64(double)", "declare i64 @llvm.abs.i64(i64, i1)",
              "declare double @llvm.copysign.f64(double, double)"]
    lines += [f"declare {{i64, i1}} @llvm.{op}.with.overflow.i64(i64, i64)" for op in CHECKED.values()]
    lines.append("attributes #0 = { nounwind willreturn memory(none) }")
    return "\n".join(lines)


class Emitter:
    """Emits IR lines into `self.lines` (the entry block's allocas into `self.entry`)."""

    # -- emitting --------------------------------------------------------------------------------
    def fresh(self, prefix="r"):
        self.counter += 1
        return f"%{prefix}{self.counter}"

    def op(self, text, into=None):
        """Emit `%rN = text`; returns %rN."""
        reg = self.fresh()
        (self.lines if into is None else into).append(("" if into is not None else "  ") + f"{reg} = {text}")
        return reg

    def emit(self, text):
        self.lines.append("  " + text)

    def label(self, prefix="L"):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def start(self, label):
        """Begin block `label` (falling into it from an open block)."""
        self.jump(label)
        self.lines.append(f"{label}:")
        self.open = True

    def jump(self, label):
        if self.open:
            self.emit(f"br label %{label}")
        self.open = False

    def branch(self, cond, yes, no):
        self.emit(f"br i1 {cond}, label %{yes}, label %{no}")
        self.open = False

    def fail_now(self, cond):
        """Leave with status 1 where `cond` (an i1) holds (before memory is touched wrongly)."""
        ok = self.label("ok")
        self.branch(cond, "error", ok)
        self.lines.append(f"{ok}:")
        self.open = True

    def fail_if(self, cond):
        """Fail (status 1) where `cond` holds, at the next loop head or return: the code in
        between computes on without side effects outside its own stacks (whose bounds fail
        at once), and one branch per block lets LLVM merge the block's sin and cos of one x."""
        failed = self.op("load i1, ptr %err")
        self.emit(f"store i1 {self.op(f'or i1 {failed}, {cond}')}, ptr %err")

    def check_failed(self):
        self.fail_now(self.op("load i1, ptr %err"))

    # -- values ----------------------------------------------------------------------------------
    def to_f(self, value):
        kind, reg = value
        if kind == "f":
            return reg
        return self.op(f"{'sitofp i64' if kind == 'i' else 'uitofp i1'} {reg} to double")

    def to_i(self, value):
        kind, reg = value
        return reg if kind == "i" else self.op(f"zext i1 {reg} to i64")

    def exact_f(self, value):
        """An int as a double, failing where the double would not be the int exactly."""
        if value[0] == "i":
            magnitude = self.op(f"call i64 @llvm.abs.i64(i64 {value[1]}, i1 false)")
            self.fail_if(self.op(f"icmp ugt i64 {magnitude}, {EXACT}"))
        return self.to_f(value)

    def truth(self, value):
        kind, reg = value
        if kind == "b":
            return reg
        if kind == "f":
            return self.op(f"fcmp une double {reg}, 0.0")
        return self.op(f"icmp ne i64 {reg}, 0")

    def checked(self, name, a, b):
        pair = self.op(f"call {{i64, i1}} @llvm.{name}.with.overflow.i64(i64 {a}, i64 {b})")
        self.fail_if(self.op(f"extractvalue {{i64, i1}} {pair}, 1"))
        return self.op(f"extractvalue {{i64, i1}} {pair}, 0")

    def libm_call(self, name, args):
        """math.name(*args) as CPython computes it: the C library's function; a nan from numbers
        or an infinity from finite numbers is CPython's ValueError or OverflowError."""
        if name in INTRINSICS:
            return self.op(f"call double @{INTRINSICS[name]}({', '.join('double ' + a for a in args)})")
        self.libm.add(name)
        result = self.op(f"call double @{name}({', '.join('double ' + a for a in args)})")
        if name in DOMAINS:  # (where the error is one comparison of the argument)
            predicate, bound = DOMAINS[name]
            x = args[0] if bound != "inf" else self.op(f"call double @llvm.fabs.f64(double {args[0]})")
            if predicate is not None:
                self.fail_if(self.op(f"fcmp {predicate} double {x}, {INF if bound == 'inf' else double(bound)}"))
        else:
            self.fail_if(self.nonfinite_from_finite(result, args))
        return result

    def nonfinite_from_finite(self, result, args):
        """i1: `result` is nan where no argument is, or infinite where every argument is finite."""
        is_nan = self.op(f"fcmp uno double {result}, 0.0")
        is_inf = self.op(f"fcmp oeq double {self.op(f'call double @llvm.fabs.f64(double {result})')}, {INF}")
        any_nan, all_finite = "false", "true"
        for a in args:
            any_nan = self.op(f"or i1 {any_nan}, {self.op(f'fcmp uno double {a}, 0.0')}")
            finite = self.op(f"fcmp one double {self.op(f'call double @llvm.fabs.f64(double {a})')}, {INF}")
            all_finite = self.op(f"and i1 {all_finite}, {finite}")
        bad_nan = self.op(f"and i1 {is_nan}, {self.op(f'xor i1 {any_nan}, true')}")
        return self.op(f"or i1 {bad_nan}, {self.op(f'and i1 {is_inf}, {all_finite}')}")
