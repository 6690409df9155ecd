package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tessera-dev/tessera/test/e2e/framework/physical"
)

// RealProvider returns a provider of physical clusters whose pods really
// run, whatever TESSERA_E2E_PHYSICAL_PROVIDER chose for the other specs:
// kind when it is kind (kind clusters are real too), the given kubeconfigs
// when it is kubeconfig, else the real provider (one cluster on this
// machine). Its clusters take images from tarballs through
// physical.ImageLoader (LoadImage) when the provider implements it (real
// and kind do).
func (e *Env) RealProvider() (physical.Provider, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.real != nil {
		return e.real, nil
	}
	dir := filepath.Join(e.Dir, "real")
	switch name := os.Getenv("TESSERA_E2E_PHYSICAL_PROVIDER"); name {
	case "kind":
		kind, err := Tool("kind")
		if err != nil {
			return nil, err
		}
		image := os.Getenv("TESSERA_E2E_KIND_IMAGE")
		if image == "" {
			image = physical.KindNodeImage
		}
		e.real = &physical.Kind{Kind: kind, Image: image, Prefix: "tessera-e2e-" + e.Area + "-real-" + e.RunID,
			Dir: dir, Ledger: os.Getenv("TESSERA_E2E_LEDGER")}
	case "kubeconfig":
		paths := physical.SplitList(os.Getenv("TESSERA_E2E_PHYSICAL_KUBECONFIGS"))
		if len(paths) == 0 {
			return nil, errors.New("TESSERA_E2E_PHYSICAL_PROVIDER=kubeconfig needs TESSERA_E2E_PHYSICAL_KUBECONFIGS")
		}
		e.real = &physical.Kubeconfigs{Paths: paths}
	default:
		var tools physical.RealTools
		var errs []error
		for _, t := range []struct {
			dst  *string
			name string
		}{
			{&tools.Etcd, "etcd"}, {&tools.KubeAPIServer, "kube-apiserver"},
			{&tools.KubeControllerManager, "kube-controller-manager"},
			{&tools.KubeScheduler, "kube-scheduler"}, {&tools.Kubelet, "kubelet"},
			{&tools.KubeProxy, "kube-proxy"}, {&tools.CoreDNS, "coredns"},
		} {
			p, err := Tool(t.name)
			*t.dst = p
			errs = append(errs, err)
		}
		root, err := repoRoot()
		errs = append(errs, err)
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("the real physical cluster provider: %w", err)
		}
		tools.Script = filepath.Join(root, "hack", "real-cluster.sh")
		real := &physical.Real{Tools: tools, Group: e.group, Dir: dir}
		if w := os.Getenv("TESSERA_E2E_REAL_WAIT"); w != "" {
			d, err := time.ParseDuration(w)
			if err != nil {
				return nil, fmt.Errorf("TESSERA_E2E_REAL_WAIT: %w", err)
			}
			real.LockWait = d
		}
		e.real = real
	}
	return e.real, nil
}

// RealCluster returns the suite's physical cluster whose pods really run,
// created through RealProvider on first use and deleted when the suite
// ends. For the real provider it first builds the pause image (hack/pause).
func (e *Env) RealCluster(ctx context.Context) (*physical.Cluster, error) {
	e.startMu.Lock()
	defer e.startMu.Unlock()
	e.mu.Lock()
	c, err := e.realCluster, e.realErr
	e.mu.Unlock()
	if c != nil || err != nil {
		return c, err
	}
	provider, err := e.RealProvider()
	if err != nil {
		return nil, err
	}
	_ = e.Time("start real physical cluster ("+provider.Name()+")", func() error {
		if real, ok := provider.(*physical.Real); ok && real.Tools.PauseImage == "" {
			var tarball string
			tarball, _, err = e.BuildImage(ctx, "pause", "./hack/pause", "docker.io/tessera-e2e", "v1")
			if err != nil {
				return err
			}
			real.Tools.PauseImage = tarball
		}
		c, err = provider.Create(ctx, "real")
		return err
	})
	e.mu.Lock()
	defer e.mu.Unlock()
	e.realCluster, e.realErr = c, err
	return c, flat(err)
}

// LoadImage loads the images of a docker-save tarball into a cluster of the
// real provider (RealProvider).
func (e *Env) LoadImage(ctx context.Context, c *physical.Cluster, tarball string) error {
	provider, err := e.RealProvider()
	if err != nil {
		return err
	}
	loader, ok := provider.(physical.ImageLoader)
	if !ok {
		return fmt.Errorf("the %s provider cannot load images into its clusters", provider.Name())
	}
	return loader.LoadImage(ctx, c, tarball)
}

// BuildImage builds a package of the main module as a static binary and
// wraps it with hack/images into an image <repository>/<name>:<tag>; it
// returns the docker-save tarball and the image's name.
func (e *Env) BuildImage(ctx context.Context, name, pkg, repository, tag string) (string, string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", "", err
	}
	dir := filepath.Join(e.Dir, "images")
	bin := filepath.Join(dir, "bin", name)
	goBin := os.Getenv("GO")
	if goBin == "" {
		goBin = "go"
	}
	build := command(ctx, []string{"CGO_ENABLED=0"}, goBin, "build", "-o", bin, pkg)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", "", flat(fmt.Errorf("go build %s: %w\n%s", pkg, err, out))
	}
	images := command(ctx, nil, goBin, "run", "./hack/images", "-output-dir", dir, "-repository", repository, "-tag", tag, name+"="+bin)
	images.Dir = root
	if out, err := images.CombinedOutput(); err != nil {
		return "", "", flat(fmt.Errorf("hack/images %s: %w\n%s", name, err, out))
	}
	return filepath.Join(dir, name+".tar"), repository + "/" + name + ":" + tag, nil
}

// DeleteRealCluster deletes the suite's real cluster now instead of when
// the suite ends (a spec that checks what the teardown leaves); later
// RealCluster calls fail.
func (e *Env) DeleteRealCluster(ctx context.Context) error {
	e.startMu.Lock()
	defer e.startMu.Unlock()
	e.mu.Lock()
	c, provider := e.realCluster, e.real
	e.realCluster, e.realErr = nil, errors.New("the real physical cluster was deleted by a spec")
	e.mu.Unlock()
	if c == nil {
		return nil
	}
	return flat(e.Time("stop real physical cluster", func() error { return provider.Delete(ctx, c) }))
}
