#!/usr/bin/env bash
# A three-node Apache Kafka 3.9 cluster in KRaft mode, natively (the jars of kafka.sh): nodes 1, 2
# and 3 listen on 127.0.0.1:19192, 19292 and 19392 (controllers on 19193, 19293, 19393), with
# replication 3 and min.insync.replicas 2. Data and logs live in .services/kafka-cluster/<node>.
#   kafka-cluster.sh start|stop|brokers        the whole cluster
#   kafka-cluster.sh start-node|stop-node|kill-node N   one node (kill: SIGKILL)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/scripts/services/kafka-cluster"
base="$root/.services/kafka-cluster"
lib="$root/.services/kafka/lib"
nodes=(1 2 3)

# shellcheck source=background.sh
. "$root/scripts/services/background.sh"

port_of() { echo $((19092 + 100 * $1)); }
# kafka_java N CLASS ARGS...: runs a Kafka class for node N.
kafka_java() {
  local n=$1
  shift
  java -Xms128m -Xmx384m -Dkafka.logs.dir="$base/$n" \
    -Dlog4j.configuration="file:$root/scripts/services/kafka/log4j.properties" -cp "$lib/*" "$@"
}

start_node() {
  local n=$1 dir="$base/$1" port
  port=$(port_of "$n")
  if listening "$port"; then echo "kafka node $n already running on 127.0.0.1:$port"; return 0; fi
  mkdir -p "$dir/data"
  {
    cat "$here/node.properties"
    echo "node.id=$n"
    echo "listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$((port + 1))"
    echo "advertised.listeners=PLAINTEXT://127.0.0.1:$port"
    echo "log.dirs=$dir/data"
  } >"$dir/server.properties"
  if [ ! -f "$dir/data/meta.properties" ]; then
    kafka_java "$n" kafka.tools.StorageTool format --ignore-formatted -t "$(cat "$base/cluster-id")" \
      -c "$dir/server.properties" >"$dir/format.log"
  fi
  nohup java -Xms128m -Xmx384m -Dkafka.logs.dir="$dir" \
    -Dlog4j.configuration="file:$root/scripts/services/kafka/log4j.properties" -cp "$lib/*" \
    kafka.Kafka "$dir/server.properties" >"$dir/stdout.log" 2>&1 &
  echo $! >"$dir/pid"
}

case "${1:-start}" in
  start)
    "$root/scripts/services/kafka.sh" fetch-jars
    mkdir -p "$base"
    [ -f "$base/cluster-id" ] || kafka_java 1 kafka.tools.StorageTool random-uuid 2>/dev/null >"$base/cluster-id"
    for n in "${nodes[@]}"; do start_node "$n"; done
    # A node listens once its quorum has formed: wait for all three.
    for n in "${nodes[@]}"; do await_listening "kafka node $n" "$(port_of "$n")" "$base/$n" "$base/$n/stdout.log"; done
    ;;
  stop)
    # All at once: a node stopped after its quorum is gone waits for a controller that never comes.
    for n in "${nodes[@]}"; do stop_background "$base/$n" & done
    wait
    ;;
  start-node)
    start_node "$2"
    await_listening "kafka node $2" "$(port_of "$2")" "$base/$2" "$base/$2/stdout.log"
    ;;
  stop-node)
    stop_background "$base/$2"
    ;;
  kill-node)
    [ -f "$base/$2/pid" ] && kill -9 "$(cat "$base/$2/pid")" 2>/dev/null || true
    rm -f "$base/$2/pid"
    ;;
  brokers)
    echo "127.0.0.1:$(port_of 1),127.0.0.1:$(port_of 2),127.0.0.1:$(port_of 3)"
    ;;
  *)
    echo "usage: $0 start|stop|brokers|start-node N|stop-node N|kill-node N" >&2
    exit 2
    ;;
esac
