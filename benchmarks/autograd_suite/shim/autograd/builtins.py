"""autograd.builtins: on dualtape, Python containers of traced values are plain containers, so
`tuple`, `list` and `dict` are Python's; `isinstance` and `type` look through a traced value to
the array it stands for, as autograd's look through a box."""

import builtins as _builtins

from dualtape.core.duck import primal_of

tuple = _builtins.tuple  # noqa: A001
list = _builtins.list  # noqa: A001
dict = _builtins.dict  # noqa: A001


def isinstance(value, types):  # noqa: A001
    return _builtins.isinstance(primal_of(value), types)


def type(value):  # noqa: A001
    return _builtins.type(primal_of(value))
