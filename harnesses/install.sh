#!/usr/bin/env bash
# Install the pinned harness CLIs and ACP adapters into <repo>/.harnesses/ (gitignored).
#
# What it is: the body of `just harnesses`. `npm ci` installs exactly what
# harnesses/package-lock.json names and checks every tarball against the lock's
# sha512 integrity hash, so a mismatched or missing artefact fails here, before
# any lane uses it. Install scripts run only where package.json's `allowScripts`
# approves them (`--strict-allow-scripts` makes an unreviewed one an error).
#
# Idempotent: a stamp holding the sha256 of package.json + package-lock.json (and
# of this script) is written last; when it matches and every binary is present
# the run ends in well under a second. `--force` reinstalls; `--verify` re-runs
# every `--version` check against an existing install.
#
# What it is not: a version resolver. To move a pin, edit package.json, run
# `npm install --package-lock-only` in harnesses/, and commit both files.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
dest="$root/.harnesses"
bin="$dest/node_modules/.bin"

force=0
verify=0
for arg in "$@"; do
    case "$arg" in
        --force) force=1 ;;
        --verify) verify=1 ;;
        *)
            echo "harnesses/install.sh: unknown argument '$arg' (accepted: --force, --verify); run 'just harnesses' or 'harnesses/install.sh --force'" >&2
            exit 2
            ;;
    esac
done

for tool in npm node sha256sum; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "harnesses/install.sh: '$tool' not found on PATH; install Node.js 20+ (which ships npm) and coreutils, then re-run 'just harnesses'" >&2
        exit 2
    fi
done

stamp_now="$(cat "$here/package.json" "$here/package-lock.json" "$here/install.sh" | sha256sum | cut -d' ' -f1)"

# name | expected `--version` output (a fixed string, matched as a substring).
# grok 0.0.34 prints a hard-coded "1.0.1"; its pinned version is checked from
# its package.json below instead.
cli_checks=(
    "codex|codex-cli 0.171.0"
    "claude|2.1.332 (Claude Code)"
    "opencode|1.18.33"
    "pi|0.73.1"
    "grok|1.0.1"
)
# package | pinned version: read back from node_modules/<package>/package.json.
package_checks=(
    "@openai/codex|0.171.0"
    "@anthropic-ai/claude-code|2.1.332"
    "opencode-linux-x64|1.18.33"
    "@mariozechner/pi-coding-agent|0.73.1"
    "@vibe-kit/grok-cli|0.0.34"
    "@zed-industries/codex-acp|0.16.0"
    "@zed-industries/claude-code-acp|0.16.2"
    "pi-acp|0.0.24"
)
adapter_bins=(codex-acp claude-code-acp pi-acp)

all_present() {
    local entry name
    for entry in "${cli_checks[@]}"; do
        name="${entry%%|*}"
        [ -x "$bin/$name" ] || return 1
    done
    for name in "${adapter_bins[@]}"; do
        [ -x "$bin/$name" ] || return 1
    done
}

# The `--version` checks run in a throwaway HOME/XDG/TMPDIR inside .harnesses/:
# several CLIs create config, cache and state dirs (opencode: ~/.config/opencode,
# ~/.local/share/opencode, ...) or extract native libraries into TMPDIR on their
# first run, and installing must not touch the user's real HOME or /tmp.
verify_env() {
    local h="$dest/.verify-home"
    rm -rf "$h" && mkdir -p "$h/tmp"
    env HOME="$h" XDG_CONFIG_HOME="$h/.config" XDG_DATA_HOME="$h/.local/share" \
        XDG_CACHE_HOME="$h/.cache" XDG_STATE_HOME="$h/.local/state" TMPDIR="$h/tmp" "$@"
}

verify_install() {
    local entry name want got pkg
    for entry in "${package_checks[@]}"; do
        pkg="${entry%%|*}"
        want="${entry#*|}"
        got="$(node -p "require('$dest/node_modules/$pkg/package.json').version" 2>/dev/null || true)"
        if [ "$got" != "$want" ]; then
            echo "harnesses/install.sh: $pkg is '${got:-missing}', pinned $want; run 'harnesses/install.sh --force'" >&2
            return 1
        fi
    done
    for entry in "${cli_checks[@]}"; do
        name="${entry%%|*}"
        want="${entry#*|}"
        # </dev/null: some CLIs wait for stdin when it is not a terminal.
        got="$(verify_env timeout 60 "$bin/$name" --version </dev/null 2>&1 | head -n 3 || true)"
        if [[ "$got" != *"$want"* ]]; then
            echo "harnesses/install.sh: '$bin/$name --version' printed '${got}', expected '$want'; run 'harnesses/install.sh --force'" >&2
            return 1
        fi
        printf '  %-16s %s\n' "$name" "$(printf '%s' "$got" | head -n 1)"
    done
    rm -rf "$dest/.verify-home"
    for name in "${adapter_bins[@]}"; do
        [ -x "$bin/$name" ] || {
            echo "harnesses/install.sh: ACP adapter '$bin/$name' is missing; run 'harnesses/install.sh --force'" >&2
            return 1
        }
    done
}

if [ "$force" = 0 ] && [ -f "$dest/.stamp" ] && [ "$(cat "$dest/.stamp")" = "$stamp_now" ] && all_present; then
    if [ "$verify" = 1 ]; then
        verify_install
    fi
    echo "harnesses: up to date in $dest (lock sha256 ${stamp_now:0:12}); --force reinstalls"
    exit 0
fi

mkdir -p "$dest"
rm -f "$dest/.stamp"
cp "$here/package.json" "$here/package-lock.json" "$dest/"
start="$(date +%s)"
# npm ci, up to three attempts. Why: the registry is reached over a network that
# has dropped a fetch mid-install (CI, 2026-12-02: `npm ci` exited 1 printing only
# the path of its log). The lock's integrity hashes make a retry safe, since a
# tarball that arrives is the one the lock names or the install fails. Each
# failure prints the end of npm's own log, so the cause is on screen, not in a
# file the CI machine throws away.
attempt=1
while :; do
    log_dir="$dest/.npm-logs"
    rm -rf "$log_dir" && mkdir -p "$log_dir"
    # --strict-allow-scripts: an install script package.json's allowScripts does
    # not name is an error, not a silent run or skip.
    if (cd "$dest" && npm ci --no-audit --no-fund --strict-allow-scripts --loglevel=error \
        --fetch-retries=4 --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=30000 \
        --logs-dir="$log_dir"); then
        rm -rf "$log_dir"
        break
    fi
    echo "harnesses/install.sh: npm ci failed (attempt $attempt of 3); the end of npm's log:" >&2
    for f in "$log_dir"/*.log; do
        [ -f "$f" ] && grep -E ' (error|warn|http fetch)' "$f" | tail -n 25 >&2
    done
    if [ "$attempt" -ge 3 ]; then
        echo "harnesses/install.sh: npm ci failed 3 times; check that the npm registry is reachable (npm ping), then re-run 'just harnesses'" >&2
        exit 1
    fi
    attempt=$((attempt + 1))
    sleep $((attempt * 5))
done
# opencode: the package on the reachable registry is the platform binary itself
# (opencode-ai's launcher lists optional platform packages the registry does not
# hold, which makes a lock `npm ci` cannot accept). It declares no bin, so link
# the ELF the launcher would exec.
ln -sfn ../opencode-linux-x64/bin/opencode "$bin/opencode"
verify_install
end="$(date +%s)"
size="$(du -sh "$dest" | cut -f1)"
printf '%s\n' "$stamp_now" >"$dest/.stamp"
echo "harnesses: installed in $((end - start)) s, $size in $dest"
