#!/usr/bin/env bash
# Starts (or stops) a ClickHouse server natively, without Docker: the server comes from Debian's
# packages (clickhouse-server, 18.16), installed on first use; it listens on 127.0.0.1:18123 (HTTP)
# with data and logs in .services/clickhouse. `url` prints the HTTP URL the service and tests use.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/scripts/services/clickhouse"
dir="$root/.services/clickhouse"
port=18123

install_server() {
  command -v clickhouse-server >/dev/null && return
  if [ "$(id -u)" -ne 0 ]; then
    echo "clickhouse-server is missing: sudo apt-get install clickhouse-server" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clickhouse-server >/dev/null
}

# shellcheck source=background.sh
. "$root/scripts/services/background.sh"

case "${1:-start}" in
  start)
    if listening "$port"; then echo "clickhouse already running on 127.0.0.1:$port"; exit 0; fi
    install_server
    mkdir -p "$dir/data/tmp" "$dir/data/user_files" "$dir/log"
    # The checked-in configuration with this checkout's paths added at the end of <yandex>.
    sed "s|</yandex>|  <path>$dir/data/</path>\n  <tmp_path>$dir/data/tmp/</tmp_path>\n  <user_files_path>$dir/data/user_files/</user_files_path>\n  <logger><level>warning</level><log>$dir/log/server.log</log><errorlog>$dir/log/error.log</errorlog></logger>\n</yandex>|" \
      "$here/config.xml" >"$dir/config.xml"
    cp "$here/users.xml" "$dir/users.xml"
    if [ "$(id -u)" -eq 0 ] && id clickhouse >/dev/null 2>&1; then chown -R clickhouse: "$dir"; fi
    run=(clickhouse-server --config-file="$dir/config.xml")
    if [ "$(id -u)" -eq 0 ] && id clickhouse >/dev/null 2>&1; then
      run=(runuser -u clickhouse -- "${run[@]}")
    fi
    nohup "${run[@]}" >"$dir/stdout.log" 2>&1 &
    echo $! >"$dir/pid"
    await_listening clickhouse "$port" "$dir" "$dir/stdout.log" "$dir/log/error.log"
    ;;
  stop)
    stop_background "$dir"
    ;;
  url)
    echo "http://127.0.0.1:$port"
    ;;
  *)
    echo "usage: $0 start|stop|url" >&2
    exit 2
    ;;
esac
