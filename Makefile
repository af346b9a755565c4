# Set-up and checks. `make serve` and `make test` work on a fresh Debian machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

WEB_STAMP := web/node_modules/.installed-stamp

# Every Python process of the checks (each test worker, each command a test starts) reads
# the project's compiled modules rather than compiling every source file again; an
# environment that turns the cache off costs the suite minutes.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install chromium test-tools web web-test serve test lint bench clean screenshots

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

chromium: install
	$(BIN)/python -m server.host.chromium --ensure

# What the tests start besides the host's Chromium: the upstream proxies of the proxy
# tests (HTTP and SOCKS5), bubblewrap, the sandbox of stdio MCP servers, and Chromium's
# headless shell, which the address guard's
# tests run beside the full browser; as root with apt, Debian's packages are installed
# when missing.
test-tools:
	@missing=""; for need in tinyproxy microsocks chromium-headless-shell pg_dump:postgresql-client bwrap:bubblewrap; do \
	  tool=$${need%%:*}; package=$${need#*:}; \
	  command -v $$tool >/dev/null || missing="$$missing $$package"; done; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; fi

$(WEB_STAMP): web/package.json web/package-lock.json
	cd web && npm ci --no-audit --no-fund
	touch $(WEB_STAMP)

web: $(WEB_STAMP)
	cd web && npm run build

web-test: $(WEB_STAMP)
	cd web && npm run typecheck && npm test

serve: install chromium web
	$(BIN)/crewhost admin migrate
	$(BIN)/crewhost serve

lint: install $(WEB_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	cd web && npx tsc -p ../server/host/page/js/tsconfig.json

# What the suite needs is built first, side by side (pip's install and the web client's
# install and build take a core each: 42 s one after the other in a fresh clone); the
# checks that start no server (lint, the web client's tests) then run beside the suite,
# which waits on browsers and servers for a quarter of its time, and print after it.
# Either failing fails the target; the suite's failed tests are named last of all, so
# that a log cut to its last lines still says which.
CHECKS_LOG := test-output/checks.log
SUITE_REPORT := test-output/junit.xml
# The suite's temporary files (each test's folder, with its database and browser profiles,
# and what Chromium and the rest write to TMPDIR) are kept in memory where the machine has
# /dev/shm: on a disk mounted with discard, the kernel's work of making and deleting them
# was 7% of the CPU of the browser and route modules. Each run starts them anew; a run that
# passed removes them, a failed one leaves them for a look.
SUITE_TEMP := $(if $(wildcard /dev/shm),/dev/shm/crewhost-suite-$(shell printf %s "$(CURDIR)" | cksum | cut -d" " -f1),$(CURDIR)/test-output/temp)

test:
	@$(MAKE) --no-print-directory -j4 --output-sync=target install web chromium test-tools
	@mkdir -p $(dir $(CHECKS_LOG))
	@rm -rf $(SUITE_TEMP) && mkdir -p $(SUITE_TEMP)/tmp
	@$(MAKE) --no-print-directory -j2 --output-sync=target lint web-test > $(CHECKS_LOG) 2>&1 & \
	checks=$$!; \
	TMPDIR=$(SUITE_TEMP)/tmp $(BIN)/pytest -n 4 --dist loadfile --durations=25 \
	  --basetemp=$(SUITE_TEMP)/tests --junitxml=$(SUITE_REPORT); suite=$$?; \
	if [ $$suite -eq 0 ]; then rm -rf $(SUITE_TEMP); fi; \
	wait $$checks; checked=$$?; \
	cat $(CHECKS_LOG); \
	if [ $$checked -ne 0 ]; then echo "make test: the checks failed (above)"; fi; \
	if [ $$suite -ne 0 ]; then $(BIN)/python -m tests.support.junit_failures $(SUITE_REPORT); fi; \
	[ $$suite -eq 0 ] && [ $$checked -eq 0 ]

# The reference images of the screenshot tests, written anew from the current web client
# (after a deliberate change of layout; review them with git diff before committing).
screenshots: install web chromium
	CREWHOST_UPDATE_SCREENSHOTS=1 $(BIN)/pytest tests/e2e/test_screenshots.py -q

bench: install
	$(BIN)/python bench/hub_http.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache web/node_modules server/hub/http/web_dist
