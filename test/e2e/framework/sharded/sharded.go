// Package sharded starts a sharded Tessera installation from the built
// binaries, as separate processes on free loopback ports, laid out like
// kcp's sharded test server: one installation CA, a tessera-cache-server,
// the root shard and two joining shards (shard-1, shard-2), one
// tessera-virtual-workspaces per shard and a tessera-front-proxy in front.
//
// Under the directory:
//
//	admin.kubeconfig          the front-proxy: contexts root (/clusters/root) and base, user kcp-admin
//	<shard>/admin.kubeconfig  each shard's own (contexts base, root, shard-base, system:admin)
//	ca/                       the installation CA and the certificates signed by it
//	cache/ front-proxy/ <shard>-vw/ tokens.csv mapping.yaml
//
// `make run-sharded` (hack/run-sharded) and the sharded e2e suite use it. Nothing is
// kept per workspace.
package sharded

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/tessera-dev/tessera/shard/certs"
	"github.com/tessera-dev/tessera/test/e2e/framework/process"
)

// ShardNames are the shards of the installation, root first.
var ShardNames = []string{"root", "shard-1", "shard-2"}

// ProxyUser is the common name of the front-proxy's client certificate,
// which the shards and virtual workspaces accept in --requestheader-allowed-names.
const ProxyUser = "front-proxy"

// Options tell what to start and where.
type Options struct {
	// Dir holds everything (created if missing); a second start on the same
	// directory reuses the data and certificates.
	Dir string
	// BinDir has tessera, tessera-cache-server, tessera-front-proxy and
	// tessera-virtual-workspaces.
	BinDir string
	// Group starts the processes; its ledger lets a sweep kill leftovers.
	Group *process.Group
	// Tokens are lines of the static token file every shard gets
	// (token,user,uid,"groups").
	Tokens []string
	// NoFsync runs the embedded etcds without fsync (tests).
	NoFsync bool
	// ProxyPort is the front-proxy's port; 0 picks a free one.
	ProxyPort int
	// NoReplicationWait returns once root lists every Shard, without
	// waiting for the cache server to hold them (to reproduce what a
	// client sees right after a start).
	NoReplicationWait bool
}

// Component is one process of the installation, restartable with the same
// arguments, data and ports.
type Component struct {
	Name string
	// URL is its HTTPS base URL.
	URL string

	spec    process.Spec
	group   *process.Group
	client  *http.Client
	mu      sync.Mutex
	process *process.Process
}

// Process returns the current process (the latest after a restart).
func (c *Component) Process() *process.Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.process
}

func (c *Component) start(ctx context.Context) error {
	p, err := c.group.Start(c.spec)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.process = p
	c.mu.Unlock()
	return nil
}

// WaitReady waits for /readyz to answer 200.
func (c *Component) WaitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	return process.WaitHTTP(ctx, c.Process(), c.client, c.URL+"/readyz")
}

// Stop sends SIGTERM and waits for the exit (SIGKILL after grace).
func (c *Component) Stop(grace time.Duration) error {
	return c.Process().Stop(grace)
}

// Kill sends SIGKILL to the process group and waits for the exit.
func (c *Component) Kill() {
	c.Process().Kill()
}

// Restart starts the component again with the same arguments (it must
// have exited) and waits for /readyz.
func (c *Component) Restart(ctx context.Context) error {
	if err := c.start(ctx); err != nil {
		return err
	}
	return c.WaitReady(ctx)
}

// Shard is a shard and its virtual workspaces.
type Shard struct {
	*Component
	// Dir is its root directory; Kubeconfig its admin.kubeconfig there.
	Dir        string
	Kubeconfig string
	VW         *Component
}

// Installation is a started installation.
type Installation struct {
	Dir string
	// Kubeconfig is <Dir>/admin.kubeconfig, through the front-proxy.
	Kubeconfig string
	// CAFile is the installation CA, which signed every serving certificate.
	CAFile string
	Cache  *Component
	Proxy  *Component
	Shards map[string]*Shard
}

// Shard returns the named shard.
func (in *Installation) Shard(name string) *Shard { return in.Shards[name] }

// Components returns every component, root shard first and the front-proxy last.
func (in *Installation) Components() []*Component {
	cs := []*Component{in.Cache}
	for _, n := range ShardNames {
		cs = append(cs, in.Shards[n].Component, in.Shards[n].VW)
	}
	return append(cs, in.Proxy)
}

// Stop sends SIGTERM to every process and waits for them.
func (in *Installation) Stop(grace time.Duration) []error {
	var ps []*process.Process
	for _, c := range in.Components() {
		if p := c.Process(); p != nil {
			ps = append(ps, p)
		}
	}
	return process.Stop(ps, grace)
}

