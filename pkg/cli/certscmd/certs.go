// Package certscmd is `tessera certs`: it keeps the certificates of an
// installation running on Kubernetes in Secrets of its namespace, all
// signed by one installation CA, as the Helm chart's certificate Job runs
// it. A Secret that already holds a valid certificate for what is asked is
// kept; a missing one is created, and one that no longer fits (other host
// names, another CA, expired) is renewed. The CA itself is created when its
// Secret is missing, or taken as given.
package certscmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/tessera-dev/tessera/shard/certs"
)

// Keys of the Secrets: those of kubernetes.io/tls Secrets and cert-manager's
// ca.crt, and kubeconfig for kubeconfigs.
const (
	KeyCert       = corev1.TLSCertKey
	KeyKey        = corev1.TLSPrivateKeyKey
	KeyCA         = "ca.crt"
	KeyKubeconfig = "kubeconfig"
)

// Options are the flags of `tessera certs`.
type Options struct {
	Kubeconfig string
	Namespace  string
	// CASecret holds the installation CA (tls.crt, tls.key).
	CASecret string
	// Serving are NAME=host,host,...: a serving certificate for the hosts.
	Serving []string
	// Clients are NAME=user[:group,group...]: a client certificate.
	Clients []string
	// Kubeconfigs are NAME=CLIENT@URL: a kubeconfig for the client
	// certificate in Secret CLIENT, with contexts root (URL/clusters/root,
	// current) and base (URL). CLIENT is one of Clients, or a Secret someone
	// else issues (e.g. cert-manager), waited for.
	Kubeconfigs []string
	// Owner names a ConfigMap that owns the Secrets created, so that they go
	// when it goes (the chart's, deleted by helm uninstall).
	Owner string
	// Labels are put on the Secrets created.
	Labels map[string]string
}

// NewCommand returns `tessera certs`.
func NewCommand() *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "certs",
		Short: "Keep an installation's certificates in Secrets, signed by one CA (for the Helm chart)",
		Long: `Keep the certificates of an installation on Kubernetes in Secrets of its namespace,
all signed by the installation CA: create what is missing, keep what is valid,
renew what no longer fits. Runs in the cluster (in-cluster credentials) or with --kubeconfig.

  tessera certs --ca-secret tessera-ca \
    --serving tessera-front-proxy-tls=tessera-front-proxy,tessera.example.com \
    --client tessera-admin-client=kcp-admin:system:kcp:admin \
    --kubeconfig-secret tessera-admin-kubeconfig=tessera-admin-client@https://tessera.example.com:443`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "Kubeconfig of the cluster (default: in-cluster credentials).")
	fs.StringVar(&o.Namespace, "namespace", "", "Namespace of the Secrets (default: the pod's).")
	fs.StringVar(&o.CASecret, "ca-secret", "", "Secret of the installation CA (tls.crt, tls.key); created when missing.")
	fs.StringArrayVar(&o.Serving, "serving", nil, "NAME=host,host,...: a Secret NAME with a serving certificate for the hosts (repeatable).")
	fs.StringArrayVar(&o.Clients, "client", nil, "NAME=user[:group,group,...]: a Secret NAME with a client certificate (repeatable).")
	fs.StringArrayVar(&o.Kubeconfigs, "kubeconfig-secret", nil, "NAME=CLIENT@URL: a Secret NAME with a kubeconfig (key kubeconfig) of the client certificate in Secret CLIENT for the server URL (repeatable).")
	fs.StringVar(&o.Owner, "owner-configmap", "", "ConfigMap that owns the Secrets created: they are deleted with it.")
	fs.StringToStringVar(&o.Labels, "labels", nil, "Labels of the Secrets created (k=v,...).")
	return cmd
}

type serving struct {
	name  string
	hosts []string
}

type client struct {
	name, user string
	groups     []string
}

type kubeconfig struct {
	name, client, url string
}

