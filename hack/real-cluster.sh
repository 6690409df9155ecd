#!/usr/bin/env bash
# Prepares this machine for the e2e suite's real physical cluster (provider
# "real" of test/e2e/framework/physical) and puts it back as it was.
#
#   hack/real-cluster.sh up DIR    install what is missing, write the
#                                  containerd and CNI configuration under DIR,
#                                  create the bridge and the node address
#   hack/real-cluster.sh down      tear down what any earlier run left
#
# The provider runs `up`, then starts etcd, kube-apiserver, the controller
# manager, the scheduler, containerd, kubelet, kube-proxy and CoreDNS as its
# own processes, and runs `down` after stopping them. `up` runs `down` first,
# so a run that was killed (its processes die with the test binary, but the
# pods' runc containers, their network namespaces, mounts and iptables
# chains stay) is cleaned before the next one starts.
#
# What the cluster uses on the host:
#   - Debian packages containerd, runc, containernetworking-plugins,
#     conntrack, iptables, socat (installed once with apt-get; they stay);
#   - the node address 198.51.100.10/32 (RFC 5737) on lo: every server of the
#     cluster that is not on 127.0.0.1 listens there;
#   - the bridge tessera0 with 10.213.0.1/24, the pods' network (CoreDNS
#     listens on 10.213.0.1);
#   - sysctls kubelet and the cluster change (net.ipv4.ip_forward=1, the
#     kernel tunables kubelet sets), saved here and restored by `down`;
#   - iptables chains KUBE-* and CNI-* (those that did not exist before are
#     removed by `down`), cgroups kubepods, and the fixed host paths of
#     kubelet, containerd 1.6 and CNI (/var/lib/kubelet, /var/log/containers,
#     /var/log/pods, /run/netns, /run/containerd, /var/lib/cni; removed by
#     `down` when `up` did not find them).
#
# State between up and down lives in /run/tessera-real (the state of the
# machine before `up`, the work directory, PIDs the provider started). Only
# one real cluster can run on a machine at a time: the provider holds
# /run/tessera-real.lock while its cluster runs, and the script refuses to
# run while someone else holds it.
set -euo pipefail

state=/run/tessera-real
node_ip=198.51.100.10
bridge=tessera0
bridge_cidr=10.213.0.1/24
pod_subnet=10.213.0.0/24
host_paths=(/var/lib/kubelet /var/log/containers /var/log/pods /run/netns /run/containerd /var/lib/cni)
sysctls=(net/ipv4/ip_forward vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops
  kernel/keys/root_maxkeys kernel/keys/root_maxbytes net/ipv4/conf/all/route_localnet
  net/bridge/bridge-nf-call-iptables net/netfilter/nf_conntrack_max)
packages=(containerd runc containernetworking-plugins conntrack iptables socat)
cni_bin=/usr/lib/cni

log() { echo "real-cluster: $*" >&2; }
die() { log "$*"; exit 1; }

need_root() {
  [[ $(id -u) == 0 ]] || die "must run as root (it installs packages, creates a bridge, iptables chains and mounts)"
}

