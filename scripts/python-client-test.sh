#!/bin/sh
# Runs the Python client's tests against a real orq server (started by the
# tests themselves). Uses Debian's /usr/bin/python3, which has python3-msgpack.
# Skips (exit 0, with a message) when that interpreter or msgpack is missing;
# otherwise exits non-zero if any test fails.
#
#   scripts/python-client-test.sh               # server from source (bun src/cli/main.ts)
#   ORQ_BINARY=dist/orq scripts/python-client-test.sh   # against the standalone binary
set -eu
cd "$(dirname "$0")/.."
PYTHON="${ORQ_PYTHON:-/usr/bin/python3}"
# Keep the tree clean: no __pycache__ next to the client.
export PYTHONDONTWRITEBYTECODE=1
if ! [ -x "$PYTHON" ]; then
  echo "SKIP python client tests: $PYTHON not found"
  exit 0
fi
if ! "$PYTHON" -c 'import msgpack' 2>/dev/null; then
  echo "SKIP python client tests: $PYTHON has no msgpack module (apt install python3-msgpack)"
  exit 0
fi
# The package's type hints, checked when the interpreter has mypy (Debian:
# python3-mypy); Python 3.8 is the oldest the package supports.
if "$PYTHON" -c 'import mypy' 2>/dev/null; then
  "$PYTHON" -m mypy --python-version 3.8 --ignore-missing-imports --disallow-untyped-defs --check-untyped-defs \
    --cache-dir "${TMPDIR:-/tmp}/orq-mypy-cache" clients/python/orq
else
  echo "no mypy for $PYTHON: type hints not checked (apt install python3-mypy)"
fi
# The tests import the package from clients/python/orq (no install needed);
# test/client/python-install.test.ts checks that it installs.
exec "$PYTHON" -m unittest -v clients/python/test_orq_parts.py clients/python/test_orq_client.py clients/python/test_orq_async.py \
  clients/python/test_orq_worker.py clients/python/test_orq_cluster.py
