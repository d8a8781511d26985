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
# make down removes the state dir: keep the logs and the report of this run.
keep=${SOAK_LOG_DIR:-/tmp/nodelet-soak-logs}/$(date +%Y%m%d-%H%M%S)
mkdir -p "$keep"
state=/var/lib/nodelet/lab
cp "$state"/agent.log "$state"/server.log "$state"/containerd/containerd.log "$state"/soak/report-*.json "$state"/soak/cni-fp.adds.log "$keep"/ 2>/dev/null
echo "logs and report kept in $keep"
if [ -z "${SOAK_KEEP_CLUSTER:-}" ]; then make down || rc=${rc:-2}; fi
exit $rc
