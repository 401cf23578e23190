#!/usr/bin/env bash
# Builds every program of the Go harness (tests/go/cmd/*) into tests/go/bin before the
# tests run, so that a first build (which compiles the Go systems' modules: minutes on a
# loaded machine) never counts against a test's own limit. One line on stderr if it fails;
# the compiler's output is kept in tests/go/bin/build.log.
# Without Go the tests that need the harness skip, unless QCTL_REQUIRE_GO=1 (CI).
set -uo pipefail
cd "$(dirname "$0")/../tests/go"
limit="${HARNESS_TIMEOUT:-1800}"
if ! command -v go >/dev/null; then
  if [ "${QCTL_REQUIRE_GO:-}" = 1 ]; then
    echo "harness: QCTL_REQUIRE_GO=1 but no \`go\` on PATH" >&2
    exit 1
  fi
  exit 0
fi
mkdir -p bin
for dir in cmd/*/; do
  program="$(basename "$dir")"
  timeout "$limit" go build -buildvcs=false -o "bin/$program" "./cmd/$program" >bin/build.log 2>&1
  code=$?
  if [ "$code" = 124 ]; then
    echo "harness: go build ./cmd/$program took over ${limit}s (HARNESS_TIMEOUT); see tests/go/bin/build.log" >&2
    exit 1
  elif [ "$code" != 0 ]; then
    echo "harness: go build ./cmd/$program failed (exit $code); see tests/go/bin/build.log" >&2
    exit 1
  fi
done
