# Two commands on a fresh machine with Python >= 3.10 and make:
#   make book   set up .venv, build the site into _build/html
#   make test   set up .venv, run every check (unit, property, doctest, nbval, book build)
# See README.md and CONTRIBUTING.md for the other targets.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
STAMP  := $(VENV)/.installed
NOTEBOOKS := $(sort $(wildcard notebooks/[0-9][0-9]_*.ipynb))
export PATH := $(abspath $(BIN)):$(PATH)
export PYTHONHASHSEED := 0
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: help setup book book-only test test-unit test-doctest test-notebooks test-student-book \
        test-browser browser-only \
        audit notebooks sync-setup lab serve bench student student-book lock clean distclean

help:
	@echo "make book       build the site into _build/html (sets up .venv first)"
	@echo "make test       unit + property tests, doctests, nbval --strict, warning-free book build"
	@echo "make test-browser  build the book and check every page in Chromium (screenshots in _build/screenshots)"
	@echo "make lab        JupyterLab on the notebooks"
	@echo "make serve      serve the built site on http://127.0.0.1:8000"
	@echo "make notebooks  re-execute every notebook in place, in a fresh kernel each"
	@echo "make bench      timing benchmarks (explorer updates, helpers, notebook runs)"
	@echo "make student    notebooks without solutions into _build/student (FORCE=1 to overwrite)"
	@echo "make student-book  the website with solutions hidden, into _build/student-book/_build/html"
	@echo "make sync-setup the notebooks' Colab set-up cell, from repository.url in _config.yml"
	@echo "make clean      remove build outputs (keeps .venv); make distclean also removes .venv"

$(PY):
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10) and "Python >= 3.10 is required")'
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) requirements.txt requirements-dev.txt constraints.txt pyproject.toml
	$(PY) -m pip install --disable-pip-version-check --quiet -r requirements-dev.txt
	# Build matplotlib's font cache now, so no notebook ever prints that it is doing so.
	$(PY) -c 'import matplotlib.pyplot'
	touch $@

setup: $(STAMP)

book: $(STAMP)
	$(MAKE) --no-print-directory book-only
	@echo
	@echo "The book is in $(abspath _build/html). Open $(abspath _build/html/index.html)"
	@echo "or run 'make serve' and visit http://127.0.0.1:8000"

# -W: warnings are errors; -n: nitpicky (every reference must resolve).
book-only:
	$(BIN)/jupyter-book build . -W -n --keep-going

test: $(STAMP) test-unit test-doctest test-notebooks
	$(MAKE) --no-print-directory book-only
	$(MAKE) --no-print-directory browser-only
	$(MAKE) --no-print-directory test-student-book
	@echo "make test: all checks passed"

test-unit: $(STAMP)
	$(PY) -m pytest tests --ignore=tests/browser

test-doctest: $(STAMP)
	$(PY) -m pytest --doctest-modules posenc_helpers

# Strict nbval: every stored output must be reproduced by a fresh run.
test-notebooks: $(STAMP)
	$(PY) tools/nbtools.py audit $(NOTEBOOKS)
	$(PY) -m pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
		-p no:cacheprovider -o testpaths= -W ignore::DeprecationWarning $(NOTEBOOKS)

# Every page of the built site in Chromium: console errors, failed or third-party
# requests, unrendered math, broken images and links, search, a few interactions,
# screenshots in light and dark mode. Skipped (with a message) without Chromium;
# a failure then with POSENC_REQUIRE_BROWSER=1, as CI sets it.
test-browser: $(STAMP)
	$(MAKE) --no-print-directory book-only
	$(MAKE) --no-print-directory browser-only

browser-only:
	$(PY) -m pytest tests/browser -q -rs -p no:nbval --confcutdir=tests/browser

audit: $(STAMP)
	$(PY) tools/nbtools.py audit $(NOTEBOOKS)

notebooks: $(STAMP)
	$(PY) tools/nbtools.py execute $(NOTEBOOKS)

lab: $(STAMP)
	$(BIN)/jupyter lab --notebook-dir=. notebooks/

serve:
	@test -f _build/html/index.html || { echo "no built site: run 'make book' first"; exit 1; }
	$(PYTHON) -m http.server 8000 --bind 127.0.0.1 --directory _build/html

bench: $(STAMP)
	$(PY) benchmarks/bench.py

student: $(STAMP)
	$(PY) -m posenc_helpers.student notebooks _build/student $(if $(FORCE),--force,)

student-book: $(STAMP)
	$(PY) tools/student_book.py

# The student website must not show a line of any solution.
test-student-book: student-book
	POSENC_REQUIRE_STUDENT_BOOK=1 $(PY) -m pytest tests/test_student_book.py

sync-setup: $(STAMP)
	$(PY) tools/nbtools.py sync-setup $(NOTEBOOKS)

# Regenerate constraints.txt from the direct pins, resolved on the oldest supported
# Python (set PYTHON310=/path/to/python3.10 if it is not on PATH).
PYTHON310 ?= python3.10
lock:
	rm -rf _build/lock-venv
	$(PYTHON310) -m venv _build/lock-venv
	_build/lock-venv/bin/pip install --quiet --disable-pip-version-check \
		$$(grep -hvE '^\s*(#|-c|-r|-e|$$)' requirements.txt requirements-dev.txt)
	{ echo "# Full lock of the environment resolved for Python 3.10 (also used on 3.11+)."; \
	  echo "# Regenerate with: make lock"; \
	  _build/lock-venv/bin/pip freeze --exclude-editable | grep -viE '^(posenc|-e )'; } > constraints.txt
	rm -rf _build/lock-venv

clean:
	rm -rf _build .pytest_cache .hypothesis
	find . -name __pycache__ -not -path './.venv/*' -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) posenc_helpers.egg-info
