#!/usr/bin/env bash
# Starts (or stops) a real Apache Kafka 3.9 broker natively, without Docker: the broker jars come
# from Maven Central (kafka/pom.xml), the storage is formatted for KRaft once, and the broker
# listens on 127.0.0.1:19092 (with SASL PLAIN on 19094, TLS on 19095). Data and logs live in
# .services/kafka.
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

# The SSL listener's certificate, for 127.0.0.1 and localhost, from a CA of its own (tls/ca.crt, the
# file the TLS tests trust); the keystore is the key (PKCS#8) followed by the certificate.
make_tls() {
  local tls="$dir/tls"
  [ -f "$tls/broker.pem" ] && return
  mkdir -p "$tls"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=users-service test CA" \
    -keyout "$tls/ca.key" -out "$tls/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$tls/broker.key" -out "$tls/broker.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$tls/san.ext"
  openssl x509 -req -in "$tls/broker.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial -days 3650 \
    -extfile "$tls/san.ext" -out "$tls/broker.crt" 2>/dev/null
  openssl pkcs8 -topk8 -nocrypt -in "$tls/broker.key" -out "$tls/broker.pk8"
  cat "$tls/broker.pk8" "$tls/broker.crt" >"$tls/broker.pem"
}

# shellcheck source=background.sh
. "$root/scripts/services/background.sh"

case "${1:-start}" in
  start)
    if listening "$port"; then echo "kafka already running on 127.0.0.1:$port"; exit 0; fi
    fetch_jars
    mkdir -p "$dir/data"
    make_tls
    {
      cat "$here/server.properties"
      echo "log.dirs=$dir/data"
      echo "ssl.keystore.location=$dir/tls/broker.pem"
    } >"$dir/server.properties"
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
  tls-brokers)
    echo "127.0.0.1:$((port + 3))"
    ;;
  tls-ca)
    echo "$dir/tls/ca.crt"
    ;;
  fetch-jars)
    fetch_jars
    ;;
  *)
    echo "usage: $0 start|stop|brokers|sasl-brokers|tls-brokers|tls-ca|fetch-jars" >&2
    exit 2
    ;;
esac
