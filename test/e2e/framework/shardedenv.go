package framework

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/tessera-dev/tessera/test/e2e/framework/sharded"
)

// Sharded returns the suite's sharded installation (test/e2e/framework/sharded:
// a cache server, three shards with their virtual workspaces and a
// front-proxy), starting it on first use, and a Tessera whose URL is the
// front-proxy's, with the kcp-admin kubeconfig and the non-admin user.
func (e *Env) Sharded(ctx context.Context) (*sharded.Installation, *Tessera, error) {
	e.startMu.Lock()
	defer e.startMu.Unlock()
	if e.tesseraErr != nil {
		return nil, nil, flat(fmt.Errorf("an earlier start failed: %w", e.tesseraErr))
	}
	e.mu.Lock()
	in, t := e.sharded, e.tessera
	e.mu.Unlock()
	if in != nil {
		return in, t, nil
	}
	bin, err := BinDir()
	if err != nil {
		return nil, nil, err
	}
	err = e.Time("start sharded installation", func() error {
		in, err = sharded.Start(ctx, sharded.Options{
			Dir: filepath.Join(e.Dir, "sharded"), BinDir: bin, Group: e.group, NoFsync: true,
			Tokens: []string{userToken + ",e2e-user,e2e-user-uid,e2e-team"},
		})
		return err
	})
	if err == nil {
		t = &Tessera{URL: in.Proxy.URL, Kubeconfig: in.Kubeconfig, Context: "base", env: e}
		err = t.writeUserKubeconfig(userToken)
	}
	if err != nil {
		e.tesseraErr = err
		return nil, nil, flat(err)
	}
	e.mu.Lock()
	e.sharded, e.tessera = in, t
	e.mu.Unlock()
	return in, t, nil
}
