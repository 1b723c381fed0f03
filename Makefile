# Two commands that work on a fresh machine:
#   make dashboard   installs what is missing, then opens the dashboard on cached_runs/
#   make test        installs what is missing, then runs the whole test suite
VENV   ?= .venv
PYTHON := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# llama.cpp for the local model, built portable: a native build on this kind of machine
# enables Intel AMX, which the CPU advertises but the VM does not allow (crash on the
# first token). --no-cache-dir keeps pip from reusing a native wheel built earlier.
LLAMA_CPP_VERSION := 0.3.36
LLAMA_CMAKE_ARGS  := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF

.PHONY: install dashboard test test-fast bench browser cached-runs cached-runs-paper-b cached-runs-paper-b-benchmarks pilot-report

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	# torch first, pinned: the CPU build that lies on this machine's disk
	$(PYTHON) -m pip install --quiet torch==2.13.0
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PYTHON) -m pip install --quiet --no-cache-dir llama-cpp-python==$(LLAMA_CPP_VERSION)
	$(PYTHON) -m pip install --quiet -e '.[dev]'
	# UMAP's numba code compiled once into the machine's cache (engine.maps.compiled_cache)
	$(PYTHON) -m engine.maps.warm_up
	touch $(STAMP)

install: $(STAMP)

# Debian's chromium (plotly static export through kaleido, the Playwright browser tests) and
# texlive-latex-base (pdflatex, which the test of the LaTeX export compiles with)
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  (apt-get update -qq && apt-get install -y -qq chromium) || \
	  echo "warning: could not install chromium; PNG/SVG export and browser tests will be skipped"; }
	@command -v pdflatex >/dev/null 2>&1 || { \
	  (apt-get update -qq && apt-get install -y -qq --no-install-recommends texlive-latex-base) || \
	  echo "warning: could not install pdflatex; the LaTeX export's compile test will be skipped"; }

dashboard: install browser
	$(VENV)/bin/streamlit run dashboard/app.py

# The whole suite as two pytest processes side by side: the browser tier (Chromium waiting on
# served dashboards, which leaves a core idle most of the time) beside every other test. Each
# prints its own report (the browser tier's after the other's); make fails if either fails.
# `.venv/bin/python -m pytest` runs the same tests one after the other.
test: install browser
	@mkdir -p test-artifacts
	@$(PYTHON) -m pytest -m browser -p no:cacheprovider --durations=10 > test-artifacts/browser-tier.log 2>&1 & browser=$$!; \
	$(PYTHON) -m pytest -m "not browser" -p no:cacheprovider --durations=10; rest=$$?; \
	wait $$browser; browser_rc=$$?; \
	echo "== the browser tier (tests/browser), run beside the rest: test-artifacts/browser-tier.log =="; \
	cat test-artifacts/browser-tier.log; \
	echo "== every test but the browser tier: exit $$rest; the browser tier: exit $$browser_rc =="; \
	test $$rest -eq 0 && test $$browser_rc -eq 0

# the developer's tier: no real model, no browser, no fault injection (its time: docs/reference/benchmarks.md)
test-fast: install
	$(PYTHON) -m pytest -m "not slow and not robustness"

bench: install
	$(PYTHON) -m benchmarks --skip embed_cache scale

# Regenerate cached_runs/: the paper-release dataset, then real sessions on the local
# model (resumable: re-running skips finished sessions), then embeddings + features.
cached-runs: install
	$(PYTHON) -m engine dataset release
	$(PYTHON) -m engine run --grid cached_runs/grids/local_smollm2.yaml --out runs/local_smollm2
	$(PYTHON) -m engine dataset build runs/local_smollm2 --out cached_runs/local_smollm2

# Paper B's ablation grid on the local model (about 40 minutes on a shared 2-core machine),
# judged by the same model (rubric per round, pairwise win rates), into its own dataset.
cached-runs-paper-b: install
	nice -n 10 $(PYTHON) -m engine run --grid cached_runs/grids/local_smollm2_paper_b.yaml --out runs/local_smollm2_paper_b
	nice -n 10 $(PYTHON) -m engine judge quality runs/local_smollm2_paper_b --per-round --per-round-limit 3 --retries 1 --concurrency 1
	nice -n 10 $(PYTHON) -m engine judge pairwise runs/local_smollm2_paper_b --max-per-pair 3 --retries 1 --concurrency 1
	$(PYTHON) -m engine dataset build runs/local_smollm2_paper_b --kind paper-b --out cached_runs/local_smollm2_paper_b

# Paper B's comparison (Direct, Homo MAD, Creative-MAD) on the shipped MacGyver and Arena-Hard v2.0
# creative-writing items, judged with each benchmark's rubric (resumable; about an hour on a shared CPU)
cached-runs-paper-b-benchmarks: install
	nice -n 10 $(PYTHON) -m engine run --grid cached_runs/grids/local_smollm2_paper_b_benchmarks.yaml --out runs/local_smollm2_paper_b_benchmarks --no-progress
	nice -n 10 $(PYTHON) -m engine judge quality runs/local_smollm2_paper_b_benchmarks --samples 3 --per-round --per-round-limit 1 --retries 1 --concurrency 1
	$(PYTHON) -m engine dataset build runs/local_smollm2_paper_b_benchmarks --kind paper-b-benchmarks --out cached_runs/local_smollm2_paper_b_benchmarks

# The cached pilot report (docs/tutorial.md, "a pilot that checks its advice"): prescribe and verify on
# the local model with the small budget (resumable), its report.json and report.html kept.
pilot-report: install
	nice -n 10 $(PYTHON) -m engine pilot --model local --budget small --out runs/pilot_local_small --no-progress
	mkdir -p cached_runs/pilot_reports/local_smollm2_small
	cp runs/pilot_local_small/report.json runs/pilot_local_small/report.html cached_runs/pilot_reports/local_smollm2_small/
