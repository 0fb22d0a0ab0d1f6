"""vmap: the batching transform (batching rules live in ``dualad.vmap.rules``)."""
