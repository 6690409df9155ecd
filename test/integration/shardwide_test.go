package integration

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// getPath GETs path with cfg's credentials and returns the status, the
// response headers and (the first 64 KiB of) the body.
func getPath(t *testing.T, cfg *rest.Config, path string) (int, http.Header, string) {
	t.Helper()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, cfg.Host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.BearerToken)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, resp.Header, string(body)
}

// TestShardWidePaths: the shard's metrics and profiles (--profiling, on by
// default) are served to shard admins and refused to a logical cluster's
// admin, whose RBAC grants every non-resource URL of its cluster.
func TestShardWidePaths(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, "tenant-token,tenant,tenant-uid"))
	a := logicalcluster.Name("sw-a")
	createCluster(t, s, a)
	bindClusterRole(t, s, a, "", "tenant-admin", "cluster-admin", authzUser("tenant"))
	tenant := tokenConfig(s, a, "tenant-token")
	eventually(t, 30*time.Second, "the tenant to be let into its cluster", func(ctx context.Context) (bool, error) {
		code, _, _ := getPath(t, tenant, "/version")
		return code == http.StatusOK, nil
	})
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap?debug=1", "/metrics"} {
		if code, _, body := getPath(t, s.Config(logicalcluster.SystemAdmin), path); code != http.StatusOK {
			t.Errorf("a shard admin GET %s: %d %s", path, code, body)
		}
		code, _, body := getPath(t, tenant, path)
		if code != http.StatusForbidden || !strings.Contains(body, "whole shard") {
			t.Errorf("the admin of %s GET %s: %d %s, want 403 about the whole shard", a, path, code, body)
		}
	}
}
