package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha2"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// cowboysExportV1alpha2 exports the cowboys in v1alpha2 and claims the
// consumers' configmaps for get and list only.
const cowboysExportV1alpha2 = `apiVersion: apis.kcp.io/v1alpha2
kind: APIExport
metadata:
  name: wildwest.dev
spec:
  resources:
  - name: cowboys
    group: wildwest.dev
    schema: v220920-6039d110.cowboys.wildwest.dev
    storage:
      crd: {}
  permissionClaims:
  - group: ""
    resource: configmaps
    verbs: ["get", "list"]
`

// cowboysBindingV1alpha2 binds it, accepting the claim with its verbs.
const cowboysBindingV1alpha2 = `apiVersion: apis.kcp.io/v1alpha2
kind: APIBinding
metadata:
  name: cowboys
spec:
  reference:
    export:
      path: provider
      name: wildwest.dev
  permissionClaims:
  - group: ""
    resource: configmaps
    verbs: ["get", "list"]
    selector:
      matchAll: true
    state: Accepted
`

// getJSON reads an object with kubectl into out.
func getJSON(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, out any, args ...string) {
	t.Helper()
	raw := s.MustKubectl(t, cluster, append([]string{"get", "-o", "json"}, args...)...)
	if err := json.Unmarshal([]byte(raw), out); err != nil {
		t.Fatalf("decoding kubectl get %v: %v\n%s", args, err, raw)
	}
}

