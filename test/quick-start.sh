#!/usr/bin/env bash
# The README's quick start on the `node` first in PATH, in a temporary root: rq-start, a queue linked
# into scandir/, a message sent and waited for, its output, the web's /healthz; exit 0 when all hold.
# Usage: test/quick-start.sh   (test/node-versions.sh runs it under Node 22 and 24)
set -euo pipefail
cd "$(dirname "$0")/.."

root=$(mktemp -d)
start_pid=
finish() {
  # End only the rq-start this script started (it stops its own children on TERM).
  if [ -n "$start_pid" ] && kill -0 "$start_pid" 2>/dev/null; then
    kill -TERM "$start_pid"
    wait "$start_pid" || true
  fi
  rm -rf "$root"
}
trap finish EXIT

port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
bin/rq-install --root "$root" --port "$port" >/dev/null
bin/rq-start --root "$root" >"$root/start.log" 2>&1 &
start_pid=$!

# The web answers once rq-mgr has started it; every step below waits on a condition, not a delay.
for _ in $(seq 1 300); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  kill -0 "$start_pid" 2>/dev/null || { echo "quick-start: rq-start exited"; cat "$root/start.log"; exit 1; }
  sleep 0.1
done
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null

mkdir -p "$root/hello-script"
printf '#!/bin/bash\necho "hello $RQ_PARAM1"\necho "done greeted" >&3\n' >"$root/hello-script/run"
chmod +x "$root/hello-script/run"
ln -s "$root/hello-script" "$root/scandir/hello"
for _ in $(seq 1 300); do
  bin/rq queues --root "$root" --json 2>/dev/null | grep -q '"queue":"hello","status":"UP"' && break
  sleep 0.1
done

out=$(bin/rq sendmesg --root "$root" --dest hello --param1 world --wait)
echo "$out" | grep -q '^ok done - greeted$' || { echo "quick-start: unexpected sendmesg --wait output: $out"; exit 1; }
id=$(echo "$out" | head -1 | sed -E 's#^ok .*/q/hello/##')
grep -q '^hello world$' "$root"/queues/hello/done/*/*/*/"$id"/job/stdio.log
# The id alone, as the README's next lines use it: rq finds its queue.
[ "$(bin/rq statusmesg --root "$root" "$id")" = 'ok done - greeted' ] || { echo "quick-start: rq statusmesg <id> failed"; exit 1; }
bin/rq tail --root "$root" "$id" | grep -q '^hello world$' || { echo "quick-start: rq tail <id> did not print the output"; exit 1; }
echo "quick-start: ok on node $(node -v)"
