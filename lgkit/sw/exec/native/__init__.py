"""The native (C) engine of the built-in target: v1model programs generated as C from the IR."""
