"""Programs run inside Mininet hosts: the iperf3 driver and its result parsing."""
