package physical

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/test/e2e/framework/process"
)

//go:embed kwok.yaml
var kwokConfig []byte

// LocalTools are the binaries of a local cluster.
type LocalTools struct {
	Etcd, KubeAPIServer, KubeControllerManager, KubeScheduler, Kwok string
}

// Local runs each cluster as five processes on 127.0.0.1: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok, which
// simulates one node and the status of the pods scheduled to it. Nothing
// binds a non-loopback address: etcd and the API server listen on
// 127.0.0.1, the controller manager, the scheduler and kwok serve nothing.
type Local struct {
	Tools LocalTools
	Group *process.Group
	// Dir holds one directory per cluster (certificates, etcd data,
	// kubeconfig).
	Dir string

	mu    sync.Mutex
	procs map[string][]*process.Process
}

// Name implements Provider.
func (l *Local) Name() string { return "local" }

// Create implements Provider.
func (l *Local) Create(ctx context.Context, name string) (*Cluster, error) {
	for _, t := range []string{l.Tools.Etcd, l.Tools.KubeAPIServer, l.Tools.KubeControllerManager, l.Tools.KubeScheduler, l.Tools.Kwok} {
		if _, err := os.Stat(t); err != nil {
			return nil, fmt.Errorf("local physical clusters need %s (make e2e-tools builds it): %w", filepath.Base(t), err)
		}
	}
	dir := filepath.Join(l.Dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	c, err := l.create(ctx, name, dir)
	if err != nil {
		// Leave nothing running for a cluster that did not come up.
		l.stop(name)
		return nil, fmt.Errorf("local physical cluster %s: %w", name, err)
	}
	return c, nil
}

func (l *Local) create(ctx context.Context, name, dir string) (*Cluster, error) {
	p, err := writePKI(dir)
	if err != nil {
		return nil, err
	}
	// Ports are picked free and then bound by another process; when one was
	// taken in between, start the control plane again with new ports.
	var apiserverURL string
	for attempt := 1; ; attempt++ {
		apiserverURL, err = l.startControlPlane(ctx, name, dir, p)
		if err == nil {
			break
		}
		if !errors.Is(err, errPortInUse) || attempt == 3 {
			return nil, err
		}
		l.stop(name)
	}

	kubeconfig := filepath.Join(dir, "admin.kubeconfig")
	if err := writeKubeconfig(kubeconfig, name, apiserverURL, p); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "kwok.yaml"), kwokConfig, 0o644); err != nil {
		return nil, err
	}
	for _, spec := range []process.Spec{{
		Name: name + "-kube-controller-manager",
		Path: l.Tools.KubeControllerManager,
		Args: []string{
			"--kubeconfig=" + kubeconfig,
			"--authentication-kubeconfig=" + kubeconfig,
			"--authorization-kubeconfig=" + kubeconfig,
			"--bind-address=127.0.0.1", "--secure-port=0",
			"--leader-elect=true",
			"--service-account-private-key-file=" + p.ServiceAccountKey,
			"--root-ca-file=" + p.CACert,
			"--cluster-signing-cert-file=" + p.CACert,
			"--cluster-signing-key-file=" + p.CAKey,
			"--use-service-account-credentials=false",
			"--concurrent-deployment-syncs=5",
			"--v=1",
		},
	}, {
		Name: name + "-kube-scheduler",
		Path: l.Tools.KubeScheduler,
		Args: []string{
			"--kubeconfig=" + kubeconfig,
			"--authentication-kubeconfig=" + kubeconfig,
			"--authorization-kubeconfig=" + kubeconfig,
			"--bind-address=127.0.0.1", "--secure-port=0",
			"--leader-elect=true",
			"--v=1",
		},
	}, {
		Name: name + "-kwok",
		Path: l.Tools.Kwok,
		Args: []string{
			"--kubeconfig=" + kubeconfig,
			"--config=" + filepath.Join(dir, "kwok.yaml"),
			// No kwok server: with neither set it listens nowhere.
			"--server-address=", "--node-port=0",
		},
	}} {
		if _, err := l.start(name, spec); err != nil {
			return nil, err
		}
	}

	cfg, err := (&Cluster{Name: name, Kubeconfig: kubeconfig}).Config()
	if err != nil {
		return nil, err
	}
	if err := l.waitUsable(ctx, name, cfg); err != nil {
		return nil, err
	}
	return &Cluster{Name: name, Kubeconfig: kubeconfig, Simulated: true}, nil
}

var errPortInUse = errors.New("a port was taken")

