#!/usr/bin/env bash
# The bench drives HTTP with wrk (Debian package): install it when missing.
set -euo pipefail
command -v wrk >/dev/null && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "wrk is missing: install it (apt-get install wrk) and run make bench again" >&2
  exit 1
fi
apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
