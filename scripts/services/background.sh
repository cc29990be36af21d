# Helpers for the service scripts that run a server in the background with a pid file in its
# folder. Source it; it defines functions only.

# Whether something accepts TCP connections on 127.0.0.1:$1.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# await_listening NAME PORT DIR LOG...: waits up to 60 s for the server of DIR/pid to listen on
# PORT; on failure shows the logs and exits 1.
await_listening() {
  local name=$1 port=$2 dir=$3
  shift 3
  for _ in $(seq 1 120); do
    listening "$port" && { echo "$name running on 127.0.0.1:$port"; return 0; }
    kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
    sleep 0.5
  done
  tail -n 30 "$@" >&2 || true
  echo "$name did not start" >&2
  exit 1
}

# stop_background DIR: stops the server of DIR/pid: SIGTERM, up to 30 s to exit, then SIGKILL. It
# returns once the process is gone, so that its port is free for the next start.
stop_background() {
  local dir=$1
  [ -f "$dir/pid" ] || return 0
  local pid
  pid=$(cat "$dir/pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "$dir: no exit 30 s after SIGTERM; SIGKILL" >&2
    kill -9 "$pid" 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  fi
  rm -f "$dir/pid"
}
