package integration

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// matrixCRD has status and scale subresources.
const matrixCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.tessera.test
spec:
  group: tessera.test
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer}
              secret: {type: string}
          status:
            type: object
            properties:
              replicas: {type: integer}
`

var gadgetsGVR = schema.GroupVersionResource{Group: "tessera.test", Version: "v1", Resource: "gadgets"}

// victimGadgetValue is in the victim's Gadget; no answer to the attacker
// may contain it.
const victimGadgetValue = "the-victims-gadget-value"

// matrixRequests are every verb on a built-in resource (Secrets), a custom
// resource (Gadgets) and their subresources (a Gadget's status and scale,
// a Namespace's status), each aimed at the victim's objects.
func matrixRequests() []rawRequest {
	const (
		json      = "application/json"
		merge     = "application/merge-patch+json"
		jsonPatch = "application/json-patch+json"
		strategic = "application/strategic-merge-patch+json"
		apply     = "application/apply-patch+yaml"
	)
	var out []rawRequest
	for _, r := range []struct {
		collection, kind, apiVersion, create string
	}{
		{"/api/v1/namespaces/default/secrets", "Secret", "v1", `"stringData":{"password":"planted"}`},
		{"/apis/tessera.test/v1/namespaces/default/gadgets", "Gadget", "tessera.test/v1", `"spec":{"replicas":7,"secret":"planted"}`},
	} {
		object := func(name string) string {
			return fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":%q},%s}`, r.apiVersion, r.kind, name, r.create)
		}
		victim := r.collection + "/victim"
		allNamespaces := strings.Replace(r.collection, "/namespaces/default", "", 1)
		out = append(out,
			rawRequest{method: http.MethodGet, path: victim},
			rawRequest{method: http.MethodGet, path: r.collection},
			rawRequest{method: http.MethodGet, path: allNamespaces},
			rawRequest{method: http.MethodGet, path: r.collection + "?watch=true&timeoutSeconds=1"},
			rawRequest{method: http.MethodGet, path: allNamespaces + "?watch=true&timeoutSeconds=1"},
			rawRequest{method: http.MethodPost, path: r.collection, contentType: json, body: object("planted")},
			rawRequest{method: http.MethodPut, path: victim, contentType: json, body: object("victim")},
			rawRequest{method: http.MethodPatch, path: victim, contentType: merge, body: `{"metadata":{"labels":{"pwned":"merge"}}}`},
			rawRequest{method: http.MethodPatch, path: victim, contentType: jsonPatch, body: `[{"op":"add","path":"/metadata/labels","value":{"pwned":"json"}}]`},
			rawRequest{method: http.MethodPatch, path: victim, contentType: strategic, body: `{"metadata":{"labels":{"pwned":"strategic"}}}`},
			rawRequest{method: http.MethodPatch, path: victim + "?fieldManager=attacker&force=true", contentType: apply, body: object("victim")},
			rawRequest{method: http.MethodDelete, path: victim},
			rawRequest{method: http.MethodDelete, path: r.collection},
		)
	}
	gadget := "/apis/tessera.test/v1/namespaces/default/gadgets/victim"
	out = append(out,
		rawRequest{method: http.MethodGet, path: gadget + "/status"},
		rawRequest{method: http.MethodPut, path: gadget + "/status", contentType: "application/json",
			body: `{"apiVersion":"tessera.test/v1","kind":"Gadget","metadata":{"name":"victim"},"status":{"replicas":9}}`},
		rawRequest{method: http.MethodPatch, path: gadget + "/status", contentType: "application/merge-patch+json", body: `{"status":{"replicas":9}}`},
		rawRequest{method: http.MethodGet, path: gadget + "/scale"},
		rawRequest{method: http.MethodPut, path: gadget + "/scale", contentType: "application/json",
			body: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"victim","namespace":"default"},"spec":{"replicas":9}}`},
		rawRequest{method: http.MethodPatch, path: gadget + "/scale", contentType: "application/merge-patch+json", body: `{"spec":{"replicas":9}}`},
		rawRequest{method: http.MethodGet, path: "/api/v1/namespaces/default/status"},
		rawRequest{method: http.MethodPatch, path: "/api/v1/namespaces/default/status", contentType: "application/merge-patch+json", body: `{"metadata":{"labels":{"pwned":"status"}}}`},
	)
	return out
}

// impersonation is one set of impersonation headers of the matrix.
type impersonation struct {
	name   string
	header http.Header
}

func matrixImpersonations() []impersonation {
	withUID := impersonating("user-b")
	withUID.Set("Impersonate-Uid", "user-b-uid")
	withExtra := impersonating("user-b")
	withExtra.Set("Impersonate-Extra-Team", "b")
	return []impersonation{
		{"no impersonation", nil},
		{"impersonating user-b", impersonating("user-b")},
		{"impersonating user-b with groups", impersonating("user-b", "team-b", "system:authenticated")},
		{"impersonating user-b with a UID", withUID},
		{"impersonating user-b with extras", withExtra},
		{"impersonating a service account", impersonating("system:serviceaccount:default:default")},
	}
}

// TestCrossTenantMatrix: for every verb on a built-in resource, a custom
// resource and subresources, with and without impersonation, asked by the
// attacker first in its own workspace and at once in the victim's, through
// the name and the path of both workspaces, by an admin (constrained
// impersonation), a user who holds only the legacy impersonate verb, and a
// service account of the attacker's workspace: nothing of the victim's is
// read or written, and no refusal names the victim's logical cluster to a
// caller that used its path.
func TestCrossTenantMatrix(t *testing.T) {
	tn := startTenants(t)
	s := tn.s
	for _, c := range []logicalcluster.Name{tn.a, tn.b} {
		s.MustKubectl(t, c, "apply", "-f", writeFile(t, "crd.yaml", matrixCRD))
		s.MustKubectl(t, c, "wait", "--for=condition=Established", "--timeout=60s", "crd/gadgets.tessera.test")
		gadgets, err := dynamic.NewForConfig(s.Config(c))
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "gadgets served in "+string(c), func(ctx context.Context) (bool, error) {
			g := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "tessera.test/v1", "kind": "Gadget",
				"metadata": map[string]any{"name": "victim"}, "spec": map[string]any{"replicas": int64(1), "secret": victimGadgetValue + "-of-" + string(c)}}}
			_, err := gadgets.Resource(gadgetsGVR).Namespace("default").Create(ctx, g, metav1.CreateOptions{})
			return err == nil, err
		})
		eventually(t, 30*time.Second, "the default service account of "+string(c), func(ctx context.Context) (bool, error) {
			_, err := kube(t, s, c).CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
			return err == nil, err
		})
	}

	// A user who may only impersonate with the legacy verb in a-ws, and a
	// service account of a-ws that administers it.
	createRole(t, s, tn.a, "legacy-impersonator", rbacv1.PolicyRule{Verbs: []string{"impersonate"}, APIGroups: []string{"", "authentication.k8s.io"},
		Resources: []string{"users", "groups", "uids", "userextras", "serviceaccounts"}})
	bindClusterRole(t, s, tn.a, "", "legacy-access", "system:kcp:workspace:access", authzUser("user-l"))
	bindClusterRole(t, s, tn.a, "", "legacy-impersonator", "legacy-impersonator", authzUser("user-l"))
	if _, err := kube(t, s, tn.a).CoreV1().ServiceAccounts("default").Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "attacker"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bindClusterRole(t, s, tn.a, "", "attacker-sa-admin", "cluster-admin", rbacv1.Subject{Kind: "ServiceAccount", Namespace: "default", Name: "attacker"})
	tokenReq, err := kube(t, s, tn.a).CoreV1().ServiceAccounts("default").CreateToken(t.Context(), "attacker",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	attackers := map[string]string{"user-a": attackerToken, "user-l": "user-l-token", "service account of a-ws": tokenReq.Status.Token}
	eventuallyAllowed(t, "user-l impersonates in a-ws", func(ctx context.Context) error {
		r := tn.do(t, "user-l-token", string(tn.a), rawRequest{method: http.MethodGet, path: "/api/v1/namespaces/default/secrets", header: impersonating("user-b")})
		if r.code != http.StatusForbidden || !strings.Contains(r.status.Message, `User "user-b"`) {
			return fmt.Errorf("%d %s", r.code, r.body)
		}
		return nil
	})
	eventuallyAllowed(t, "the attacker's service account administers a-ws", func(ctx context.Context) error {
		if r := tn.do(t, tokenReq.Status.Token, string(tn.a), rawRequest{method: http.MethodGet, path: "/api/v1/namespaces/default/secrets"}); r.code != http.StatusOK {
			return fmt.Errorf("%d %s", r.code, r.body)
		}
		return nil
	})

	before := victimState(t, tn)
	forms := []struct{ name, own, victim string }{
		{"by name", string(tn.a), string(tn.b)},
		{"by path", "root:a-ws", "root:b-ws"},
	}
	requests := matrixRequests()
	var asked int
	for _, attacker := range slices.Sorted(maps.Keys(attackers)) {
		for _, form := range forms {
			for _, imp := range matrixImpersonations() {
				t.Run(attacker+" "+form.name+" "+imp.name, func(t *testing.T) {
					for _, r := range requests {
						r.header = imp.header
						own := tn.do(t, attackers[attacker], form.own, r)
						if own.code >= 500 {
							t.Errorf("%s %s in its own workspace: %d %s", r.method, r.path, own.code, own.body)
						}
						got := tn.do(t, attackers[attacker], form.victim, r)
						asked += 2
						if got.code != http.StatusForbidden {
							t.Errorf("%s %s in the victim's workspace right after its own: %d %s", r.method, r.path, got.code, got.body)
						}
						if leaksVictimData(got.body) {
							t.Errorf("%s %s: the victim's data came back: %s", r.method, r.path, got.body)
						}
						if form.victim != string(tn.b) && strings.Contains(got.body, string(tn.b)) {
							t.Errorf("%s %s through the path: the refusal names the victim's logical cluster %s: %s", r.method, r.path, tn.b, got.body)
						}
					}
				})
			}
		}
	}
	t.Logf("%d requests, %d of them in the victim's workspace", asked, asked/2)
	if after := victimState(t, tn); after != before {
		t.Errorf("the victim's workspace changed:\nbefore %s\nafter  %s", before, after)
	}
}

// leaksVictimData tells whether an answer holds the victim's Secret (as
// it is, or base64-encoded as Secrets are served) or Gadget.
func leaksVictimData(body string) bool {
	return strings.Contains(body, victimSecretValue) || strings.Contains(body, base64.StdEncoding.EncodeToString([]byte(victimSecretValue))) ||
		strings.Contains(body, victimGadgetValue)
}

// victimState describes everything of the victim's the matrix aims at:
// names, resourceVersions and labels of its Secrets and Gadgets and of its
// default Namespace.
func victimState(t *testing.T, tn *tenants) string {
	t.Helper()
	ctx := t.Context()
	var parts []string
	secrets, err := kube(t, tn.s, tn.b).CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets.Items {
		parts = append(parts, fmt.Sprintf("secret %s/%s rv=%s labels=%v data=%q", s.Namespace, s.Name, s.ResourceVersion, s.Labels, s.Data))
	}
	dyn, err := dynamic.NewForConfig(tn.s.Config(tn.b))
	if err != nil {
		t.Fatal(err)
	}
	gadgets, err := dyn.Resource(gadgetsGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gadgets.Items {
		parts = append(parts, fmt.Sprintf("gadget %s/%s rv=%s labels=%v spec=%v status=%v", g.GetNamespace(), g.GetName(), g.GetResourceVersion(), g.GetLabels(), g.Object["spec"], g.Object["status"]))
	}
	ns, err := kube(t, tn.s, tn.b).CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	parts = append(parts, fmt.Sprintf("namespace default rv=%s labels=%v", ns.ResourceVersion, ns.Labels))
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}
