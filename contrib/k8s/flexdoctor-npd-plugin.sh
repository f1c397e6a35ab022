#!/bin/bash
# node-problem-detector custom plugin: `flexdoctor check` on this node.
# Exit 0 OK, 1 NonOK (a check fails: the node condition FlexAttentionStackProblem turns True, with
# the failing checks as its message), 2 Unknown (flexdoctor could not run) - NPD's plugin protocol.
#
# It runs inside the node-problem-detector container, so that container needs flexdoctor and the
# interpreter your jobs train with: build the NPD image FROM your training image, or point
# FLEXDOCTOR_PYTHON at a training interpreter mounted from the host. With only flexdoctor there,
# FLEXDOCTOR_ARGS="--static --profile gpu --only FD101,FD102" judges just the GPUs and the driver.
#   FLEXDOCTOR        the flexdoctor command (default: flexdoctor)
#   FLEXDOCTOR_PYTHON the training interpreter (default: the one flexdoctor runs in)
#   FLEXDOCTOR_ARGS   (default: --static --profile gpu --skip FD5)
#   FLEXDOCTOR_TIMEOUT seconds, below the rule's timeout in the config (default: 45)
readonly OK=0 NONOK=1 UNKNOWN=2
FLEXDOCTOR=${FLEXDOCTOR:-flexdoctor}
FLEXDOCTOR_ARGS=${FLEXDOCTOR_ARGS:---static --profile gpu --skip FD5}
FLEXDOCTOR_TIMEOUT=${FLEXDOCTOR_TIMEOUT:-45}

report=$(mktemp /tmp/flexdoctor-npd.XXXXXX) || { echo "flexdoctor: no temporary file"; exit $UNKNOWN; }
trap 'rm -f "$report"' EXIT
python_args=()
[ -n "${FLEXDOCTOR_PYTHON:-}" ] && python_args=(--python "$FLEXDOCTOR_PYTHON")
# shellcheck disable=SC2086
timeout --kill-after=5 "$FLEXDOCTOR_TIMEOUT" $FLEXDOCTOR check "${python_args[@]}" $FLEXDOCTOR_ARGS \
    --format json --output "$report" --no-plugins >/dev/null 2>&1
code=$?
case $code in
    0) echo "flexdoctor check passes"; exit $OK ;;
    1)
        python3 - "$report" <<'PY' 2>/dev/null || echo "flexdoctor check fails (run: flexdoctor check)"
import json, sys
doc = json.load(open(sys.argv[1]))
bad = [r for r in doc["results"] if r["status"] in ("fail", "error")] or \
      [r for r in doc["results"] if r["status"] == "warn"]
print("flexdoctor: " + "; ".join(f"{r['id']} {r['symbol']}: {r['message']}" for r in bad))
PY
        exit $NONOK ;;
    124|137) echo "flexdoctor check did not finish in ${FLEXDOCTOR_TIMEOUT} s (wedged GPU driver?)"; exit $NONOK ;;
    *) echo "flexdoctor could not run (exit $code)"; exit $UNKNOWN ;;
esac
