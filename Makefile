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
	$(BIN)/python -m pip install --quiet -e '.[all,test]'
	@touch $(STAMP)

venv: $(STAMP)

# gift-pegjs, the independent GIFT parser the tests check our GIFT against (node is optional:
# without it those tests skip and say so).
NODE_STAMP := tests/js/node_modules/.installed
$(NODE_STAMP): tests/js/package.json tests/js/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix tests/js --no-audit --no-fund --loglevel=error && touch $@; \
	else echo "note: npm not found: the gift-pegjs cross-check tests skip (in CI, with CI set, they fail)"; fi

## run: set up, then lint, export and assemble the bundled bank into exports/
run: $(STAMP)
	$(BIN)/dpassess build

## test: set up, then ruff, mypy --strict on src/, the import contract and the test suite (on every
##       core; PYTEST_WORKERS=0 runs it in this one process)
test: $(STAMP) $(NODE_STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -n $${PYTEST_WORKERS:-auto} --dist worksteal
	$(MAKE) --no-print-directory fuzz-slice

## fuzz: the fuzzing harness (tests/fuzz; not in make test): FUZZ_EXAMPLES inputs per target
## (default 300), within FUZZ_SECONDS (default 1200: each target tries inputs for its share of
## it, then stops; a run past it twice over is killed); failures are kept in tests/fuzz/corpus
.PHONY: fuzz
fuzz: $(STAMP)
	DPASSESS_FUZZ=1 FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-300} FUZZ_SECONDS=$${FUZZ_SECONDS:-1200} \
		timeout $$((2 * $${FUZZ_SECONDS:-1200})) \
		$(BIN)/python -m pytest -p no:cacheprovider tests/fuzz

## fuzz-slice: (part of make test) the four importers' fuzz tests for about a minute: each of
##             the eight reads inputs for FUZZ_TEST_SECONDS (default 7.5: a minute in all), at most FUZZ_EXAMPLES
##             (default 300); the seed comes from the commit (HYPOTHESIS_PROFILE=ci, as in CI), so
##             each commit tries new inputs, and the replay line is printed
.PHONY: fuzz-slice
fuzz-slice: $(STAMP)
	DPASSESS_FUZZ=1 HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} \
		FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-300} FUZZ_TEST_SECONDS=$${FUZZ_TEST_SECONDS:-7.5} \
		$(BIN)/python -m pytest -n $${PYTEST_WORKERS:-auto} -p no:cacheprovider tests/fuzz/test_fuzz_importers.py

## test-install: build the wheel (python -m build), install it into a fresh venv (dependencies
##               from the package index) and run init/check/lint/export/build outside the repo;
##               then run every install command the README and docs show (pip, pipx, pre-commit)
##               on a tag-less copy of this repository (many minutes; CI runs it after `make test`)
test-install: $(STAMP)
	DPASSESS_INSTALL_TEST=1 $(BIN)/python -m pytest -n $${PYTEST_WORKERS:-auto} tests/test_install.py

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
	$(BIN)/python -m pip install --quiet -e '.[all,test,bench]'
	$(BIN)/python benchmarks/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .dpassess_cache .mypy_cache .import_linter_cache .grimp_cache build dist src/*.egg-info
