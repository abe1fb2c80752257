#!/bin/sh
# Smoke test of the standalone binary, for CI: builds dist/orq if it is not
# there, prints its size and start-up time, then runs test/build/binary.test.ts
# (serve from an empty directory with PATH=/usr/bin:/bin, enqueue/dequeue/ack
# over TCP, restart, SIGTERM -> exit 0, clear failure when the addon cannot
# load). Exits non-zero on any failure; a missing binary is a failure here.
#
#   scripts/binary-smoke.sh            # build if needed, then test
#   ORQ_REBUILD=1 scripts/binary-smoke.sh
set -eu
cd "$(dirname "$0")/.."
BUN=./node_modules/.bin/bun

if [ "${ORQ_REBUILD:-0}" = "1" ] || ! [ -x dist/orq ]; then
  "$BUN" scripts/build.ts
fi

size_bytes=$(wc -c < dist/orq)
echo "dist/orq: $size_bytes bytes ($((size_bytes / 1048576)) MiB)"

# Start-up: median wall time of 7 runs of `dist/orq --help` (loads the whole
# bundle, native addon included, then exits), from an empty directory with no
# bun or node on PATH.
smoke_dir=$(mktemp -d)
trap 'rm -rf "$smoke_dir"' EXIT
cp dist/orq "$smoke_dir/orq"
if (cd "$smoke_dir" && env -i PATH=/usr/bin:/bin TMPDIR="$smoke_dir" ./orq --help >/dev/null 2>&1); then
  times=""
  for run in 1 2 3 4 5 6 7; do
    start=$(date +%s%N)
    (cd "$smoke_dir" && env -i PATH=/usr/bin:/bin TMPDIR="$smoke_dir" ./orq --help >/dev/null 2>&1)
    end=$(date +%s%N)
    times="$times $(((end - start) / 1000))"
  done
  median_us=$(echo "$times" | tr ' ' '\n' | sed '/^$/d' | sort -n | sed -n 4p)
  echo "start-up (orq --help, median of 7): $((median_us / 1000)).$(((median_us % 1000) / 100)) ms"
else
  echo "note: dist/orq --help failed; start-up not measured"
fi

ORQ_REQUIRE_BINARY=1 "$BUN" test test/build/binary.test.ts
