"""Course and tutorial support: BMv2-compatible tool selection, the exercises, their checks."""
