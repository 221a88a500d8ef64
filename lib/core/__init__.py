"""The bottom floor: the op registry and what rules are written with.

`registry` (`Primitive`, `defop`), `rulekit` (the helpers rules may call), `dnp` (the
differentiable NumPy namespace, filled as each op in `dualtape.ops` is declared),
`apply_rules` (running a primitive's rules), `dtypes`, `errors`, `nest`. Nothing here imports
an engine or the ops.
"""
