"""The CPython face of a native function: IR for `PyObject *wrapper(self, args, nargs)`, a
METH_FASTCALL builtin that takes Python floats, ints and bools, calls the compiled function
and returns its floats, ints and bools (in tuples, as the generated code returns them).

Where the compiled code stops (status 1), an int does not fit 64 bits, or the call has another
number of arguments, the wrapper calls `self`, the uncompiled code, with the same arguments:
one C call in, one out, instead of ctypes' conversions (microseconds a call).
"""

from .emitter import output_allocas
from .kind_rules import Tup

API = ("PyFloat_AsDouble", "PyLong_AsLongLongAndOverflow", "PyObject_IsTrue", "PyFloat_FromDouble",
       "PyLong_FromLongLong", "PyBool_FromLong", "PyTuple_Pack", "Py_DecRef", "PyObject_Vectorcall")
DECLARATIONS = """declare double @PyFloat_AsDouble(ptr)
declare i64 @PyLong_AsLongLongAndOverflow(ptr, ptr)
declare i32 @PyObject_IsTrue(ptr)
declare ptr @PyFloat_FromDouble(double)
declare ptr @PyLong_FromLongLong(i64)
declare ptr @PyBool_FromLong(i64)
declare ptr @PyTuple_Pack(i64, ...)
declare void @Py_DecRef(ptr)
declare ptr @PyObject_Vectorcall(ptr, ptr, i64, ptr)
"""


def wrapper(name, inner, arg_kinds, result, outputs):
    """IR text of the builtin `name` around `inner` (lowering.py's function): arguments of
    `arg_kinds`, returning a value of kind `result` from the slots `outputs`."""
    lines, counter = [], [0]

    def op(text):
        counter[0] += 1
        lines.append(f"  %w{counter[0]} = {text}")
        return f"%w{counter[0]}"

    head = ["entry:"] + ["  " + line for line in output_allocas(outputs, "%outf", "%outi")] + [
            "  %overflow = alloca i32",
            f"  %arity = icmp ne i64 %nargs, {len(arg_kinds)}", "  br i1 %arity, label %slow, label %unbox",
            "unbox:"]
    values = []
    for k, kind in enumerate(arg_kinds):
        item = op(f"load ptr, ptr {op(f'getelementptr ptr, ptr %args, i64 {k}')}")
        if kind == "f":
            values.append(f"double {op(f'call double @PyFloat_AsDouble(ptr {item})')}")
        elif kind == "i":
            lines.append("  store i32 0, ptr %overflow")
            values.append(f"i64 {op(f'call i64 @PyLong_AsLongLongAndOverflow(ptr {item}, ptr %overflow)')}")
            wide = op(f"icmp ne i32 {op('load i32, ptr %overflow')}, 0")
            lines.append(f"  br i1 {wide}, label %slow, label %unboxed{k}")
            lines.append(f"unboxed{k}:")
        else:
            truth = op(f"call i32 @PyObject_IsTrue(ptr {item})")
            values.append(f"i64 {op(f'sext i32 {truth} to i64')}")
    status = op(f"call i32 @\"{inner}\"({', '.join(values + ['ptr %outf', 'ptr %outi'])})")
    lines.append(f"  br i1 {op(f'icmp ne i32 {status}, 0')}, label %slow, label %box")
    lines.append("box:")
    slots = iter(outputs)

    def box(kind):
        if isinstance(kind, Tup):
            items = [box(item) for item in kind.items]
            packed = op(f"call ptr (i64, ...) @PyTuple_Pack(i64 {len(items)}{''.join(', ptr ' + i for i in items)})")
            for i in items:
                lines.append(f"  call void @Py_DecRef(ptr {i})")
            return packed
        _, where, index = next(slots)
        ty = "double" if where == "outf" else "i64"
        value = op(f"load {ty}, ptr {op(f'getelementptr {ty}, ptr %{where}, i64 {index}')}")
        maker = {"i": "PyLong_FromLongLong", "b": "PyBool_FromLong"}.get(kind, "PyFloat_FromDouble")
        return op(f"call ptr @{maker}({ty} {value})")
    lines.append(f"  ret ptr {box(result)}")
    lines += ["slow:", "  %again = call ptr @PyObject_Vectorcall(ptr %self, ptr %args, i64 %nargs, ptr null)",
              "  ret ptr %again"]
    return (f"define ptr @\"{name}\"(ptr %self, ptr %args, i64 %nargs) {{\n"
            + "\n".join(head + lines) + "\n}\n")
