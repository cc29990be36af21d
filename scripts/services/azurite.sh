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

# shellcheck source=background.sh
. "$root/scripts/services/background.sh"

case "${1:-start}" in
  start)
    if listening "$port"; then echo "azurite already running on 127.0.0.1:$port"; exit 0; fi
    mkdir -p "$dir/data"
    # The newest @azure/storage-blob speaks an API version Azurite does not know yet. The store
    # stands in for a remote service but shares this machine's cores with the service: V8 counts
    # its request bodies' memory in its heap's limits rather than collecting the whole heap each
    # time they pass a fixed amount (docs/bench.md).
    nohup "$root/node_modules/.bin/node" --external-memory-accounted-in-global-limit \
      "$root/node_modules/.bin/azurite-blob" --blobHost 127.0.0.1 --blobPort "$port" \
      --location "$dir/data" --skipApiVersionCheck --disableTelemetry --silent >"$dir/stdout.log" 2>&1 &
    echo $! >"$dir/pid"
    await_listening azurite "$port" "$dir" "$dir/stdout.log"
    ;;
  stop)
    stop_background "$dir"
    ;;
  connection-string)
    echo "DefaultEndpointsProtocol=http;AccountName=$account;AccountKey=$key;BlobEndpoint=http://127.0.0.1:$port/$account;"
    ;;
  *)
    echo "usage: $0 start|stop|connection-string" >&2
    exit 2
    ;;
esac
