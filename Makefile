# lgkit: `make demo` runs the demo, `make test` runs lint and the whole test suite.
VENV   := .venv
PY     := $(VENV)/bin/python
TARGET ?= builtin

.PHONY: setup test lint demo clean

setup:
	@bash scripts/setup.sh

lint: setup
	$(VENV)/bin/ruff check lgkit tests

# make test also installs the tools only tests use (shellcheck, vagrant; see scripts/setup.sh).
test: export LGKIT_TEST_TOOLS := 1
test: lint
	$(PY) -m pytest -q -rs -p no:cacheprovider tests

demo: setup
	$(VENV)/bin/lgkit demo --target $(TARGET)

clean:
	$(VENV)/bin/lgkit clean
