#!/bin/bash
# A workshop room of PLAYERS (default 50) on this checkout, with py-spy recording its server's threads for the
# measured window (issue 36.4; docs/performance.md "Workshop"). Needs py-spy (`pip install py-spy`).
#   bash bench/profile_room.sh [PLAYERS] [OUT]
set -eu
PLAYERS=${1:-50}; OUT=${2:-/tmp/room-profile}; WINDOW=60; WARMUP=15
PY=${PY:-.venv/bin/python}; PYSPY=${PYSPY:-$(dirname "$PY")/py-spy}
rm -rf "$OUT"; mkdir -p "$OUT"
"$PY" bench/workshop.py --players "$PLAYERS" --window $WINDOW --warmup $WARMUP > "$OUT/room.log" 2>&1 &
room=$!
until grep -q "players set up" "$OUT/room.log"; do sleep 1; kill -0 $room; done
server=$(pgrep -n -f -- "-m bureau.cli serve")
sleep $WARMUP
"$PYSPY" record -p "$server" -d $WINDOW -r 100 --threads -f raw -o "$OUT/threads.txt" --nonblocking > "$OUT/py-spy.log" 2>&1
wait $room
grep "players: answer" "$OUT/room.log"
"$PY" bench/pyspy_threads.py "$OUT/threads.txt" --seconds $WINDOW --rate 100
