"""The switch around a pipeline: traffic manager, ports, clocks, virtual network, control."""
