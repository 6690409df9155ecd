#!/usr/bin/env bash

# update-codegen.sh regenerates the generated code of the API types:
#
#   - zz_generated.deepcopy.go in every package under pkg/apis tagged
#     +k8s:deepcopy-gen (deepcopy-gen);
#   - zz_generated.model_name.go in every package under pkg/apis tagged
#     +k8s:openapi-model-package (openapi-gen): OpenAPIModelName() methods, so
#     that OpenAPI definition names, runtime.Scheme and openapinamer agree on
#     names like io.kcp.core.v1alpha1.LogicalCluster;
#   - pkg/openapi/zz_generated.openapi.go (openapi-gen): the OpenAPI
#     definitions of our API types and of the upstream types the servers
#     serve, for genericapiserver's OpenAPI config and server-side apply.
#
# It only needs `go` (the generators are `tool` directives in go.mod) and runs
# from any directory of a checkout. Set CODEGEN_VERBOSE=<n> for generator logs.

set -o errexit
set -o nounset
set -o pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${REPO_ROOT}"

# The main module alone, whatever go.work may be around.
export GOWORK=off

BOILERPLATE="hack/boilerplate.go.txt"
VERBOSE="${CODEGEN_VERBOSE:-0}"
MODULE="$(go list -m)"
OPENAPI_DIR="pkg/openapi"
OPENAPI_PKG="${MODULE}/${OPENAPI_DIR}"

# Upstream packages whose OpenAPI definitions the servers need: the built-in
# APIs served in every logical cluster, the types they reference, and the
# apimachinery types every API references. They live in the read-only module
# cache, so openapi-gen must not write model name files into them.
UPSTREAM_OPENAPI_PKGS=(
    k8s.io/apimachinery/pkg/apis/meta/v1
    k8s.io/apimachinery/pkg/runtime
    k8s.io/apimachinery/pkg/version
    k8s.io/apimachinery/pkg/util/intstr
    k8s.io/apimachinery/pkg/api/resource
    k8s.io/api/core/v1
    k8s.io/api/admissionregistration/v1
    k8s.io/api/authentication/v1
    k8s.io/api/authorization/v1
    k8s.io/api/autoscaling/v1
    k8s.io/api/certificates/v1
    k8s.io/api/coordination/v1
    k8s.io/api/events/v1
    k8s.io/api/flowcontrol/v1
    k8s.io/api/rbac/v1
    k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1
)

# local_pkgs_with_tag prints the import paths of the packages under pkg/apis
# with a Go file carrying the given +<tag> comment, sorted.
local_pkgs_with_tag() {
    local tag="$1"
    local dirs
    dirs="$( (grep -rlE --include='*.go' --exclude='zz_generated.*' "^[[:space:]]*//[[:space:]]*\+${tag}" pkg/apis || true) \
        | xargs -r -n1 dirname | LC_ALL=C sort -u)"
    if [[ -z "${dirs}" ]]; then
        return 0
    fi
    # shellcheck disable=SC2086 # one argument per directory
    go list -find -f '{{.ImportPath}}' $(sed 's|^|./|' <<<"${dirs}") | LC_ALL=C sort
}

# to_array NAME LIST fills the array NAME with the lines of LIST.
to_array() {
    local -n arr="$1"
    arr=()
    if [[ -n "$2" ]]; then
        mapfile -t arr <<<"$2"
    fi
}

deepcopy_list="$(local_pkgs_with_tag 'k8s:deepcopy-gen')"
openapi_list="$(local_pkgs_with_tag 'k8s:openapi-gen=true')"
to_array DEEPCOPY_PKGS "${deepcopy_list}"
to_array OPENAPI_PKGS "${openapi_list}"

# Remove what a previous run generated, so that nothing stale survives a
# package losing its tags.
find pkg/apis \( -name zz_generated.deepcopy.go -o -name zz_generated.model_name.go \) -type f -delete
rm -f "${OPENAPI_DIR}/zz_generated.openapi.go"

if [[ "${#DEEPCOPY_PKGS[@]}" -gt 0 ]]; then
    echo "deepcopy-gen: ${DEEPCOPY_PKGS[*]}"
    go tool deepcopy-gen \
        -v "${VERBOSE}" \
        --go-header-file "${BOILERPLATE}" \
        --output-file zz_generated.deepcopy.go \
        "${DEEPCOPY_PKGS[@]}"
fi

readonly_args=()
for pkg in "${UPSTREAM_OPENAPI_PKGS[@]}"; do
    readonly_args+=(--readonly-pkg "${pkg}")
done

report="$(mktemp -t tessera-api-violations.XXXXXX)"
trap 'rm -f "${report}"' EXIT

echo "openapi-gen: ${OPENAPI_PKGS[*]:-} (+ ${#UPSTREAM_OPENAPI_PKGS[@]} upstream packages) -> ${OPENAPI_DIR}"
mkdir -p "${OPENAPI_DIR}"
go tool openapi-gen \
    -v "${VERBOSE}" \
    --go-header-file "${BOILERPLATE}" \
    --output-dir "${OPENAPI_DIR}" \
    --output-pkg "${OPENAPI_PKG}" \
    --output-file zz_generated.openapi.go \
    --output-model-name-file zz_generated.model_name.go \
    --report-filename "${report}" \
    "${readonly_args[@]}" \
    "${UPSTREAM_OPENAPI_PKGS[@]}" \
    "${OPENAPI_PKGS[@]}"

# The workload APIs of the compute service's APIExport "kubernetes"
# (deployments, ingresses; services, pods and endpoints are core/v1, above)
# have definitions of their own, read only when their APIResourceSchemas
# are built (package apischema), so that the shard's OpenAPI does not carry
# them.
WORKLOADS_DIR="${OPENAPI_DIR}/workloads"
WORKLOADS_PKGS=(k8s.io/api/apps/v1 k8s.io/api/networking/v1)
rm -f "${WORKLOADS_DIR}/zz_generated.openapi.go"
mkdir -p "${WORKLOADS_DIR}"
workloads_readonly=()
for pkg in "${WORKLOADS_PKGS[@]}"; do
    workloads_readonly+=(--readonly-pkg "${pkg}")
done
echo "openapi-gen: ${WORKLOADS_PKGS[*]} -> ${WORKLOADS_DIR}"
go tool openapi-gen \
    -v "${VERBOSE}" \
    --go-header-file "${BOILERPLATE}" \
    --output-dir "${WORKLOADS_DIR}" \
    --output-pkg "${OPENAPI_PKG}/workloads" \
    --output-file zz_generated.openapi.go \
    --output-model-name-file zz_generated.model_name.go \
    --report-filename /dev/null \
    "${workloads_readonly[@]}" \
    "${WORKLOADS_PKGS[@]}"

# Upstream types have known API rule violations (Kubernetes keeps its own
# list of exceptions). Ours may only have those listed in
# hack/api-rule-violations.list, where kcp wire compatibility forces them
# (e.g. the JSON field "URL" of LogicalCluster status).
if new_violations="$(grep -F ",${MODULE}/" "${report}" | LC_ALL=C sort \
        | LC_ALL=C comm -23 - <(grep -v '^#' hack/api-rule-violations.list | LC_ALL=C sort))" \
    && [[ -n "${new_violations}" ]]; then
    echo "ERROR: API rule violations in ${MODULE} types (rules: k8s.io/kube-openapi/pkg/generators/rules):" >&2
    echo "${new_violations}" >&2
    exit 1
fi
