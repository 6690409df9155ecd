package workspace

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// The names of the contexts and clusters the plugin writes into the
// kubeconfig, as kcp's kubectl ws does.
const (
	CurrentContextName  = "workspace.kcp.io/current"
	PreviousContextName = "workspace.kcp.io/previous"
)

// kubeconfigFlags select the kubeconfig and the context to start from.
type kubeconfigFlags struct {
	kubeconfig string
	context    string
	cluster    string
	user       string
	server     string
}

func (f *kubeconfigFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.kubeconfig, "kubeconfig", f.kubeconfig, "Path to the kubeconfig file to use (default: $KUBECONFIG or ~/.kube/config).")
	fs.StringVar(&f.context, "context", f.context, "The name of the kubeconfig context to start from.")
	fs.StringVar(&f.cluster, "cluster", f.cluster, "The name of the kubeconfig cluster to use instead of the context's.")
	fs.StringVar(&f.user, "user", f.user, "The name of the kubeconfig user to use instead of the context's.")
	fs.StringVarP(&f.server, "server", "s", f.server, "The URL of the server to use instead of the cluster's.")
}

// kubeconfig is the loaded kubeconfig and the context the command starts
// from, with the flags applied.
type kubeconfig struct {
	access clientcmd.ConfigAccess
	// raw is the merged kubeconfig as loaded, which is modified and written
	// back on a switch.
	raw *clientcmdapi.Config
	// context is the starting context (a copy) with --cluster and --user
	// applied.
	context *clientcmdapi.Context
	// cluster is the starting context's cluster (a copy) with --server
	// applied.
	cluster *clientcmdapi.Cluster
	// rest is the client configuration of the starting context.
	rest *rest.Config
	// server is the URL of the starting context, split.
	server serverURL
}

// load reads the kubeconfig with the usual loading rules: --kubeconfig, else
// the files in $KUBECONFIG, else ~/.kube/config.
func (f *kubeconfigFlags) load() (*kubeconfig, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.kubeconfig
	overrides := &clientcmd.ConfigOverrides{
		CurrentContext: f.context,
		Context:        clientcmdapi.Context{Cluster: f.cluster, AuthInfo: f.user},
		ClusterInfo:    clientcmdapi.Cluster{Server: f.server},
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)

	raw, err := loader.RawConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	contextName := raw.CurrentContext
	if f.context != "" {
		contextName = f.context
	}
	switch {
	case contextName == "" && len(raw.Contexts) == 0:
		return nil, errors.New("no kubeconfig found: set KUBECONFIG or use --kubeconfig")
	case contextName == "":
		return nil, errors.New("no current context is set in the kubeconfig (use --context)")
	}
	ctx, ok := raw.Contexts[contextName]
	if !ok {
		return nil, fmt.Errorf("context %q not found in the kubeconfig", contextName)
	}
	ctx = ctx.DeepCopy()
	if f.cluster != "" {
		ctx.Cluster = f.cluster
	}
	if f.user != "" {
		ctx.AuthInfo = f.user
	}
	cluster, ok := raw.Clusters[ctx.Cluster]
	if !ok {
		return nil, fmt.Errorf("cluster %q of context %q not found in the kubeconfig", ctx.Cluster, contextName)
	}
	cluster = cluster.DeepCopy()
	if f.server != "" {
		cluster.Server = f.server
	}
	server, err := parseServerURL(cluster.Server)
	if err != nil {
		return nil, err
	}

	restConfig, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("building client configuration: %w", err)
	}

	return &kubeconfig{
		access:  rules,
		raw:     &raw,
		context: ctx,
		cluster: cluster,
		rest:    restConfig,
		server:  server,
	}, nil
}

// restConfig returns the client configuration of the starting context
// with the URL of the logical cluster at p.
func (k *kubeconfig) restConfig(p logicalcluster.Path) *rest.Config {
	cfg := rest.CopyConfig(k.rest)
	cfg.Host = workspaceURL(k.server.base, p)
	return cfg
}

// switchTo points the current workspace context at server and keeps the
// starting context as the previous one.
func (k *kubeconfig) switchTo(server string) error {
	cluster := k.cluster.DeepCopy()
	cluster.Server = server
	return k.write(k.context.DeepCopy(), cluster)
}

// swap makes the previous workspace context the current one and the
// starting context the previous one. It returns the new server URL.
func (k *kubeconfig) swap() (string, error) {
	prev, ok := k.raw.Contexts[PreviousContextName]
	if !ok {
		return "", errors.New("no previous workspace found in the kubeconfig")
	}
	prevCluster, ok := k.raw.Clusters[prev.Cluster]
	if !ok {
		return "", fmt.Errorf("cluster %q of context %q not found in the kubeconfig", prev.Cluster, PreviousContextName)
	}
	if err := k.write(prev.DeepCopy(), prevCluster.DeepCopy()); err != nil {
		return "", err
	}
	return prevCluster.Server, nil
}

// write stores next as the current workspace context and cluster and the
// starting context as the previous ones, makes the current workspace
// context the current context, and writes the changes back to the files
// they came from. New entries go to the first kubeconfig file; every other
// file stays untouched.
func (k *kubeconfig) write(nextContext *clientcmdapi.Context, nextCluster *clientcmdapi.Cluster) error {
	cfg := k.raw.DeepCopy()

	prevContext := k.context.DeepCopy()
	prevCluster := k.cluster.DeepCopy()
	k.put(cfg, PreviousContextName, prevContext, prevCluster)
	k.put(cfg, CurrentContextName, nextContext, nextCluster)
	cfg.CurrentContext = CurrentContextName

	if err := clientcmd.ModifyConfig(k.access, *cfg, true); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return nil
}

// put stores context and cluster under name, in the file that already
// holds an entry of that name, else in the default file.
func (k *kubeconfig) put(cfg *clientcmdapi.Config, name string, context *clientcmdapi.Context, cluster *clientcmdapi.Cluster) {
	cluster.LocationOfOrigin = ""
	if old, ok := k.raw.Clusters[name]; ok {
		cluster.LocationOfOrigin = old.LocationOfOrigin
	}
	context.LocationOfOrigin = ""
	if old, ok := k.raw.Contexts[name]; ok {
		context.LocationOfOrigin = old.LocationOfOrigin
	}
	context.Cluster = name
	cfg.Clusters[name] = cluster
	cfg.Contexts[name] = context
}
