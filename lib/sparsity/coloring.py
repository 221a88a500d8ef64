"""Colorings of a sparsity pattern, and the compressed evaluation they allow.

Columns of a Jacobian that share no row can be summed into one direction: one JVP then gives
all of them (Curtis, Powell and Reid). Greedy distance-1 coloring of the column intersection
graph finds such groups (`column_coloring`); rows, for VJPs, are the columns of the transpose.
A symmetric Hessian needs fewer groups: with a star coloring (every path on four vertices has
three colors), each entry H[i, j] can be read directly from one compressed product, either as
row i of the product for j's color or, by symmetry, as row j of the product for i's color
(Gebremedhin, Manne and Pothen, "What color is your Jacobian?", 2005). `Compression` holds
where each entry is read from, and builds the dense array or a scipy.sparse CSR matrix.
"""

import dataclasses

import numpy as np

from ..core import dnp
from ..core.traced import Traced


def column_coloring(pattern):
    """Colors of the columns of a (rows, cols) boolean pattern, columns sharing a row differing.

    Greedy, largest columns first (a dense column then takes color 0 and no more colors)."""
    rows, cols = pattern.shape
    cols_of_row = _lists(pattern)
    rows_of_col = _lists(pattern.T)
    colors = np.full(cols, -1, dtype=np.int64)
    counts = np.array([len(r) for r in rows_of_col], dtype=np.int64)
    for j in np.argsort(-counts, kind="stable"):
        touching = [cols_of_row[i] for i in rows_of_col[j]]
        if not touching:
            colors[j] = 0
            continue
        used = colors[np.concatenate(touching) if len(touching) > 1 else touching[0]]
        colors[j] = _first_free(used[used >= 0])
    return colors


def _lists(pattern):
    """The column indices of each row's True entries."""
    rows_of, cols_of = np.nonzero(pattern)
    return np.split(cols_of, np.cumsum(np.bincount(rows_of, minlength=pattern.shape[0]))[:-1])


def _first_free(used):
    """The smallest color not in `used` (an array of colors)."""
    taken = set(used.tolist())
    color = 0
    while color in taken:
        color += 1
    return color


def star_coloring(pattern):
    """A star coloring of the adjacency graph of a symmetric (n, n) pattern (the diagonal is
    ignored), greedy in order of decreasing degree: a vertex avoids its neighbors' colors and,
    along each path v - w - x, a color that would make a two-colored path of four vertices."""
    n = pattern.shape[0]
    graph = pattern & ~np.eye(n, dtype=bool)
    adjacency = _lists(graph)
    colors = np.full(n, -1, dtype=np.int64)
    seen = np.zeros((n, 8), dtype=np.int64)  # seen[x, c]: colored neighbors of x with color c
    degree = graph.sum(axis=1)
    for v in np.argsort(-degree, kind="stable"):
        forbidden = []
        for w in adjacency[v]:
            cw = colors[w]
            xs = adjacency[w]
            xs = xs[(xs != v) & (colors[xs] >= 0)]
            if cw < 0:  # v - w - x with w not yet colored: v must differ from x
                forbidden.append(colors[xs])
                continue
            forbidden.append(np.array([cw]))
            # v - w - x - y with color(y) == color(w): v must not take color(x)
            forbidden.append(colors[xs[seen[xs, cw] > 1]])
        used = np.concatenate(forbidden) if forbidden else np.zeros(0, dtype=np.int64)
        c = _first_free(used)
        colors[v] = c
        if c >= seen.shape[1]:
            seen = np.concatenate([seen, np.zeros_like(seen)], axis=1)
        seen[adjacency[v], c] += 1
    return colors


