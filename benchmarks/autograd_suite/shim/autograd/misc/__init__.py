"""autograd.misc: `flatten` (a pytree of arrays as one vector and its inverse); `const_graph`
(autograd's tracer-graph cache) has no dualtape equivalent."""

import numpy as np


def flatten(value):
    """(vector, unflatten) for nested tuples, lists and dicts of arrays, as autograd's."""
    if isinstance(value, (tuple, list)):
        parts = [flatten(v) for v in value]
        sizes = [np.size(p[0]) for p in parts]
        kind = type(value)

        def unflatten(vector):
            out, start = [], 0
            for (_, un), n in zip(parts, sizes):
                out.append(un(vector[start:start + n]))
                start += n
            return kind(out)

        flat = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0)
        return flat, unflatten
    if isinstance(value, dict):
        keys = sorted(value)
        flat, un = flatten([value[k] for k in keys])
        return flat, lambda vector: dict(zip(keys, un(vector)))
    shape = np.shape(value)
    return np.ravel(value), lambda vector: np.reshape(vector, shape)


def const_graph(fun, *args, **kwargs):
    raise NotImplementedError("[autograd shim] const_graph caches autograd's tracer graph: no dualtape "
                              "equivalent (out of scope).")
