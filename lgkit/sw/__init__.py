"""The built-in software P4 target (v1model): lang, exec, switch, p4runtime, tools rooms."""
