# Sourced by tools/bench/http and tools/bench/routes: builds the server and the bench tool,
# bulk-loads the generated world into a fresh store with session tokens for a sample of users,
# and serves it on a free loopback port with the per-user rate limits and the report window
# lifted. After `bench_world USERS CONFIGURATION`: $bin, $work (a temporary directory, removed at
# exit with the server stopped), $port, $server (its PID), COASTERLIFE_TOKENS and COASTERLIFE_WRK
# (for the wrk scripts), and `bench_refresh`: one fresh fix for every sampled user (refresh.py,
# which says why), run before each round and not measured.

bench_world() {
  local users=$1 configuration=$2
  tools/setup
  command -v wrk >/dev/null 2>&1 || { [[ $(id -u) -eq 0 ]] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk >/dev/null; }
  swift build -c "$configuration" --product coasterlife 2>&1 | { grep -E "error" >&2 || true; }
  swift build -c "$configuration" --product coasterbench 2>&1 | { grep -E "error" >&2 || true; }
  bin=.build/$configuration
  work=$(mktemp -d)
  server=
  trap 'if [[ -n $server ]]; then kill $server 2>/dev/null || true; wait $server 2>/dev/null || true; fi; rm -rf "$work"' EXIT
  "$bin/coasterbench" load --users "$users" --database "$work/bench.sqlite" --tokens "$work/tokens" >&2
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$bin/coasterlife" serve --database "$work/bench.sqlite" --port "$port" --parks '' --log-level error \
    --fix-rate 1000000 --nearby-rate 1000000 --message-rate 1000000 --report-window 0 > "$work/server.log" 2>&1 &
  server=$!
  local ready=
  for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/ready" >/dev/null && { ready=1; break; }; sleep 0.2; done
  [[ -n $ready ]] || { cat "$work/server.log" >&2; echo "the bench server did not become ready in 60 s" >&2; exit 1; }
  export COASTERLIFE_TOKENS="$work/tokens" COASTERLIFE_WRK="$PWD/tools/bench/wrk"
}

bench_refresh() {
  python3 tools/bench/refresh.py "$work/tokens" "$port" || { echo "refreshing the users' fixes failed" >&2; exit 1; }
}