// startControlPlane starts etcd and kube-apiserver and waits for /readyz.
func (l *Local) startControlPlane(ctx context.Context, name, dir string, p *pki) (string, error) {
	ports, err := process.FreePorts(3)
	if err != nil {
		return "", err
	}
	etcdClient, etcdPeer, secure := ports[0], ports[1], ports[2]
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdClient)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPeer)
	dataDir := filepath.Join(dir, "etcd")
	if err := os.RemoveAll(dataDir); err != nil {
		return "", err
	}
	etcd, err := l.start(name, process.Spec{
		Name: name + "-etcd",
		Path: l.Tools.Etcd,
		Args: []string{
			"--name=" + name, "--data-dir=" + dataDir,
			"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
			"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=" + name + "=" + peerURL,
			"--unsafe-no-fsync", "--quota-backend-bytes=2147483648",
			"--log-level=warn",
		},
	})
	if err != nil {
		return "", err
	}
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, nil, 0o600); err != nil {
		return "", err
	}
	url := fmt.Sprintf("https://127.0.0.1:%d", secure)
	apiserver, err := l.start(name, process.Spec{
		Name: name + "-kube-apiserver",
		Path: l.Tools.KubeAPIServer,
		Args: []string{
			"--bind-address=127.0.0.1",
			// The advertised address is only written into the endpoints of
			// the "kubernetes" service, and it may not be a loopback one.
			// Advertise a documentation address (RFC 5737, never routed)
			// and write no endpoints; nothing in these clusters dials it.
			"--advertise-address=192.0.2.1", "--endpoint-reconciler-type=none",
			"--secure-port=" + process.Itoa(secure),
			"--etcd-servers=" + etcdURL,
			"--tls-cert-file=" + p.ServingCert, "--tls-private-key-file=" + p.ServingKey,
			"--client-ca-file=" + p.CACert,
			"--authorization-mode=Node,RBAC",
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + p.ServiceAccountPub,
			"--service-account-signing-key-file=" + p.ServiceAccountKey,
			"--service-cluster-ip-range=10.96.0.0/16",
			"--enable-priority-and-fairness=false",
			"--profiling=false",
			"--v=1",
		},
	})
	if err != nil {
		return "", err
	}
	cfg := &rest.Config{Host: url, TLSClientConfig: rest.TLSClientConfig{CAFile: p.CACert}}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return "", err
	}
	client.Timeout = 5 * time.Second
	readyCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := process.WaitHTTP(readyCtx, apiserver, client, url+"/readyz"); err != nil {
		if etcd.PortInUse() || apiserver.PortInUse() {
			return "", fmt.Errorf("%w: %v", errPortInUse, err)
		}
		if err := etcd.ExitedError("while kube-apiserver was starting"); err != nil {
			return "", err
		}
		return "", err
	}
	return url, nil
}

// waitUsable waits until the cluster can run pods: kwok's node is Ready,
// the controller manager created the default service account and the
// scheduler holds its lease. The node is created here.
func (l *Local) waitUsable(ctx context.Context, name string, cfg *rest.Config) error {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        "kwok-node-0",
		Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
		Labels: map[string]string{
			"kubernetes.io/hostname": "kwok-node-0", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			"kubernetes.io/role": "agent", "type": "kwok",
		},
	}}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the kwok node: %w", err)
	}
	checks := []struct {
		what string
		ok   func(ctx context.Context) (bool, error)
	}{
		{"kwok to make the node Ready", func(ctx context.Context) (bool, error) {
			n, err := client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					return c.Status == corev1.ConditionTrue, nil
				}
			}
			return false, nil
		}},
		{"kube-controller-manager to create the default service account", func(ctx context.Context) (bool, error) {
			_, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
			return err == nil, ignoreNotFound(err)
		}},
		{"kube-scheduler to take its lease", func(ctx context.Context) (bool, error) {
			_, err := client.CoordinationV1().Leases("kube-system").Get(ctx, "kube-scheduler", metav1.GetOptions{})
			return err == nil, ignoreNotFound(err)
		}},
	}
	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for _, c := range checks {
		var last error
		err := wait.PollUntilContextCancel(waitCtx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			if err := l.exited(name); err != nil {
				return false, err
			}
			ok, err := c.ok(ctx)
			last = err
			return ok, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for %s: %w (last error: %v)", c.what, err, last)
		}
	}
	return nil
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// exited returns an error when a process of the cluster has exited.
func (l *Local) exited(name string) error {
	l.mu.Lock()
	procs := l.procs[name]
	l.mu.Unlock()
	for _, p := range procs {
		if err := p.ExitedError("while the cluster was starting"); err != nil {
			return err
		}
	}
	return nil
}

func (l *Local) start(name string, spec process.Spec) (*process.Process, error) {
	p, err := l.Group.Start(spec)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	if l.procs == nil {
		l.procs = map[string][]*process.Process{}
	}
	l.procs[name] = append(l.procs[name], p)
	l.mu.Unlock()
	return p, nil
}

// Delete implements Provider: it stops the cluster's processes by PID, the
// components first, then the API server, then etcd.
func (l *Local) Delete(_ context.Context, c *Cluster) error {
	return errors.Join(l.stop(c.Name)...)
}

func (l *Local) stop(name string) []error {
	l.mu.Lock()
	procs := l.procs[name]
	delete(l.procs, name)
	l.mu.Unlock()
	var components, apiserver, etcd []*process.Process
	for _, p := range procs {
		switch p.Name {
		case name + "-etcd":
			etcd = append(etcd, p)
		case name + "-kube-apiserver":
			apiserver = append(apiserver, p)
		default:
			components = append(components, p)
		}
	}
	var errs []error
	errs = append(errs, process.Stop(components, 10*time.Second)...)
	errs = append(errs, process.Stop(apiserver, 20*time.Second)...)
	errs = append(errs, process.Stop(etcd, 10*time.Second)...)
	return errs
}