func (o *Options) parse() ([]serving, []client, []kubeconfig, error) {
	if o.CASecret == "" {
		return nil, nil, nil, fmt.Errorf("--ca-secret is required")
	}
	var ss []serving
	for _, s := range o.Serving {
		name, hosts, ok := strings.Cut(s, "=")
		if !ok || name == "" || hosts == "" {
			return nil, nil, nil, fmt.Errorf("--serving %q is not NAME=host,host", s)
		}
		ss = append(ss, serving{name: name, hosts: strings.Split(hosts, ",")})
	}
	var cs []client
	for _, s := range o.Clients {
		name, subject, ok := strings.Cut(s, "=")
		if !ok || name == "" || subject == "" {
			return nil, nil, nil, fmt.Errorf("--client %q is not NAME=user[:group,...]", s)
		}
		user, groups, _ := strings.Cut(subject, ":")
		c := client{name: name, user: user}
		if groups != "" {
			c.groups = strings.Split(groups, ",")
		}
		cs = append(cs, c)
	}
	var ks []kubeconfig
	for _, s := range o.Kubeconfigs {
		name, rest, ok := strings.Cut(s, "=")
		cl, url, ok2 := strings.Cut(rest, "@")
		if !ok || !ok2 || name == "" || cl == "" || !strings.HasPrefix(url, "https://") {
			return nil, nil, nil, fmt.Errorf("--kubeconfig-secret %q is not NAME=CLIENT@https://host[:port]", s)
		}
		ks = append(ks, kubeconfig{name: name, client: cl, url: strings.TrimSuffix(url, "/")})
	}
	return ss, cs, ks, nil
}

// Run creates, keeps or renews the Secrets.
func (o *Options) Run(ctx context.Context) error {
	ss, cs, ks, err := o.parse()
	if err != nil {
		return err
	}
	var cfg *rest.Config
	if o.Kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return err
	}
	if o.Namespace == "" {
		b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
		if err != nil {
			return fmt.Errorf("--namespace is required outside a pod: %w", err)
		}
		o.Namespace = strings.TrimSpace(string(b))
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	s := &secrets{kube: kube.CoreV1().Secrets(o.Namespace), labels: o.Labels, waitFor: 5 * time.Minute}
	if o.Owner != "" {
		// The chart creates its ConfigMap in the same release; wait a little
		// for it rather than create Secrets nothing deletes.
		err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			cm, err := kube.CoreV1().ConfigMaps(o.Namespace).Get(ctx, o.Owner, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			s.owner = &metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID}
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("--owner-configmap %s: %w", o.Owner, err)
		}
	}
	dir, err := os.MkdirTemp("", "tessera-certs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	return s.reconcile(ctx, dir, o.CASecret, ss, cs, ks)
}

type secrets struct {
	kube interface {
		Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error)
		Create(ctx context.Context, s *corev1.Secret, opts metav1.CreateOptions) (*corev1.Secret, error)
		Update(ctx context.Context, s *corev1.Secret, opts metav1.UpdateOptions) (*corev1.Secret, error)
	}
	labels map[string]string
	owner  *metav1.OwnerReference
	// waitFor is how long a client Secret issued by someone else is waited
	// for.
	waitFor time.Duration
}

func (s *secrets) reconcile(ctx context.Context, dir, caName string, ss []serving, cs []client, ks []kubeconfig) error {
	pair := func(name string) certs.Pair {
		return certs.Pair{CertFile: filepath.Join(dir, name+".crt"), KeyFile: filepath.Join(dir, name+".key")}
	}
	caPair := pair(caName)
	caSecret, err := s.get(ctx, caName)
	if err != nil {
		return err
	}
	if caSecret != nil {
		if len(caSecret.Data[KeyCert]) == 0 || len(caSecret.Data[KeyKey]) == 0 {
			return fmt.Errorf("Secret %s holds no CA: it needs %s and %s", caName, KeyCert, KeyKey)
		}
		if err := writePair(caPair, caSecret.Data[KeyCert], caSecret.Data[KeyKey]); err != nil {
			return err
		}
	}
	ca, caKey, err := certs.EnsureCA(caPair)
	if err != nil {
		return fmt.Errorf("CA of Secret %s: %w", caName, err)
	}
	caPEM, err := os.ReadFile(caPair.CertFile)
	if err != nil {
		return err
	}
	if caSecret == nil {
		if err := s.store(ctx, nil, caName, caPair, caPEM); err != nil {
			return err
		}
	}

	leaf := func(name string, ensure func(certs.Pair) error) error {
		existing, err := s.get(ctx, name)
		if err != nil {
			return err
		}
		p := pair(name)
		if existing != nil && len(existing.Data[KeyCert]) > 0 && len(existing.Data[KeyKey]) > 0 {
			if err := writePair(p, existing.Data[KeyCert], existing.Data[KeyKey]); err != nil {
				return err
			}
		}
		if err := ensure(p); err != nil {
			return fmt.Errorf("Secret %s: %w", name, err)
		}
		return s.store(ctx, existing, name, p, caPEM)
	}
	for _, c := range ss {
		if err := leaf(c.name, func(p certs.Pair) error { return certs.EnsureServing(p, ca, caKey, c.hosts) }); err != nil {
			return err
		}
	}
	for _, c := range cs {
		if err := leaf(c.name, func(p certs.Pair) error { return certs.EnsureClient(p, ca, caKey, c.user, c.groups) }); err != nil {
			return err
		}
	}
	for _, k := range ks {
		var crt, key []byte
		if slices.ContainsFunc(cs, func(c client) bool { return c.name == k.client }) {
			p := pair(k.client)
			if crt, err = os.ReadFile(p.CertFile); err != nil {
				return err
			}
			if key, err = os.ReadFile(p.KeyFile); err != nil {
				return err
			}
		} else {
			sec, err := s.wait(ctx, k.client)
			if err != nil {
				return err
			}
			crt, key = sec.Data[KeyCert], sec.Data[KeyKey]
		}
		data, err := Kubeconfig(k.url, caPEM, crt, key)
		if err != nil {
			return err
		}
		existing, err := s.get(ctx, k.name)
		if err != nil {
			return err
		}
		if err := s.put(ctx, existing, k.name, corev1.SecretTypeOpaque, map[string][]byte{KeyKubeconfig: data}); err != nil {
			return err
		}
	}
	return nil
}

