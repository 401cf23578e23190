#!/usr/bin/env bash
# Builds the test partners before the tests run, so that a first build never counts
# against a test's own limit (HARNESS_TIMEOUT seconds each). One line on stderr if one
# fails; the build's output is kept in a log it names.
#
# - The Go harness: every program of tests/go/cmd/* into tests/go/bin (the compiler's
#   output in tests/go/bin/build.log). Without Go it skips, unless QCTL_REQUIRE_GO=1 (CI).
# - River's clients of the River demo, tests/go/bin/riverdemo (built as the demo's:
#   qctl/systems/river/riverclients.py), reused while it matches.
# - oban-py's own environment for the oban-py partner, tests/oban/.venv-obanpy (a Python
#   3.12+ venv with oban from PyPI, built as the demo's: qctl/systems/oban/obanpy.py),
#   reused while it matches.
#   Without a Python 3.12 it skips, unless QCTL_REQUIRE_OBAN=1 (CI).
set -uo pipefail
cd "$(dirname "$0")/.."
limit="${HARNESS_TIMEOUT:-1800}"

build_go() {
  if ! command -v go >/dev/null; then
    if [ "${QCTL_REQUIRE_GO:-}" = 1 ]; then
      echo "harness: QCTL_REQUIRE_GO=1 but no \`go\` on PATH" >&2
      return 1
    fi
    return 0
  fi
  cd tests/go || return 1
  mkdir -p bin
  for dir in cmd/*/; do
    program="$(basename "$dir")"
    timeout "$limit" go build -buildvcs=false -o "bin/$program" "./cmd/$program" >bin/build.log 2>&1
    code=$?
    if [ "$code" = 124 ]; then
      echo "harness: go build ./cmd/$program took over ${limit}s (HARNESS_TIMEOUT); see tests/go/bin/build.log" >&2
      return 1
    elif [ "$code" != 0 ]; then
      echo "harness: go build ./cmd/$program failed (exit $code); see tests/go/bin/build.log" >&2
      return 1
    fi
  done
}

( build_go ) || exit 1
python3 -m tests.river.riverdemo_env || exit 1
HARNESS_TIMEOUT="$limit" python3 -m tests.oban.obanpy_env
