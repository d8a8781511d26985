#!/usr/bin/env bash
# make soak / soak-smoke / soak-long: a lab cluster (`make up` unless one already runs), then
# `nodelet soak` with the given flags, then `make down` (SOAK_KEEP_CLUSTER=1 keeps the cluster).
# The lab uses fixed ports and a fixed bridge: on a shared machine run it under
# `flock /tmp/nodelet-itest.lock make soak`.
set -uo pipefail
cd "$(dirname "$0")/.."
if ! ./bin/nodelet lab status | grep -q '^agent .*running'; then
  make up || { make down; exit 2; }
fi
./bin/nodelet soak "$@"
rc=$?
if [ -z "${SOAK_KEEP_CLUSTER:-}" ]; then make down || rc=${rc:-2}; fi
exit $rc
