"""LLVM's machine code for an IR module (llvmlite, which numba brings), and the Python callable
around it.

Each module gets its own MCJIT engine, kept alive by the callable, and its own target machine
for the host's CPU and features, as numba uses (the engine owns and frees it). The C library's functions the code
calls are the process's own (the `sin` CPython's math module calls), bound by address.
Compiling holds numba's compiler lock: LLVM's context is not to be used by two threads.
"""

import ctypes
import ctypes.util
import weakref

_initialized = []


def machine():
    """A target machine for the host."""
    import llvmlite.binding as ll
    if not _initialized:
        ll.initialize_native_target()
        ll.initialize_native_asmprinter()
        _initialized.append(ll.get_host_cpu_features().flatten())
    return ll.Target.from_default_triple().create_target_machine(cpu=ll.get_host_cpu_name(), features=_initialized[0],
                                                                 opt=2, jit=True)


def bind_symbols(names):
    """Bind each C function in `names` to the process's own (libm's, libc's, CPython's)."""
    import llvmlite.binding as ll
    process = ctypes.CDLL(None)
    libm = None
    for name in names:
        if ll.address_of_symbol(name):
            continue
        function = getattr(ctypes.pythonapi, name, None) or getattr(process, name, None)
        if function is None:
            libm = libm or ctypes.CDLL(ctypes.util.find_library("m"))
            function = getattr(libm, name)
        ll.add_symbol(name, ctypes.cast(function, ctypes.c_void_p).value)


def machine_code(text, name, symbols):
    """(address of function `name`, the engine that holds it) for the IR `text`."""
    import llvmlite.binding as ll
    from numba.core.compiler_lock import global_compiler_lock
    with global_compiler_lock:
        tm = machine()
        bind_symbols(symbols)
        module = ll.parse_assembly(text)
        module.verify()
        builder = ll.create_pass_builder(tm, ll.create_pipeline_tuning_options(speed_level=2))
        builder.getModulePassManager().run(module, builder)
        engine = ll.create_mcjit_compiler(module, tm)
        engine.finalize_object()
        return engine.get_function_address(name), engine


class MethodDef(ctypes.Structure):
    """CPython's PyMethodDef."""
    _fields_ = [("name", ctypes.c_char_p), ("method", ctypes.c_void_p), ("flags", ctypes.c_int),
                ("doc", ctypes.c_char_p)]


METH_FASTCALL = 0x0080
_alive = {}  # id of a builtin -> (its method definition, its engine): as long as it lives


def builtin(address, engine, name, rerun):
    """A Python builtin function whose C code is at `address` (boxing.py's wrapper, its `self`
    the callable `rerun`); it keeps `engine` (the code) alive."""
    definition = MethodDef(name.encode(), address, METH_FASTCALL, None)
    make = ctypes.pythonapi.PyCFunction_NewEx
    make.restype, make.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]
    function = make(ctypes.addressof(definition), rerun, None)
    _alive[id(function)] = (definition, engine)
    weakref.finalize(function, _alive.pop, id(function), None)
    return function
