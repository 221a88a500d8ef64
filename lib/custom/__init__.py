"""User-defined derivatives: `custom_gradient` (TF), `custom_jvp`/`custom_vjp` (JAX), `primitive` (autograd)."""
