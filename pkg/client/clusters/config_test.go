package clusters

import (
	"testing"

	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func TestShardHost(t *testing.T) {
	for _, tc := range []struct {
		host, want string
	}{
		{"https://shard:6443", "https://shard:6443"},
		{"https://shard:6443/", "https://shard:6443"},
		{"https://shard:6443/clusters/root", "https://shard:6443"},
		{"https://shard:6443/clusters/root/", "https://shard:6443"},
		{"https://shard:6443/clusters/*", "https://shard:6443"},
		{"https://proxy/prefix/clusters/root:org", "https://proxy/prefix"},
		{"https://proxy/prefix", "https://proxy/prefix"},
		{"https://proxy/clusters/root/extra", "https://proxy/clusters/root/extra"},
		{"shard:6443/clusters/root", "shard:6443"},
	} {
		t.Run(tc.host, func(t *testing.T) {
			if got := ShardHost(tc.host); got != tc.want {
				t.Errorf("ShardHost(%q) = %q, want %q", tc.host, got, tc.want)
			}
		})
	}
}

func TestConfigFor(t *testing.T) {
	base := &rest.Config{Host: "https://shard:6443/clusters/root", BearerToken: "token", QPS: 42}
	for _, tc := range []struct {
		name     logicalcluster.Name
		wantHost string
		wantErr  bool
	}{
		{name: "root", wantHost: "https://shard:6443/clusters/root"},
		{name: "2x7ab9", wantHost: "https://shard:6443/clusters/2x7ab9"},
		{name: "system:admin", wantHost: "https://shard:6443/clusters/system:admin"},
		{name: logicalcluster.Wildcard, wantHost: "https://shard:6443/clusters/*"},
		{name: "", wantErr: true},
		{name: "..", wantErr: true},
		{name: "a/b", wantErr: true},
		{name: "Root", wantErr: true},
	} {
		t.Run(string(tc.name), func(t *testing.T) {
			cfg, err := ConfigFor(base, tc.name)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("ConfigFor(%q) = %q, want error", tc.name, cfg.Host)
				}
				return
			}
			if err != nil {
				t.Fatalf("ConfigFor(%q): %v", tc.name, err)
			}
			if cfg.Host != tc.wantHost {
				t.Errorf("Host = %q, want %q", cfg.Host, tc.wantHost)
			}
			if cfg.BearerToken != "token" || cfg.QPS != 42 {
				t.Errorf("ConfigFor lost the rest of the config: %+v", cfg)
			}
			if cfg == base || base.Host != "https://shard:6443/clusters/root" {
				t.Errorf("ConfigFor must return a copy and leave the base config alone")
			}
		})
	}
	if got := WildcardConfig(base).Host; got != "https://shard:6443/clusters/*" {
		t.Errorf("WildcardConfig Host = %q", got)
	}
	if cfg, err := ConfigForPath(base, logicalcluster.NewPath("root:org:team")); err != nil || cfg.Host != "https://shard:6443/clusters/root:org:team" {
		t.Errorf("ConfigForPath = %v, %v", cfg, err)
	}
	if _, err := ConfigForPath(base, logicalcluster.NewPath("root::team")); err == nil {
		t.Errorf("ConfigForPath accepted an invalid path")
	}
}
