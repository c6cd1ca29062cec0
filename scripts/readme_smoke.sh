#!/usr/bin/env bash
# The README's first command exactly as written, in this checkout: `make run` (default address, default ./data
# and ./vault),
# then one short game over HTTP (scripts/smoke_game.py), then stop its whole process group and check that no
# seekdb server is left behind. Run by .ci/run before `make test`; a failure prints the tail of the server log.
#
#   bash scripts/readme_smoke.sh   # needs port 8000 free and no ./data or ./vault yet (both removed afterwards)
set -euo pipefail
cd "$(dirname "$0")/.."

URL="http://127.0.0.1:8000"
DEADLINE_S="${SMOKE_DEADLINE_S:-600}"  # make run installs and builds first when the checkout is fresh
log="$(mktemp -t readme-smoke-XXXX.log)"
server_pgid=""

fail() {
  echo "README smoke FAILED: $1" >&2
  echo "----- last 60 lines of the make run output ($log) -----" >&2
  tail -n 60 "$log" >&2 || true
  [ -n "$server_pgid" ] && kill -TERM -- "-$server_pgid" 2>/dev/null || true
  exit 1
}

# The embedded seekdb server of this checkout's store (other checkouts' servers are not ours to judge).
store_servers() { pgrep -f -- "seekdb --base-dir=$PWD/data/seekdb" | tr '\n' ' ' || true; }

[ ! -e data ] || fail "./data already exists here: the smoke needs the default data directory to start empty"
[ ! -e vault ] || fail "./vault already exists here: the smoke needs the default vault to start empty"
if (exec 3<>/dev/tcp/127.0.0.1/8000) 2>/dev/null; then fail "port 8000 is already taken"; fi

started=$EPOCHREALTIME
setsid make run >"$log" 2>&1 &
server_pgid=$!
echo "make run started (process group $server_pgid), output in $log"

until grep -q "AI Intelligence Bureau on $URL" "$log"; do
  kill -0 "$server_pgid" 2>/dev/null || fail "make run exited before printing its URL"
  (( $(date +%s) - ${started%.*} < DEADLINE_S )) || fail "no URL within ${DEADLINE_S} s"
  sleep 0.5
done
awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "URL printed %.1f s after make run started\n", b - a }'
grep -m1 "AI Intelligence Bureau on" "$log"

.venv/bin/python scripts/smoke_game.py --url "$URL" || fail "the short game"

kill -TERM -- "-$server_pgid"
for _ in $(seq 1 60); do kill -0 -- "-$server_pgid" 2>/dev/null || break; sleep 0.5; done
if kill -0 -- "-$server_pgid" 2>/dev/null; then
  kill -KILL -- "-$server_pgid" 2>/dev/null || true
  fail "make run's process group did not stop within 30 s of SIGTERM"
fi
server_pgid=""
left="$(store_servers)"
[ -z "${left// /}" ] || fail "seekdb server(s) of ./data/seekdb left after make run stopped: $left"
[ -d data/seekdb ] || fail "the store was not in ./data/seekdb"
[ -f vault/vault.db ] && [ -f vault/kek ] || fail "the vault was not in ./vault"
[ ! -e data/kek ] && [ ! -e data/vault.db ] || fail "a vault file in ./data"
rm -rf data vault
echo "README smoke passed: make run, a short game, a clean stop (no seekdb left)"