@dataclasses.dataclass(frozen=True)
class Compression:
    """How a (rows, cols) matrix with a known pattern is read from k compressed products.

    `colors`: the color of each seeded index (a column for forward products and Hessians, a
    row for reverse products). Entry e of the pattern (row-major order, at `rows_of`,
    `cols_of`) is `compressed[take_color[e], take_index[e]]`, `compressed` holding one product
    per color (k, length)."""

    shape: tuple
    colors: np.ndarray
    rows_of: np.ndarray
    cols_of: np.ndarray
    take_color: np.ndarray
    take_index: np.ndarray
    indptr: np.ndarray
    kept: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)  # seeds per dtype

    @property
    def count(self):
        """The number of products (colors)."""
        return int(self.colors.max()) + 1 if len(self.colors) else 0

    def seeds(self, dtype):
        """(k, len(colors)): row c is the sum of the unit vectors of color c (read-only, kept)."""
        seeds = self.kept.get(dtype)
        if seeds is None:
            seeds = np.zeros((self.count, len(self.colors)), dtype=dtype)
            seeds[self.colors, np.arange(len(self.colors))] = 1
            seeds.flags.writeable = False
            self.kept[dtype] = seeds
        return seeds

    def values(self, compressed):
        return compressed[self.take_color, self.take_index]

    def dense(self, compressed):
        out = np.zeros(self.shape, dtype=compressed.dtype)
        out[self.rows_of, self.cols_of] = self.values(compressed)
        return out

    def result(self, compressed, sparse_output, shape, api):
        """The matrix from the compressed products: a CSR matrix, or a dense array of `shape`.
        Traced products (the derivative taken inside another transform) are gathered and
        scattered with dnp ops, so the enclosing transform differentiates them."""
        if not isinstance(compressed, Traced):
            return self.sparse(compressed) if sparse_output else self.dense(compressed).reshape(shape)
        if sparse_output:
            raise TypeError(f"[{api}] sparse_output=True inside another transform: a scipy.sparse "
                            "matrix cannot carry derivatives. Use sparse_output=False there.")
        size = self.shape[0] * self.shape[1]
        flat = self.rows_of * self.shape[1] + self.cols_of
        values = dnp.getitem(compressed, (self.take_color, self.take_index))
        return dnp.reshape(dnp.unindex(values, (size,), (flat,)), shape)

    def sparse(self, compressed):
        from scipy import sparse
        return sparse.csr_matrix((self.values(compressed), self.cols_of.copy(), self.indptr.copy()),
                                 shape=self.shape)


def _compression(pattern, colors, take_color, take_index):
    rows_of, cols_of = np.nonzero(pattern)
    indptr = np.concatenate([[0], np.cumsum(pattern.sum(axis=1))]).astype(np.int64)
    return Compression(tuple(pattern.shape), colors, rows_of, cols_of, take_color(rows_of, cols_of),
                       take_index(rows_of, cols_of), indptr)


def forward_compression(pattern):
    """J (rows, cols) from J @ seeds: columns colored, entry (i, j) at [color(j), i]."""
    colors = column_coloring(pattern)
    return _compression(pattern, colors, lambda i, j: colors[j], lambda i, j: i)


def reverse_compression(pattern):
    """J (rows, cols) from seeds @ J: rows colored, entry (i, j) at [color(i), j]."""
    colors = column_coloring(pattern.T)
    return _compression(pattern, colors, lambda i, j: colors[i], lambda i, j: j)


def hessian_compression(pattern):
    """A symmetric H from H @ seeds: a star coloring read symmetrically, unless plain column
    coloring needs no more colors (it then reads every entry the forward way)."""
    pattern = pattern | pattern.T
    columns = forward_compression(pattern)
    if columns.count <= 2:
        return columns
    colors = star_coloring(pattern)
    if colors.max() + 1 >= columns.count:
        return columns
    rows_of, cols_of = np.nonzero(pattern)
    k = int(colors.max()) + 1
    counts = np.zeros((pattern.shape[0], k), dtype=np.int64)  # counts[i, c]: entries of row i colored c
    np.add.at(counts, (rows_of, colors[cols_of]), 1)
    direct = counts[rows_of, colors[cols_of]] == 1  # H[i, j] = (H s_color(j))[i]
    mirrored = counts[cols_of, colors[rows_of]] == 1  # H[i, j] = H[j, i] = (H s_color(i))[j]
    if not np.all(direct | mirrored):  # not a star coloring after all: never read a sum
        return columns
    take_color = np.where(direct, colors[cols_of], colors[rows_of])
    take_index = np.where(direct, rows_of, cols_of)
    indptr = np.concatenate([[0], np.cumsum(pattern.sum(axis=1))]).astype(np.int64)
    return Compression(tuple(pattern.shape), colors, rows_of, cols_of, take_color, take_index, indptr)
