# The two commands a newcomer needs: `make start` and `make test`. Everything else is for developers.
SHELL := /bin/bash
.DEFAULT_GOAL := help

NODE_MODULES := node_modules/.package-lock.json

# One runtime: the Node.js the image ships (package.json's `node`, from npm's registry) runs every
# command here, whatever `node` the machine has; the first `npm ci` alone runs on the machine's.
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)
TEST_PG_URL = $(shell scripts/services/postgres.sh url)
BENCH_PG_URL = $(shell scripts/services/postgres.sh socket-url)
# The export section streams each export's records as a worker on another machine reads them:
# over TCP (docs/bench.md).
BENCH_PG_TCP_URL = $(shell scripts/services/postgres.sh url)

.PHONY: help install build console browser screenshots start api pipeline migrate replay search-reindex services services-stop kafka-cluster typecheck lint test test-full test-unit test-cluster bench clean

help:
	@echo "make start   install and run the admin API on the embedded default (PORT, default 3000)"
	@echo "make test    install, start the real services, type-check, lint, run every test"
	@echo "make test-unit   the unit tests alone, without any service, in seconds"
	@echo "make test-full   every test with the volume tests at full size, then the cluster tests at full scale"
	@echo "make api | pipeline | migrate | replay FROM=... | search-reindex | bench | test-cluster | screenshots | services | services-stop | typecheck | lint"
	@echo "npx userctl --help   the command-line client (import a file, export, status, replay)"

# Reinstall only when the lock file changed.
$(NODE_MODULES): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: $(NODE_MODULES)

# The long-running processes run compiled JavaScript: no transpiler in memory (the export worker's
# peak RSS goal), faster start.
build: install
	npm run --silent build

start: install console
	npx tsx api/main.ts --with-workers

# The web console's static files (dist/console), which the API serves at /console/.
console: install
	npx tsx scripts/build-console.ts

# The headless Chromium the console's browser tests drive (Debian's package).
browser:
	scripts/services/chromium.sh install

# The facade's V8 heap is capped: its live data is bounded (8 import bodies parsed at a time), and
# without a cap V8 lets the heap grow lazily under the garbage of 500 KB bodies.
API_HEAP_MB ?= 192

api: build
	node --enable-source-maps --max-old-space-size=$(API_HEAP_MB) dist/api/main.js

# The workers' heap is capped too: an export holds a few hundred records at a time, and without a
# cap V8 lets the heap grow with the garbage of the records it assembles. Its young generation is
# bounded as well (semi-spaces of PIPELINE_SEMI_SPACE_MB): that garbage dies young, and Node's
# default semi-spaces took more memory than the records in flight. How far the old generation grows
# between full collections the workers set themselves, by the imports they run
# (IMPORT_HEAP_GROWING_PERCENT).
# V8 allocates straight into the old generation the objects of a place in the code whose objects
# outlived young collections (allocation-site pretenuring): a young collection in the middle of a
# batch finds the whole batch alive, and from then on every record made there is old garbage that
# only a full collection frees. PIPELINE_V8_FLAGS turns that off.
# glibc serves the workers' allocations of 32 KiB and more (a socket read, a chunk of a file's
# text) from mappings of their own, which go back to the system when freed: from its main heap,
# which it seldom gives back, the worker's RSS grew through a long export though its use did not.
PIPELINE_HEAP_MB ?= 128
PIPELINE_SEMI_SPACE_MB ?= 8
PIPELINE_V8_FLAGS := --no-allocation-site-pretenuring
PIPELINE_GLIBC_TUNABLES := glibc.malloc.mmap_threshold=32768

pipeline: build
	GLIBC_TUNABLES=$(PIPELINE_GLIBC_TUNABLES) node --enable-source-maps --max-old-space-size=$(PIPELINE_HEAP_MB) --max-semi-space-size=$(PIPELINE_SEMI_SPACE_MB) \
	  $(PIPELINE_V8_FLAGS) dist/pipeline/main.js

migrate: install
	npx tsx pipeline/db/migrate-cli.ts

# Replays the import log as new import tasks: FROM (an RFC 3339 time or an offset), optional TO,
# PROJECT (whose imports; the configured project when absent), UPSERT=true to force updates,
# DRY_RUN=1 to list what would run. Same configuration as the service.
replay: install
	@test -n "$(FROM)" || { echo "make replay FROM=<RFC 3339 time | offset> [TO=...] [PROJECT=id] [UPSERT=true] [DRY_RUN=1]"; exit 2; }
	npx tsx cli/main.ts replay --from "$(FROM)" $(if $(TO),--to "$(TO)") $(if $(PROJECT),--project "$(PROJECT)") \
	  $(if $(filter true 1,$(UPSERT)),--upsert) $(if $(filter true 1,$(DRY_RUN)),--dry-run)

# Streams every user of a project (PROJECT, or the configured one) into a fresh ClickHouse search
# table that keeps every other project's rows, and swaps it in (CLICKHOUSE_URL set).
search-reindex: install
	npx tsx pipeline/search/reindex-cli.ts $(if $(PROJECT),--project "$(PROJECT)")

