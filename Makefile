# minidb: the two commands a student needs are `make run` and `make test`.
# Both set everything up first (system programs, .venv, minidb with all extras).

VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PYTEST := $(BIN)/python -m pytest
# Python keeps each module it compiles in __pycache__ (its default). Some environments turn that off
# (PYTHONDONTWRITEBYTECODE), and then every Python the tests start (several hundred: the CLI's, the
# exercises' meta-tests, notebook kernels) compiles minidb again; here it is always on.
unexport PYTHONDONTWRITEBYTECODE
# Jupyter refuses to start as root (containers often run as root) unless told it may.
LAB_AS_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: all setup system run test test-fast fuzz sweep lab figures notebooks slides autograder bench clean

all: run

# System programs (graphviz's dot, Java 17+ for Spark, Chromium for the browser test); cheap when present.
system:
	@scripts/ensure-system.sh

# The virtual environment, rebuilt when the dependencies change.
$(STAMP): pyproject.toml constraints.txt scripts/make-venv.sh
	@rm -rf $(VENV)
	scripts/make-venv.sh
	@touch $(STAMP)

setup: system $(STAMP)

# The main job: a tour of every part of minidb that exists, writing figures/.
run: setup
	$(BIN)/minidb tour --out figures

# Every test: ruff (pyflakes, import order, bugbear: pyproject.toml), then unit, property and
# crash tests, the notebooks (nbval), the exercises, and tests/browser/: JupyterLab in headless
# Chromium (Debian's, driven by Playwright) runs notebooks 01 and 08 and moves their crash
# sliders (about 2 minutes). One xdist worker more than the machine has cores: a worker often waits
# (on a JVM, a child process, an fsync), and the extra one keeps every core busy meanwhile.
WORKERS := $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) + 1 )))
test: setup
	$(BIN)/ruff check .
	$(PYTEST) -n $(WORKERS) --dist loadfile --minidb-full-suite \
	    --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg

# Unit tests only, for a quick loop while editing.
test-fast: setup
	$(PYTEST) -q tests -m "not slow"

# The full corruption harness: every bit of every header flipped, every file cut at every
# boundary and deleted, for each engine; a table of outcomes; exit 1 on WRONG, LOST or CRASH.
fuzz: setup
	$(BIN)/python scripts/fuzz.py

# Every engine's crash test over 1,000 seeds (the group's: 8,500 sampled, 20 exhaustive), one worker
# process per core; the table goes into RELIABILITY.md.
sweep: setup
	$(BIN)/python scripts/sweep.py

# JupyterLab on the notebooks.
lab: setup
	$(BIN)/jupyter lab --notebook-dir=notebooks $(LAB_AS_ROOT)

# Regenerate every picture in figures/, and the image-regression baselines of every picture
# (tests/viz/baseline/), saying which changed: run it when a picture is meant to change.
figures: setup
	$(BIN)/python scripts/refresh-notebook15-rows.py
	$(BIN)/minidb figures --out figures
	$(BIN)/python scripts/refresh-baselines.py

# Re-execute every notebook in place (after changing the code they show).
notebooks: setup
	$(BIN)/python scripts/run-notebooks.py notebooks/*.ipynb

# One reveal.js deck per lecture of docs/COURSE.md's plan, from the committed notebooks (never re-executed),
# into slides/ (not committed) with reveal.js beside them: open slides/L01_shared_log.slides.html in a browser,
# no network needed.
slides: setup
	$(BIN)/python scripts/slides.py

# Gradescope autograders: one zip per exercise and per project, dist/autograder/NAME.zip (its setup.sh and
# run_autograder grade a submitted student.py with `minidb grade NAME --format gradescope`; see scripts/autograder.py).
autograder: setup
	$(BIN)/python scripts/autograder.py

# The bench extra (pyproject.toml): ZODB, Durus, bplustree and LMDB for the peers section; not part of setup,
# installed once into .venv (rebuilding .venv drops it with the stamp).
BENCH_STAMP := $(VENV)/.bench-installed
$(BENCH_STAMP): $(STAMP) pyproject.toml constraints.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[bench]'
	@touch $(BENCH_STAMP)

# Benchmarks; ratios go into BENCHMARKS.md. Every figure is the median of 5 runs, interleaved between
# the systems compared; MINIDB_BENCH_SCALE=N multiplies the sizes of the peers and scaling sections.
bench: setup $(BENCH_STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build slides dist *.egg-info
