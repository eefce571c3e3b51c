"""The v1model architecture (V1Switch) as BMv2 simple_switch runs it."""
