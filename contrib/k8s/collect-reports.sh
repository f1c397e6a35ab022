#!/bin/bash
# Wait for the flexdoctor-fleet Job, save every pod's report as DIR/<node>.json, merge them.
#
#   ./collect-reports.sh [JOB] [DIR]        (defaults: flexdoctor-fleet, flexdoctor-reports)
#   NAMESPACE=ml ./collect-reports.sh
#
# Every GPU node is expected to report (nvidia.com/gpu.present=true); one that did not is named
# in the fleet report and kept out. DIR/cordon.txt lists the nodes to keep out of the job:
#   xargs -r -n1 kubectl cordon -- < DIR/cordon.txt
# Exit code: that of `flexdoctor fleet merge` (0 every node ready, 1 a node to keep out), 2 when
# DIR is not a folder of yours that no one else can write (a link planted there would take the
# reports wherever it points). A node name that is not a DNS name is not used as a file name.
set -uo pipefail
umask 077
JOB=${1:-flexdoctor-fleet}
DIR=${2:-flexdoctor-reports}
NS=${NAMESPACE:-default}
FLEXDOCTOR=${FLEXDOCTOR:-flexdoctor}

mkdir -p -- "$DIR" || exit 2
mode=$(stat -c %a -- "$DIR") || exit 2
if [ -L "$DIR" ] || [ ! -d "$DIR" ] || [ ! -O "$DIR" ] || (( (8#$mode & 8#022) != 0 )); then
    echo "collect-reports: $DIR must be a folder you own that no one else can write (mode $mode)" >&2
    exit 2
fi
kubectl -n "$NS" wait --for=condition=complete --timeout="${TIMEOUT:-30m}" "job/$JOB" \
    || echo "collect-reports: job/$JOB did not complete; merging what there is" >&2
kubectl get nodes -l nvidia.com/gpu.present=true -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' \
    > "$DIR/expected-nodes.txt"
kubectl -n "$NS" get pods -l "job-name=$JOB" \
    -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' |
while read -r pod node; do
    [ -n "$node" ] || continue  # never scheduled: the merge names the node as missing
    case $node in *[!a-z0-9.-]*|.*) continue ;; esac  # not a node name: never a file name
    kubectl -n "$NS" logs "$pod" > "$DIR/$node.json" 2>/dev/null || true
done
# shellcheck disable=SC2086
$FLEXDOCTOR fleet merge "$DIR" --expect "$DIR/expected-nodes.txt" --exclude-file "$DIR/cordon.txt"
