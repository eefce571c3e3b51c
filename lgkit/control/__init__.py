"""Target-agnostic P4Runtime control plane: pipeline, forwarding, LG activation, corruptd."""