// Start creates the certificates and configuration, starts every process
// and waits until each answers /readyz and both joining shards are in
// root's Shards. On failure, what was started is left to the caller's
// group to stop.
func Start(ctx context.Context, o Options) (*Installation, error) {
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	in := &Installation{Dir: dir, Kubeconfig: filepath.Join(dir, "admin.kubeconfig"), Shards: map[string]*Shard{}}
	p, err := makeCerts(filepath.Join(dir, "ca"))
	if err != nil {
		return nil, err
	}
	in.CAFile = p.ca.CertFile
	client, err := httpClient(p.ca.CertFile, p.probe)
	if err != nil {
		return nil, err
	}
	ports, err := portsFor(dir, o.ProxyPort)
	if err != nil {
		return nil, err
	}
	etcd := func(client, peer int) []string {
		args := []string{"--embedded-etcd-client-port", process.Itoa(client), "--embedded-etcd-peer-port", process.Itoa(peer)}
		if o.NoFsync {
			args = append(args, "--embedded-etcd-unsafe-no-fsync")
		}
		return args
	}
	url := func(port int) string { return fmt.Sprintf("https://127.0.0.1:%d", port) }
	newComponent := func(name, bin string, port int, args []string) *Component {
		return &Component{Name: name, URL: url(port), group: o.Group, client: client,
			spec: process.Spec{Name: name, Path: filepath.Join(o.BinDir, bin), Args: args, CleanExit: true}}
	}

	// Cache server.
	pp := ports["cache"]
	cacheDir := filepath.Join(dir, "cache")
	in.Cache = newComponent("cache-server", "tessera-cache-server", pp[0], append([]string{
		"--root-directory", cacheDir, "--bind-address", "127.0.0.1", "--secure-port", process.Itoa(pp[0]),
		"--client-ca-file", p.ca.CertFile, "--tls-cert-file", p.cache.CertFile, "--tls-private-key-file", p.cache.KeyFile,
	}, etcd(pp[1], pp[2])...))
	cacheKubeconfig := filepath.Join(dir, "cache.kubeconfig")
	if err := writeKubeconfig(cacheKubeconfig, p.ca.CertFile, p.cacheAdmin, "base", map[string]string{"base": in.Cache.URL}); err != nil {
		return nil, err
	}

	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(strings.Join(o.Tokens, "\n")+"\n"), 0o600); err != nil {
		return nil, err
	}
	proxyURL := url(ports["front-proxy"][0])
	rootKubeconfig := filepath.Join(dir, "root", "admin.kubeconfig")
	for _, name := range ShardNames {
		pp := ports[name]
		sdir := filepath.Join(dir, name)
		args := append([]string{"start",
			"--root-directory", sdir, "--shard-name", name,
			"--bind-address", "127.0.0.1", "--secure-port", process.Itoa(pp[0]),
			"--installation-ca-cert-file", p.ca.CertFile, "--installation-ca-key-file", p.ca.KeyFile,
			"--cache-kubeconfig", cacheKubeconfig,
			"--requestheader-client-ca-file", p.ca.CertFile, "--requestheader-allowed-names", ProxyUser,
			"--requestheader-username-headers", "X-Remote-User", "--requestheader-group-headers", "X-Remote-Group",
			"--requestheader-extra-headers-prefix", "X-Remote-Extra-",
			"--token-auth-file", tokens,
			"--shard-virtual-workspace-url", url(pp[3]), "--run-virtual-workspaces=false",
			"--shard-external-url", proxyURL,
		}, etcd(pp[1], pp[2])...)
		if name != "root" {
			args = append(args, "--root-shard-kubeconfig-file", rootKubeconfig)
		}
		s := &Shard{Component: newComponent(name, "tessera", pp[0], args), Dir: sdir, Kubeconfig: filepath.Join(sdir, "admin.kubeconfig")}
		vwDir := filepath.Join(dir, name+"-vw")
		s.VW = newComponent(name+"-vw", "tessera-virtual-workspaces", pp[3], []string{
			"--root-directory", vwDir, "--shard-name", name,
			"--kubeconfig", s.Kubeconfig, "--context", "shard-base",
			"--cache-kubeconfig", cacheKubeconfig,
			"--bind-address", "127.0.0.1", "--secure-port", process.Itoa(pp[3]),
			"--tls-cert-file", p.vw.CertFile, "--tls-private-key-file", p.vw.KeyFile,
			"--client-ca-file", p.ca.CertFile,
			"--requestheader-client-ca-file", p.ca.CertFile, "--requestheader-allowed-names", ProxyUser,
			"--requestheader-username-headers", "X-Remote-User", "--requestheader-group-headers", "X-Remote-Group",
			"--requestheader-extra-headers-prefix", "X-Remote-Extra-",
		})
		in.Shards[name] = s
	}

	// The front-proxy routes /clusters/ by the Shard objects; the virtual
	// workspaces behind /services/ are the root shard's (endpoint slices
	// name every shard's own URL).
	mapping := filepath.Join(dir, "mapping.yaml")
	if err := writeMapping(mapping, p, in.Shards["root"].VW.URL, in.Shards["root"].URL); err != nil {
		return nil, err
	}
	fpDir := filepath.Join(dir, "front-proxy")
	in.Proxy = newComponent("front-proxy", "tessera-front-proxy", ports["front-proxy"][0], []string{
		"--root-directory", fpDir, "--bind-address", "127.0.0.1", "--secure-port", process.Itoa(ports["front-proxy"][0]),
		"--tls-cert-file", p.proxy.CertFile, "--tls-private-key-file", p.proxy.KeyFile,
		"--client-ca-file", p.ca.CertFile,
		"--root-kubeconfig", rootKubeconfig, "--root-kubeconfig-context", "shard-base",
		"--shard-ca-file", p.ca.CertFile,
		"--shard-client-cert-file", p.proxyClient.CertFile, "--shard-client-key-file", p.proxyClient.KeyFile,
		"--mapping-file", mapping,
	})
	if err := writeKubeconfig(in.Kubeconfig, p.ca.CertFile, p.kcpAdmin, "root",
		map[string]string{"root": proxyURL + "/clusters/root", "base": proxyURL}); err != nil {
		return nil, err
	}

	// Cache and root first; the joining shards need root, every virtual
	// workspace server and the proxy their shard's admin.kubeconfig.
	if err := startAll(ctx, in.Cache, in.Shards["root"].Component); err != nil {
		return nil, err
	}
	if err := startAll(ctx, in.Shards["shard-1"].Component, in.Shards["shard-2"].Component, in.Shards["root"].VW, in.Proxy); err != nil {
		return nil, err
	}
	if err := startAll(ctx, in.Shards["shard-1"].VW, in.Shards["shard-2"].VW); err != nil {
		return nil, err
	}
	if err := in.WaitShardsRegistered(ctx, !o.NoReplicationWait); err != nil {
		return nil, err
	}
	return in, nil
}

