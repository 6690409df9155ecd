package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/certs"
	"github.com/tessera-dev/tessera/shard/options"
)

// A shard joins an installation with --root-shard-kubeconfig-file. It then
// bootstraps only what is its own (the system logical clusters and their
// RBAC, bootstrapClusters), not root, root's WorkspaceTypes, RBAC or kcp's
// APIExports. Before it installs its registries it reads the identities of
// kcp's APIs from root's APIExports and keeps a copy in its own etcd, so
// that a later start works while root is down (joinedCoreIdentities). Once
// it serves, it registers itself as a Shard in root and keeps that object
// current (runRegistration); its /readyz does not wait for that.

// certSources are the certificates the options give rather than let the
// shard generate.
func certSources(o options.CompletedOptions) certs.Sources {
	src := certs.Sources{ShardName: o.ShardName}
	if o.InstallationCACertFile != "" {
		src.CA = certs.Pair{CertFile: o.InstallationCACertFile, KeyFile: o.InstallationCAKeyFile}
	}
	if o.TLSCertFile != "" {
		src.Serving = certs.Pair{CertFile: o.TLSCertFile, KeyFile: o.TLSPrivateKeyFile}
	}
	if o.ShardClientCertFile != "" {
		src.ShardClient = certs.Pair{CertFile: o.ShardClientCertFile, KeyFile: o.ShardClientKeyFile}
	}
	return src
}

// bootstrapClusters are the logical clusters the shard creates on first
// start: system:admin, and root on the root shard.
func (s *Server) bootstrapClusters() []logicalcluster.Name {
	if s.Options.IsRoot() {
		return []logicalcluster.Name{logicalcluster.SystemAdmin, logicalcluster.Root}
	}
	return []logicalcluster.Name{logicalcluster.SystemAdmin}
}

// bootstrapInstallation makes the shard part of its installation: the root
// shard publishes kcp's APIs, creates root's WorkspaceTypes and registers
// itself, before it is ready; a joining shard registers itself in root in
// the background, for as long as it runs.
func (s *Server) bootstrapInstallation(ctx context.Context, loopback *rest.Config) error {
	if s.Options.IsRoot() {
		return s.bootstrapTenancy(ctx, loopback)
	}
	root, host, err := rootShardClient(s.Options)
	if err != nil {
		return err
	}
	go s.runRegistration(ctx, root, host)
	return nil
}

// rootShardClient returns a client of the root logical cluster on the root
// shard, from --root-shard-kubeconfig-file, and the root shard's URL. As
// kcp, it uses the kubeconfig's shard-base context when there is one (the
// admin.kubeconfig of a root shard has it), else its current context; a
// server URL of a logical cluster (…/clusters/root) is cut to the shard's.
func rootShardClient(o options.CompletedOptions) (*kcpclient.Clientset, string, error) {
	cfg, err := rootShardConfig(o.RootShardKubeconfigFile)
	if err != nil {
		return nil, "", err
	}
	host := cfg.Host
	cfg.Host = host + "/clusters/" + string(logicalcluster.Root)
	cfg.UserAgent = "tessera-shard/" + o.ShardName
	client, err := kcpclient.NewForConfig(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("client of the root shard: %w", err)
	}
	return client, host, nil
}

// rootShardConfig reads --root-shard-kubeconfig-file: the root shard's base
// URL (no path) and admin credentials.
func rootShardConfig(kubeconfig string) (*rest.Config, error) {
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--root-shard-kubeconfig-file: %w", err)
	}
	overrides := &clientcmd.ConfigOverrides{}
	if _, ok := raw.Contexts["shard-base"]; ok {
		overrides.CurrentContext = "shard-base"
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*raw, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--root-shard-kubeconfig-file: %w", err)
	}
	if i := strings.Index(cfg.Host, "/clusters/"); i >= 0 {
		cfg.Host = cfg.Host[:i]
	}
	cfg.Host = strings.TrimSuffix(cfg.Host, "/")
	return cfg, nil
}

// rootIdentitiesKey holds, below the storage prefix, the identity hashes of
// kcp's APIs a joining shard read from root, as JSON by export name.
const rootIdentitiesKey = "/tessera/root-identities"

