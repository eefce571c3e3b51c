"""Tools on the target: STF runner, benchmarks, and the `lgkit compile`/`stf` commands."""
