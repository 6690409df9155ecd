package realclustere2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// hostState is what the real cluster changes on this machine while it runs:
// network links and lo's addresses, network namespaces, the fixed host
// paths of kubelet, containerd and CNI, KUBE-*/CNI-* iptables chains,
// sysctls, mounts below those paths, and the pods' cgroups.
type hostState struct {
	Links, LoAddrs, Netns, Paths, Chains, Sysctls, Mounts, Cgroups []string
}

func readHostState() hostState {
	var s hostState
	s.Links = lines("ip", "-o", "link", "show")
	for i, l := range s.Links {
		// "N: name: <flags> ..." without counters that change.
		f := strings.Fields(l)
		if len(f) > 1 {
			s.Links[i] = strings.TrimSuffix(f[1], ":")
		}
	}
	for _, l := range lines("ip", "-o", "addr", "show", "dev", "lo") {
		if f := strings.Fields(l); len(f) > 3 {
			s.LoAddrs = append(s.LoAddrs, f[3])
		}
	}
	if entries, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range entries {
			s.Netns = append(s.Netns, e.Name())
		}
	}
	for _, p := range []string{"/var/lib/kubelet", "/var/log/containers", "/var/log/pods", "/run/netns", "/run/containerd", "/var/lib/cni", "/run/tessera-real"} {
		if _, err := os.Stat(p); err == nil {
			s.Paths = append(s.Paths, p)
		}
	}
	for _, cmd := range []string{"iptables", "ip6tables"} {
		if _, err := exec.LookPath(cmd); err != nil {
			continue
		}
		for _, t := range []string{"filter", "nat", "mangle", "raw"} {
			for _, l := range lines(cmd, "-w", "-t", t, "-S") {
				if f := strings.Fields(l); len(f) > 1 && f[0] == "-N" && (strings.HasPrefix(f[1], "KUBE-") || strings.HasPrefix(f[1], "CNI-")) {
					s.Chains = append(s.Chains, cmd+" "+t+" "+f[1])
				}
			}
		}
	}
	for _, k := range []string{"net/ipv4/ip_forward", "vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
		"net/ipv4/conf/all/route_localnet", "net/bridge/bridge-nf-call-iptables"} {
		if b, err := os.ReadFile("/proc/sys/" + k); err == nil {
			s.Sysctls = append(s.Sysctls, k+"="+strings.TrimSpace(string(b)))
		}
	}
	if b, err := os.ReadFile("/proc/self/mounts"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) > 1 && (strings.Contains(f[1], "kubelet") || strings.Contains(f[1], "containerd") ||
				strings.HasPrefix(f[1], "/run/netns") || strings.Contains(f[1], "tessera-e2e-realcluster")) {
				s.Mounts = append(s.Mounts, f[1])
			}
		}
	}
	if m, err := filepath.Glob("/sys/fs/cgroup/*/kubepods"); err == nil {
		s.Cgroups = m
	}
	for _, l := range [][]string{s.Links, s.LoAddrs, s.Netns, s.Chains, s.Mounts} {
		sort.Strings(l)
	}
	return s
}

// lines runs a command and returns its output lines; nothing when it fails.
func lines(name string, args ...string) []string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return nil
	}
	return strings.FieldsFunc(string(out), func(r rune) bool { return r == '\n' })
}
