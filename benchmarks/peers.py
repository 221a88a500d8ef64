"""Importing the optional peers (torch, autograd, JAX) the same way in every workload.

Each returns the module(s) or raises ImportError, which the harness reports as "not
installed". Thread settings: torch gets one intra-op and one inter-op thread; XLA's flags
are set by run_all.py before JAX is imported.
"""

_DONE = set()


def torch():
    import torch as _torch
    if "torch" not in _DONE:
        _torch.set_num_threads(1)
        try:
            _torch.set_num_interop_threads(1)
        except RuntimeError:  # already set once work has started
            pass
        _DONE.add("torch")
    return _torch


def autograd():
    import autograd as _autograd
    import autograd.numpy as anp
    return _autograd, anp


def jax():
    import jax as _jax
    import jax.numpy as jnp
    if "jax" not in _DONE:
        _jax.config.update("jax_enable_x64", True)
        _jax.config.update("jax_platforms", "cpu")
        _DONE.add("jax")
    return _jax, jnp
