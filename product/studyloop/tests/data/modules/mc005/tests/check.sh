#!/bin/sh
# The module's own offline test: the check script must print ready.
set -eu
[ "$("$(dirname "$0")/../scripts/check.sh")" = ready ]
