"""Execution of checked P4 programs: code generation, values, tables, externs and hashes."""
