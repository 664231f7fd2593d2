# The two commands of the README: `make run` and `make test`. Both build the venv from scratch.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# The browser tests drive Debian's chromium (playwright cannot download its own here).
CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

$(CHROMIUM):
	$(SUDO) apt-get update
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium

run: $(STAMP)
	$(VENV)/bin/kazma serve

test: $(STAMP) | $(CHROMIUM)
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) bench/capture.py

clean:
	rm -rf $(VENV) kazma-data
