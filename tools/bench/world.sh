# Sourced by tools/bench/http and tools/bench/routes: builds the server and the bench tool,
# bulk-loads the generated world into a fresh store with session tokens for a sample of users,
# and serves it on a free loopback port with the per-user rate limits and the report window
# lifted; the sampled users are the world's askers (every level's same ones), listed in the order
# they are drawn in $work/USERS/askers. After `bench_world USERS CONFIGURATION`: $bin, $work (a temporary directory, removed at
# exit with every server stopped), $port, $server (its PID), COASTERLIFE_TOKENS and COASTERLIFE_WRK
# (for the wrk scripts), and `bench_refresh`: one fresh fix for every sampled user (refresh.py,
# which says why), run before each round and not measured.
#
# More worlds, each of its own size, served side by side: `bench_build CONFIGURATION`, then
# `bench_serve USERS` for each (the last one served is the current one), and `bench_use USERS`
# to make another current ($port, $server and COASTERLIFE_TOKENS are then that world's).
# `bench_serve USERS postgres` loads and serves the world from PostgreSQL instead (a schema of the
# database $COASTERLIFE_BENCH_POSTGRES_URL names); its key for `bench_use` is `USERS-postgres`.
#
# SpatiaLite worlds of 100,000 users or more are kept in $COASTERLIFE_BENCH_WORLDS (var/bench/worlds
# unless set; set it empty to load every time) and reused while they match this build's generator
# and schema, their times moved to the present (`coasterbench load --keep`): about 4.5 min instead of
# 15 at a million users.

bench_build() {
  local configuration=$1
  tools/setup
  command -v wrk >/dev/null 2>&1 || { [[ $(id -u) -eq 0 ]] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk >/dev/null; }
  swift build -c "$configuration" --product coasterlife 2>&1 | { grep -E "error" >&2 || true; }
  swift build -c "$configuration" --product coasterbench 2>&1 | { grep -E "error" >&2 || true; }
  bin=.build/$configuration
  work=$(mktemp -d)
  bench_servers=""
  trap 'for pid in $bench_servers; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done; rm -rf "$work"' EXIT
  export COASTERLIFE_WRK="$PWD/tools/bench/wrk"
}

# Loads a world of USERS users into $work/USERS/ and serves it; its port and PID are kept in
# $work/USERS/port and $work/USERS/pid for bench_use.
bench_serve() {
  local users=$1 store=${2:-sqlite} key=$1 database
  if [[ $store == postgres ]]; then
    key="$users-postgres"
    local url=${COASTERLIFE_BENCH_POSTGRES_URL:?bench_serve: no COASTERLIFE_BENCH_POSTGRES_URL}
    database="$url$([[ $url == *\?* ]] && echo '&' || echo '?')schema=bench_${users}_$$"
  fi
  local dir=$work/$key
  mkdir -p "$dir"
  local keep=() worlds=${COASTERLIFE_BENCH_WORLDS-var/bench/worlds}
  if [[ $store != postgres ]]; then
    database="$dir/bench.sqlite"
    (( users >= 100000 )) && [[ -n $worlds ]] && keep=(--keep "$worlds")
  fi
  "$bin/coasterbench" load --users "$users" --database "$database" --tokens "$dir/tokens" --askers "$dir/askers" "${keep[@]}" >&2
  # Not `local`: bench_use, called at the end, sets the globals of these names.
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$bin/coasterlife" serve --database "$database" --photos "$dir/photos" --port "$port" --parks '' --log-level error \
    --fix-rate 1000000 --nearby-rate 1000000 --message-rate 1000000 --leaderboard-rate 1000000 --registration-rate 1000000 --shared-list-rate 1000000 \
    --people-search-rate 1000000 --follow-rate 1000000 --post-search-rate 1000000 \
    --report-window 0 > "$dir/server.log" 2>&1 &
  server=$!
  bench_servers="$bench_servers $server"
  echo "$port" > "$dir/port"; echo "$server" > "$dir/pid"
  local ready=
  for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/ready" >/dev/null && { ready=1; break; }; sleep 0.2; done
  [[ -n $ready ]] || { cat "$dir/server.log" >&2; echo "the bench server of $users users ($store) did not become ready in 60 s" >&2; exit 1; }
  bench_use "$key"
}

bench_use() {
  port=$(cat "$work/$1/port")
  server=$(cat "$work/$1/pid")
  export COASTERLIFE_TOKENS="$work/$1/tokens"
}

bench_world() {
  bench_build "$2"
  bench_serve "$1"
}

bench_refresh() {
  python3 tools/bench/refresh.py "$COASTERLIFE_TOKENS" "$port" || { echo "refreshing the users' fixes failed" >&2; exit 1; }
}
