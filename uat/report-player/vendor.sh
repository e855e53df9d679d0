#!/usr/bin/env bash
# Copy the pinned asciinema-player bundle into vendor/ (committed), which
# `studyloop-uat report` embeds and writes into every report (no network when a
# report is built or opened).
#
# What it is: `npm ci` installs exactly what package-lock.json names and checks
# the tarball against the lock's sha512 integrity (a mismatch fails here); no
# install script runs. The two bundle files and their sha256 (vendor/SHA256SUMS,
# checked by a uat test) are then copied out. To move the pin: edit
# package.json, run `npm install --package-lock-only --ignore-scripts`, run this,
# commit all four files.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf -- "$work"' EXIT
cp "$here/package.json" "$here/package-lock.json" "$work/"
(cd "$work" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
dist="$work/node_modules/asciinema-player/dist/bundle"
mkdir -p "$here/vendor"
cp "$dist/asciinema-player.min.js" "$dist/asciinema-player.css" "$here/vendor/"
cp "$work/node_modules/asciinema-player/LICENSE" "$here/vendor/LICENSE" 2>/dev/null || true
(cd "$here/vendor" && sha256sum asciinema-player.min.js asciinema-player.css > SHA256SUMS)
echo "vendor.sh: asciinema-player $(node -p "require('$work/node_modules/asciinema-player/package.json').version") copied into $here/vendor"