// Waiting for root backs off from joinRetryMin to joinRetryMax.
const (
	joinRetryMin = time.Second
	joinRetryMax = 30 * time.Second
)

// joinedCoreIdentities returns the identity hashes of the core exports of a
// joining shard: the copy in its etcd, or else those of root's APIExports
// (status.identityHash, as kcp reads them), which it then keeps. While root
// cannot tell them, it waits and says so.
func (s *Server) joinedCoreIdentities(ctx context.Context) (map[string]string, error) {
	logger := klog.FromContext(ctx)
	key := strings.TrimSuffix(s.EtcdPrefix, "/") + rootIdentitiesKey
	getCtx, cancel := context.WithTimeout(ctx, coreIdentityTimeout)
	resp, err := s.etcdClient.Get(getCtx, key)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("reading the identities of kcp's APIs kept from root: %w", err)
	}
	if len(resp.Kvs) == 1 {
		hashes := map[string]string{}
		if err := json.Unmarshal(resp.Kvs[0].Value, &hashes); err != nil {
			return nil, fmt.Errorf("reading the identities of kcp's APIs kept from root at %s: %w", key, err)
		}
		if complete(hashes) {
			logger.Info("Using the identities of kcp's APIs kept from the root shard", "key", key)
			return hashes, nil
		}
	}

	root, host, err := rootShardClient(s.Options)
	if err != nil {
		return nil, err
	}
	var hashes map[string]string
	err = retryJoin(ctx, func() error {
		hashes, err = fetchCoreIdentities(ctx, root)
		if err != nil {
			logger.Info("Waiting for the root shard to tell the identities of kcp's APIs", "root", host, "err", err)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the identities of kcp's APIs from the root shard %s: %w", host, err)
	}
	data, err := json.Marshal(hashes)
	if err != nil {
		return nil, err
	}
	putCtx, cancel := context.WithTimeout(ctx, coreIdentityTimeout)
	defer cancel()
	if _, err := s.etcdClient.Put(putCtx, key, string(data)); err != nil {
		return nil, fmt.Errorf("keeping the identities of kcp's APIs read from root: %w", err)
	}
	logger.Info("Read the identities of kcp's APIs from the root shard", "root", host)
	return hashes, nil
}

// complete tells whether hashes has a hash for every core export.
func complete(hashes map[string]string) bool {
	for _, e := range coreExports {
		if !identityHashRE.MatchString(hashes[e.name]) {
			return false
		}
	}
	return true
}

// fetchCoreIdentities reads the identity hashes of the core exports from
// root's APIExports.
func fetchCoreIdentities(ctx context.Context, root *kcpclient.Clientset) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, coreIdentityTimeout)
	defer cancel()
	hashes := map[string]string{}
	for _, e := range coreExports {
		export, err := root.APIExports().Get(ctx, e.name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("APIExport root:%s: %w", e.name, err)
		}
		if !identityHashRE.MatchString(export.Status.IdentityHash) {
			return nil, fmt.Errorf("APIExport root:%s has no identity yet", e.name)
		}
		hashes[e.name] = export.Status.IdentityHash
	}
	return hashes, nil
}

// retryJoin calls f until it succeeds or ctx ends, backing off from
// joinRetryMin to joinRetryMax.
func retryJoin(ctx context.Context, f func() error) error {
	delay := joinRetryMin
	for {
		err := f()
		if err == nil {
			return nil
		}
		if !sleep(ctx, delay) {
			return fmt.Errorf("%w (last error: %w)", ctx.Err(), err)
		}
		delay = min(2*delay, joinRetryMax)
	}
}

// sleep waits for d; false means ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// shardObject is the Shard that registers this shard in root. kcp's shards
// carry their name as label name (kcp's clients select the root shard by
// name=root).
func (s *Server) shardObject() *corev1alpha1.Shard {
	o := s.Options
	return &corev1alpha1.Shard{
		ObjectMeta: metav1.ObjectMeta{Name: o.ShardName, Labels: map[string]string{"name": o.ShardName}},
		Spec: corev1alpha1.ShardSpec{
			BaseURL:             o.ShardBaseURL,
			ExternalURL:         o.ShardExternalURL,
			VirtualWorkspaceURL: o.ShardVirtualWorkspaceURL,
		},
	}
}

