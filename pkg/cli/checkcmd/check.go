// Package checkcmd is `tessera check`: it uses an installation as a user
// would, through the kubeconfig it is given (usually the front-proxy's admin
// kubeconfig), and says whether that worked. The Helm chart's `helm test`
// runs it.
package checkcmd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
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

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
)

// Options are the flags of `tessera check`.
type Options struct {
	Kubeconfig string
	Context    string
	Server     string
	Parent     string
	Timeout    time.Duration
	Keep       bool
	Out        io.Writer
}

// NewCommand returns `tessera check`.
func NewCommand() *cobra.Command {
	o := &Options{Parent: "root", Timeout: 2 * time.Minute, Out: os.Stdout}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check an installation end to end: create a workspace, use it, read it back, delete it",
		Long: `Check an installation as a user would, through the server of the kubeconfig
(usually the front-proxy): create a workspace under --parent, wait until it is
Ready, create and read a ConfigMap in it, read the workspace back, and delete it.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig of the installation (default: $KUBECONFIG).")
	fs.StringVar(&o.Context, "context", o.Context, "Context of the kubeconfig; its server is cut to the part before /clusters/.")
	fs.StringVar(&o.Server, "server", o.Server, "Server URL to use instead of the kubeconfig's, with its credentials and CA (e.g. the front-proxy's Service inside the cluster).")
	fs.StringVar(&o.Parent, "parent", o.Parent, "Workspace path under which the check's workspace is created.")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long the whole check may take.")
	fs.BoolVar(&o.Keep, "keep", o.Keep, "Keep the workspace the check created.")
	return cmd
}

// Run runs the check.
func (o *Options) Run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if o.Kubeconfig != "" {
		rules.ExplicitPath = o.Kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context}).ClientConfig()
	if err != nil {
		return err
	}
	if o.Server != "" {
		cfg.Host = o.Server
	}
	base := baseURL(cfg.Host)
	at := func(path string) *rest.Config {
		c := rest.CopyConfig(cfg)
		c.Host = base + "/clusters/" + path
		c.UserAgent = "tessera-check"
		return c
	}

	parent, err := kcpclient.NewForConfig(at(o.Parent))
	if err != nil {
		return err
	}
	suffix := make([]byte, 3)
	if _, err := rand.Read(suffix); err != nil {
		return err
	}
	name := "check-" + hex.EncodeToString(suffix)
	start := time.Now()
	if _, err := parent.Workspaces().Create(ctx, &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating workspace %s:%s: %w", o.Parent, name, err)
	}
	fmt.Fprintf(o.Out, "created workspace %s:%s\n", o.Parent, name)
	if !o.Keep {
		defer func() {
			err := parent.Workspaces().Delete(context.WithoutCancel(ctx), name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				fmt.Fprintf(o.Out, "deleting workspace %s:%s: %v\n", o.Parent, name, err)
				return
			}
			fmt.Fprintf(o.Out, "deleted workspace %s:%s\n", o.Parent, name)
		}()
	}

	var ws *tenancyv1alpha1.Workspace
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		ws, err = parent.Workspaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return ws.Status.Phase == corev1alpha1.LogicalClusterPhaseReady, nil
	})
	if err != nil {
		phase := "unknown"
		if ws != nil {
			phase = string(ws.Status.Phase)
		}
		return fmt.Errorf("workspace %s:%s is not Ready (phase %s): %w", o.Parent, name, phase, err)
	}
	fmt.Fprintf(o.Out, "workspace %s:%s is Ready after %s at %s\n", o.Parent, name, time.Since(start).Round(time.Millisecond), ws.Spec.URL)

	path := o.Parent + ":" + name
	kube, err := kubernetes.NewForConfig(at(path))
	if err != nil {
		return err
	}
	want := map[string]string{"checked": start.UTC().Format(time.RFC3339Nano)}
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tessera-check"}, Data: want}, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), nil
	})
	if err != nil {
		return fmt.Errorf("creating a ConfigMap in %s: %w", path, err)
	}
	cm, err := kube.CoreV1().ConfigMaps("default").Get(ctx, "tessera-check", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the ConfigMap back from %s: %w", path, err)
	}
	if cm.Data["checked"] != want["checked"] {
		return fmt.Errorf("the ConfigMap read back from %s holds %v, not %v", path, cm.Data, want)
	}
	if cl := cm.Annotations["kcp.io/cluster"]; cl == "" || cl != ws.Spec.Cluster {
		return fmt.Errorf("the ConfigMap read back from %s is in logical cluster %q, the workspace's is %q", path, cl, ws.Spec.Cluster)
	}
	fmt.Fprintf(o.Out, "created and read back ConfigMap default/tessera-check in %s (logical cluster %s)\n", path, ws.Spec.Cluster)
	return nil
}

// baseURL cuts a server URL to the part before /clusters/.
func baseURL(host string) string {
	if i := strings.Index(host, "/clusters/"); i >= 0 {
		host = host[:i]
	}
	return strings.TrimSuffix(host, "/")
}
