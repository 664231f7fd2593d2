# The two commands of the README: `make run` and `make test`. Both build the venv from scratch.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# The browser tests drive Debian's chromium (playwright cannot download its own here), as its
# headless shell: the same engine without the windowed browser's own UI, which Playwright itself
# runs for headless tests. The whole browser in headless mode took 1.7x the wall time and 1.6x the
# CPU on the 61 browser tests (129 s against 75 s, two workers, same run).
CHROMIUM := /usr/bin/chromium-headless-shell
# The PostgreSQL tests start a private server from Debian's binaries (tests/postgres.py) unless
# KAZMA_TEST_DATABASE_URL names one. Debian puts them under the major version, whichever it is;
# the placeholder path, never a file, makes the install run when none is there.
INITDB := $(if $(KAZMA_TEST_DATABASE_URL),,$(or $(firstword $(wildcard /usr/lib/postgresql/*/bin/initdb)),/usr/lib/postgresql/VERSION/bin/initdb))
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test bench clean

# Workers for `make test`: more than the two cores, because part of the suite's time is spent waiting
# (on `kazma serve` processes starting, a browser, PostgreSQL, timers that must run out). With four,
# the two cores are over 90 % busy for the whole run (on 2026-12-04: 591 s of CPU, all processes,
# in 320 s); six finished no sooner and spent 20 % more CPU.
TEST_WORKERS ?= 4

# The venv's own pip is kept: it installs the project (editable, from pyproject.toml) as it is, and
# upgrading it first cost about half a minute of a fresh clone's install. What pip and setuptools say
# on the way (setuptools' multi-line "editable install" notes among it) goes to a log, shown only
# when the install fails.
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "Installing Kazma and its dependencies into $(VENV) (a few minutes the first time; log: $(VENV)/install.log)"
	@$(PY) -m pip install --quiet -e '.[test]' > $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@touch $(STAMP)

$(CHROMIUM):
	$(SUDO) apt-get update
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium-headless-shell

$(INITDB):
	$(SUDO) apt-get update
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql

run: $(STAMP)
	$(VENV)/bin/kazma serve

# mypy on a fresh clone (no cache yet) takes about 40 s of CPU and as long on the clock: it runs beside
# the suite, which spends about half its time waiting, rather than before it. Its report is printed
# after the tests', and a type error fails `make test` as a failed test does.
test: $(STAMP) | $(CHROMIUM) $(INITDB)
	$(VENV)/bin/lint-imports
	$(VENV)/bin/ruff check .
	@echo "$(VENV)/bin/mypy (beside the tests; its report follows theirs)"
	@$(VENV)/bin/mypy > $(VENV)/mypy.log 2>&1 & types=$$!; \
	$(PY) -m pytest -q -n $(TEST_WORKERS); tests=$$?; \
	wait $$types; typed=$$?; \
	cat $(VENV)/mypy.log; \
	exit $$(( tests || typed ))

bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) bench/capture.py

clean:
	rm -rf $(VENV) kazma-data
