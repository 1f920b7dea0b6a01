# Two commands on a fresh machine with Python >= 3.11 and make:
#   make book   set up .venv, build the site into _build/html
#   make test   set up .venv, run every check (unit, property, doctest, nbval twice, book, browser)
# See README.md and CONTRIBUTING.md for the other targets.

PYTHON ?= python3
# The interpreter that creates .venv, by absolute path: once PATH starts with
# .venv/bin (below), a bare python3 would name the environment's own.
BASE_PYTHON := $(shell command -v $(PYTHON) 2>/dev/null || echo $(PYTHON))
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
# The environment is installed in layers (CONTRIBUTING.md, "Dependencies"): each a
# requirements file that includes the one before it, each with its own stamp. A target
# installs only the layer it needs; a later, larger layer installs only what is missing.
BOOK_STAMP   := $(VENV)/.installed-book
READER_STAMP := $(VENV)/.installed-reader
COURSE_STAMP := $(VENV)/.installed-course
STAMP  := $(VENV)/.installed
NOTEBOOKS := $(sort $(wildcard notebooks/[0-9][0-9]_*.ipynb))
export PATH := $(abspath $(BIN)):$(PATH)
export PYTHONHASHSEED := 0
export PYDEVD_DISABLE_FILE_VALIDATION := 1
# JAX keeps what it compiles in _build/jax-cache (its persistent compilation cache), so
# the lab's tests, doctests and chapter 11 compile their small models once per machine,
# not once per run (a warm run of tests/core/test_lab.py: 15 s instead of 52 s).
export JAX_COMPILATION_CACHE_DIR := $(abspath _build/jax-cache)
export JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS := 0

# The environment is installed with uv when it can be (about ten times faster than
# pip), else with pip: see tools/install_requirements.sh. USE_UV=0 forces pip. Either
# way the same exact pins (requirements*.txt, constraints.txt) are installed.
export USE_UV ?= 1
export UV_VERSION := 0.13.9
# Nothing is compiled at install time (that would cost more than make book itself):
# Python caches the bytecode of what it imports, once. Some machines (CI among them)
# set PYTHONDONTWRITEBYTECODE, which would make every kernel recompile matplotlib and
# IPython from source; this project's commands unset it.
unexport PYTHONDONTWRITEBYTECODE

# nbval runs every chapter under two CPU profiles, in parallel. numpy and OpenBLAS
# choose their kernels by CPU, so the last bits of sin, exp and matrix products
# differ between machines; a stored output that passes under both profiles does not
# print rounding noise. The portable profile switches numpy's AVX-512 kernels off
# (on x86-64) and makes BLAS single-threaded. Its kernels (and those of the
# student-copy run) display figures without drawing them (tools/skip_figure_drawing.py):
# nbval never compares pixels, drawing is half of a chapter's run time, and the
# native run draws every figure.
NBVAL = $(PY) -m pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
	-p no:cacheprovider -o testpaths= -W ignore::DeprecationWarning -q
AVX512 := AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL
PORTABLE_PROFILE := OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
	$(if $(filter x86_64 amd64 AMD64,$(shell uname -m)),NPY_DISABLE_CPU_FEATURES="$(AVX512)",)
SKIP_DRAWING := PYTHONSTARTUP=$(abspath tools/skip_figure_drawing.py)

.PHONY: help setup book book-only test test-fast _test-fast-chapters-tooling _test-fast-core test-unit test-doctest lint test-notebooks test-notebooks-native \
        test-notebooks-portable test-course test-student-book test-browser browser-only \
        audit notebooks text sync-setup colab-check epub epub-only release-editions chapter lab lab-student serve bench lane-times rekey-lab merge-lab-stores record-lab-questions pdf pdf-only pdf-chapters test-pdf course collect grade otter student student-branch student-book lock release clean distclean \
        _test-parallel _book-then-browser

help:  ## this list: every target with a line of its own, from the comment (##) above its rule
	@awk '/^## /{doc=substr($$0, 4); next} /^[a-z][a-z0-9-]*:/{if (doc != "") {split($$0, t, ":"); printf "make %-18s %s\n", t[1], doc}} {doc=""}' $(firstword $(MAKEFILE_LIST))

$(PY):
	$(BASE_PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "Python >= 3.11 is required")'
	$(BASE_PYTHON) -m venv --without-pip $(VENV)

