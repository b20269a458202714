#!/usr/bin/env bash
# Compares two built checkouts back to back: bench/ab.sh BEFORE_DIR AFTER_DIR [ROUNDS] [BENCHES...]
# Each round runs every bench in both trees, alternating which goes first (the second run of a pair
# pays for the first one's deletes, docs/performance.md). JSON lands in .bench/ab/<bench>.<side>.<round>.json.
set -uo pipefail
before=$(cd "$1" && pwd); after=$(cd "$2" && pwd); rounds=${3:-3}; shift $(( $# < 3 ? $# : 3 ))
benches=("$@"); [ ${#benches[@]} -eq 0 ] && benches=(dispatch drain web-enqueue deep-queue)
out="$after/.bench/ab"; mkdir -p "$out"
for ((r = 1; r <= rounds; r++)); do
  order=(before after); (( r % 2 == 0 )) && order=(after before)
  for b in "${benches[@]}"; do
    for side in "${order[@]}"; do
      dir=$before; [ "$side" = after ] && dir=$after
      (cd "$dir" && npm run -s bench "bench/$b.ts" > "$out/$b.$side.$r.json" 2> "$out/$b.$side.$r.err")
      echo "$(date +%T) round $r $b $side rc=$?" >&2
    done
  done
done
echo "results in $out" >&2
