"""The lifecycle of a kit network: names, lock, cleanup, watchdog and the experiment context."""