// internalAnnotations returns the annotation keys of conversions
// (apis.v1alpha2.kcp.io/...) an object shows.
func internalAnnotations(m metav1.ObjectMeta) []string {
	var keys []string
	for k := range m.Annotations {
		if strings.HasPrefix(k, "apis.v1alpha2.kcp.io/") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// TestAPIExportV1alpha2: an export and a binding written in
// apis.kcp.io/v1alpha2 with kubectl read back the same in v1alpha2 and in
// their v1alpha1 form; the binding binds; the claim's verbs (get, list)
// bound what the provider can do on the consumer's configmaps through the
// virtual workspace; a v1alpha1 client's update keeps them; verbs the
// virtual workspace cannot check are refused.
func TestAPIExportV1alpha2(t *testing.T) {
	s := framework.StartShard(t)
	for _, c := range []logicalcluster.Name{"provider", "consumer"} {
		createCluster(t, s, c)
	}

	// Discovery lists both versions and prefers v1alpha2, as kcp's.
	var group metav1.APIGroup
	if err := json.Unmarshal([]byte(s.MustKubectl(t, "consumer", "get", "--raw", "/apis/apis.kcp.io")), &group); err != nil {
		t.Fatal(err)
	}
	if group.PreferredVersion.Version != "v1alpha2" || len(group.Versions) != 2 {
		t.Errorf("/apis/apis.kcp.io: preferred %q, versions %+v; want v1alpha2 preferred of v1alpha2 and v1alpha1", group.PreferredVersion.Version, group.Versions)
	}
	var resources metav1.APIResourceList
	if err := json.Unmarshal([]byte(s.MustKubectl(t, "consumer", "get", "--raw", "/apis/apis.kcp.io/v1alpha2")), &resources); err != nil {
		t.Fatal(err)
	}
	var served []string
	for _, r := range resources.APIResources {
		served = append(served, r.Name)
	}
	slices.Sort(served)
	if want := []string{"apibindings", "apibindings/status", "apiexports", "apiexports/status"}; !reflect.DeepEqual(served, want) {
		t.Errorf("apis.kcp.io/v1alpha2 serves %v, want %v", served, want)
	}
	out := s.MustKubectl(t, "consumer", "api-resources", "--api-group=apis.kcp.io", "--no-headers")
	for _, line := range []string{`(?m)^apibindings\s+apis.kcp.io/v1alpha2\s+false\s+APIBinding$`, `(?m)^apiexports\s+apis.kcp.io/v1alpha2\s+false\s+APIExport$`,
		`(?m)^apiresourceschemas\s+apis.kcp.io/v1alpha1\s+false\s+APIResourceSchema$`} {
		if !regexp.MustCompile(line).MatchString(out) {
			t.Errorf("kubectl api-resources --api-group=apis.kcp.io has no line %s:\n%s", line, out)
		}
	}
	out = s.MustKubectl(t, "consumer", "explain", "apiexports.spec.permissionClaims", "--api-version=apis.kcp.io/v1alpha2")
	if !strings.Contains(out, "verbs") || strings.Contains(out, "resourceSelector") {
		t.Errorf("kubectl explain apiexports.spec.permissionClaims in v1alpha2:\n%s", out)
	}
	out = s.MustKubectl(t, "consumer", "explain", "apiexports.spec", "--api-version=apis.kcp.io/v1alpha2")
	if !strings.Contains(out, "resources") || strings.Contains(out, "latestResourceSchemas") {
		t.Errorf("kubectl explain apiexports.spec in v1alpha2:\n%s", out)
	}

	// The export, written in v1alpha2.
	s.MustKubectl(t, "provider", "apply", "-f", yamlFile(t, "schema.yaml", cowboysSchema))
	exportFile := yamlFile(t, "export.yaml", cowboysExportV1alpha2)
	s.MustKubectl(t, "provider", "create", "-f", exportFile)
	// Server-side apply knows the v1alpha2 schema (an unchanged apply is
	// no change).
	if out := s.MustKubectl(t, "provider", "apply", "--server-side", "-f", exportFile); !strings.Contains(out, "serverside-applied") {
		t.Errorf("kubectl apply --server-side of the v1alpha2 export: %s", out)
	}
	var v2Export apisv1alpha2.APIExport
	getJSON(t, s, "provider", &v2Export, "apiexports.v1alpha2.apis.kcp.io", "wildwest.dev")
	wantSpec := apisv1alpha2.APIExportSpec{
		Resources: []apisv1alpha2.ResourceSchema{{Name: "cowboys", Group: "wildwest.dev", Schema: "v220920-6039d110.cowboys.wildwest.dev",
			Storage: apisv1alpha2.ResourceSchemaStorage{CRD: &apisv1alpha2.ResourceSchemaStorageCRD{}}}},
		PermissionClaims: []apisv1alpha2.PermissionClaim{{Resource: "configmaps", Verbs: []string{"get", "list"}}},
	}
	v2Export.Spec.Identity = nil // the generated identity secret, as in v1alpha1
	if !reflect.DeepEqual(v2Export.Spec, wantSpec) || len(internalAnnotations(v2Export.ObjectMeta)) != 0 {
		t.Errorf("the export read in v1alpha2: spec %+v, annotations %v; want the spec written, no conversion annotations", v2Export.Spec, v2Export.Annotations)
	}
	var v1Export apisv1alpha1.APIExport
	getJSON(t, s, "provider", &v1Export, "apiexports.v1alpha1.apis.kcp.io", "wildwest.dev")
	if want := []string{"v220920-6039d110.cowboys.wildwest.dev"}; !reflect.DeepEqual(v1Export.Spec.LatestResourceSchemas, want) {
		t.Errorf("the export read in v1alpha1: latestResourceSchemas %v, want %v", v1Export.Spec.LatestResourceSchemas, want)
	}
	if c := v1Export.Spec.PermissionClaims; len(c) != 1 || c[0].Resource != "configmaps" || !c[0].All {
		t.Errorf("the export read in v1alpha1: claims %+v, want all configmaps", c)
	}
	if got := internalAnnotations(v1Export.ObjectMeta); !reflect.DeepEqual(got, []string{apisv1alpha2.PermissionClaimsAnnotation}) {
		t.Errorf("the export read in v1alpha1 keeps the verbs in %v, want %s", got, apisv1alpha2.PermissionClaimsAnnotation)
	}
	eventually(t, 30*time.Second, "the export's identity", func(ctx context.Context) (bool, error) {
		e, err := kcpClient(t, s, "provider").APIExports().Get(ctx, "wildwest.dev", metav1.GetOptions{})
		return err == nil && e.Status.IdentityHash != "", err
	})

	// The binding, written in v1alpha2, binds.
	bindingFile := yamlFile(t, "binding.yaml", cowboysBindingV1alpha2)
	s.MustKubectl(t, "consumer", "create", "-f", bindingFile)
	b := waitBound(t, s, "consumer", "cowboys")
	if out := s.MustKubectl(t, "consumer", "apply", "--server-side", "-f", bindingFile); !strings.Contains(out, "serverside-applied") {
		t.Errorf("kubectl apply --server-side of the v1alpha2 binding: %s", out)
	}
	if len(b.Status.AppliedPermissionClaims) != 1 {
		t.Errorf("applied claims: %+v", b.Status.AppliedPermissionClaims)
	}
	out = s.MustKubectl(t, "consumer", "get", "apibindings.v1alpha2.apis.kcp.io")
	if !strings.Contains(out, "cowboys") {
		t.Errorf("kubectl get apibindings.v1alpha2.apis.kcp.io:\n%s", out)
	}
	if v1Table, v2Table := s.MustKubectl(t, "consumer", "get", "apibindings.v1alpha1.apis.kcp.io", "-o", "wide"), s.MustKubectl(t, "consumer", "get", "apibindings.v1alpha2.apis.kcp.io", "-o", "wide"); strings.Fields(v1Table)[0] != strings.Fields(v2Table)[0] ||
		len(strings.Fields(strings.Split(v1Table, "\n")[0])) != len(strings.Fields(strings.Split(v2Table, "\n")[0])) {
		t.Errorf("the tables of both versions differ:\n%s\n%s", v1Table, v2Table)
	}
	checkBindingVerbs := func(when string) {
		t.Helper()
		var v2Binding apisv1alpha2.APIBinding
		getJSON(t, s, "consumer", &v2Binding, "apibindings.v1alpha2.apis.kcp.io", "cowboys")
		c := v2Binding.Spec.PermissionClaims
		if len(c) != 1 || !reflect.DeepEqual(c[0].Verbs, []string{"get", "list"}) || !c[0].Selector.MatchAll || c[0].State != apisv1alpha2.ClaimAccepted {
			t.Errorf("%s: the binding's claims in v1alpha2: %+v", when, c)
		}
		if e := v2Binding.Status.ExportPermissionClaims; len(e) != 1 || !reflect.DeepEqual(e[0].Verbs, []string{"get", "list"}) {
			t.Errorf("%s: the binding's status.exportPermissionClaims in v1alpha2: %+v", when, e)
		}
		if a := v2Binding.Status.AppliedPermissionClaims; len(a) != 1 || !reflect.DeepEqual(a[0].Verbs, []string{"get", "list"}) || !a[0].Selector.MatchAll {
			t.Errorf("%s: the binding's status.appliedPermissionClaims in v1alpha2: %+v", when, a)
		}
		if keys := internalAnnotations(v2Binding.ObjectMeta); len(keys) != 0 {
			t.Errorf("%s: the binding in v1alpha2 shows the annotations %v", when, keys)
		}
	}
	checkBindingVerbs("as written")

	// The resource is served in the consumer.
	s.MustKubectl(t, "consumer", "create", "-f", yamlFile(t, "one.yaml", cowboyOne))
	if out := s.MustKubectl(t, "consumer", "get", "cowboys", "-o", "name"); strings.TrimSpace(out) != "cowboy.wildwest.dev/one" {
		t.Errorf("kubectl get cowboys in the consumer: %s", out)
	}

	// Through the virtual workspace, the provider gets and lists the
	// consumer's configmaps, but may not create or delete them.
	s.MustKubectl(t, "consumer", "create", "configmap", "cm", "--from-literal=a=b")
	vw := s.URL + "/services/apiexport/provider/wildwest.dev/clusters/"
	checkVerbs := func(when string) {
		t.Helper()
		if out := s.MustKubectl(t, "provider", "--server", vw+"consumer", "get", "configmaps", "-o", "name"); !strings.Contains(out, "configmap/cm") {
			t.Errorf("%s: configmaps listed through the virtual workspace: %s", when, out)
		}
		if out := s.MustKubectl(t, "provider", "--server", vw+"*", "get", "configmaps", "-A", "-o", "name"); !strings.Contains(out, "configmap/cm") {
			t.Errorf("%s: configmaps listed across consumers: %s", when, out)
		}
		s.MustKubectl(t, "provider", "--server", vw+"consumer", "get", "configmap", "cm")
		for _, args := range [][]string{
			{"create", "configmap", "other", "--from-literal=a=b"},
			{"delete", "configmap", "cm"},
			{"label", "configmap", "cm", "touched=yes"},
		} {
			out, err := s.Kubectl("provider", append([]string{"--server", vw + "consumer"}, args...)...)
			if err == nil || !strings.Contains(out, "forbidden") || !strings.Contains(out, "grants the verbs [get list]") {
				t.Errorf("%s: kubectl %v through the virtual workspace: %v\n%s", when, args, err, out)
			}
		}
		if out := s.MustKubectl(t, "consumer", "get", "configmap", "cm", "-o", "jsonpath={.metadata.labels}"); strings.Contains(out, "touched") {
			t.Errorf("%s: the configmap was changed: %s", when, out)
		}
	}
	checkVerbs("as bound")

	// A v1alpha1 client updates the binding (read, change, replace): the
	// verbs stay.
	var v1Binding apisv1alpha1.APIBinding
	getJSON(t, s, "consumer", &v1Binding, "apibindings.v1alpha1.apis.kcp.io", "cowboys")
	if v1Binding.APIVersion != "apis.kcp.io/v1alpha1" || len(v1Binding.Spec.PermissionClaims) != 1 || !v1Binding.Spec.PermissionClaims[0].All {
		t.Errorf("the binding in v1alpha1: %+v", v1Binding)
	}
	if v1Binding.Labels == nil {
		v1Binding.Labels = map[string]string{}
	}
	v1Binding.Labels["updated-by"] = "v1alpha1"
	raw, err := json.Marshal(&v1Binding)
	if err != nil {
		t.Fatal(err)
	}
	s.MustKubectl(t, "consumer", "replace", "-f", yamlFile(t, "v1.json", string(raw)))
	checkBindingVerbs("after a v1alpha1 update")
	checkVerbs("after a v1alpha1 update")

	// What the virtual workspace cannot honour is refused.
	bad := strings.Replace(strings.Replace(cowboysExportV1alpha2, `["get", "list"]`, `["get", "impersonate"]`, 1), "name: wildwest.dev", "name: bad", 1)
	out, err = s.Kubectl("provider", "create", "-f", yamlFile(t, "bad.yaml", bad))
	if err == nil || !strings.Contains(out, "is invalid") || !strings.Contains(out, `Unsupported value: "impersonate"`) {
		t.Errorf("an export claiming the verb impersonate: %v\n%s", err, out)
	}
	byLabel := strings.Replace(strings.Replace(cowboysBindingV1alpha2, "matchAll: true", "matchLabels: {app: x}", 1), "name: cowboys", "name: by-label", 1)
	out, err = s.Kubectl("consumer", "create", "-f", yamlFile(t, "bylabel.yaml", byLabel))
	if err == nil || !strings.Contains(out, "is invalid") || !strings.Contains(out, "selecting claimed objects by label is not supported") {
		t.Errorf("a binding accepting a claim by label: %v\n%s", err, out)
	}

	// An export's claim may suggest a default selector: matchAll is kept
	// (read back in v1alpha2), a label selector refused.
	withDefault := strings.Replace(strings.Replace(cowboysExportV1alpha2, `verbs: ["get", "list"]`, "verbs: [\"get\", \"list\"]\n    defaultSelector: {matchAll: true}", 1), "name: wildwest.dev", "name: with-default", 1)
	s.MustKubectl(t, "provider", "create", "-f", yamlFile(t, "default.yaml", withDefault))
	var defaulted apisv1alpha2.APIExport
	getJSON(t, s, "provider", &defaulted, "apiexports.v1alpha2.apis.kcp.io", "with-default")
	if c := defaulted.Spec.PermissionClaims; len(c) != 1 || c[0].DefaultSelector == nil || !c[0].DefaultSelector.MatchAll || len(internalAnnotations(defaulted.ObjectMeta)) != 0 {
		t.Errorf("an export's claim with defaultSelector matchAll, read back: %+v %v", c, defaulted.Annotations)
	}
	byLabelDefault := strings.Replace(withDefault, "{matchAll: true}", "{matchLabels: {app: x}}", 1)
	byLabelDefault = strings.Replace(byLabelDefault, "name: with-default", "name: by-label-default", 1)
	out, err = s.Kubectl("provider", "create", "-f", yamlFile(t, "bylabeldefault.yaml", byLabelDefault))
	if err == nil || !strings.Contains(out, "is invalid") || !strings.Contains(out, "defaultSelector: Forbidden: selecting claimed objects by label is not supported") {
		t.Errorf("an export's claim with a label defaultSelector: %v\n%s", err, out)
	}

	// Claims accepted with other verbs than the export's: a warning in
	// PermissionClaimsValid, as kcp's; the binding stays Ready (it still
	// serves what it bound) and the claim reaches the verbs both allow.
	claimsValid := func() (status, reason string) {
		b, err := kcpClient(t, s, "consumer").APIBindings().Get(t.Context(), "cowboys", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ready := false
		for _, c := range b.Status.Conditions {
			switch c.Type {
			case apisv1alpha1.PermissionClaimsValid:
				status, reason = string(c.Status), c.Reason
			case "Ready":
				ready = c.Status == "True"
			}
		}
		if !ready {
			t.Errorf("the binding is not Ready: %+v", b.Status.Conditions)
		}
		return status, reason
	}
	if status, reason := claimsValid(); status != "True" {
		t.Errorf("PermissionClaimsValid of a binding accepting the export's verbs: %s %s", status, reason)
	}
	s.MustKubectl(t, "consumer", "patch", "apibindings.v1alpha2.apis.kcp.io", "cowboys", "--type=json", "-p", `[{"op": "replace", "path": "/spec/permissionClaims/0/verbs", "value": ["get"]}]`)
	eventually(t, 30*time.Second, "PermissionClaimsValid False, PermissionClaimsMismatch", func(ctx context.Context) (bool, error) {
		status, reason := claimsValid()
		return status == "False" && reason == apisv1alpha1.PermissionClaimsMismatchReason, fmt.Errorf("%s %s", status, reason)
	})
	if out, err := s.Kubectl("provider", "--server", vw+"consumer", "get", "configmaps"); err == nil || !strings.Contains(out, "forbidden") {
		t.Errorf("listing through the virtual workspace, the binding accepting get only: %v\n%s", err, out)
	}

	// The consumers' bindings of the export are served read-only in its
	// virtual workspace, as kcp's: only those of this export.
	s.MustKubectl(t, "provider", "create", "-f", yamlFile(t, "empty.yaml", "apiVersion: apis.kcp.io/v1alpha1\nkind: APIExport\nmetadata:\n  name: empty\nspec: {}\n"))
	eventually(t, 30*time.Second, "the empty export's identity", func(ctx context.Context) (bool, error) {
		e, err := kcpClient(t, s, "provider").APIExports().Get(ctx, "empty", metav1.GetOptions{})
		return err == nil && e.Status.IdentityHash != "", err
	})
	s.MustKubectl(t, "consumer", "create", "-f", yamlFile(t, "other.yaml", "apiVersion: apis.kcp.io/v1alpha1\nkind: APIBinding\nmetadata:\n  name: other\nspec:\n  reference:\n    export: {path: provider, name: empty}\n"))
	waitBound(t, s, "consumer", "other")
	if out := s.MustKubectl(t, "provider", "--server", vw+"*", "api-resources", "--api-group=apis.kcp.io"); !regexp.MustCompile(`(?m)^apibindings\s+apis.kcp.io/v1alpha2\s+false\s+APIBinding$`).MatchString(out) {
		t.Errorf("kubectl api-resources through the virtual workspace:\n%s", out)
	}
	for _, server := range []string{vw + "*", vw + "consumer"} {
		if out := s.MustKubectl(t, "provider", "--server", server, "get", "apibindings", "-o", "name"); strings.TrimSpace(out) != "apibinding.apis.kcp.io/cowboys" {
			t.Errorf("the bindings listed at %s: %q, want cowboys only", server, out)
		}
	}
	if out := s.MustKubectl(t, "provider", "--server", vw+"consumer", "get", "apibindings.v1alpha1.apis.kcp.io", "cowboys", "-o", "jsonpath={.spec.reference.export.name}"); out != "wildwest.dev" {
		t.Errorf("the binding read in v1alpha1 through the virtual workspace: %q", out)
	}
	if out, err := s.Kubectl("provider", "--server", vw+"consumer", "get", "apibinding", "other"); err == nil || !strings.Contains(out, "NotFound") {
		t.Errorf("a binding of another export through the virtual workspace: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"delete", "apibinding", "cowboys"}, {"label", "apibinding", "cowboys", "touched=yes"}} {
		if out, err := s.Kubectl("provider", append([]string{"--server", vw + "consumer"}, args...)...); err == nil || !strings.Contains(out, "read-only") {
			t.Errorf("kubectl %v through the virtual workspace: %v\n%s", args, err, out)
		}
	}
}
