"""A P4Runtime helper library for the tutorial-style exercises (the kit's own, same interface
as the one the P4 tutorials use: helper.P4InfoHelper, bmv2.Bmv2SwitchConnection, ...)."""