# Node packages (tools/node): MathJax typesets the formulas at build time (tools/site/math.py),
# axe-core checks accessibility in the browser suite. Node.js is required (.ci/run installs it).
NODE_STAMP := tools/node/node_modules/.installed
$(NODE_STAMP): tools/node/package.json tools/node/package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "npm not found: the book's formulas are typeset at build time with MathJax in Node.js; install Node.js (https://nodejs.org, or apt-get install nodejs npm) and run make again"; exit 1; }
	npm ci --prefix tools/node --no-audit --no-fund --loglevel=error
	touch $@

# Install the layer $(1) (a requirements file) and build matplotlib's font cache, so that
# no notebook ever prints that it is doing so; then mark this layer and the layers $(2),
# which $(1) includes, as installed.
define install_layer
	PYTHON=$(BASE_PYTHON) tools/install_requirements.sh $(PY) $(1)
	$(PY) -c 'import matplotlib.pyplot'
	touch $(2) $@
endef
LAYER_INPUTS := $(PY) constraints.txt pyproject.toml tools/install_requirements.sh requirements-book.txt

# The site build (make book): no JAX, JupyterLab, nbgrader, otter or test tools.
$(BOOK_STAMP): $(LAYER_INPUTS) | $(NODE_STAMP)
	$(call install_layer,requirements-book.txt)

# + running the notebooks: the kernel, JupyterLab, JAX and optax (the lab).
$(READER_STAMP): $(LAYER_INPUTS) requirements.txt
	$(call install_layer,requirements.txt,$(BOOK_STAMP))

# + nbgrader and otter-grader (the course's targets).
$(COURSE_STAMP): $(LAYER_INPUTS) requirements.txt requirements-course.txt | $(NODE_STAMP)
	$(call install_layer,requirements-course.txt,$(BOOK_STAMP) $(READER_STAMP))

# + tests, lint and releases: everything (make test, make setup).
$(STAMP): $(LAYER_INPUTS) requirements.txt requirements-course.txt requirements-dev.txt | $(NODE_STAMP)
	$(call install_layer,requirements-dev.txt,$(BOOK_STAMP) $(READER_STAMP) $(COURSE_STAMP))

## create .venv with every pinned requirement (each target installs what it needs first)
setup: $(STAMP)

## build the site into _build/html (sets up .venv first)
book: $(BOOK_STAMP)
	$(MAKE) --no-print-directory book-only
	@echo
	@echo "The book is in $(abspath _build/html). Open $(abspath _build/html/index.html)"
	@echo "or run 'make serve' and visit http://127.0.0.1:8000"

# -W: warnings are errors; -n: nitpicky (every reference must resolve).
## the same build, without checking the environment
book-only:
	$(BIN)/jupyter-book build . -W -n --keep-going