install_packages() {
  local missing=() p
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [[ ${#missing[@]} == 0 ]] && return
  log "installing ${missing[*]} with apt-get"
  command -v apt-get >/dev/null || die "apt-get not found: install ${missing[*]} by hand (Debian package names)"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; then
    apt-get update -qq >&2 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
      die "apt-get could not install ${missing[*]}"
  fi
  # A containerd the package started as a service is not ours to run: the
  # cluster runs its own with its own socket. Leave a running one alone.
}

# chains <iptables|ip6tables> <table>: the KUBE-* and CNI-* chains of a table.
chains() {
  "$1" -w -t "$2" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^(KUBE-|CNI-)/ { print $2 }' | LC_ALL=C sort
}

up() {
  local dir=$1
  need_root
  down
  install_packages
  [[ -x $cni_bin/bridge && -x $cni_bin/host-local && -x $cni_bin/loopback ]] || die "CNI plugins missing in $cni_bin"
  mkdir -p "$state" "$dir"
  dir=$(cd "$dir" && pwd)

  # The machine as it was: sysctls, host paths, chains, network namespaces.
  local s p cmd t
  for s in "${sysctls[@]}"; do
    [[ -r /proc/sys/$s ]] && echo "$s $(cat "/proc/sys/$s")"
  done >"$state/sysctls"
  for p in "${host_paths[@]}"; do
    [[ -e $p ]] && echo "$p"
  done >"$state/paths" || true
  for cmd in iptables ip6tables; do
    for t in filter nat mangle raw; do
      chains "$cmd" "$t" | sed "s|^|$cmd $t |"
    done
  done >"$state/chains"
  echo "$dir" >"$state/dir"
  : >"$state/pids"

  # The node address and the bridge.
  ip addr add "$node_ip/32" dev lo 2>/dev/null || true
  ip link add "$bridge" type bridge 2>/dev/null || true
  ip addr add "$bridge_cidr" dev "$bridge" 2>/dev/null || true
  ip link set "$bridge" up
  echo 1 >/proc/sys/net/ipv4/ip_forward

  mkdir -p "$dir/containerd" "$dir/cni/net.d" "$dir/cni/ipam"
  cat >"$dir/cni/net.d/10-tessera.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "tessera",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$bridge",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$pod_subnet", "gateway": "${bridge_cidr%/*}"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "$dir/cni/ipam"
      }
    },
    {"type": "loopback"}
  ]
}
EOF
  cat >"$dir/containerd/config.toml" <<EOF
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "$dir/containerd/containerd.sock"

[ttrpc]
  address = "$dir/containerd/containerd.sock.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  # Built here and imported, never pulled (test/e2e/framework/physical).
  sandbox_image = "${TESSERA_REAL_PAUSE_IMAGE:-docker.io/tessera-e2e/pause:v1}"
  # Without CAP_SYS_RESOURCE a pod's negative oom_score_adj is refused and
  # every sandbox fails to start.
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$cni_bin"
    conf_dir = "$dir/cni/net.d"
EOF
  log "up: node address $node_ip on lo, bridge $bridge $bridge_cidr, configuration in $dir"
}

# kill_recorded kills the processes the provider recorded ("pid <pid> <start
# time> <name>" lines) that still run, and every process whose command line
# names the work directory (containerd's shims).
kill_recorded() {
  local dir=$1 what pid start name
  if [[ -f $state/pids ]]; then
    while read -r what pid start name; do
      [[ $what == pid && -r /proc/$pid/stat ]] || continue
      [[ "$(sed 's/.*) //' "/proc/$pid/stat" | awk '{print $20}')" == "$start" ]] || continue
      log "killing leftover $name (pid $pid)"
      kill -KILL "$pid" 2>/dev/null || true
    done <"$state/pids"
  fi
  [[ -n $dir ]] || return 0
  local cmdline
  for pid in /proc/[0-9]*; do
    pid=${pid#/proc/}
    [[ $pid != "$$" && $pid != "$BASHPID" ]] || continue
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || continue
    [[ $cmdline == *"$dir/"* ]] || continue
    log "killing leftover ${cmdline:0:100} (pid $pid)"
    kill -KILL "$pid" 2>/dev/null || true
  done
}

# remove_chains removes the KUBE-* and CNI-* chains `up` did not find, and
# the rules that jump to them.
remove_chains() {
  local cmd t rule chain ours
  for cmd in iptables ip6tables; do
    command -v "$cmd" >/dev/null || continue
    for t in filter nat mangle raw; do
      ours=$(comm -23 <(chains "$cmd" "$t") <(awk -v c="$cmd" -v t="$t" '$1 == c && $2 == t { print $3 }' "$state/chains" 2>/dev/null | LC_ALL=C sort))
      [[ -n $ours ]] || continue
      # Rules elsewhere that jump to our chains.
      { "$cmd" -w -t "$t" -S | grep -E -- '^-A ' || true; } | while read -r rule; do
        chain=$(awk '{print $2}' <<<"$rule")
        grep -qxF -- "$chain" <<<"$ours" && continue
        grep -qE -- "-j ($(tr '\n' '|' <<<"$ours" | sed 's/|$//'))( |$)" <<<"$rule" || continue
        eval "$cmd -w -t $t ${rule/#-A/-D}" 2>/dev/null || true
      done
      for chain in $ours; do "$cmd" -w -t "$t" -F "$chain" 2>/dev/null || true; done
      for chain in $ours; do "$cmd" -w -t "$t" -X "$chain" 2>/dev/null || true; done
    done
  done
}

down() {
  need_root
  if [[ ! -d $state ]]; then
    return 0
  fi
  local dir="" p s v m
  [[ -f $state/dir ]] && dir=$(cat "$state/dir")
  log "down: cleaning what the cluster in ${dir:-?} left"
  kill_recorded "$dir"

  # Pods' containers: runc keeps them under containerd's runtime root.
  local root id
  for root in /run/containerd/runc/k8s.io ${dir:+$dir/containerd/state/runc/k8s.io}; do
    [[ -d $root ]] || continue
    for id in $(runc --root "$root" list -q 2>/dev/null); do
      runc --root "$root" delete -f "$id" >/dev/null 2>&1 || true
    done
  done
  # Processes of containers whose runc state is gone: anything left in the
  # pods' cgroups.
  for p in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
    [[ -d $p ]] || continue
    find "$p" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
  done
  sleep 0.2

  # Network namespaces of the pods (CNI names them cni-*) and their mounts.
  for p in /run/netns/cni-*; do
    [[ -e $p ]] || continue
    ip netns delete "${p##*/}" 2>/dev/null || { umount -l "$p" 2>/dev/null; rm -f "$p"; }
  done
  # Mounts under the work directory and the host paths, deepest first.
  local prefixes=("${host_paths[@]}")
  [[ -n $dir ]] && prefixes+=("$dir")
  for m in $(awk '{print $2}' /proc/self/mounts | LC_ALL=C sort -r); do
    for p in "${prefixes[@]}"; do
      if [[ $m == "$p" || $m == "$p"/* ]]; then
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
        break
      fi
    done
  done

  remove_chains
  ip link del "$bridge" 2>/dev/null || true
  ip addr del "$node_ip/32" dev lo 2>/dev/null || true
  for p in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
    [[ -d $p ]] && find "$p" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done

  for p in "${host_paths[@]}"; do
    if [[ -e $p ]] && ! grep -qxF -- "$p" "$state/paths" 2>/dev/null; then
      rm -rf --one-file-system "$p"
    fi
  done
  if [[ -f $state/sysctls ]]; then
    while read -r s v; do
      [[ $(cat "/proc/sys/$s" 2>/dev/null) == "$v" ]] || echo "$v" >"/proc/sys/$s" 2>/dev/null || log "could not restore $s to $v"
    done <"$state/sysctls"
  fi
  # The cluster's bulk (images, snapshots, kubelet's pods, volumes); its
  # configuration and the logs beside it stay for whoever looks into a run.
  if [[ -n $dir && -d $dir ]]; then
    rm -rf --one-file-system "$dir/containerd/root" "$dir/containerd/state" "$dir/kubelet" "$dir/volumes" "$dir/etcd"
  fi
  rm -rf "$state"
  log "down: done"
}

# The provider holds this lock while its cluster runs and calls the script
# with TESSERA_REAL_LOCK_HELD=1; anyone else must not tear down a running
# cluster or start a second one.
if [[ ${TESSERA_REAL_LOCK_HELD:-} != 1 && ${1:-} =~ ^(up|down)$ ]]; then
  need_root
  exec 9>/run/tessera-real.lock
  flock -n 9 || die "a real cluster is running on this machine (/run/tessera-real.lock is held); stop it first"
fi

case ${1:-} in
  up)
    [[ -n ${2:-} ]] || die "usage: $0 up DIR"
    up "$2"
    ;;
  down) down ;;
  *) die "usage: $0 up DIR | down" ;;
esac
