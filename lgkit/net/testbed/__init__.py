"""The testbed: a Mininet network of P4 switch nodes, its control plane, LinkGuardian on it."""