services: install
	scripts/services/disk-space.sh
	scripts/services/postgres.sh start
	scripts/services/postgres.sh standby
	scripts/services/kafka.sh start
	scripts/services/azurite.sh start
	scripts/services/clickhouse.sh start

# A three-broker Kafka cluster (KRaft, replication 3) beside the single broker, for the cluster test.
kafka-cluster: install
	scripts/services/kafka-cluster.sh start

services-stop:
	scripts/services/kafka-cluster.sh stop
	scripts/services/clickhouse.sh stop
	scripts/services/azurite.sh stop
	scripts/services/kafka.sh stop
	scripts/services/postgres.sh standby-stop
	scripts/services/postgres.sh stop

typecheck: install
	npx tsc --noEmit -p .
	npx tsc --noEmit -p console

lint: install
	npx biome check .

# The unit tests alone: pure functions and stages, no service needed.
test-unit: install
	npx mocha --no-config --node-option import=tsx --forbid-only --timeout 20000 'test/unit/**/*.test.ts'

# Every test under c8: it prints the coverage of api/, pipeline/, schemas/, records/ and cli/ and fails
# under the thresholds of .c8rc.json (lines, statements, branches and functions). The table per file goes to .coverage/coverage.txt, so that the output ends
# with the failing tests, if any, and the summary.
TEST_ENV = TEST_DATABASE_URL="$(TEST_PG_URL)" TEST_DATABASE_READ_URL="$$(scripts/services/postgres.sh standby-url)" \
	  TEST_KAFKA_BROKERS="$$(scripts/services/kafka.sh brokers)" \
	  TEST_KAFKA_CLUSTER_BROKERS="$$(scripts/services/kafka-cluster.sh brokers)" \
	  TEST_KAFKA_SASL_BROKERS="$$(scripts/services/kafka.sh sasl-brokers)" \
	  TEST_KAFKA_TLS_BROKERS="$$(scripts/services/kafka.sh tls-brokers)" \
	  TEST_KAFKA_TLS_CA="$$(scripts/services/kafka.sh tls-ca)" \
	  TEST_AZURE_STORAGE_CONNECTION_STRING="$$(scripts/services/azurite.sh connection-string)" \
	  TEST_CLICKHOUSE_URL="$$(scripts/services/clickhouse.sh url)" \
	  TEST_CHROMIUM="$$(scripts/services/chromium.sh path)"

test: install services kafka-cluster browser console typecheck lint
	$(TEST_ENV) npx c8 mocha

# Every test with the volume tests at the sizes a whole machine's worth of data needs
# (test/support/test-sizes.ts), and the cluster tests at their full scale.
test-full: install services kafka-cluster browser console typecheck lint
	$(TEST_ENV) TEST_SIZES=full npx c8 mocha
	$(MAKE) test-cluster

# The console's pictures in docs/console, taken again on purpose (the tests write theirs to .screenshots/).
screenshots: install services browser console
	$(TEST_ENV) SCREENSHOTS_DIR=docs/console npx mocha --no-config --node-option import=tsx \
	  --require test/support/hooks.ts --timeout 20000 test/integration/console/console.test.ts

# The many-machines simulation at full size (`make test` runs it small): three brokers, two APIs,
# workers that come and go, faults; it prints how soon work went on after each fault.
test-cluster: install services kafka-cluster
	$(TEST_ENV) CLUSTER_SCALE=full npx mocha --no-config --node-option import=tsx \
	  --require test/support/hooks.ts --timeout 20000 'test/cluster/**/*.test.ts'

# The bench measures the primary alone on this machine's cores: the standby's replay would take
# CPU from every section, and the three-broker cluster runs only around the section that uses it.
bench: build services
	scripts/bench/ensure-wrk.sh
	scripts/services/postgres.sh standby-stop
	BENCH_DATABASE_URL="$(BENCH_PG_URL)" BENCH_DATABASE_TCP_URL="$(BENCH_PG_TCP_URL)" \
	  BENCH_KAFKA_BROKERS="$$(scripts/services/kafka.sh brokers)" \
	  BENCH_KAFKA_CLUSTER_BROKERS="$$(scripts/services/kafka-cluster.sh brokers)" \
	  BENCH_AZURE_STORAGE_CONNECTION_STRING="$$(scripts/services/azurite.sh connection-string)" \
	  BENCH_CLICKHOUSE_URL="$$(scripts/services/clickhouse.sh url)" \
	  API_HEAP_MB=$(API_HEAP_MB) PIPELINE_HEAP_MB=$(PIPELINE_HEAP_MB) PIPELINE_SEMI_SPACE_MB=$(PIPELINE_SEMI_SPACE_MB) \
	  PIPELINE_V8_FLAGS="$(PIPELINE_V8_FLAGS)" \
	  PIPELINE_GLIBC_TUNABLES=$(PIPELINE_GLIBC_TUNABLES) \
	  npx tsx scripts/bench/run.ts

clean: services-stop
	rm -rf .services .bench .coverage dist
