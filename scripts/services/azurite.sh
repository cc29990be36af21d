#!/usr/bin/env bash
# Starts (or stops) Azurite's blob service from the npm package (no Docker) on 127.0.0.1:10100,
# data in .services/azurite. `connection-string` prints the connection string of its well-known
# development account.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
dir="$root/.services/azurite"
port=10100
# Azurite's published development account (not a secret: it is the same in every Azurite).
account=devstoreaccount1
key='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

case "${1:-start}" in
  start)
    if listening; then echo "azurite already running on 127.0.0.1:$port"; exit 0; fi
    mkdir -p "$dir/data"
    # The newest @azure/storage-blob speaks an API version Azurite does not know yet.
    nohup "$root/node_modules/.bin/azurite-blob" --blobHost 127.0.0.1 --blobPort "$port" \
      --location "$dir/data" --skipApiVersionCheck --disableTelemetry --silent >"$dir/stdout.log" 2>&1 &
    echo $! >"$dir/pid"
    for _ in $(seq 1 60); do
      listening && { echo "azurite running on 127.0.0.1:$port"; exit 0; }
      kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
      sleep 0.5
    done
    tail -n 30 "$dir/stdout.log" >&2 || true
    echo "azurite did not start" >&2
    exit 1
    ;;
  stop)
    if [ -f "$dir/pid" ]; then
      pid=$(cat "$dir/pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      rm -f "$dir/pid"
    fi
    ;;
  connection-string)
    echo "DefaultEndpointsProtocol=http;AccountName=$account;AccountKey=$key;BlobEndpoint=http://127.0.0.1:$port/$account;"
    ;;
  *)
    echo "usage: $0 start|stop|connection-string" >&2
    exit 2
    ;;
esac
