package physical

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/test/e2e/framework/process"
)

// The addresses of the real cluster, fixed (hack/real-cluster.sh creates
// them): one real cluster runs on a machine at a time.
const (
	// RealNodeAddress is the node's address (RFC 5737, on lo): the API
	// server, kubelet and kube-proxy listen there, and NodePort Services
	// answer there from this machine.
	RealNodeAddress = "198.51.100.10"
	// RealAPIServerPort is the API server's port on RealNodeAddress.
	RealAPIServerPort = 6443
	// RealDNSAddress is where CoreDNS answers: the gateway of the pods'
	// bridge tessera0 (10.213.0.0/24), the pods' nameserver.
	RealDNSAddress = "10.213.0.1"
	// RealPodCIDR is the pods' network, RealServiceCIDR the Services'.
	RealPodCIDR     = "10.213.0.0/24"
	RealServiceCIDR = "10.96.0.0/16"
	// RealStorageClass is the default StorageClass: hostPath
	// PersistentVolumes created with the cluster (RealVolumes of them, each
	// RealVolumeSize), bound to claims by the PV controller; their data
	// stays across pod restarts.
	RealStorageClass = "standard"
	RealVolumes      = 24
	RealVolumeSize   = "100Gi"
	// RealPauseImage is the sandbox image (hack/pause), imported from the
	// tarball the provider is given, never pulled.
	RealPauseImage = "docker.io/tessera-e2e/pause:v1"
	// RealNodeName is the name of the one node.
	RealNodeName = "tessera-real"

	realLock = "/run/tessera-real.lock"
	realPIDs = "/run/tessera-real/pids"
)

// RealTools are the binaries of a real cluster (hack/e2e-tools.sh builds
// them), the host script and the pause image.
type RealTools struct {
	Etcd, KubeAPIServer, KubeControllerManager, KubeScheduler, Kubelet, KubeProxy, CoreDNS string
	// Script is hack/real-cluster.sh.
	Script string
	// PauseImage is a docker-save tarball of RealPauseImage (hack/images
	// of hack/pause).
	PauseImage string
}

// ImageLoader is implemented by providers whose clusters run pods for real:
// LoadImage makes the images of a docker-save tarball (as hack/images and
// go-containerregistry's tarball.WriteToFile write it) available to the
// cluster's pods without a registry; pods name them in full
// ("docker.io/x/y:tag") with imagePullPolicy IfNotPresent or Never.
type ImageLoader interface {
	LoadImage(ctx context.Context, c *Cluster, tarball string) error
}

// Real runs one Kubernetes cluster whose pods really run, on this machine:
// etcd (127.0.0.1), kube-apiserver, kube-controller-manager, kube-scheduler,
// containerd (Debian package, its own socket and directories), kubelet,
// kube-proxy (iptables mode) and CoreDNS (on the bridge's gateway), each a
// process of Group, so the suite's ledger and sweep stop them when a suite
// crashes. hack/real-cluster.sh prepares the host and leaves it as it found
// it. It needs root; a second cluster on the same machine, from this
// provider or another process, is refused.
type Real struct {
	Tools RealTools
	Group *process.Group
	// Dir holds one directory per cluster.
	Dir string
	// LockWait is how long Create waits for a real cluster of another
	// process (another suite of the same run) to end; 0 refuses at once.
	LockWait time.Duration
	// BeforeStart, when set, runs once the machine is this provider's (the
	// lock is held) and before the cluster changes it.
	BeforeStart func()

	mu      sync.Mutex
	lock    *os.File
	cluster *Cluster
	dir     string
	procs   []*process.Process
}

// Name implements Provider.
func (r *Real) Name() string { return "real" }

