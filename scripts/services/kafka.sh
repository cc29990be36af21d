#!/usr/bin/env bash
# Starts (or stops) a real Apache Kafka 3.9 broker natively, without Docker: the broker jars come
# from Maven Central (kafka/pom.xml), the storage is formatted for KRaft once, and the broker
# listens on 127.0.0.1:19092 (and with SASL PLAIN on 19094). Data and logs live in .services/kafka.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/scripts/services/kafka"
dir="$root/.services/kafka"
lib="$dir/lib"
port=19092

fetch_jars() {
  [ -f "$lib/.complete" ] && return
  command -v mvn >/dev/null || { echo "Maven is needed to fetch the Kafka broker (apt-get install maven)" >&2; exit 1; }
  mkdir -p "$lib"
  mvn -q -B -Dstyle.color=never -f "$here/pom.xml" dependency:copy-dependencies -DoutputDirectory="$lib" -DincludeScope=runtime
  touch "$lib/.complete"
}

# shellcheck source=background.sh
. "$root/scripts/services/background.sh"

case "${1:-start}" in
  start)
    if listening "$port"; then echo "kafka already running on 127.0.0.1:$port"; exit 0; fi
    fetch_jars
    mkdir -p "$dir/data"
    { cat "$here/server.properties"; echo "log.dirs=$dir/data"; } >"$dir/server.properties"
    java=(java -Xms256m -Xmx512m -Dkafka.logs.dir="$dir" -Dlog4j.configuration="file:$here/log4j.properties" -cp "$lib/*")
    if [ ! -f "$dir/data/meta.properties" ]; then
      "${java[@]}" kafka.tools.StorageTool format --ignore-formatted \
        -t "$("${java[@]}" kafka.tools.StorageTool random-uuid)" -c "$dir/server.properties" >"$dir/format.log"
    fi
    nohup "${java[@]}" kafka.Kafka "$dir/server.properties" >"$dir/stdout.log" 2>&1 &
    echo $! >"$dir/pid"
    await_listening kafka "$port" "$dir" "$dir/stdout.log" "$dir/server.log"
    ;;
  stop)
    stop_background "$dir"
    ;;
  brokers)
    echo "127.0.0.1:$port"
    ;;
  sasl-brokers)
    echo "127.0.0.1:$((port + 2))"
    ;;
  fetch-jars)
    fetch_jars
    ;;
  *)
    echo "usage: $0 start|stop|brokers|sasl-brokers|fetch-jars" >&2
    exit 2
    ;;
esac
