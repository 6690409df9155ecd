package workspace

import (
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// ClientFlags are the kubeconfig flags of kubectl ws (--kubeconfig,
// --context, --cluster, --user, --server), for the other kubectl kcp
// commands, which talk to the current workspace.
type ClientFlags struct {
	flags kubeconfigFlags
}

// AddFlags adds the flags to fs.
func (f *ClientFlags) AddFlags(fs *pflag.FlagSet) { f.flags.addFlags(fs) }

// Connect loads the kubeconfig as kubectl ws does. It fails when the
// server URL of the context is not a workspace URL.
func (f *ClientFlags) Connect() (*Connection, error) {
	kc, err := f.flags.load()
	if err != nil {
		return nil, err
	}
	if !kc.server.isWorkspace() {
		return nil, notWorkspaceURLError(kc.cluster.Server)
	}
	return &Connection{kc: kc}, nil
}

// Connection is a loaded kubeconfig whose context points at a workspace.
type Connection struct {
	kc *kubeconfig
}

// Current returns the path of the current workspace.
func (c *Connection) Current() logicalcluster.Path { return c.kc.server.path }

// Config returns the client configuration of the workspace at p, on the
// same server and with the same credentials as the current one.
func (c *Connection) Config(p logicalcluster.Path) *rest.Config { return c.kc.restConfig(p) }
