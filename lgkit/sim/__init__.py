"""Virtual-time LinkGuardian: two switches, a protected link, scripted hosts, and the soak."""
