"""The built-in P4 target: frontend, IR, interpreter, v1model architecture, switch runtime."""
