#!/usr/bin/env bash

# verify-codegen.sh fails if the committed generated code differs from what
# hack/update-codegen.sh produces. It regenerates in a temporary copy of the
# module and leaves the working tree untouched.

set -o errexit
set -o nounset
set -o pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${REPO_ROOT}"

# The directories update-codegen.sh writes into.
GENERATED_DIRS=(pkg/apis pkg/openapi)

tmp="$(mktemp -d -t tessera-verify-codegen.XXXXXX)"
trap 'rm -rf "${tmp}"' EXIT

# The generators only load packages under pkg/ and the module's dependencies;
# update-codegen.sh only reads its own inputs under hack/.
for f in go.mod go.sum; do
    if [[ -e "${f}" ]]; then
        cp -a "${f}" "${tmp}/"
    fi
done
mkdir -p "${tmp}/hack"
cp -a hack/update-codegen.sh hack/boilerplate.go.txt hack/api-rule-violations.list "${tmp}/hack/"
cp -a pkg "${tmp}/"
if [[ -d vendor ]]; then
    cp -a vendor "${tmp}/"
fi

"${tmp}/hack/update-codegen.sh"

ret=0
for dir in "${GENERATED_DIRS[@]}"; do
    if [[ ! -d "${dir}" && ! -d "${tmp}/${dir}" ]]; then
        continue
    fi
    if ! diff -ruN "${dir}" "${tmp}/${dir}"; then
        ret=1
    fi
done

if [[ "${ret}" -ne 0 ]]; then
    echo "ERROR: generated code is out of date; run hack/update-codegen.sh" >&2
    exit 1
fi
echo "Generated code is up to date."
