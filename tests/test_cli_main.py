"""The `lgkit` command table: every command maps to the module that registers it."""

import argparse
import importlib

import pytest

from lgkit import cli


def test_command_table_matches_what_modules_register() -> None:
    registered: dict[str, str] = {}
    for module in dict.fromkeys(cli.COMMAND_MODULES.values()):
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).register(sub)
        registered.update(dict.fromkeys(sub.choices, module))
    assert registered == cli.COMMAND_MODULES


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert all(command in out for command in cli.COMMAND_MODULES)


def test_unknown_command_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["no-such-command"])
    assert exit_info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_usage_errors_are_one_line_naming_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["switch", "--device-id", "abc"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == (
        "lgkit: error: switch: argument --device-id: invalid int value: 'abc'\n")
