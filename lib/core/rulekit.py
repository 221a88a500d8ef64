"""The only helpers rules may call besides `dnp`: small named pieces of derivative maths.

Each helper works on plain arrays and on tensors or dual numbers alike, because it only
calls `dnp` (or shape functions): an outer tape records what it does. Every public name of
this module may appear in a rule (the registry checks it), and the source transformer's
runtime star-imports them. They are written in three modules: `rulekit_shapes`
(broadcasting, reductions), `rulekit_arrays` (linalg, shape, indexing) and `rulekit_batched`
(the batch-aware helpers of vectorized jacobians).
"""

import numpy as np

from . import dnp
from .rulekit_arrays import *  # noqa: F401,F403
from .rulekit_batched import *  # noqa: F401,F403
from .rulekit_decomp import *  # noqa: F401,F403
from .rulekit_shapes import *  # noqa: F401,F403
from .rulekit_signal import *  # noqa: F401,F403
from .rulekit_stats import *  # noqa: F401,F403
from .rulekit_numpy import *  # noqa: F401,F403
