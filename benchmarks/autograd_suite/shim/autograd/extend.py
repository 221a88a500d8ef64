"""autograd.extend: user primitives are dualtape.primitive / defvjp / defjvp."""

import dualtape

from .core import VSpace, vspace  # noqa: F401

primitive = dualtape.primitive


def defvjp(fun, *vjpmakers, **kwargs):
    return dualtape.defvjp(fun, *vjpmakers, argnums=kwargs.get("argnums"))


def defjvp(fun, *jvpfuns, **kwargs):
    return dualtape.defjvp(fun, *jvpfuns, argnums=kwargs.get("argnums"))


def defvjp_argnum(fun, vjpmaker):
    raise NotImplementedError("[autograd shim] defvjp_argnum (autograd-internal calling convention) has no "
                              "dualtape equivalent: use defvjp with one maker per argument.")
