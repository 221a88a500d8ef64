"""The shape arithmetic of transforms/calls/compositions.py and call_rewrites.py: plain Python on
shapes and static arguments, never on differentiated values, so the generated code calls them
as they are. runtime.py imports them: generated code reads them as runtime names.

They read only NumPy (a saved module copies their source, see transforms/codegen/save.py), and
they check their arguments as NumPy does, with a message that names the function.
"""

import numpy as np


def _normal_axis(axis, ndim, name):
    """`axis` as an int in [0, ndim), NumPy's AxisError otherwise."""
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"[{name}] axis {axis} is out of bounds for an array of dimension {ndim}.")
    return axis % ndim


def _normal_axes(axes, ndim, name):
    """An int or a sequence of them, as a list of ints in [0, ndim)."""
    return [_normal_axis(a, ndim, name) for a in (axes if isinstance(axes, (list, tuple)) else [axes])]


def flip_index(ndim, axis=None):
    """np.flip's index: a reversing slice on each flipped axis (all of them for axis=None)."""
    flipped = range(ndim) if axis is None else _normal_axes(axis, ndim, "flip")
    return tuple(slice(None, None, -1) if i in flipped else slice(None) for i in range(ndim))


def moveaxis_order(ndim, source, destination):
    """np.moveaxis's permutation of the axes, for np.transpose."""
    source, destination = _normal_axes(source, ndim, "moveaxis"), _normal_axes(destination, ndim, "moveaxis")
    if len(source) != len(destination):
        raise ValueError("[moveaxis] `source` and `destination` arguments must have the same number of elements.")
    order = [i for i in range(ndim) if i not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return order


def split_index(shape, indices_or_sections, axis=0, equal=False):
    """The index of each piece of np.array_split (np.split when `equal`): a slice on `axis`."""
    ndim = len(shape)
    axis = _normal_axis(axis, ndim, "split")
    size = shape[axis]
    if np.ndim(indices_or_sections) == 0:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("[split] number sections must be larger than 0.")
        if equal and size % sections:
            raise ValueError(f"[split] array split does not result in an equal division: {size} elements "
                             f"into {sections} sections. Use np.array_split for unequal pieces.")
        each, extra = divmod(size, sections)
        bounds = [0]
        for k in range(sections):
            bounds.append(bounds[-1] + each + (1 if k < extra else 0))
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [size]
    return [(slice(None),) * axis + (slice(start, stop),) for start, stop in zip(bounds[:-1], bounds[1:])]


def split_axis(ndim, axis, name):
    """The axis np.hsplit / np.vsplit / np.dsplit split along, checking the dimensions as NumPy."""
    least = {"hsplit": 1, "vsplit": 2, "dsplit": 3}[name]
    if ndim < least:
        raise ValueError(f"[{name}] only works on arrays of {least} or more dimensions; got {ndim}.")
    return 0 if name == "hsplit" and ndim == 1 else axis


def repeat_index(shape, repeats, axis):
    """np.repeat as an index: each position along `axis` repeated `repeats` times."""
    axis = _normal_axis(axis, len(shape), "repeat")
    return (slice(None),) * axis + (np.repeat(np.arange(shape[axis]), np.asarray(repeats)),)


def cov_ddof(bias, ddof):
    """np.cov's ddof: 1, 0 with bias=True, unless given."""
    return (0 if bias else 1) if ddof is None else ddof


def cov_check(fweights, aweights):
    """np.cov's weights are refused: their derivative is not written yet."""
    if fweights is not None or aweights is not None:
        raise TypeError("[cov] fweights= and aweights= are not supported by the transformer. Differentiate "
                        "it with GradientTape or dualtape.grad, or weight the centred rows yourself.")


def multi_dot_check(count):
    if count < 2:
        raise ValueError("[multi_dot] expecting at least two arrays.")


def matrix_norm_check(ord):  # noqa: A002  (NumPy's name)
    if ord not in (None, "fro"):
        raise ValueError(f"[matrix_norm] ord={ord!r} cannot be differentiated by the transformer yet (only the "
                         "Frobenius norm). Differentiate it with GradientTape or dualtape.grad.")


def svd_check(shape, full_matrices):
    """The full SVD of a non-square matrix has arbitrary extra columns: no derivative (as dnp)."""
    if len(shape) < 2:
        raise np.linalg.LinAlgError(f"[Svd] expects a matrix (..., M, N), got shape {tuple(shape)}.")
    if full_matrices and shape[-1] != shape[-2]:
        raise ValueError(f"[Svd] full_matrices=True on a non-square matrix of shape {tuple(shape)}: the extra "
                         "columns of U (or rows of Vh) are arbitrary, so they have no derivative. Fix: pass "
                         "full_matrices=False (the reduced SVD).")


def qr_check(shape, mode):
    if len(shape) < 2 or mode not in ("reduced", "r") or shape[-2] < shape[-1]:
        raise ValueError(f"[Qr] mode={mode!r} on shape {tuple(shape)} has no derivative here: only the reduced "
                         "QR of a square or tall matrix (M >= N) does. Fix: mode='reduced', or factor the transpose.")


def lstsq_check(shape):
    if len(shape) != 2:
        raise np.linalg.LinAlgError(f"[Lstsq] expects a 2-D matrix a, got shape {tuple(shape)}.")


def lstsq_residuals(shape, rank):
    """Whether np.linalg.lstsq returns residuals: a tall matrix of full column rank."""
    return rank == shape[1] and shape[0] > shape[1]


def empty_residuals(dtype):
    """np.linalg.lstsq's residuals where there are none: an empty float array (`dtype` may be
    a tensor's tf.DType: the generated code also runs on tensors)."""
    dtype = np.dtype(getattr(dtype, "as_numpy_dtype", dtype))
    return np.zeros((0,), dtype=dtype if dtype.kind == "f" else np.float64)


def piecewise_masks(shape, condlist, count):
    """np.piecewise's boolean masks, read as NumPy reads condlist, one per function."""
    if isinstance(condlist, (list, tuple)):  # conditions on tensors (traced code): as the arrays they are
        condlist = [c if isinstance(c, (list, np.ndarray)) or np.ndim(c) == 0 else np.asarray(c, dtype=bool)
                    for c in condlist]
    if np.isscalar(condlist) or (not isinstance(condlist[0], (list, np.ndarray)) and len(shape) != 0):
        condlist = [condlist]
    masks = np.asarray(condlist, dtype=bool)
    if len(masks) == count - 1:  # the last function: where no condition holds
        masks = np.concatenate([masks, ~np.any(masks, axis=0, keepdims=True)], axis=0)
    elif len(masks) != count:
        raise ValueError(f"[piecewise] with {len(masks)} condition(s), {len(masks)} or {len(masks) + 1} "
                         f"functions are expected; got {count}.")
    return list(masks)


def fft_single_length(n):
    """np.fft.fft's `n` as fftn's `s`: None (the input's length), or the one length (n,)."""
    return None if n is None else (n,)


__all__ = [name for name in dir() if not name.startswith("_") and name != "np"]
