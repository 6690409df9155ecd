#!/usr/bin/env bash
# Runs the e2e suites (every package under test/e2e with a suite_test.go)
# against the built binaries, as `make test-e2e` and `make test-e2e-kind` do:
#
#   1. build the tools (hack/e2e-tools.sh, cached) and the tessera binaries;
#   2. run the suites with go test; each starts what its specs need: a
#      tessera process, physical clusters from the provider;
#   3. kill whatever a crashed suite left behind (the suites stop their own
#      processes by PID; this sweep reads the ledger they write), and print
#      how long each phase took.
#
# Usage: hack/e2e.sh [local|kind]   (default local: kwok-backed clusters, and
# for the suites whose pods must run, the real cluster of hack/real-cluster.sh,
# which needs root)
#
# Environment: MAKE, GO, KUBECTL as make passes them; E2E_LABELS (a ginkgo
# label filter, e.g. "shard" or "physical && !helm"); E2E_TIMEOUT (go test
# -timeout, default 25m); TESSERA_E2E_KUBECONFIG to test an installation
# someone else started (then no tessera process is started); every
# TESSERA_E2E_* variable of test/e2e/framework.
set -euo pipefail
cd "$(dirname "$0")/.."

provider=${1:-local}
GO=${GO:-go}
MAKE=${MAKE:-make}
timeout=${E2E_TIMEOUT:-25m}
run_start=$SECONDS
summary=()

phase() { # phase <name> <command...>: run a command and record its duration.
  local name=$1 start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  summary+=("$(printf '  %-22s %4ss%s' "$name" $((SECONDS - start)) "$([[ $rc == 0 ]] || echo "  (failed: exit $rc)")")")
  return $rc
}

# kind needs a running container engine; say so at once rather than after
# building tools or while kind waits for a node.
if [[ $provider == kind ]]; then
  engine=${KIND_EXPERIMENTAL_PROVIDER:-docker}
  if ! command -v "$engine" >/dev/null 2>&1; then
    echo "e2e: make test-e2e-kind needs a container engine for kind: no $engine here. On a machine without one, make test-e2e runs the same suites (real pods for the deploy suite)." >&2
    exit 1
  fi
  if ! out=$(timeout 20 "$engine" info 2>&1 >/dev/null); then
    echo "e2e: make test-e2e-kind needs a running container engine for kind, and '$engine info' failed: ${out:0:300}" >&2
    exit 1
  fi
fi

ledger=$(mktemp "${TMPDIR:-/tmp}/tessera-e2e-ledger.XXXXXX")
timings=$(mktemp "${TMPDIR:-/tmp}/tessera-e2e-timing.XXXXXX")

# sweep kills what the ledger lists and is still alive: processes whose
# start time still matches (not a later process reusing the PID), and kind
# clusters.
sweep() {
  local what a b name left=0
  while read -r what a b name; do
    case $what in
      pid)
        [[ -r /proc/$a/stat ]] || continue
        [[ "$(sed 's/.*) //' "/proc/$a/stat" | awk '{print $20}')" == "$b" ]] || continue
        echo "e2e: killing leftover process $name (pid $a)" >&2
        kill -KILL -- "-$a" 2>/dev/null || kill -KILL "$a" 2>/dev/null || true
        left=1
        ;;
      kind)
        if "${KIND:-kind}" get clusters 2>/dev/null | grep -qx "$a"; then
          echo "e2e: deleting leftover kind cluster $a" >&2
          "${KIND:-kind}" delete cluster --name "$a" >&2 || true
          left=1
        fi
        ;;
    esac
  done <"$ledger"
  # A real physical cluster whose suite died: its pods' containers outlive
  # the processes above. Tear it down unless another run holds it.
  if [[ -d /run/tessera-real ]] && grep -q ' real-' "$ledger" 2>/dev/null; then
    echo "e2e: tearing down the real physical cluster a suite left" >&2
    hack/real-cluster.sh down >&2 || true
    left=1
  fi
  return $left
}

finish() {
  local rc=$?
  trap - EXIT INT TERM
  if ! sweep; then
    echo "e2e: processes outlived their suite (see above); the suites should have stopped them" >&2
    [[ $rc != 0 ]] || rc=1
  fi
  echo
  echo "== e2e timing (${provider} physical clusters) =="
  printf '%s\n' "${summary[@]}"
  [[ -s $timings ]] && sed 's/^/    /' "$timings"
  printf '  %-22s %4ss\n' "total" $((SECONDS - run_start))
  rm -f "$ledger" "$timings"
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start=$SECONDS
tools_path=$(GO=$GO hack/e2e-tools.sh "$provider")
summary+=("$(printf '  %-22s %4ss' "build tools" $((SECONDS - start)))")
if [[ -z ${TESSERA_E2E_KUBECONFIG:-} ]]; then
  phase "build tessera" "$MAKE" --no-print-directory build
fi
# The deploy suite installs the images into its cluster.
phase "build images" "$MAKE" --no-print-directory images >/dev/null

suites=$(find test/e2e -name suite_test.go -not -path '*/framework/*' -exec dirname {} \; | LC_ALL=C sort | sed 's|^|./|')
args=(-ginkgo.v -ginkgo.timeout="${E2E_GINKGO_TIMEOUT:-20m}")
[[ -t 1 ]] || args+=(-ginkgo.no-color)
[[ -z ${E2E_LABELS:-} ]] || args+=(-ginkgo.label-filter="$E2E_LABELS")

export TESSERA_E2E=1
export TESSERA_E2E_TOOLS_PATH=$tools_path${TESSERA_E2E_TOOLS_PATH:+:$TESSERA_E2E_TOOLS_PATH}
export TESSERA_E2E_PHYSICAL_PROVIDER=${TESSERA_E2E_PHYSICAL_PROVIDER:-$provider}
export TESSERA_E2E_BIN_DIR=${TESSERA_E2E_BIN_DIR:-$PWD/bin}
export TESSERA_E2E_IMAGES_DIR=${TESSERA_E2E_IMAGES_DIR:-$PWD/bin/images}
export TESSERA_E2E_LEDGER=$ledger
export TESSERA_E2E_TIMING_FILE=$timings
# Suites run in parallel; the real physical cluster is one per machine, so
# suites that need it take turns.
export TESSERA_E2E_REAL_WAIT=${TESSERA_E2E_REAL_WAIT:-20m}
if [[ $provider == kind ]]; then
  KIND=$(tr ':' '\n' <<<"$tools_path" | sed 's|$|/kind|' | while read -r k; do [[ -x $k ]] && echo "$k" && break; done)
  export KIND
fi

echo "e2e: suites $(echo $suites) with ${TESSERA_E2E_PHYSICAL_PROVIDER} physical clusters; tools from $tools_path" >&2
# shellcheck disable=SC2086 # suites is a list of packages
phase "suites" "$GO" test -v -count=1 -timeout "$timeout" $suites -args "${args[@]}"
