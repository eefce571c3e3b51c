"""Tofino: compile TNA programs with the open Tofino compiler (bf-p4c), read its reports."""
