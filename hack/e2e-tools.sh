#!/usr/bin/env bash
# Builds the binaries the e2e suites run besides Tessera's own, each from its
# module under hack/tools (kept apart from the main go.mod):
#
#   kube     kube-apiserver, kube-controller-manager, kube-scheduler, and for the
#            real physical clusters kubelet and kube-proxy (k8s.io/kubernetes)
#   coredns  coredns with the cluster DNS plugins (github.com/coredns/coredns),
#            for the real physical clusters
#   etcd     etcd (go.etcd.io/etcd/server/v3 etcdmain)
#   kwok     kwok (sigs.k8s.io/kwok)
#   helm     helm (helm.sh/helm/v4)
#   kind     kind (sigs.k8s.io/kind), only when asked for: hack/e2e-tools.sh kind
#
# Binaries go to a cache outside the repository that survives clones and
# `make clean`:
#
#   ${TESSERA_TOOLS_CACHE:-${XDG_CACHE_HOME:-~/.cache}/tessera/tools}/<tool>-<version>-<hash>/
#
# where <hash> covers the module's go.mod, go.sum and sources, so a change to
# a tools module builds anew and an unchanged one is never rebuilt. Missing
# tools are built in parallel (the kube binaries take ~8 minutes on 2 cores,
# the others overlap with them). Progress goes to stderr; stdout gets the
# tool directories, colon separated, for TESSERA_E2E_TOOLS_PATH.
#
# The tools modules require the versions of the main module's build list
# (k8s.io/* v0.37.x, grpc, etcd client, otel, ...), so the packages they share
# with it compile once: a cold build of the tools then reuses what building
# and testing the main module put in GOCACHE, which halves their build time.
# `hack/e2e-tools.sh align` renews that after the main go.mod changed
# (coredns is left out: it keeps the k8s.io versions its release builds with).
#
# Usage: hack/e2e-tools.sh [local|kind|all|align]   (default local)
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
cache=${TESSERA_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tessera/tools}
which=${1:-local}

# align: raise every tools module to the main module's build list (and the
# kube module's staging replacements to the main module's k8s.io version).
if [[ $which == align ]]; then
  mods=$($GO list -m -f '{{if not .Main}}-require={{.Path}}@{{.Version}}{{end}}' all)
  staging=$($GO list -m -f '{{.Version}}' k8s.io/apimachinery)
  for t in kube etcd kwok helm; do
    (
      cd "hack/tools/$t"
      if [[ $t == kube ]]; then
        # shellcheck disable=SC2046 # one -replace per staging module
        $GO mod edit $(awk '$2 == "=>" && $1 ~ /^k8s.io\// { print "-replace=" $1 "=" $1 "@'"$staging"'" }' go.mod)
      fi
      # shellcheck disable=SC2086 # one -require per module
      $GO mod edit $mods
      $GO mod tidy
    )
    echo "e2e tools: aligned hack/tools/$t" >&2
  done
  exit 0
fi

# version_of <tool> <module>: the version of module required by hack/tools/<tool>/go.mod.
version_of() {
  awk -v m="$2" '$1 == m { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "hack/tools/$1/go.mod"
}

# hash_of <tool>: a short hash of the tools module's files.
hash_of() {
  (cd "hack/tools/$1" && cat go.mod go.sum $(find . -name '*.go' | LC_ALL=C sort) | sha256sum | cut -c1-12)
}

kube_version=$(version_of kube k8s.io/kubernetes)
kube_minor=$(echo "$kube_version" | cut -d. -f2)
kube_ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$kube_minor -X $pkg.gitTreeState=clean"
done
helm_version=$(version_of helm helm.sh/helm/v4)

# tool <name> <version> <ldflags> <packages...>: one line per tool.
tools=(
  "kube|$kube_version|$kube_ldflags|./kube-apiserver ./kube-controller-manager ./kube-scheduler ./kubelet ./kube-proxy"
  "coredns|$(version_of coredns github.com/coredns/coredns)||."
  "etcd|$(version_of etcd go.etcd.io/etcd/server/v3)||."
  "kwok|$(version_of kwok sigs.k8s.io/kwok)||sigs.k8s.io/kwok/cmd/kwok"
  "helm|$helm_version|-X helm.sh/helm/v4/internal/version.version=$helm_version|helm.sh/helm/v4/cmd/helm"
)
case $which in
  local) ;;
  kind) tools=("kind|$(version_of kind sigs.k8s.io/kind)||sigs.k8s.io/kind" "${tools[@]:4}") ;; # kind and helm
  all) tools+=("kind|$(version_of kind sigs.k8s.io/kind)||sigs.k8s.io/kind") ;;
  *) echo "usage: $0 [local|kind|all|align]" >&2; exit 2 ;;
esac

mkdir -p "$cache"
dirs=()
pids=()
names=()
for t in "${tools[@]}"; do
  IFS='|' read -r name version ldflags pkgs <<<"$t"
  dir="$cache/$name-$version-$(hash_of "$name")"
  dirs+=("$dir")
  if [[ -f $dir/.complete ]]; then
    echo "e2e tools: $name $version cached in $dir" >&2
    continue
  fi
  echo "e2e tools: building $name $version into $dir" >&2
  (
    start=$SECONDS
    tmp="$dir.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    # shellcheck disable=SC2086 # pkgs is a list
    # No -trimpath: it would change every compile action, and nothing would
    # be shared with the main module's builds in GOCACHE.
    if ! (cd "hack/tools/$name" && $GO build -ldflags "$ldflags" -o "$tmp/" $pkgs) >"$tmp.log" 2>&1; then
      echo "e2e tools: building $name failed:" >&2
      cat "$tmp.log" >&2
      rm -rf "$tmp" "$tmp.log"
      exit 1
    fi
    rm -f "$tmp.log"
    touch "$tmp/.complete"
    # Another run may have finished the same build meanwhile; keep its copy.
    mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
    echo "e2e tools: built $name $version in $((SECONDS - start))s" >&2
  ) &
  pids+=($!)
  names+=("$name")
done

failed=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { echo "e2e tools: ${names[$i]} did not build" >&2; failed=1; }
done
[[ $failed == 0 ]] || exit 1

(IFS=:; echo "${dirs[*]}")
