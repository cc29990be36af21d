#!/usr/bin/env bash
# Installs the headless browser the console's tests drive: Debian's chromium package, on first
# use. `path` prints the browser's executable.
set -euo pipefail

find_browser() {
  command -v chromium || command -v chromium-browser || true
}

case "${1:-install}" in
  install)
    [ -n "$(find_browser)" ] && exit 0
    if [ "$(id -u)" -ne 0 ]; then
      echo "chromium is missing: sudo apt-get install chromium" >&2
      exit 1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    ;;
  path)
    browser=$(find_browser)
    [ -n "$browser" ] || { echo "chromium is not installed: scripts/services/chromium.sh install" >&2; exit 1; }
    echo "$browser"
    ;;
  *)
    echo "usage: $0 install|path" >&2
    exit 2
    ;;
esac
