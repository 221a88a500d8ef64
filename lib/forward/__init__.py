"""Forward mode: dual numbers, batched tangents, `ForwardAccumulator` and forward-over-reverse."""
