#!/usr/bin/env bash
# Times the compile steps of `just test`, the old way (`cargo clippy --all-targets`, then
# `cargo build --bins`, then nextest's build) against the new (one `.ci/cargo-lint test
# --all-targets --no-run` that lints while it compiles, then nextest's build, which
# must find nothing to do). A benchmark, never a test: it prints figures and judges
# nothing. `just bench build [SCENARIO]`; docs/notes/fast.md has the table.
#
# SCENARIO (default `workspace`):
#   workspace  every workspace crate cold (`cargo clean -p` of each), dependencies warm
#              in both modes: what the change does to the ~75k lines of our own code;
#   touch      one library file touched (product/studyloop/src/lib.rs): the edit loop;
#   cold       an empty target dir per mode (dependencies too), with the compiler cache
#              forced to recompile (SCCACHE_RECACHE), so nothing is reused.
#
# CPU seconds are the honest figure on a shared machine: cargo's own (time(1)) plus
# every compiler it ran. With RUSTC_WRAPPER=sccache the compilers are children of the
# sccache server, not of cargo, so this script runs a private server in the foreground
# (its own port and cache dir) and adds the CPU its reaped children used. Wall seconds
# are printed with the load average beside them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scenario="${1:-workspace}"
case "$scenario" in workspace|touch|cold) ;; *)
    echo "build-steps: SCENARIO must be workspace, touch or cold, not \`$scenario\`" >&2; exit 2;;
esac
cargo="${CARGO_LINT_CARGO:-cargo}"
export CARGO_LINT_CARGO="$cargo"
base="${CARGO_TARGET_DIR:-$PWD/target}"
tmp="$(mktemp -d)"
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf -- "$tmp"
}
trap cleanup EXIT

if [ "${RUSTC_WRAPPER:-}" = sccache ] || [ "$cargo" = cargo-slot ]; then
    export SCCACHE_SERVER_PORT=$((20000 + RANDOM % 20000))
    export SCCACHE_DIR="$tmp/sccache" SCCACHE_IDLE_TIMEOUT=0
    SCCACHE_START_SERVER=1 SCCACHE_NO_DAEMON=1 sccache >"$tmp/server.log" 2>&1 &
    server=$!
    for _ in $(seq 50); do sccache --show-stats >/dev/null 2>&1 && break; sleep 0.2; done
fi
if [ "$scenario" = cold ]; then export SCCACHE_RECACHE=1; fi

# CPU seconds of the sccache server's reaped children (utime+stime+cutime+cstime).
server_cpu() {
    if [ -z "$server" ]; then echo 0; return; fi
    awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13 + $14 + $15) / hz }' "/proc/$server/stat"
}

members=()
while IFS= read -r name; do members+=(-p "$name"); done < <(
    cargo metadata --no-deps --format-version 1 |
        python3 -c 'import json,sys; [print(p["name"]) for p in json.load(sys.stdin)["packages"]]')

# step NAME CARGO-ARGS...: one cargo command, timed.
step() {
    local name="$1"; shift
    local load c0 s0 s1
    load="$(cut -d' ' -f1-3 /proc/loadavg)"
    s0="$(server_cpu)"
    /usr/bin/time -f '%e %U %S' -o "$tmp/time" "$@" >"$tmp/out" 2>&1 || {
        echo "build-steps: $name failed:" >&2; tail -30 "$tmp/out" >&2; exit 1; }
    s1="$(server_cpu)"
    read -r wall user sys <"$tmp/time"
    c0="$(grep -cE '^ *(Compiling|Checking) ' "$tmp/out" || true)"
    awk -v n="$name" -v w="$wall" -v u="$user" -v s="$sys" -v a="$s0" -v b="$s1" -v l="$load" -v c="$c0" \
        'BEGIN { printf "| %-34s | %8.1f | %8.1f | %5d | %s |\n", n, u + s + b - a, w, c, l }'
}

# A command outside the measurement: the usual sccache server, output dropped.
unmeasured() {
    env -u SCCACHE_SERVER_PORT -u SCCACHE_DIR -u SCCACHE_RECACHE "$@" >/dev/null 2>&1 || true
}

prepare() {
    local target="$1"
    case "$scenario" in
        workspace) "$cargo" clean -q --target-dir "$target" "${members[@]}" ;;
        touch) touch product/studyloop/src/lib.rs ;;
        cold) rm -rf -- "$target" ;;
    esac
}

echo "build-steps: scenario $scenario, $(nproc) cores, $(date -u +%FT%TZ)"
echo "| step | CPU s | wall s | units compiled or checked | load average (1, 5, 15 min) at the start |"
echo "|---|---|---|---|---|"
for mode in old new; do
    target="$base"
    if [ "$scenario" = cold ]; then target="$base/bench-$mode"; fi
    export CARGO_TARGET_DIR="$target"
    # Both modes' artifacts exist before the measured run (dependencies warm in check
    # and build mode), so the scenario's preparation alone decides what is compiled.
    # Warmed through the machine's usual compiler cache, not the private one.
    if [ "$scenario" != cold ]; then
        if [ "$mode" = old ]; then
            unmeasured "$cargo" clippy -q --workspace --all-targets -- -D warnings
            unmeasured "$cargo" nextest run --workspace --no-run
        else
            unmeasured .ci/cargo-lint test -q --workspace --all-targets --no-run
        fi
    fi
    prepare "$target"
    if [ "$mode" = old ]; then
        step "old: cargo clippy --all-targets" "$cargo" clippy --workspace --all-targets -- -D warnings
        step "old: cargo build --bins" "$cargo" build --workspace --bins
        step "old: nextest build" "$cargo" nextest run --workspace --no-run
    else
        step "new: cargo-lint test --all-targets" .ci/cargo-lint test --workspace --all-targets --no-run
        step "new: nextest build" .ci/cargo-lint nextest run --workspace --no-run
    fi
done
