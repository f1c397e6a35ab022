#!/bin/bash
# node-problem-detector custom plugin: `flexdoctor check` on this node.
# Exit 0 OK, 1 NonOK (a check fails, or it did not finish in time: the node condition
# FlexAttentionStackProblem turns True, with the failing checks as its message), 2 Unknown
# (flexdoctor could not run: not installed, a usage error, exit 1 without a report) - NPD's
# plugin protocol. Only a real failure or a time-out sets the condition.
#
# It runs inside the node-problem-detector container, so that container needs flexdoctor and the
# interpreter your jobs train with: build the NPD image FROM your training image, or point
# FLEXDOCTOR_PYTHON at a training interpreter mounted from the host. With only flexdoctor there,
# FLEXDOCTOR_ARGS="--static --profile gpu --only FD101,FD102" judges just the GPUs and the driver.
# As root (NPD's default) the check itself runs as FLEXDOCTOR_USER (default nobody) through
# setpriv; its report goes to a private `mktemp -d` folder, never to a fixed name under /tmp.
#   FLEXDOCTOR        the flexdoctor command (default: flexdoctor)
#   FLEXDOCTOR_PYTHON the training interpreter (default: the one flexdoctor runs in)
#   FLEXDOCTOR_ARGS   (default: --static --profile gpu --skip FD5)
#   FLEXDOCTOR_TIMEOUT seconds, below the rule's timeout in the config (default: 45)
#   FLEXDOCTOR_USER   who runs the check when this runs as root (default: nobody; never root)
readonly OK=0 NONOK=1 UNKNOWN=2
FLEXDOCTOR=${FLEXDOCTOR:-flexdoctor}
FLEXDOCTOR_ARGS=${FLEXDOCTOR_ARGS:---static --profile gpu --skip FD5}
FLEXDOCTOR_TIMEOUT=${FLEXDOCTOR_TIMEOUT:-45}
umask 077

work=$(mktemp -d) || { echo "flexdoctor: no private temporary folder"; exit $UNKNOWN; }
trap 'rm -rf -- "$work"' EXIT
as_user=()
if [ "$(id -u)" = 0 ]; then
    uid=$(id -u -- "${FLEXDOCTOR_USER:-nobody}" 2>/dev/null) && gid=$(id -g -- "${FLEXDOCTOR_USER:-nobody}" 2>/dev/null) || uid=""
    if [ -z "$uid" ] || [ "$uid" = 0 ] || [ "$gid" = 0 ] || ! command -v setpriv >/dev/null; then
        echo "flexdoctor could not run: no unprivileged user to run it as (setpriv, FLEXDOCTOR_USER)"; exit $UNKNOWN
    fi
    as_user=(setpriv --reuid="$uid" --regid="$gid" --init-groups --no-new-privs --)
fi
python_args=()
[ -n "${FLEXDOCTOR_PYTHON:-}" ] && python_args=(--python "$FLEXDOCTOR_PYTHON")
# shellcheck disable=SC2086
(cd / && exec timeout --kill-after=5 "$FLEXDOCTOR_TIMEOUT" "${as_user[@]}" $FLEXDOCTOR check "${python_args[@]}" \
    $FLEXDOCTOR_ARGS --format json --no-plugins) >"$work/report.json" 2>/dev/null
code=$?
case $code in
    0) echo "flexdoctor check passes"; exit $OK ;;
    1)
        if ! command -v python3 >/dev/null; then  # no python3 here: any JSON report with results
            grep -q '"results"' "$work/report.json" && { echo "flexdoctor check fails (run: flexdoctor check)"; exit $NONOK; }
            echo "flexdoctor could not run (exit 1 without a report)"; exit $UNKNOWN
        fi
        python3 -I - "$work/report.json" <<'PY' 2>/dev/null && exit $NONOK
import json, re, sys
with open(sys.argv[1], "rb") as fh:
    doc = json.loads(fh.read(64 << 20))
bad = [r for r in doc["results"] if r["status"] in ("fail", "error")] or \
      [r for r in doc["results"] if r["status"] == "warn"]
if not bad:
    raise SystemExit(1)
line = "flexdoctor: " + "; ".join(f"{r['id']} {r['symbol']}: {r['message']}" for r in bad)
print(re.sub(r"[\x00-\x1f\x7f-\x9f]", " ", line))
PY
        echo "flexdoctor could not run (exit 1 without a report)"; exit $UNKNOWN ;;
    124|137) echo "flexdoctor check did not finish in ${FLEXDOCTOR_TIMEOUT} s (wedged GPU driver?)"; exit $NONOK ;;
    *) echo "flexdoctor could not run (exit $code)"; exit $UNKNOWN ;;
esac
