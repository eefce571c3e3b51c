"""The extern registry: one module per extern (its code generation and run-time state); an
architecture lists the externs it offers (arch/), the interpreter dispatches through the list."""
