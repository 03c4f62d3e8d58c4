# One-command set-up: `make run` and `make test` create .venv and install what they need.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test test-install pytest typecheck bench clean venv

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found (set PYTHON=...)" >&2; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,scan]'
	@touch $(STAMP)

venv: $(STAMP)

# gift-pegjs, the independent GIFT parser the tests check our GIFT against (node is optional:
# without it those tests skip and say so).
NODE_STAMP := tests/js/node_modules/.installed
$(NODE_STAMP): tests/js/package.json tests/js/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix tests/js --no-audit --no-fund --loglevel=error && touch $@; \
	else echo "note: npm not found: the gift-pegjs cross-check tests skip without node, fail with node"; fi

## run: set up, then lint, export and assemble the bundled bank into exports/
run: $(STAMP)
	$(BIN)/dpassess build

## test: set up, then ruff, mypy --strict on src/, the import contract and the test suite
test: $(STAMP) $(NODE_STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python -m pytest

## fuzz: the fuzzing harness (tests/fuzz; not in make test): FUZZ_EXAMPLES inputs per target
## (default 300), stopped after FUZZ_SECONDS (default 1200); failures are kept in tests/fuzz/corpus
.PHONY: fuzz
fuzz: $(STAMP)
	DPASSESS_FUZZ=1 FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-300} timeout $${FUZZ_SECONDS:-1200} \
		$(BIN)/python -m pytest -p no:cacheprovider tests/fuzz

## test-install: build the wheel (python -m build), install it into a fresh venv (dependencies
##               from the package index) and run init/check/lint/export/build outside the repo
##               (a few minutes; CI runs it after `make test`)
test-install: $(STAMP)
	DPASSESS_INSTALL_TEST=1 $(BIN)/python -m pytest tests/test_install.py

## typecheck: mypy --strict on src/ and the import contract alone (config in pyproject.toml)
typecheck: $(STAMP)
	$(BIN)/mypy
	$(BIN)/lint-imports

## pytest: set up, then the test suite alone (PYTEST_ARGS="-k golden -x" to narrow it)
PYTEST_ARGS ?=
pytest: $(STAMP) $(NODE_STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

## bench: set up (with the text2qti baseline), then print the benchmark table
##        (BENCH_ARGS="--big" adds the 100,000-item memory run; "--repeat 5", "--items N")
BENCH_ARGS ?=
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python benchmarks/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .dpassess_cache .mypy_cache .import_linter_cache .grimp_cache build dist src/*.egg-info
