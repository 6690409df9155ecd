package plugin

import (
	"fmt"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/cli/workspace"
	"github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Clients talk to the current workspace of a kubeconfig.
type Clients struct {
	// Connection is the loaded kubeconfig, for other workspaces.
	*workspace.Connection
	// Path is the current workspace.
	Path logicalcluster.Path
	// CurrentConfig is the current workspace's client configuration.
	CurrentConfig *rest.Config
	KCP           *kcp.Clientset
	Dynamic       dynamic.Interface
	Kube          kubernetes.Interface
}

// Connect loads the kubeconfig the flags select and makes clients of its
// current workspace. Their rate limiter is off: the commands pace their
// waits themselves, and client-go's limiter would only fail a read that it
// cannot let through before a deadline.
func Connect(flags *workspace.ClientFlags) (*Clients, error) {
	conn, err := flags.Connect()
	if err != nil {
		return nil, err
	}
	c := &Clients{Connection: conn, Path: conn.Current(), CurrentConfig: conn.Config(conn.Current())}
	c.CurrentConfig.QPS = -1
	if c.KCP, err = kcp.NewForConfig(c.CurrentConfig); err == nil {
		if c.Dynamic, err = dynamic.NewForConfig(c.CurrentConfig); err == nil {
			c.Kube, err = kubernetes.NewForConfig(c.CurrentConfig)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("creating client for %q: %w", c.Path.String(), err)
	}
	return c, nil
}
