"""The P4 program model: types, IR, the frontend that builds them, P4Info."""
