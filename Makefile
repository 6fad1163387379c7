# The two commands of the README: `make demo` and `make test`. Both create .venv on a fresh machine.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-dev

.PHONY: demo test native lint fmt bench docs labs lab clean

# Python's own default: each module compiled once and its bytecode kept (a sandbox or CI image may turn it off;
# then every process of the tests — the workers, each notebook's kernel, each graded student — compiles every
# module it imports again).
unexport PYTHONDONTWRITEBYTECODE

# uv installs the same packages in half of pip's time (a minute less of `make test` from a fresh clone), compiled to
# bytecode as pip does (every kernel and subprocess of the tests imports them); where it cannot be had or cannot
# install (offline, a private index only pip is configured for), pip does it all.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	($(PY) -m pip install --quiet uv && \
	  $(PY) -m uv pip install --quiet --compile-bytecode --python $(PY) -e '.[dev,labs,tune]') || \
	  ($(PY) -m pip install --quiet --upgrade pip && $(PY) -m pip install --quiet -e '.[dev,labs,tune]')
	touch $@

# The compiled engine (simulator/native.py): mypyc builds the engine's hot modules where a C compiler is at hand
# (about 20 s, again only when their source changed); without one, or with DSASIM_COMPILED=0, the Python engine runs.
native: $(STAMP)
	$(PY) -c 'import simulator.native; simulator.native.main()'

demo: $(STAMP) native
	$(VENV)/bin/dsasim run matmul --shape 256x256x256 --check

test: $(STAMP) native
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -q -n 2

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

fmt: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# The Jupyter labs: student notebooks in labs/build/student (docs/labs.md); `lab` opens them. Instructors:
# make labs SOLUTIONS=1 also writes labs/build/solution/ (never hand it out).
# Per-student variants (docs/instructors.md): make labs VARIANT_SEED=7, or make labs ROSTER=ids.txt.
labs: $(STAMP)
	$(PY) -m labs.notebooks $(if $(VARIANT_SEED),--variant-seed $(VARIANT_SEED)) $(if $(ROSTER),--roster $(ROSTER)) $(if $(SOLUTIONS),--solutions)

lab: labs
	$(VENV)/bin/jupyter lab labs/build/student $$([ "$$(id -u)" = 0 ] && echo --allow-root)

bench: $(STAMP) native
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .mypy_cache .hypothesis
