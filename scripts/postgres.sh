#!/usr/bin/env bash
# Makes sure a PostgreSQL server answers at the test DSN's address (127.0.0.1:5432, trust
# auth, database `test`), for `.ci/run` and for a contributor without a server of their own.
#
# - A server already answering there is left alone (only a missing `test` database is
#   created in it).
# - Otherwise the server binaries are taken from Debian's `postgresql` package, installed
#   when missing (as root, `apt-get update` first), and a cluster of the project's own is
#   created in $QCTL_PG_DATA and started. No system cluster's configuration is touched.
# - Autovacuum stays on, as a deployment has it; a benchmark that needs it off says so and
#   turns it off itself.
#
# Environment: QCTL_PG_PORT (5432), QCTL_PG_DATA (/var/lib/postgresql/qctl-test as root,
# ~/.cache/qctl/postgres otherwise).
set -euo pipefail

port=${QCTL_PG_PORT:-5432}
host=127.0.0.1
say() { printf 'postgres.sh: %s\n' "$*" >&2; }

answers() {
  command -v pg_isready >/dev/null && pg_isready -q -h "$host" -p "$port" -t 2
}

# The newest installed server's bin directory (Debian keeps each major under its number).
server_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$dir" ] && [ -x "$dir/initdb" ] && printf '%s' "$dir"
}

ensure_test_db() {
  local as=()
  [ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1 && as=(runuser -u postgres --)
  if ! "${as[@]}" psql -h "$host" -p "$port" -U postgres -d test -Atqc 'SELECT 1' >/dev/null 2>&1; then
    "${as[@]}" createdb -h "$host" -p "$port" -U postgres test
    say "created database test"
  fi
}

if answers; then
  ensure_test_db
  say "a server already answers on $host:$port"
  exit 0
fi

bin=$(server_bin || true)
if [ -z "$bin" ]; then
  if [ "$(id -u)" != 0 ]; then
    say "no PostgreSQL server binaries; install Debian's postgresql package (as root) or point QCTL_TEST_PG_DSN at a server"
    exit 1
  fi
  say "installing Debian's postgresql package"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q postgresql >/dev/null
  bin=$(server_bin)
  # The package creates its own `main` cluster (password auth) and may start it on our
  # port; nothing answered before the install, so that one is ours to stop.
  if answers && command -v pg_lsclusters >/dev/null; then
    pg_lsclusters -h | awk -v p="$port" '$3 == p && $4 == "online" {print $1, $2}' |
      while read -r ver name; do pg_ctlcluster "$ver" "$name" stop; done
  fi
fi

if [ "$(id -u)" = 0 ]; then
  data=${QCTL_PG_DATA:-/var/lib/postgresql/qctl-test}
  as=(runuser -u postgres --)  # initdb and the server refuse to run as root
  install -d -o postgres -g postgres "$(dirname "$data")"
else
  data=${QCTL_PG_DATA:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl/postgres}
  as=()
  mkdir -p "$(dirname "$data")"
fi

if [ ! -s "$data/PG_VERSION" ]; then
  say "creating a cluster in $data"
  "${as[@]}" "$bin/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
fi

# The socket goes beside the data, so that no system directory (or its owner) is needed.
"${as[@]}" "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 \
  -o "-c listen_addresses=$host -p $port -c unix_socket_directories=$data -c max_connections=300" \
  start >/dev/null || { tail -n 20 "$data/server.log" >&2; exit 1; }
say "started $("$bin/postgres" --version) on $host:$port (data $data)"
ensure_test_db
