#!/usr/bin/env bash
# Refuses to start the services when the disk under .services has less than DISK_FREE_MIN_GB
# (default 5) free: Postgres, Kafka and Azurite that fill a disk stop mid-run, and what follows
# (every later test failing at once) names anything but the disk.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
min_gb=${DISK_FREE_MIN_GB:-5}
mkdir -p "$root/.services"
free_kb=$(df -Pk "$root/.services" | awk 'NR == 2 { print $4 }')
if [ "$free_kb" -lt $((min_gb * 1024 * 1024)) ]; then
  echo "only $((free_kb / 1024)) MB free under $root/.services, less than DISK_FREE_MIN_GB=${min_gb} GB:" >&2
  echo "free some space (make services-stop, then make clean removes every service's data)" >&2
  exit 1
fi
