# lgkit: `make check` is a contributor's first command (lint, types, the tests that need neither
# root nor BMv2, in about two minutes); `make test` runs lint, types and the whole suite (root);
# `make demo` runs the demo.
VENV   := .venv
PY     := $(VENV)/bin/python
TARGET ?= builtin
PROGRAM ?= v1model

FUZZ_EXAMPLES ?= 20000

.PHONY: setup check test lint typecheck fuzz demo clean tutorial-env notebooks

setup:
	@bash scripts/setup.sh

# Python for P4Runtime helper libraries (protobuf 3.20, p4.tmp.p4config_pb2): docs/course.md
tutorial-env: setup
	@bash scripts/tutorial-env.sh

lint: setup
	$(VENV)/bin/ruff check lgkit tests

# mypy, configured in pyproject.toml (strict on lgkit/core and lgkit/sw/lang)
typecheck: setup
	$(VENV)/bin/mypy

# No root, no network, no BMv2: tests marked root, bmv2 or slow are left to `make test`.
check: lint typecheck
	$(PY) -m pytest -q -p no:cacheprovider -n auto -m "not root and not bmv2 and not slow" tests

# make test also installs the tools only tests use (shellcheck, vagrant; see scripts/setup.sh).
test: export LGKIT_TEST_TOOLS := 1
test: lint typecheck
	$(PY) -m pytest -q -rs -p no:cacheprovider tests

# longer fuzzing than `make test` does (LGKIT_FUZZ_EXAMPLES inputs per fuzz test)
fuzz: setup
	LGKIT_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -p no:cacheprovider \
		--hypothesis-show-statistics tests/sw/test_fuzz_frontend.py tests/sw/test_fuzz_stf.py \
		tests/sim/test_fuzz_lg_frames.py tests/sw/test_fuzz_p4rt.py

demo: setup
	$(VENV)/bin/lgkit demo --target $(TARGET) --program $(PROGRAM)

clean:
	$(VENV)/bin/lgkit clean

# Execute every notebook headless on the newest results (or the committed reference runs);
# executed copies go to measurements/notebooks/, figures next to the runs' data.
notebooks: setup
	$(PY) scripts/run_notebooks.py $(NOTEBOOKS)
