package workload

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
)

// TestSyncFlags parses the command line of `workload sync` into its
// options and settings.
func TestSyncFlags(t *testing.T) {
	for _, tc := range []struct {
		name        string
		args        []string
		check       func(t *testing.T, o *syncOptions, s settings)
		wantErr     string
		wantNoParse bool
	}{{
		name: "defaults",
		args: []string{"--syncer-image", "img", "-o", "out.yaml"},
		check: func(t *testing.T, o *syncOptions, s settings) {
			if o.image != "img" || o.output != "out.yaml" || o.replicas != 1 || o.qps != 20 || o.burst != 30 ||
				o.cleanDelay != 30*time.Second || o.kcpNamespace != "default" || o.namespace != "" || len(o.resources) != 0 {
				t.Errorf("options %+v", o)
			}
			if diff := cmp.Diff([]tenancyv1alpha1.APIExportReference{{Path: "root:compute", Export: "kubernetes"}}, s.exports); diff != "" {
				t.Errorf("exports (-want +got):\n%s", diff)
			}
		},
	}, {
		name: "all flags",
		args: []string{"--syncer-image=img", "--output-file=-", "--resources", "routes.route.openshift.io,services", "--resources", "pods",
			"--apiexports", "root:a:b:exp,local", "--labels", "region=eu,env=", "--replicas=0", "--qps=5.5", "--burst=7",
			"--downstream-namespace-clean-delay=1m", "-n", "syncer", "--kcp-namespace", "kcp", "--timeout", "5s"},
		check: func(t *testing.T, o *syncOptions, s settings) {
			if !slices.Equal(o.resources, []string{"routes.route.openshift.io", "services", "pods"}) {
				t.Errorf("resources %v", o.resources)
			}
			if diff := cmp.Diff([]tenancyv1alpha1.APIExportReference{{Path: "root:a:b", Export: "exp"}, {Export: "local"}}, s.exports); diff != "" {
				t.Errorf("exports (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]string{"region": "eu", "env": ""}, s.labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if o.replicas != 0 || o.qps != 5.5 || o.burst != 7 || o.cleanDelay != time.Minute || o.namespace != "syncer" ||
				o.kcpNamespace != "kcp" || o.timeout != 5*time.Second || o.output != "-" {
				t.Errorf("options %+v", o)
			}
		},
	}, {
		name:    "image and output required",
		args:    nil,
		wantErr: "--syncer-image is required, --output-file is required",
	}, {
		name:    "replicas",
		args:    []string{"--syncer-image", "img", "-o", "-", "--replicas", "2"},
		wantErr: "only 0 and 1 are valid values for --replicas",
	}, {
		name:    "bad label",
		args:    []string{"--syncer-image", "img", "-o", "-", "--labels", "region"},
		wantErr: "label 'region' is not in the format of key=value",
	}, {
		name:    "bad export",
		args:    []string{"--syncer-image", "img", "-o", "-", "--apiexports", "root:Bad:kubernetes"},
		wantErr: `--apiexports: invalid APIExport reference "root:Bad:kubernetes"`,
	}, {
		name:    "bad resource",
		args:    []string{"--syncer-image", "img", "-o", "-", "--resources", ".apps"},
		wantErr: `--resources ".apps"`,
	}, {
		name:        "unknown flag",
		args:        []string{"--syncer-images", "img"},
		wantNoParse: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			o := newSyncOptions(time.Millisecond)
			cmd := newSyncCommand(o)
			err := cmd.ParseFlags(tc.args)
			if tc.wantNoParse {
				if err == nil {
					t.Error("parsed")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s, err := o.validate("kind")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, o, s)
		})
	}
}

func TestSyncTargetNameLength(t *testing.T) {
	o := newSyncOptions(time.Millisecond)
	o.image, o.output = "img", "-"
	if _, err := o.validate(strings.Repeat("a", maxSyncTargetNameLength)); err != nil {
		t.Errorf("a name of %d characters: %v", maxSyncTargetNameLength, err)
	}
	if _, err := o.validate(strings.Repeat("a", maxSyncTargetNameLength+1)); err == nil {
		t.Errorf("a name of %d characters is accepted", maxSyncTargetNameLength+1)
	}
}

// TestWorkspaceRules: the syncer may sync its SyncTarget, read it, and
// write it and its status, and nothing of another SyncTarget.
func TestWorkspaceRules(t *testing.T) {
	allows := func(verb, resource, name string) bool {
		for _, r := range WorkspaceRules("kind") {
			if slices.Contains(r.APIGroups, "workload.kcp.io") && slices.Contains(r.Verbs, verb) && slices.Contains(r.Resources, resource) &&
				(len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, name)) {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		verb, resource string
	}{{"sync", "synctargets"}, {"get", "synctargets"}, {"list", "synctargets"}, {"watch", "synctargets"}, {"update", "synctargets"}, {"patch", "synctargets"}, {"update", "synctargets/status"}, {"patch", "synctargets/status"}, {"get", "synctargets/tunnel"}} {
		if !allows(c.verb, c.resource, "kind") {
			t.Errorf("%s %s kind is not allowed", c.verb, c.resource)
		}
		if allows(c.verb, c.resource, "other") {
			t.Errorf("%s %s other is allowed", c.verb, c.resource)
		}
	}
	if allows("delete", "synctargets", "kind") || allows("create", "synctargets", "kind") {
		t.Error("the syncer may create or delete its SyncTarget")
	}
}

// TestKubeconfigCAFile: a CA file of the user's kubeconfig is inlined in
// the syncer's.
func TestKubeconfigCAFile(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, []byte("PEM OF THE CA"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := newSyncOptions(time.Millisecond)
	b, err := o.kubeconfig(&rest.Config{Host: "https://kcp:6443/clusters/root:org", TLSClientConfig: rest.TLSClientConfig{CAFile: ca}}, "tok")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster]
	if string(c.CertificateAuthorityData) != "PEM OF THE CA" || c.CertificateAuthority != "" || c.Server != "https://kcp:6443/clusters/root:org" {
		t.Errorf("cluster %+v", c)
	}
	if _, err := o.kubeconfig(&rest.Config{TLSClientConfig: rest.TLSClientConfig{CAFile: ca + ".missing"}}, "tok"); err == nil {
		t.Error("a missing CA file is accepted")
	}
}
