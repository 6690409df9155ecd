// Package physical provides physical clusters, real Kubernetes API servers,
// to the e2e suite. A Provider yields kubeconfigs; specs never care who
// provides them:
//
//   - local: kube-apiserver, etcd, kube-controller-manager and kube-scheduler
//     as processes on 127.0.0.1, with kwok simulating nodes and pod status;
//   - real: one cluster whose pods really run, on this machine (containerd,
//     kubelet, kube-proxy, CoreDNS; needs root, see real.go);
//   - kind: kind clusters from a pinned kindest/node image (needs a container
//     engine);
//   - kubeconfig: clusters someone else started.
package physical

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster is a running physical cluster.
type Cluster struct {
	// Name is the name the suite gave it ("p1", "p2", ...).
	Name string
	// Kubeconfig is the path of a kubeconfig with cluster-admin rights.
	Kubeconfig string
	// Simulated is true when pods never run for real (kwok): their status
	// is written by a simulator, and pod and service IPs are only API
	// fields that nothing may connect to.
	Simulated bool
	// NodeAddress, when not empty, is an address of a node at which this
	// machine reaches the cluster's NodePort Services (the real provider's
	// RealNodeAddress). Its ClusterIPs are reachable from this machine too
	// when the provider says so (real: yes).
	NodeAddress string
}

// Config returns a client configuration for the cluster.
func (c *Cluster) Config() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig of physical cluster %s: %w", c.Name, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	return cfg, nil
}

// Client returns a typed client for the cluster.
func (c *Cluster) Client() (kubernetes.Interface, error) {
	cfg, err := c.Config()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// Provider creates and deletes physical clusters.
type Provider interface {
	// Name is the provider's name: local, kind, kubeconfig or real.
	Name() string
	// Create starts a cluster and returns once it can run pods.
	Create(ctx context.Context, name string) (*Cluster, error)
	// Delete stops a cluster the provider created.
	Delete(ctx context.Context, c *Cluster) error
}

// Kubeconfigs is the provider of clusters that are already running: the
// n-th cluster asked for is the n-th kubeconfig.
type Kubeconfigs struct {
	Paths []string

	mu   sync.Mutex
	next int
}

// Name implements Provider.
func (k *Kubeconfigs) Name() string { return "kubeconfig" }

// Create implements Provider.
func (k *Kubeconfigs) Create(_ context.Context, name string) (*Cluster, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.next >= len(k.Paths) {
		return nil, fmt.Errorf("physical cluster %s: only %d kubeconfigs were given", name, len(k.Paths))
	}
	p := k.Paths[k.next]
	k.next++
	if _, err := os.Stat(p); err != nil {
		return nil, err
	}
	return &Cluster{Name: name, Kubeconfig: p}, nil
}

// Delete implements Provider; clusters someone else started are left alone.
func (k *Kubeconfigs) Delete(context.Context, *Cluster) error { return nil }

// SplitList splits a list of paths separated by commas or the OS path list
// separator.
func SplitList(s string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == filepath.ListSeparator }) {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