// Kubeconfig returns a kubeconfig of a client certificate for a server
// (a front-proxy or a shard), with kcp's contexts: root, the current one,
// at <url>/clusters/root, and base at <url>.
func Kubeconfig(url string, caPEM, certPEM, keyPEM []byte) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	for name, server := range map[string]string{"root": url + "/clusters/root", "base": url} {
		cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: "admin"}
	}
	cfg.CurrentContext = "root"
	return clientcmd.Write(*cfg)
}

// wait returns Secret name once it holds a certificate and key.
func (s *secrets) wait(ctx context.Context, name string) (*corev1.Secret, error) {
	var sec *corev1.Secret
	err := wait.PollUntilContextTimeout(ctx, time.Second, s.waitFor, true, func(ctx context.Context) (bool, error) {
		var err error
		sec, err = s.get(ctx, name)
		return err == nil && sec != nil && len(sec.Data[KeyCert]) > 0 && len(sec.Data[KeyKey]) > 0, err
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for Secret %s with %s and %s: %w", name, KeyCert, KeyKey, err)
	}
	return sec, nil
}

func (s *secrets) get(ctx context.Context, name string) (*corev1.Secret, error) {
	sec, err := s.kube.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Secret %s: %w", name, err)
	}
	return sec, nil
}

// store writes a certificate pair and the CA into Secret name.
func (s *secrets) store(ctx context.Context, existing *corev1.Secret, name string, p certs.Pair, caPEM []byte) error {
	crt, err := os.ReadFile(p.CertFile)
	if err != nil {
		return err
	}
	key, err := os.ReadFile(p.KeyFile)
	if err != nil {
		return err
	}
	return s.put(ctx, existing, name, corev1.SecretTypeTLS, map[string][]byte{KeyCert: crt, KeyKey: key, KeyCA: caPEM})
}

// put creates Secret name with data, or updates existing when its data
// differ; a Secret of another type is replaced only in its data.
func (s *secrets) put(ctx context.Context, existing *corev1.Secret, name string, typ corev1.SecretType, data map[string][]byte) error {
	if existing == nil {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: s.labels}, Type: typ, Data: data}
		if s.owner != nil {
			sec.OwnerReferences = []metav1.OwnerReference{*s.owner}
		}
		if _, err := s.kube.Create(ctx, sec, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating Secret %s: %w", name, err)
		}
		fmt.Printf("created Secret %s\n", name)
		return nil
	}
	same := len(existing.Data) >= len(data)
	for k, v := range data {
		same = same && bytes.Equal(existing.Data[k], v)
	}
	if same {
		fmt.Printf("kept Secret %s\n", name)
		return nil
	}
	sec := existing.DeepCopy()
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	for k, v := range data {
		sec.Data[k] = v
	}
	if _, err := s.kube.Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating Secret %s: %w", name, err)
	}
	fmt.Printf("renewed Secret %s\n", name)
	return nil
}

func writePair(p certs.Pair, crt, key []byte) error {
	if err := os.WriteFile(p.CertFile, crt, 0o600); err != nil {
		return err
	}
	return os.WriteFile(p.KeyFile, key, 0o600)
}
