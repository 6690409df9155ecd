package workload

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
)

// TestSyncerID checks the syncer's name against one computed apart from
// Go, with Python: "kcp-syncer-kind-" + the first 8 characters of the
// SHA-224 of the UID in lower-case base 36 (see plugin.TestShortHash for
// the recipe).
func TestSyncerID(t *testing.T) {
	if got, want := syncerID("kind", "7d4b3c9e-1f2a-4b5c-8d6e-0f1a2b3c4d5e"), "kcp-syncer-kind-19dwcphl"; got != want {
		t.Errorf("syncerID = %q, want %q", got, want)
	}
}

// decodeManifest parses the YAML documents of a manifest back into typed
// objects.
func decodeManifest(t *testing.T, manifest []byte) []runtime.Object {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifest)))
	var objs []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("decoding %s: %v", doc, err)
		}
		objs = append(objs, obj)
	}
}

func TestRenderManifest(t *testing.T) {
	const id = "kcp-syncer-kind-19dwcphl"
	kubeconfig, err := syncerKubeconfig("https://kcp.example:6443/clusters/root:compute", []byte("-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"), false, "the-token", "default")
	if err != nil {
		t.Fatal(err)
	}
	in := manifestInput{
		syncerID:      id,
		namespace:     "syncers",
		syncTarget:    "kind",
		syncTargetUID: "7d4b3c9e-1f2a-4b5c-8d6e-0f1a2b3c4d5e",
		cluster:       "2fx9c0hk",
		image:         "ghcr.io/tessera-dev/tessera-syncer:v1",
		replicas:      1,
		resources:     []string{"routes.route.openshift.io", "services"},
		permissions:   []string{"secrets", "configmaps", "deployments.apps", "pods", "services", "routes.route.openshift.io", "configmaps"},
		qps:           12.5,
		burst:         40,
		cleanDelay:    2 * time.Minute,
		kubeconfig:    kubeconfig,
	}
	manifest, err := renderManifest(in)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(manifest, []byte("creationTimestamp")) || bytes.Contains(manifest, []byte("status:")) {
		t.Errorf("the manifest has empty fields of the Go types:\n%s", manifest)
	}
	objs := decodeManifest(t, manifest)
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetObjectKind().GroupVersionKind().Kind)
	}
	if want := []string{"Namespace", "ServiceAccount", "Secret", "ClusterRole", "ClusterRoleBinding", "Secret", "Deployment"}; !slices.Equal(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}

	if ns := objs[0].(*corev1.Namespace); ns.Name != "syncers" {
		t.Errorf("namespace %q", ns.Name)
	}
	if sa := objs[1].(*corev1.ServiceAccount); sa.Name != id || sa.Namespace != "syncers" {
		t.Errorf("service account %s/%s", sa.Namespace, sa.Name)
	}
	if tok := objs[2].(*corev1.Secret); tok.Name != id+"-token" || tok.Type != corev1.SecretTypeServiceAccountToken || tok.Annotations[corev1.ServiceAccountNameKey] != id {
		t.Errorf("token secret %s %s %v", tok.Name, tok.Type, tok.Annotations)
	}

	cr := objs[3].(*rbacv1.ClusterRole)
	rule := func(group string) *rbacv1.PolicyRule {
		for i, r := range cr.Rules {
			if slices.Equal(r.APIGroups, []string{group}) && slices.Equal(r.Verbs, []string{"*"}) {
				return &cr.Rules[i]
			}
		}
		return nil
	}
	if r := rule(""); r == nil || !slices.Equal(r.Resources, append([]string{"secrets", "configmaps", "pods"}, append(podSubresources, "services")...)) {
		t.Errorf("core rule %+v", r)
	}
	if r := rule("apps"); r == nil || !slices.Equal(r.Resources, []string{"deployments"}) {
		t.Errorf("apps rule %+v", r)
	}
	if r := rule("route.openshift.io"); r == nil || !slices.Equal(r.Resources, []string{"routes"}) {
		t.Errorf("routes rule %+v", r)
	}
	if r := cr.Rules[0]; !slices.Equal(r.Resources, []string{"namespaces"}) || !slices.Equal(r.Verbs, []string{"create", "get", "list", "watch", "update", "delete"}) {
		t.Errorf("namespaces rule %+v", r)
	}
	crb := objs[4].(*rbacv1.ClusterRoleBinding)
	if crb.RoleRef.Name != id || len(crb.Subjects) != 1 || crb.Subjects[0].Name != id || crb.Subjects[0].Namespace != "syncers" || crb.Subjects[0].Kind != "ServiceAccount" {
		t.Errorf("cluster role binding %+v %+v", crb.RoleRef, crb.Subjects)
	}

	secret := objs[5].(*corev1.Secret)
	cfg, err := clientcmd.Load([]byte(secret.StringData[kubeconfigKey]))
	if err != nil || secret.Name != id {
		t.Fatalf("kubeconfig secret %s: %v", secret.Name, err)
	}
	rest, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	ns, _, _ := clientcmd.NewDefaultClientConfig(*cfg, nil).Namespace()
	if rest.Host != "https://kcp.example:6443/clusters/root:compute" || rest.BearerToken != "the-token" || !strings.Contains(string(rest.CAData), "CA") || ns != "default" {
		t.Errorf("kubeconfig: host %q token %q CA %q namespace %q", rest.Host, rest.BearerToken, rest.CAData, ns)
	}

	d := objs[6].(*appsv1.Deployment)
	if d.Name != id || d.Namespace != "syncers" || d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Template.Spec.ServiceAccountName != id {
		t.Errorf("deployment %s/%s replicas %v sa %q", d.Namespace, d.Name, d.Spec.Replicas, d.Spec.Template.Spec.ServiceAccountName)
	}
	if d.Spec.Selector.MatchLabels["app"] != id || d.Spec.Template.Labels["app"] != id {
		t.Errorf("deployment labels %v %v", d.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
	}
	c := d.Spec.Template.Spec.Containers[0]
	wantArgs := []string{
		"--from-kubeconfig=/kcp/kubeconfig",
		"--sync-target-name=kind",
		"--sync-target-uid=7d4b3c9e-1f2a-4b5c-8d6e-0f1a2b3c4d5e",
		"--from-cluster=2fx9c0hk",
		"--qps=12.5",
		"--burst=40",
		"--downstream-namespace-clean-delay=2m0s",
		"--resources=routes.route.openshift.io",
		"--resources=services",
	}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if c.Image != in.image || len(c.Command) != 0 {
		t.Errorf("image %q command %v", c.Image, c.Command)
	}
	if len(c.Env) != 1 || c.Env[0].Name != "NAMESPACE" || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.namespace" {
		t.Errorf("env %+v", c.Env)
	}
	vols := d.Spec.Template.Spec.Volumes
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/kcp/" || len(vols) != 1 || vols[0].Secret.SecretName != id || vols[0].Name != c.VolumeMounts[0].Name {
		t.Errorf("volumes %+v mounts %+v", vols, c.VolumeMounts)
	}
}

// TestSyncerKubeconfigInsecure: a kubeconfig that skips TLS verification
// gives the syncer one that does too.
func TestSyncerKubeconfigInsecure(t *testing.T) {
	b, err := syncerKubeconfig("https://kcp:6443/clusters/root", nil, true, "tok", "default")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(b)
	if err != nil || !cfg.Clusters["default-cluster"].InsecureSkipTLSVerify {
		t.Errorf("insecure kubeconfig: %v\n%s", err, b)
	}
}

func TestSchemaResources(t *testing.T) {
	got := schemaResources([]string{"v1.deployments.apps", "v1.services.core", "rev-0.ingresses.networking.k8s.io", "broken"})
	if want := []string{"deployments.apps", "services", "ingresses.networking.k8s.io"}; !slices.Equal(got, want) {
		t.Errorf("schemaResources = %v, want %v", got, want)
	}
}
