package deploye2e

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/test/e2e/framework"
	"github.com/tessera-dev/tessera/test/e2e/framework/physical"
)

// proxyNodePort is the front-proxy's NodePort in the suite's cluster.
const proxyNodePort = 31443

// realCluster is the cluster the chart is installed into: pods run.
type realCluster struct {
	*physical.Cluster
	// ProxyHost and ProxyPort reach the front-proxy's NodePort from here.
	ProxyHost                string
	ProxyPort, ProxyNodePort int
	// Repository and Tag name the images the suite imported.
	Repository, Tag string
}

// startRealCluster returns the suite's cluster whose pods run (the
// framework deletes it when the suite ends).
func startRealCluster(ctx context.Context) (*realCluster, error) {
	c, err := env.RealCluster(ctx)
	if err != nil {
		return nil, err
	}
	kube, err := c.Client()
	if err != nil {
		return nil, err
	}
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	rc := &realCluster{Cluster: c, ProxyPort: proxyNodePort, ProxyNodePort: proxyNodePort}
	for _, n := range nodes.Items {
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP && rc.ProxyHost == "" {
				rc.ProxyHost = a.Address
			}
		}
	}
	if rc.ProxyHost == "" {
		return nil, errors.New("no node of the cluster has an InternalIP")
	}
	return rc, nil
}

// ImportImages imports the images `make images` wrote
// (TESSERA_E2E_IMAGES_DIR, default bin/images) and records their name.
func (c *realCluster) ImportImages(ctx context.Context) error {
	dir := os.Getenv("TESSERA_E2E_IMAGES_DIR")
	if dir == "" {
		bin, err := framework.BinDir()
		if err != nil {
			return err
		}
		dir = filepath.Join(bin, "images")
	}
	for _, name := range []string{"tessera", "tessera-front-proxy", "tessera-cache-server", "tessera-virtual-workspaces", "tessera-syncer", "tessera-servlet"} {
		p := filepath.Join(dir, name+".tar")
		tag, err := repoTag(p)
		if err != nil {
			return fmt.Errorf("image %s (make images): %w", p, err)
		}
		repo, version, _ := strings.Cut(tag, ":")
		c.Repository, c.Tag = strings.TrimSuffix(repo, "/"+name), version
		if err := env.LoadImage(ctx, c.Cluster, p); err != nil {
			return err
		}
	}
	return nil
}

// repoTag reads the name of the image of a `docker save` tarball.
func repoTag(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return "", errors.New("no manifest.json")
		}
		if err != nil {
			return "", err
		}
		if h.Name != "manifest.json" {
			continue
		}
		var m []struct{ RepoTags []string }
		if err := json.NewDecoder(tr).Decode(&m); err != nil {
			return "", err
		}
		if len(m) != 1 || len(m[0].RepoTags) != 1 {
			return "", fmt.Errorf("manifest.json names %v", m)
		}
		return m[0].RepoTags[0], nil
	}
}