# Everything CI runs, two jobs at a time (the reference machine has two cores, and
# every job but the browser suite keeps one busy; the browser suite keeps one and a
# half busy). Each job's output is printed in one piece when it ends.
TEST_JOBS ?= 2
# Chapter 11 trains its live models once per make test: every run of it (nbval under
# both profiles, the course's student and instructor copies) shares one store of
# training runs (posenc_helpers/lab/cache.py); a run needed by two jobs at once is
# trained by one while the other waits.
LAB_TEST_CACHE := $(abspath _build/lab-test-cache)
## every check: the test-* targets, lint and audit, two at a time (what CI runs)
test: $(STAMP)
	rm -rf $(LAB_TEST_CACHE)
	POSENC_LAB_CACHE=$(LAB_TEST_CACHE) $(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target _test-parallel
	@echo "make test: all checks passed"

# The longest lanes first, so that they all finish together.
_test-parallel: _book-then-browser test-notebooks-native test-notebooks-portable test-course \
                test-student-book test-unit test-doctest audit lint

# The inner loop: every unit, property and tooling test not marked slow, and the
# doctests, in three lanes on the two cores, the longest first (chapters and tooling; then
# core, then the doctests, on the core that frees first): one unit lane beside the doctests
# kept one core idle for the last minute and a half.
## the inner loop: unit, property, tooling tests not marked slow, and doctests (two minutes)
test-fast: $(STAMP)
	$(MAKE) --no-print-directory -j2 --output-sync=target _test-fast-chapters-tooling _test-fast-core test-doctest

_test-fast-chapters-tooling: $(STAMP)
	$(PY) -m pytest tests/chapters tests/tooling -q -m "not slow"

_test-fast-core: $(STAMP)
	$(PY) -m pytest tests/core -q -m "not slow"

## unit, property and tooling tests
test-unit: $(STAMP)
	$(PY) -m pytest tests/core tests/chapters tests/tooling

# ruff (lint and format) on all Python; mypy on the numerics, the lab, the checks and the
# notebook tools (configured in pyproject.toml). The same hooks are in .pre-commit-config.yaml.
LINTED := posenc_helpers tools tests benchmarks
## ruff (lint, format) and mypy
lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy

# The otter plugin is left out: importing otter warns under traitlets (warnings are
# errors here), it has no doctests, and tests/course/test_otter.py runs it.
## the package's doctests
test-doctest: $(STAMP)
	$(PY) -m pytest --doctest-modules posenc_helpers --ignore=posenc_helpers/grading/otter.py

# Strict nbval: every stored output must be reproduced by a fresh run, under both profiles.
## nbval --strict under both CPU profiles, after the audit
test-notebooks: $(STAMP) audit
	$(MAKE) --no-print-directory -j2 --output-sync=target test-notebooks-native test-notebooks-portable

## nbval --strict under the native CPU profile only
test-notebooks-native: $(STAMP)
	$(NBVAL) $(NOTEBOOKS)

## nbval --strict under the portable CPU profile only (AVX-512 off, one BLAS thread)
test-notebooks-portable: $(STAMP)
	$(PORTABLE_PROFILE) $(SKIP_DRAWING) $(NBVAL) $(NOTEBOOKS)

# The course (tools/course, nbgrader): every chapter's release runs untouched and its
# source earns every point; nbgrader autogrades sample submissions of chapter 04.
## the course: every release and source run; nbgrader grades sample submissions
test-course: $(STAMP)
	$(SKIP_DRAWING) $(PY) -m pytest tests/course -q -p no:nbval

# Every page of the built site in Chromium: console errors, failed or third-party
# requests, unrendered math, broken images and links, search, a few interactions,
# light and dark mode. Skipped (with a message) without Chromium; a failure then
# with POSENC_REQUIRE_BROWSER=1, as CI sets it. Both save phone screenshots and a
# printed chapter in _build/screenshots; make test-browser also full-page ones.
## build the book and check every page in Chromium (screenshots in _build/screenshots)
test-browser: $(STAMP)
	$(MAKE) --no-print-directory book-only
	$(MAKE) --no-print-directory browser-only

_book-then-browser: $(STAMP)
	$(MAKE) --no-print-directory book-only
	POSENC_FULL_PAGE_SCREENSHOTS=0 $(MAKE) --no-print-directory browser-only
	$(MAKE) --no-print-directory test-pdf
	$(MAKE) --no-print-directory epub-only
	$(PY) -m pytest tests/epub -q -p no:nbval
	$(PY) -m tools.release_editions
	$(PY) -m pytest tests/archive -q -p no:nbval

# The reader's book as an EPUB 3 (tools/epub.py), assembled from the built site: chapters
# 01-14 with the reader pages (not the API reference nor the instructor guide), every formula
# as the MathML MathJax wrote at build time, the website's numbering, figures with their alt
# text. EPUBCheck (Debian's epubcheck) validates it in tests/epub.
EPUB_DIR := _build/epub
## the reader's book as an EPUB 3 into _build/epub (builds the site first)
epub: book
	$(MAKE) --no-print-directory epub-only

## the same EPUB from the site already built
epub-only:
	rm -f $(EPUB_DIR)/posenc-book-*.epub
	$(PY) -m tools.epub --out $(EPUB_DIR)/posenc-book-$$($(PY) -c 'from tools.release import package_version; print(package_version())').epub

## the browser suite on the site already built
browser-only:
	$(PY) -m pytest tests/browser -q -rs -p no:nbval --confcutdir=tests/browser

# The book to take away (tools/editions): the built site's reader pages (the API reference
# and the instructor guide left out) assembled into one print page and printed by Chromium,
# through the pinned Playwright, into a tagged PDF with one bookmark per chapter and section,
# numbered as the website is. Offline: Playwright never downloads a browser (Debian's
# chromium is used when it has none of its own). The print pages stay in _build/pdf/print.
## the whole book as one tagged, bookmarked PDF: _build/pdf/positional-encoding-book-<version>.pdf (builds the site first)
pdf: $(STAMP)
	$(MAKE) --no-print-directory book-only
	$(MAKE) --no-print-directory pdf-only

## the same PDF from the site already built (about two minutes on two cores)
pdf-only:
	$(PY) -m tools.editions.pdf

## one PDF per chapter, the same way, into _build/pdf/chapters (builds the site first)
pdf-chapters: $(STAMP)
	$(MAKE) --no-print-directory book-only
	$(PY) -m tools.editions.pdf --chapters

# The PDF's text layer, outline, tags and links against the built site's HTML; the checks are
# also run on a deliberately broken print page, to show that each can fail.
## print the PDF from the site already built and check it (tests/editions)
test-pdf: pdf-only
	POSENC_REQUIRE_PDF=1 $(PY) -m pytest tests/editions -q -p no:nbval

## the notebooks' stored outputs: errors, stderr, paths, rounding-level figures
audit: $(BOOK_STAMP)
	$(PY) -m tools.nbtools audit $(NOTEBOOKS)

## re-execute every notebook in place, in a fresh kernel each
notebooks: $(READER_STAMP)
	$(PY) -m tools.nbtools execute $(NOTEBOOKS)

# JupyterLab on working copies of the chapters (tools/working_copies.py), never on the
# tracked notebooks, which JupyterLab would rewrite: make lab with the solutions (folded),
# make lab-student without them; neither shows nbgrader's menus and buttons. A copy that exists
# is kept (the reader's work); FORCE=1 replaces it; make clean never deletes them. Authors
# edit notebooks/ (CONTRIBUTING.md, "Regenerating notebook outputs"). tools/reader_lab.py
# writes the copies and starts JupyterLab: PORT=8890 picks its port, as root it passes
# --allow-root (and says so); LAB_ARGS="--no-browser --ip=0.0.0.0" passes any other option.
LAB_COPIES := _build/lab
LAB_FLAGS = $(if $(FORCE),--force,) $(if $(PORT),--port $(PORT),)
## [PORT=8890] [LAB_ARGS=...]  JupyterLab on working copies of the chapters, solutions folded, no nbgrader UI (_build/lab/book; FORCE=1 renews them)
lab: $(READER_STAMP)
	$(PY) -m tools.reader_lab --out $(LAB_COPIES)/book $(LAB_FLAGS) $(NOTEBOOKS) -- $(LAB_ARGS)

## [PORT=8890] [LAB_ARGS=...]  the same for self-study: no solutions, no nbgrader UI (_build/lab/student)
lab-student: $(READER_STAMP)
	$(PY) -m tools.reader_lab --student --out $(LAB_COPIES)/student $(LAB_FLAGS) $(NOTEBOOKS) -- $(LAB_ARGS)

## [PORT=8000]  serve the built site on http://127.0.0.1:PORT (default 8000)
serve:
	@test -f _build/html/index.html || { echo "no built site: run 'make book' first"; exit 1; }
	$(BASE_PYTHON) -m http.server $(or $(PORT),8000) --bind 127.0.0.1 --directory _build/html

## benchmarks against their budgets (chapters, book, helpers, explorers)
bench: $(STAMP)
	$(PY) -m benchmarks.bench

# Every lane of make test, run as make test runs them and timed (tools/lane_times.py), written
# into the lane table of benchmarks/README.md. On a quiet machine: it refuses a busy one.
## [LANE_ARGS=--dry-run]  time every lane of make test, write benchmarks/README.md's lane table (a quiet machine)
lane-times: $(STAMP)
	$(PY) -m tools.lane_times $(LANE_ARGS)

# CH=04 (or CH="04 07") limits make course and make otter to those chapters.
CHAPTER_PATHS = $(if $(CH),$(foreach n,$(CH),$(wildcard notebooks/$(n)_*.ipynb)),)

# The nbgrader course: source/ (model answers, hidden tests), release/ (what students
# get, made by nbgrader generate_assignment), gradebook.db and nbgrader_config.py.
## [CH=04]  the nbgrader course (source, release, gradebook) into _build/course
course: $(COURSE_STAMP)
	$(PY) -m tools.course --out _build/course $(if $(FORCE),--force,) $(CHAPTER_PATHS)

# Collect assignment A from nbgrader's exchange into _build/course/submitted, reading each
# submission without following a link (nbgrader collect alone follows them, as root too);
# a submission with a link, a special file or no submission_secret.txt is refused and named.
## A=ch04 [EXCHANGE=DIR] [UPDATE=1]  collect from nbgrader's exchange, following no student's link
collect: $(COURSE_STAMP)
	@test -n "$(A)" || { echo "name the assignment: make collect A=ch04 [EXCHANGE=DIR] [UPDATE=1]"; exit 2; }
	$(PY) -m tools.course.collect $(A) --course _build/course $(if $(EXCHANGE),--exchange $(EXCHANGE),) $(if $(UPDATE),--update,)

# Autograde every submission of assignment A in _build/course/submitted, JOBS at a time
# (default: the cores), each in a bubblewrap sandbox; each grade comes from the course's
# grader, outside it. UNSAFE=1 grades without a sandbox (trusted submissions only).
## A=ch04 [JOBS=N] [UNSAFE=1]  autograde _build/course/submitted, each in a sandbox, N at a time
grade: $(COURSE_STAMP)
	@test -n "$(A)" || { echo "name the assignment: make grade A=ch04 [JOBS=2] [UNSAFE=1]"; exit 2; }
	$(PY) -m tools.course.grade $(A) --course _build/course $(if $(JOBS),--jobs $(JOBS),) $(if $(UNSAFE),--unsafe,)

# The course on Kubernetes (book/instructor_guide.md, "On Kubernetes"; deploy/k8s). The grading
# image: the pinned course environment with the package, built with docker or podman.
GRADING_IMAGE ?= posenc-grading:latest
CONTAINER_TOOL ?= $(shell command -v docker 2>/dev/null || command -v podman 2>/dev/null)
.PHONY: grading-image k8s-job k8s-merge
# The build context is only what the image copies (_build/grading-image), not the repository.
IMAGE_CONTEXT := constraints.txt requirements-book.txt requirements.txt requirements-course.txt pyproject.toml \
	README.md LICENSE LICENSE-TEXT posenc_helpers deploy/k8s/Containerfile
## [GRADING_IMAGE=name:tag]  build the grading image (deploy/k8s/Containerfile) with docker or podman
grading-image:
	@test -n "$(CONTAINER_TOOL)" || { echo "make grading-image needs docker or podman, and neither is here: install one, or build deploy/k8s/Containerfile on a machine that has one"; exit 2; }
	@$(CONTAINER_TOOL) info >/dev/null 2>&1 || { echo "$(CONTAINER_TOOL) is installed but cannot reach its daemon or service here ($(CONTAINER_TOOL) info fails): start it, or build elsewhere"; exit 2; }
	rm -rf _build/grading-image && mkdir -p _build/grading-image
	tar -cf - --exclude=__pycache__ $(IMAGE_CONTEXT) | tar -xf - -C _build/grading-image
	$(CONTAINER_TOOL) build -f _build/grading-image/deploy/k8s/Containerfile -t $(GRADING_IMAGE) _build/grading-image

# An Indexed Job for assignment A's submissions in _build/course/submitted: pod i grades
# submission i (_build/k8s/A/volume/index.json), with python -m posenc_helpers.grading one.
# Writes _build/k8s/A/job.yaml (validated offline) and volume/ (to copy onto the shared volume).
## A=ch04 [PARALLELISM=10 IMAGE=... PVC=... NAMESPACE=... DEADLINE=s RUNTIME_CLASS=...]  render the Kubernetes Job for A into _build/k8s/A
k8s-job: $(COURSE_STAMP)
	@test -n "$(A)" || { echo "name the assignment: make k8s-job A=ch04 [PARALLELISM=10] [IMAGE=...]"; exit 2; }
	$(PY) -m tools.course.k8s $(A) --course _build/course --out _build/k8s $(if $(PARALLELISM),--parallelism $(PARALLELISM),) \
	    $(if $(IMAGE),--image $(IMAGE),) $(if $(PVC),--pvc $(PVC),) $(if $(NAMESPACE),--namespace $(NAMESPACE),) \
	    $(if $(DEADLINE),--deadline $(DEADLINE),) $(if $(RUNTIME_CLASS),--runtime-class $(RUNTIME_CLASS),) $(if $(FORCE),--force,)

# The Job's results (copied back into _build/k8s/A/volume/results) into _build/course's gradebook,
# feedback and _build/course/grades-A.csv, as make grade and nbgrader export write them.
## A=ch04 [VOLUME=DIR]  merge the Job's results into the gradebook, feedback and grades CSV
k8s-merge: $(COURSE_STAMP)
	@test -n "$(A)" || { echo "name the assignment: make k8s-merge A=ch04 [VOLUME=_build/k8s/ch04/volume]"; exit 2; }
	$(PY) -m tools.course.merge $(A) --course _build/course $(if $(VOLUME),--volume $(VOLUME),)

# The same exercises as otter-grader assignments (Gradescope): _build/otter/chNN/dist.
## [CH=04]  the same exercises as otter-grader assignments (Gradescope) into _build/otter
otter: $(COURSE_STAMP)
	$(PY) -m tools.course --otter --out _build/otter $(if $(FORCE),--force,) $(CHAPTER_PATHS)

# The tree to publish as the repository's student branch (see the instructor guide):
# the release notebooks, the package and Binder's requirements.
## the student branch's tree (release notebooks, package) into _build/student-branch
student-branch: course
	$(PY) -m tools.course --out _build/course --student-branch _build/student-branch $(if $(FORCE),--force,)

# The student notebooks: the release of the course make course wrote, in one folder.
## the release of make course's notebooks into _build/student (FORCE=1 to overwrite)
student: $(COURSE_STAMP)
	$(PY) -m tools.course --out _build/course --student-copies _build/student $(if $(FORCE),--force,)

## the website with solutions hidden, into _build/student-book/_build/html
student-book: $(COURSE_STAMP)
	$(PY) -m tools.course --student-book

# The student website must not show a line of any solution.
## the student website shows no solution
test-student-book: $(STAMP) student-book
	POSENC_REQUIRE_STUDENT_BOOK=1 $(PY) -m pytest tests/site -q

# Each notebook's MyST Markdown twin in notebooks/text/ (make notebooks writes them too).
## each notebook's MyST Markdown twin in notebooks/text (make notebooks does it too)
text: $(BOOK_STAMP)
	$(PY) -m tools.nbtools text $(NOTEBOOKS)

# A new chapter from the templates in tools/templates/chapter (tools/new_chapter.py): the
# notebook and its twin, the three subpackage modules and their exports, the test file and
# the _toc.yml entry; then its Colab cell and exercise numbers, and a first execution.
## NN=13 NAME=name [TITLE=... PART=... FORCE=1]  scaffold a new chapter (see CONTRIBUTING.md)
chapter: $(STAMP)
	@if [ -z "$(NN)" ] || [ -z "$(NAME)" ]; then \
	    echo "usage: make chapter NN=13 NAME=snake_case_name [TITLE='Title'] [PART='Part caption'] [FORCE=1]"; exit 2; fi
	$(PY) -m tools.new_chapter $(NN) $(NAME) $(if $(TITLE),--title "$(TITLE)") $(if $(PART),--part "$(PART)") \
	    $(if $(FORCE),--force)
	$(MAKE) --no-print-directory sync-setup
	$(PY) -m tools.nbtools execute notebooks/$(NN)_$(NAME).ipynb

# Colab's Python and package versions (googlecolab/backend-info, cited in the script); pip
# reaches the package index. Colab runs Python 3.13.15 (2026-11): give a 3.13.
## COLAB_PYTHON=/path/to/python3.13  run the Colab set-up cell as on Colab: fresh venv, Colab's versions, install from a tag
colab-check: $(BOOK_STAMP)
	@test -n "$(COLAB_PYTHON)" || { echo "give COLAB_PYTHON=/path/to/python3.13 (Colab's Python: tools/colab_check.sh)"; exit 2; }
	tools/colab_check.sh $(COLAB_PYTHON)

## the notebooks' Colab set-up cell (from repository.url), explorer restart notes, exercise numbers, the checks' table of refused helpers
sync-setup: $(STAMP)
	$(PY) -m tools.nbtools sync-setup $(NOTEBOOKS)
	$(PY) -m tools.course.numbers $(NOTEBOOKS)

# Regenerate constraints.txt from the direct pins for the oldest supported Python,
# with uv (which keeps every version already in constraints.txt that still fits).
# It needs only uv, not an installed environment: after a pin changes, the environment
# cannot be installed until the lock agrees with it.
## regenerate constraints.txt from the direct pins
lock:
	@command -v $(BIN)/uv >/dev/null 2>&1 || command -v uv >/dev/null 2>&1 || { \
	    echo "make lock needs uv: run make setup once, or install uv (https://docs.astral.sh/uv/)"; exit 1; }
	mkdir -p _build
	grep -hvE '^\s*(#|-c|-r|-e|$$)' requirements-book.txt requirements.txt requirements-course.txt \
	    requirements-dev.txt > _build/lock-input.txt
	grep -v '^#' constraints.txt > _build/constraints.txt
	$$(command -v $(BIN)/uv || command -v uv) pip compile _build/lock-input.txt --python-version 3.11 \
		--no-header --no-annotate --quiet -o _build/constraints.txt
	{ echo "# Full lock of the environment, resolved by uv for Python 3.11 (also used on newer versions)."; \
	  echo "# Regenerate with: make lock"; cat _build/constraints.txt; } > constraints.txt

# A release (CONTRIBUTING.md, "Cutting a release"): the project files agree on the version
# (tests/tooling/test_project.py), then the wheel and sdist of posenc_helpers go into _build/dist
# (python -m build: the sdist, and the wheel built from it), twine checks their metadata and that
# README.md renders, and tools/release.py checks that both hold the licence files and the data
# files. Then the book's editions the release attaches (make release-editions, below: the EPUB,
# the PDFs, the offline site; NO_PDF=1 leaves the PDFs out) into _build/editions; last, the
# steps that stay manual (tag, push, publish). Set repository.url first (CONTRIBUTING.md).
DIST := _build/dist
## [NO_PDF=1]  the package's wheel and sdist (_build/dist) and the book's editions (_build/editions), checked; prints the manual steps
release: $(STAMP)
	$(PY) -m pytest -q -p no:nbval tests/tooling/test_project.py
	rm -rf $(DIST)
	$(PY) -m build --outdir $(DIST) .
	$(PY) -m twine check --strict $(DIST)/*
	$(MAKE) --no-print-directory release-editions
	$(PY) -m tools.release check $(DIST)

# The editions a release attaches (tools/release_editions.py), into _build/editions: the EPUB,
# the whole-book and per-chapter PDFs (make pdf, make pdf-chapters; NO_PDF=1 leaves them out),
# and the site as a tarball made to be read from file:// (fonts inlined, no
# fetch), with SHA256SUMS and MANIFEST.json. tests/archive opens the archive's pages from
# file:// in Chromium (search, an explorer, MathJax's fonts).
## [NO_PDF=1]  build the book's editions (EPUB, PDFs, offline site tarball, checksums, manifest) into _build/editions
release-editions: $(STAMP)
	$(MAKE) --no-print-directory book-only
	$(MAKE) --no-print-directory epub-only
	$(if $(NO_PDF),,$(MAKE) --no-print-directory pdf-only)
	$(if $(NO_PDF),,$(PY) -m tools.editions.pdf --chapters)
	$(PY) -m tools.release_editions $(if $(NO_PDF),,--require-pdf)
	$(PY) -m pytest tests/epub tests/archive -q -p no:nbval

# Chapter 10 shows whether trained models work past their training length; chapter 11
# measures it. This reruns chapter 11's protocol and writes the verdicts chapter 10 reads
# (posenc_helpers/data/train_short_test_long.json); then run make notebooks.
# The whole experiment of chapter 11 (under an hour on two cores: 52.7 min measured, benchmarks/README.md): writes
# posenc_helpers/data/train_short_test_long.json. Trained models are kept in
# _build/lab-cache, so a rerun after an edit outside the lab's training code only
# re-evaluates them.
# Across machines (CONTRIBUTING, "The lab's record on several machines"): SHARD=i/N trains
# only shard i (from 0) of N into STORE (default _build/lab-shards/i-of-N) and writes no
# record; make merge-lab-stores joins the stores; STORE=<merged store> alone evaluates its
# runs into the record and trains none (posenc_helpers/lab/shards.py, tools/lab_store.py).
LAB_SHARD_STORE = $(abspath $(or $(STORE),_build/lab-shards/$(subst /,-of-,$(SHARD))))
## [SHARD=i/N] [STORE=dir]  chapter 11's whole experiment (about an hour on two cores) into the record chapters 10 and 11 read; SHARD: train shard i of N only; STORE alone: evaluate its runs
record-lab: $(READER_STAMP)
ifneq ($(SHARD),)
	$(PY) -m tools.lab_store train --shard '$(SHARD)' --store '$(LAB_SHARD_STORE)'
else ifneq ($(STORE),)
	$(PY) -m tools.lab_store record --store '$(abspath $(STORE))'
else
	POSENC_LAB_CACHE=$${POSENC_LAB_CACHE:-$(abspath _build/lab-cache)} \
	$(PY) -c 'from posenc_helpers.lab import record_lab; r = record_lab(); print(r["verdicts"], r["reach"], r["seconds"])'
endif

## STORES="a b ..." OUT=dir  merge stores of lab runs (make record-lab SHARD=i/N) into OUT, each run checked against its digest
merge-lab-stores: $(READER_STAMP)
	@test -n "$(STORES)" -a -n "$(OUT)" || { echo 'give STORES="<store> <store> ..." OUT=<merged store>'; exit 2; }
	$(PY) -m tools.lab_store merge --out '$(OUT)' $(STORES)

## re-run only the record's question tasks, keeping its text part (for a change to their scoring alone; CONTRIBUTING)
record-lab-questions: $(READER_STAMP)
	POSENC_LAB_CACHE=$${POSENC_LAB_CACHE:-$(abspath _build/lab-cache)} \
	$(PY) -c 'from posenc_helpers.lab import record_lab; r = record_lab(questions_only=True); print(r["reach"], r["seconds"])'

# After a refactor of the lab (code moved, renamed, split; no number changed): prove it
# computes the same as BASE, a commit whose record was valid, and give the record the
# new code's key (tools/rekey_lab_record.py; about a minute). A numerics change fails.
## BASE=<commit>  after a refactor of the lab: prove it computes what BASE did, then re-key the record
rekey-lab: $(READER_STAMP)
	@test -n "$(BASE)" || { echo "give BASE=<commit whose record was valid>"; exit 2; }
	$(PY) -m tools.rekey_lab_record --base $(BASE) --write

# What a person may have written into, which clean and distclean keep: the working copies of
# make lab and make lab-student ($(LAB_COPIES)), the nbgrader course of make course with its
# gradebook, submissions, grades and feedback, make student's copies and make otter's
# assignments. clean-working-copies FORCE=1 deletes the first, clean-kept FORCE=1 all of them.
KEPT := $(LAB_COPIES) _build/course _build/student _build/otter
KEPT_NOTE.$(LAB_COPIES) := the working copies of make lab and make lab-student, with your answers
KEPT_NOTE._build/course := make course's nbgrader course: gradebook.db, submitted/, autograded/, feedback/
KEPT_NOTE._build/student := make student's copies of the release, which you may have edited or handed out
KEPT_NOTE._build/otter := make otter's assignments, which you may have edited
## remove build outputs (keeps .venv and what a person may have written in: _build/lab, _build/course, _build/student, _build/otter)
clean:
	@test ! -d _build || find _build -mindepth 1 -maxdepth 1 $(foreach d,$(KEPT),! -path '$(d)') -exec rm -rf {} +
	rm -rf .pytest_cache .hypothesis
	find . -name __pycache__ -not -path './.venv/*' $(foreach d,$(KEPT),-not -path './$(d)/*') -prune -exec rm -rf {} +
	@$(foreach d,$(KEPT),test ! -d $(d) || echo "kept $(d): $(KEPT_NOTE.$(d))";) true
	@for d in $(KEPT); do test ! -d $$d || { echo "(make clean-kept lists what it keeps; FORCE=1 deletes it)"; break; }; done

.PHONY: clean-working-copies clean-kept
## [FORCE=1]  delete the working copies of make lab and make lab-student (_build/lab) and your answers in them; without FORCE=1, only list them
clean-working-copies:
	@if [ ! -d $(LAB_COPIES) ]; then echo "no working copies: $(LAB_COPIES) does not exist"; exit 0; fi; \
	echo "$(if $(FORCE),deleting,would delete) $(LAB_COPIES), the working copies of make lab and make lab-student, with every change made in them:"; \
	find $(LAB_COPIES) -type f -name '*.ipynb' -not -path '*/.ipynb_checkpoints/*' | sort | sed 's/^/  /'; \
	echo "  and $$(find $(LAB_COPIES) -type f | wc -l | tr -d ' ') files in all"; \
	$(if $(FORCE),rm -rf $(LAB_COPIES) && echo "deleted $(LAB_COPIES)",echo "nothing deleted: make clean-working-copies FORCE=1 deletes them")

## [FORCE=1]  delete everything make clean keeps but .venv (the working copies, the course with its gradebook, ...); without FORCE=1, only list it
clean-kept:
	@found=0; $(foreach d,$(KEPT),if [ -d $(d) ]; then found=1; \
	  echo "$(if $(FORCE),deleting,would delete) $(d), $(KEPT_NOTE.$(d)):"; \
	  for entry in $(d)/* $(d)/.[!.]*; do \
	    if [ -d "$$entry" ]; then echo "  $$entry/ ($$(find "$$entry" -type f | wc -l | tr -d ' ') files)"; \
	    elif [ -e "$$entry" ]; then echo "  $$entry"; fi; \
	  done; \
	  $(if $(FORCE),rm -rf $(d) && echo "deleted $(d)";,) fi;) \
	if [ $$found = 0 ]; then echo "nothing kept: none of $(KEPT) exists"; \
	else $(if $(FORCE),true,echo "nothing deleted: make clean-kept FORCE=1 deletes them"); fi

## clean, and remove .venv too (keeps what clean keeps)
distclean: clean
	rm -rf $(VENV) posenc_helpers.egg-info