// runRegistration registers the shard in root and keeps the Shard as
// desired until ctx ends: it watches the object and applies it again when
// it is changed or deleted. While root is unreachable it retries with
// backoff, and says so.
func (s *Server) runRegistration(ctx context.Context, root *kcpclient.Clientset, host string) {
	desired := s.shardObject()
	logger := klog.FromContext(ctx).WithValues("shard", desired.Name, "root", host)
	registered := false
	for ctx.Err() == nil {
		var current *corev1alpha1.Shard
		err := retryJoin(ctx, func() error {
			var err error
			current, err = applyShard(ctx, root.Shards(), desired)
			if err != nil {
				logger.Info("Cannot register the shard in the root shard yet; retrying", "err", err)
			}
			return err
		})
		if err != nil {
			return
		}
		if !registered {
			logger.Info("Registered the shard in the root shard", "baseURL", desired.Spec.BaseURL)
			registered = true
			s.checkCoreIdentities(ctx, root)
		}
		if err := watchShard(ctx, root.Shards(), desired, current.ResourceVersion); err != nil {
			logger.V(2).Info("Watching the shard's Shard in root ended", "err", err)
		}
		// Applying again is a GET when nothing changed; the pause keeps a
		// watch that ends at once from spinning.
		sleep(ctx, joinRetryMin)
	}
}

// watchShard returns when the Shard named as desired is deleted or no
// longer as desired, or when the watch ends.
func watchShard(ctx context.Context, shards kcpclient.ShardInterface, desired *corev1alpha1.Shard, resourceVersion string) error {
	w, err := shards.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + desired.Name, ResourceVersion: resourceVersion})
	if err != nil {
		return err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Deleted:
			return nil
		case watch.Error:
			return apierrors.FromObject(ev.Object)
		case watch.Added, watch.Modified:
			if sh, ok := ev.Object.(*corev1alpha1.Shard); ok && !shardUpToDate(sh, desired) {
				return nil
			}
		}
	}
	return nil
}

// shardUpToDate tells whether existing has the spec and labels of desired.
func shardUpToDate(existing, desired *corev1alpha1.Shard) bool {
	return equality.Semantic.DeepEqual(existing.Spec, desired.Spec) && hasLabels(existing.Labels, desired.Labels)
}

// applyShard creates the Shard or brings its spec and labels to those of
// desired, once, and returns it as stored.
func applyShard(ctx context.Context, shards kcpclient.ShardInterface, desired *corev1alpha1.Shard) (*corev1alpha1.Shard, error) {
	existing, err := shards.Get(ctx, desired.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return shards.Create(ctx, desired, metav1.CreateOptions{})
	case err != nil:
		return nil, err
	case shardUpToDate(existing, desired):
		return existing, nil
	}
	existing = existing.DeepCopy()
	existing.Spec = desired.Spec
	if existing.Labels == nil {
		existing.Labels = map[string]string{}
	}
	for k, v := range desired.Labels {
		existing.Labels[k] = v
	}
	return shards.Update(ctx, existing, metav1.UpdateOptions{})
}

// checkCoreIdentities logs an error when root's core identities are not
// those the shard stores its objects under (root was set up anew after
// the shard kept its copy): the shard's objects of kcp's APIs are then not
// those of the installation. It changes nothing.
func (s *Server) checkCoreIdentities(ctx context.Context, root *kcpclient.Clientset) {
	hashes, err := fetchCoreIdentities(ctx, root)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Cannot compare the identities of kcp's APIs with root's", "err", err)
		return
	}
	for export, hash := range hashes {
		if s.core.byExport[export] != hash {
			klog.FromContext(ctx).Error(nil, "The identity of one of kcp's APIExports in root is not the one this shard uses; its data dir belongs to another installation", "export", "root:"+export, "root", hash, "shard", s.core.byExport[export])
		}
	}
}