// Create implements Provider.
func (r *Real) Create(ctx context.Context, name string) (*Cluster, error) {
	for _, t := range []string{r.Tools.Etcd, r.Tools.KubeAPIServer, r.Tools.KubeControllerManager, r.Tools.KubeScheduler,
		r.Tools.Kubelet, r.Tools.KubeProxy, r.Tools.CoreDNS, r.Tools.Script, r.Tools.PauseImage} {
		if _, err := os.Stat(t); err != nil {
			return nil, fmt.Errorf("real physical clusters need %s (hack/e2e-tools.sh builds the tools): %w", filepath.Base(t), err)
		}
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("real physical clusters need root (containerd, a bridge, iptables)")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cluster != nil {
		return nil, fmt.Errorf("real physical cluster %s: cluster %s runs already; only one real cluster runs on a machine", name, r.cluster.Name)
	}
	lock, err := os.OpenFile(realLock, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(r.LockWait)
	for {
		err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			lock.Close()
			return nil, fmt.Errorf("real physical cluster %s: another real cluster runs on this machine (%s is locked by a running process, waited %s; they share fixed host paths, addresses and the bridge tessera0)", name, realLock, r.LockWait)
		}
		time.Sleep(time.Second)
	}
	r.lock = lock
	if r.BeforeStart != nil {
		// The machine is as the last cluster left it, and nobody else's.
		r.BeforeStart()
	}
	r.dir = filepath.Join(r.Dir, name)
	c, err := r.create(ctx, name)
	if err != nil {
		// Leave nothing running and the machine as it was.
		errs := []error{fmt.Errorf("real physical cluster %s: %w", name, err)}
		errs = append(errs, r.teardown(context.WithoutCancel(ctx))...)
		return nil, errors.Join(errs...)
	}
	r.cluster = c
	return c, nil
}

func (r *Real) create(ctx context.Context, name string) (*Cluster, error) {
	dir := r.dir
	start := time.Now()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := r.script(ctx, "up", dir); err != nil {
		return nil, err
	}
	p, err := writePKI(dir, net.ParseIP(RealNodeAddress))
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "admin.kubeconfig")
	url := fmt.Sprintf("https://%s:%d", RealNodeAddress, RealAPIServerPort)
	if err := writeKubeconfig(kubeconfig, name, url, p); err != nil {
		return nil, err
	}

	ports, err := process.FreePorts(2)
	if err != nil {
		return nil, err
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	if _, err := r.start(process.Spec{
		Name: name + "-etcd",
		Path: r.Tools.Etcd,
		Args: []string{
			"--name=" + name, "--data-dir=" + filepath.Join(dir, "etcd"),
			"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
			"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=" + name + "=" + peerURL,
			"--unsafe-no-fsync", "--quota-backend-bytes=2147483648",
			"--log-level=warn",
		},
	}); err != nil {
		return nil, err
	}
	apiserver, err := r.start(process.Spec{
		Name: name + "-kube-apiserver",
		Path: r.Tools.KubeAPIServer,
		Args: []string{
			// The node address, not loopback: the "kubernetes" Service's
			// endpoint is the advertised address, and pods reach it there.
			"--bind-address=" + RealNodeAddress, "--advertise-address=" + RealNodeAddress,
			"--secure-port=" + process.Itoa(RealAPIServerPort),
			"--etcd-servers=" + etcdURL,
			"--tls-cert-file=" + p.ServingCert, "--tls-private-key-file=" + p.ServingKey,
			"--client-ca-file=" + p.CACert,
			"--kubelet-client-certificate=" + p.AdminCert, "--kubelet-client-key=" + p.AdminKey,
			"--kubelet-preferred-address-types=InternalIP",
			"--authorization-mode=Node,RBAC",
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + p.ServiceAccountPub,
			"--service-account-signing-key-file=" + p.ServiceAccountKey,
			"--service-cluster-ip-range=" + RealServiceCIDR,
			"--service-node-port-range=30000-32767",
			"--profiling=false",
			"--v=1",
		},
	})
	if err != nil {
		return nil, err
	}
	cfg := &rest.Config{Host: url, TLSClientConfig: rest.TLSClientConfig{CAFile: p.CACert}}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	httpClient.Timeout = 5 * time.Second
	readyCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := process.WaitHTTP(readyCtx, apiserver, httpClient, url+"/readyz"); err != nil {
		return nil, err
	}
	apiserverReady := time.Since(start)

	containerdSock := filepath.Join(dir, "containerd", "containerd.sock")
	specs := []process.Spec{{
		Name: name + "-kube-controller-manager",
		Path: r.Tools.KubeControllerManager,
		Args: []string{
			"--kubeconfig=" + kubeconfig,
			"--authentication-kubeconfig=" + kubeconfig,
			"--authorization-kubeconfig=" + kubeconfig,
			"--bind-address=127.0.0.1", "--secure-port=0",
			"--leader-elect=false",
			"--service-account-private-key-file=" + p.ServiceAccountKey,
			"--root-ca-file=" + p.CACert,
			"--cluster-signing-cert-file=" + p.CACert,
			"--cluster-signing-key-file=" + p.CAKey,
			"--use-service-account-credentials=false",
			"--v=1",
		},
	}, {
		Name: name + "-kube-scheduler",
		Path: r.Tools.KubeScheduler,
		Args: []string{
			"--kubeconfig=" + kubeconfig,
			"--authentication-kubeconfig=" + kubeconfig,
			"--authorization-kubeconfig=" + kubeconfig,
			"--bind-address=127.0.0.1", "--secure-port=0",
			"--leader-elect=false",
			"--v=1",
		},
	}, {
		Name: name + "-containerd",
		Path: "containerd",
		Args: []string{"--config=" + filepath.Join(dir, "containerd", "config.toml"), "--log-level=warn"},
	}}
	for _, spec := range specs {
		if _, err := r.start(spec); err != nil {
			return nil, err
		}
	}
	if err := r.waitFor(ctx, "containerd's socket", func(context.Context) (bool, error) {
		_, err := os.Stat(containerdSock)
		return err == nil, nil
	}); err != nil {
		return nil, err
	}
	if err := r.ctr(ctx, "images", "import", r.Tools.PauseImage); err != nil {
		return nil, fmt.Errorf("importing the pause image: %w", err)
	}

	kubeletConfig := filepath.Join(dir, "kubelet.yaml")
	if err := os.WriteFile(kubeletConfig, []byte(fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %[1]s
port: 10250
readOnlyPort: 0
healthzBindAddress: %[1]s
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %[2]s}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://%[3]s
clusterDNS: [%[4]s]
clusterDomain: cluster.local
podLogsDir: %[5]s
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {"memory.available": "0%%", "nodefs.available": "0%%", "imagefs.available": "0%%", "nodefs.inodesFree": "0%%"}
serializeImagePulls: false
nodeStatusUpdateFrequency: 4s
syncFrequency: 10s
fileCheckFrequency: 10s
resolvConf: /etc/resolv.conf
`, RealNodeAddress, p.CACert, containerdSock, RealDNSAddress, filepath.Join(dir, "pod-logs"))), 0o644); err != nil {
		return nil, err
	}
	specs = []process.Spec{{
		Name: name + "-kubelet",
		Path: r.Tools.Kubelet,
		Args: []string{
			"--config=" + kubeletConfig,
			"--kubeconfig=" + kubeconfig,
			"--root-dir=" + filepath.Join(dir, "kubelet"),
			"--hostname-override=" + RealNodeName,
			"--node-ip=" + RealNodeAddress,
			"--v=1",
		},
	}, {
		Name: name + "-kube-proxy",
		Path: r.Tools.KubeProxy,
		Args: []string{
			"--kubeconfig=" + kubeconfig,
			"--proxy-mode=iptables",
			"--hostname-override=" + RealNodeName,
			"--cluster-cidr=" + RealPodCIDR,
			"--bind-address=" + RealNodeAddress,
			"--healthz-bind-address=" + RealNodeAddress + ":10256",
			"--metrics-bind-address=" + RealNodeAddress + ":10249",
			"--nodeport-addresses=" + RealNodeAddress + "/32",
			// Leave the host's conntrack and localnet settings alone.
			"--conntrack-max-per-core=0", "--conntrack-tcp-timeout-established=0", "--conntrack-tcp-timeout-close-wait=0",
			"--iptables-localhost-nodeports=false",
			"--v=1",
		},
	}}
	for _, spec := range specs {
		if _, err := r.start(spec); err != nil {
			return nil, err
		}
	}

	corefile := filepath.Join(dir, "Corefile")
	if err := os.WriteFile(corefile, []byte(fmt.Sprintf(`.:53 {
    bind %[1]s
    errors
    health %[1]s:8080
    ready %[1]s:8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig %[2]s
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }
    forward . /etc/resolv.conf
    cache 5
    loadbalance
}
`, RealDNSAddress, kubeconfig)), 0o644); err != nil {
		return nil, err
	}
	if _, err := r.start(process.Spec{
		Name: name + "-coredns",
		Path: r.Tools.CoreDNS,
		Args: []string{"-conf=" + corefile},
	}); err != nil {
		return nil, err
	}

	client, err := kubernetes.NewForConfig(&rest.Config{Host: url, TLSClientConfig: rest.TLSClientConfig{
		CAFile: p.CACert, CertFile: p.AdminCert, KeyFile: p.AdminKey,
	}})
	if err != nil {
		return nil, err
	}
	if err := r.createStorage(ctx, client); err != nil {
		return nil, err
	}
	if err := r.waitFor(ctx, "the node to be Ready", func(ctx context.Context) (bool, error) {
		n, err := client.CoreV1().Nodes().Get(ctx, RealNodeName, metav1.GetOptions{})
		if err != nil {
			return false, ignoreNotFound(err)
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	}); err != nil {
		return nil, err
	}
	nodeReady := time.Since(start)
	resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, net.JoinHostPort(RealDNSAddress, "53"))
	}}
	if err := r.waitFor(ctx, "CoreDNS to resolve kubernetes.default.svc.cluster.local", func(ctx context.Context) (bool, error) {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		addrs, err := resolver.LookupHost(ctx, "kubernetes.default.svc.cluster.local")
		return err == nil && len(addrs) > 0, nil
	}); err != nil {
		return nil, err
	}
	dnsReady := time.Since(start)
	if err := r.waitFor(ctx, "kube-controller-manager to create the default service account", func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, ignoreNotFound(err)
	}); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "real physical cluster %s: API server ready after %s, node Ready after %s, CoreDNS answering after %s\n",
		name, apiserverReady.Round(100*time.Millisecond), nodeReady.Round(100*time.Millisecond), dnsReady.Round(100*time.Millisecond))
	return &Cluster{Name: name, Kubeconfig: kubeconfig, NodeAddress: RealNodeAddress}, nil
}

// createStorage creates the default StorageClass and its hostPath volumes,
// directories under the cluster's directory that anyone may write (pods run
// as any user).
func (r *Real) createStorage(ctx context.Context, client kubernetes.Interface) error {
	if err := r.waitFor(ctx, "the API server to take objects", func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return err == nil, ignoreNotFound(err)
	}); err != nil {
		return err
	}
	bindImmediately := storagev1.VolumeBindingImmediate
	reclaim := corev1.PersistentVolumeReclaimRetain
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        RealStorageClass,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
		},
		Provisioner:       "kubernetes.io/no-provisioner",
		ReclaimPolicy:     &reclaim,
		VolumeBindingMode: &bindImmediately,
	}
	if _, err := client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the default StorageClass: %w", err)
	}
	hostPathType := corev1.HostPathDirectory
	for i := range RealVolumes {
		path := filepath.Join(r.dir, "volumes", fmt.Sprintf("pv%02d", i))
		if err := os.MkdirAll(path, 0o777); err != nil {
			return err
		}
		if err := os.Chmod(path, 0o777); err != nil {
			return err
		}
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-pv%02d", RealStorageClass, i)},
			Spec: corev1.PersistentVolumeSpec{
				StorageClassName:              RealStorageClass,
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(RealVolumeSize)},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadWriteMany},
				PersistentVolumeReclaimPolicy: reclaim,
				PersistentVolumeSource: corev1.PersistentVolumeSource{
					HostPath: &corev1.HostPathVolumeSource{Path: path, Type: &hostPathType},
				},
			},
		}
		if _, err := client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating a PersistentVolume: %w", err)
		}
	}
	return nil
}

// LoadImage implements ImageLoader: ctr images import into containerd's
// k8s.io namespace.
func (r *Real) LoadImage(ctx context.Context, c *Cluster, tarball string) error {
	r.mu.Lock()
	running := r.cluster != nil && r.cluster.Name == c.Name
	r.mu.Unlock()
	if !running {
		return fmt.Errorf("real physical cluster %s is not running", c.Name)
	}
	return r.ctr(ctx, "images", "import", tarball)
}

func (r *Real) ctr(ctx context.Context, args ...string) error {
	args = append([]string{"--namespace=k8s.io", "--address=" + filepath.Join(r.dir, "containerd", "containerd.sock")}, args...)
	out, err := exec.CommandContext(ctx, "ctr", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// Delete implements Provider, in the order that leaves the machine clean:
// the pods are deleted and containerd left with no task (so CNI removes
// their network namespaces and chains), the processes are stopped by PID,
// kube-proxy removes its chains, and hack/real-cluster.sh down removes
// what is left (bridge, mounts, host paths, chains) and restores the
// sysctls.
func (r *Real) Delete(ctx context.Context, c *Cluster) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cluster == nil || r.cluster.Name != c.Name {
		return nil
	}
	r.cluster = nil
	return errors.Join(r.teardown(ctx)...)
}

// teardown stops what create started; r.mu is held.
func (r *Real) teardown(ctx context.Context) []error {
	var errs []error
	procs := r.procs
	r.procs = nil
	byName := func(suffix string) []*process.Process {
		var out []*process.Process
		for _, p := range procs {
			if strings.HasSuffix(p.Name, "-"+suffix) {
				out = append(out, p)
			}
		}
		return out
	}
	running := func(suffix string) bool {
		for _, p := range byName(suffix) {
			if p.Running() {
				return true
			}
		}
		return false
	}
	// No controller may recreate what is deleted; kubelet stops the pods.
	errs = append(errs, process.Stop(append(byName("kube-controller-manager"), byName("kube-scheduler")...), 10*time.Second)...)
	if running("kube-apiserver") && running("kubelet") && running("containerd") {
		if err := r.deletePods(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	for _, stage := range [][]string{{"coredns", "kube-proxy", "kubelet"}, {"containerd"}, {"kube-apiserver"}, {"etcd"}} {
		var ps []*process.Process
		for _, s := range stage {
			ps = append(ps, byName(s)...)
		}
		errs = append(errs, process.Stop(ps, 20*time.Second)...)
	}
	if out, err := exec.CommandContext(ctx, r.Tools.KubeProxy, "--cleanup").CombinedOutput(); err != nil {
		errs = append(errs, fmt.Errorf("kube-proxy --cleanup: %w\n%s", err, out))
	}
	if err := r.script(ctx, "down"); err != nil {
		errs = append(errs, err)
	}
	if r.lock != nil {
		r.lock.Close()
		r.lock = nil
	}
	return errs
}

// deletePods deletes every pod at once and waits until containerd runs no
// task.
func (r *Real) deletePods(ctx context.Context) error {
	cfg, err := (&Cluster{Name: "real", Kubeconfig: filepath.Join(r.dir, "admin.kubeconfig")}).Config()
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	zero := int64(0)
	nss, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, ns := range nss.Items {
		if err := client.CoreV1().Pods(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
			return err
		}
	}
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	sock := filepath.Join(r.dir, "containerd", "containerd.sock")
	err = wait.PollUntilContextCancel(waitCtx, 300*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		out, err := exec.CommandContext(ctx, "ctr", "--namespace=k8s.io", "--address="+sock, "tasks", "list", "--quiet").Output()
		return err == nil && strings.TrimSpace(string(out)) == "", nil
	})
	if err != nil {
		return fmt.Errorf("waiting for containerd to run no task after deleting every pod: %w", err)
	}
	return nil
}

func (r *Real) script(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, r.Tools.Script, args...)
	cmd.Env = append(os.Environ(), "TESSERA_REAL_PAUSE_IMAGE="+RealPauseImage, "TESSERA_REAL_LOCK_HELD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(r.Tools.Script), strings.Join(args, " "), err, out)
	}
	return nil
}

// start starts a process of the cluster and records it where
// hack/real-cluster.sh down finds it after a crash.
func (r *Real) start(spec process.Spec) (*process.Process, error) {
	p, err := r.Group.Start(spec)
	if err != nil {
		return nil, err
	}
	r.procs = append(r.procs, p)
	if start, err := process.StartTime(p.PID()); err == nil {
		if f, err := os.OpenFile(realPIDs, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			w := bufio.NewWriter(f)
			fmt.Fprintf(w, "pid %d %s %s\n", p.PID(), start, p.Name)
			_ = w.Flush()
			f.Close()
		}
	}
	return p, nil
}

// waitFor polls ok for up to two minutes, failing early when a process of
// the cluster exited.
func (r *Real) waitFor(ctx context.Context, what string, ok func(context.Context) (bool, error)) error {
	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(waitCtx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, p := range r.procs {
			if err := p.ExitedError("while the cluster was starting"); err != nil {
				return false, err
			}
		}
		done, err := ok(ctx)
		last = err
		return done, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w (last error: %v)", what, err, last)
	}
	return nil
}
