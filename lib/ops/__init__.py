"""The op declarations: one `defop` per primitive, grouped by kind.

Importing this package declares every op; each module publishes its functions in `dnp` as
it is declared (`dnp.export`), in this order (a later module's name wins).
"""

from . import elementwise, transcendental, activations, reductions, nn, shape, indexing, linalg  # noqa: F401
from . import constructors, image  # noqa: F401