// startAll starts the components and waits for each one's /readyz.
func startAll(ctx context.Context, cs ...*Component) error {
	for _, c := range cs {
		if err := c.start(ctx); err != nil {
			return err
		}
	}
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.WaitReady(ctx)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

var shardsGVR = schema.GroupVersionResource{Group: "core.kcp.io", Version: "v1alpha1", Resource: "shards"}

// WaitShardsRegistered waits until root lists a Shard for every shard and,
// with replicated, until the cache server holds them all.
func (in *Installation) WaitShardsRegistered(ctx context.Context, replicated bool) error {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: in.Shards["root"].Kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: "root"}).ClientConfig()
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var missing []string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		missing = nil
		for _, n := range ShardNames {
			if _, err := dyn.Resource(shardsGVR).Get(ctx, n, metav1.GetOptions{}); err != nil {
				missing = append(missing, n)
			}
		}
		return len(missing) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("shards %v are not in root's Shards: %w", missing, err)
	}
	if !replicated {
		return nil
	}
	// Shards learn of each other through the cache server's replicas of
	// root's Shards. Until those are there, a joining shard looks for a
	// logical cluster on too few shards: its orphan sweep then took the
	// parent of a new workspace's logical cluster for gone and deleted the
	// workspace (seen when org was on shard-2 and team-1 on shard-1).
	url := in.Cache.URL + "/services/cache/shards/*/clusters/*/apis/core.kcp.io/v1alpha1/shards"
	var last string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := in.Cache.client.Do(req)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		defer resp.Body.Close()
		var list struct {
			Items []struct {
				Metadata struct{ Name string } `json:"metadata"`
			} `json:"items"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK {
			last = fmt.Sprintf("%d %v", resp.StatusCode, err)
			return false, nil
		}
		seen := map[string]bool{}
		for _, it := range list.Items {
			seen[it.Metadata.Name] = true
		}
		last = fmt.Sprintf("replicated: %v", seen)
		for _, n := range ShardNames {
			if !seen[n] {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("the cache server does not hold every Shard (%s): %w", last, err)
	}
	return nil
}

// pairs are the certificates of the installation.
type pairs struct {
	ca                                       certs.Pair
	cache, vw, proxy                         certs.Pair // serving
	cacheAdmin, kcpAdmin, proxyClient, probe certs.Pair // client
}

func makeCerts(dir string) (*pairs, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	pair := func(n string) certs.Pair {
		return certs.Pair{CertFile: filepath.Join(dir, n+".crt"), KeyFile: filepath.Join(dir, n+".key")}
	}
	p := &pairs{ca: pair("ca"), cache: pair("cache-server"), vw: pair("virtual-workspaces"), proxy: pair("front-proxy"),
		cacheAdmin: pair("cache-admin"), kcpAdmin: pair("kcp-admin"), proxyClient: pair("front-proxy-client"), probe: pair("probe")}
	ca, key, err := certs.EnsureCA(p.ca)
	if err != nil {
		return nil, err
	}
	hosts := []string{"127.0.0.1", "localhost"}
	for _, s := range []certs.Pair{p.cache, p.vw, p.proxy} {
		if err := certs.EnsureServing(s, ca, key, hosts); err != nil {
			return nil, err
		}
	}
	for _, c := range []struct {
		p      certs.Pair
		user   string
		groups []string
	}{
		{p.cacheAdmin, "cache-admin", []string{"system:masters"}},
		{p.kcpAdmin, "kcp-admin", []string{"system:kcp:admin"}},
		{p.proxyClient, ProxyUser, nil},
		{p.probe, "sharded-probe", []string{"system:masters"}},
	} {
		if err := certs.EnsureClient(c.p, ca, key, c.user, c.groups); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func httpClient(caFile string, client certs.Pair) (*http.Client, error) {
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cert, err := tls.LoadX509KeyPair(client.CertFile, client.KeyFile)
	if err != nil {
		return nil, err
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}},
	}}, nil
}

// writeKubeconfig writes a kubeconfig with one context per server, all with
// the user of client.
func writeKubeconfig(path, caFile string, client certs.Pair, current string, servers map[string]string) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	crt, err := os.ReadFile(client.CertFile)
	if err != nil {
		return err
	}
	key, err := os.ReadFile(client.KeyFile)
	if err != nil {
		return err
	}
	user := strings.TrimSuffix(filepath.Base(client.CertFile), ".crt")
	cfg := clientcmdapi.NewConfig()
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
	for name, server := range servers {
		cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: user}
	}
	cfg.CurrentContext = current
	return clientcmd.WriteToFile(*cfg, path)
}

// writeMapping writes the front-proxy's mapping file in kcp's format.
func writeMapping(path string, p *pairs, vwURL, rootURL string) error {
	var b strings.Builder
	entry := func(prefix, backend string) {
		fmt.Fprintf(&b, "- path: %s\n  backend: %s\n  backend_server_ca: %s\n  proxy_client_cert: %s\n  proxy_client_key: %s\n",
			prefix, backend, p.ca.CertFile, p.proxyClient.CertFile, p.proxyClient.KeyFile)
	}
	entry("/services/apiexport/", vwURL)
	entry("/services/initializingworkspaces/", vwURL)
	// kcp's files carry this entry; shards are found through their Shard
	// objects, so the proxy skips it.
	entry("/clusters/", rootURL)
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// portsFor returns the ports of an earlier start on dir (<dir>/ports.json),
// so that the URLs in Shards and Workspaces stay valid, or picks free
// loopback ports and records them: cache (HTTPS, etcd client, etcd peer),
// each shard (HTTPS, etcd client, etcd peer, virtual workspaces) and the
// front-proxy (proxyPort when not 0).
func portsFor(dir string, proxyPort int) (map[string][]int, error) {
	file := filepath.Join(dir, "ports.json")
	if b, err := os.ReadFile(file); err == nil {
		var m map[string][]int
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if proxyPort != 0 {
			m["front-proxy"] = []int{proxyPort}
		}
		return m, nil
	}
	m, err := freePorts(proxyPort)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return m, os.WriteFile(file, b, 0o600)
}

func freePorts(proxyPort int) (map[string][]int, error) {
	free, err := process.FreePorts(3 + 4*len(ShardNames) + 1)
	if err != nil {
		return nil, err
	}
	m := map[string][]int{"cache": free[0:3]}
	for i, n := range ShardNames {
		m[n] = free[3+4*i : 3+4*i+4]
	}
	m["front-proxy"] = free[len(free)-1:]
	if proxyPort != 0 {
		m["front-proxy"] = []int{proxyPort}
	}
	return m, nil
}
