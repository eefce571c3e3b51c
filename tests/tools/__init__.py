"""Test tools that are programs of their own: the random P4 expression generator with its spec
evaluator, and the BMv2 runner used for differential tests (each runnable as a command)."""
