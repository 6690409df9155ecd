package physical

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// KindNodeImage is the node image kind clusters are created from: the
// default image of kind v0.33.0 (hack/tools/kind), Kubernetes v1.37.0,
// pinned by digest. TESSERA_E2E_KIND_IMAGE overrides it.
const KindNodeImage = "kindest/node:v1.37.0@sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5"

// Kind creates kind clusters; it needs a container engine (Docker, or
// Podman with KIND_EXPERIMENTAL_PROVIDER=podman) and the node image.
type Kind struct {
	// Kind is the path of the kind binary.
	Kind  string
	Image string
	// Prefix starts the name of every cluster, so that a run deletes only
	// its own clusters.
	Prefix string
	Dir    string
	// Ledger, when set, gets a line "kind <cluster name>" for every cluster
	// before it is created, so hack/e2e.sh can delete what a crashed run
	// left behind.
	Ledger string
}

// Name implements Provider.
func (k *Kind) Name() string { return "kind" }

func (k *Kind) clusterName(name string) string { return k.Prefix + "-" + name }

// Create implements Provider.
func (k *Kind) Create(ctx context.Context, name string) (*Cluster, error) {
	dir := filepath.Join(k.Dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	// The API server is published on 127.0.0.1 only (kind's default, made
	// explicit).
	config := filepath.Join(dir, "kind.yaml")
	if err := os.WriteFile(config, []byte("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnetworking:\n  apiServerAddress: 127.0.0.1\n"), 0o644); err != nil {
		return nil, err
	}
	if k.Ledger != "" {
		f, err := os.OpenFile(k.Ledger, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(f, "kind %s\n", k.clusterName(name))
		f.Close()
	}
	kubeconfig := filepath.Join(dir, "admin.kubeconfig")
	out, err := k.run(ctx, "create", "cluster", "--name", k.clusterName(name), "--image", k.Image,
		"--config", config, "--kubeconfig", kubeconfig, "--wait", "5m")
	if err != nil {
		_, _ = k.run(context.WithoutCancel(ctx), "delete", "cluster", "--name", k.clusterName(name))
		return nil, fmt.Errorf("kind create cluster %s: %w\n%s", k.clusterName(name), err, out)
	}
	return &Cluster{Name: name, Kubeconfig: kubeconfig}, nil
}

// Delete implements Provider.
func (k *Kind) Delete(ctx context.Context, c *Cluster) error {
	if out, err := k.run(ctx, "delete", "cluster", "--name", k.clusterName(c.Name)); err != nil {
		return fmt.Errorf("kind delete cluster %s: %w\n%s", k.clusterName(c.Name), err, out)
	}
	return nil
}

func (k *Kind) run(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, k.Kind, args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// LoadImage implements ImageLoader: kind load image-archive.
func (k *Kind) LoadImage(ctx context.Context, c *Cluster, tarball string) error {
	if out, err := k.run(ctx, "load", "image-archive", "--name", k.clusterName(c.Name), tarball); err != nil {
		return fmt.Errorf("kind load image-archive %s: %w\n%s", tarball, err, out)
	}
	return nil
}
