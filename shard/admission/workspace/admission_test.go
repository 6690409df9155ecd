package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Logical clusters of the test world: root, the organization root:org
// (cluster "orgc") and the team root:org:team (cluster "teamc").
const (
	orgCluster  logicalcluster.Name = "orgc"
	teamCluster logicalcluster.Name = "teamc"
)

func ref(path, name string) tenancyv1alpha1.WorkspaceTypeReference {
	return tenancyv1alpha1.WorkspaceTypeReference{Path: path, Name: tenancyv1alpha1.WorkspaceTypeName(name)}
}

func refs(rs ...tenancyv1alpha1.WorkspaceTypeReference) *tenancyv1alpha1.WorkspaceTypeSelector {
	return &tenancyv1alpha1.WorkspaceTypeSelector{Types: rs}
}

func newType(name string, spec tenancyv1alpha1.WorkspaceTypeSpec) *tenancyv1alpha1.WorkspaceType {
	return &tenancyv1alpha1.WorkspaceType{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

func lc(path, typ string) *corev1alpha1.LogicalCluster {
	annotations := map[string]string{logicalcluster.PathAnnotationKey: path}
	if typ != "" {
		annotations[corev1alpha1.LogicalClusterTypeAnnotationKey] = typ
	}
	return &corev1alpha1.LogicalCluster{ObjectMeta: metav1.ObjectMeta{Name: corev1alpha1.LogicalClusterName, Annotations: annotations}}
}

// world is what the plugin's Config reads.
type world struct {
	clusters map[logicalcluster.Name]*corev1alpha1.LogicalCluster
	types    map[logicalcluster.Name]map[string]*tenancyv1alpha1.WorkspaceType
	// allowed holds "cluster|user|type" for each use permission.
	allowed map[string]bool
	// asked records the use decisions asked, as "cluster|user|type".
	asked []string
}

func newWorld() *world {
	return &world{
		clusters: map[logicalcluster.Name]*corev1alpha1.LogicalCluster{
			logicalcluster.Root: {ObjectMeta: metav1.ObjectMeta{Name: corev1alpha1.LogicalClusterName}},
			orgCluster:          lc("root:org", "root:organization"),
			teamCluster:         lc("root:org:team", "root:team"),
		},
		types: map[logicalcluster.Name]map[string]*tenancyv1alpha1.WorkspaceType{
			logicalcluster.Root: {
				"root": newType("root", tenancyv1alpha1.WorkspaceTypeSpec{
					DefaultChildWorkspaceType: &tenancyv1alpha1.WorkspaceTypeReference{Name: "organization", Path: "root"},
					LimitAllowedParents:       &tenancyv1alpha1.WorkspaceTypeSelector{None: true},
				}),
				"organization": newType("organization", tenancyv1alpha1.WorkspaceTypeSpec{
					LimitAllowedParents:       refs(ref("root", "root")),
					AdditionalWorkspaceLabels: map[string]string{"kind": "organization"},
				}),
				"team": newType("team", tenancyv1alpha1.WorkspaceTypeSpec{
					LimitAllowedParents:       refs(ref("root", "organization"), ref("root", "team")),
					AdditionalWorkspaceLabels: map[string]string{"kind": "team", "tier": "team"},
				}),
				"universal": newType("universal", tenancyv1alpha1.WorkspaceTypeSpec{}),
				// special extends team (with a reference relative to root), so
				// it may go wherever a team may, and has team's labels too.
				"special": newType("special", tenancyv1alpha1.WorkspaceTypeSpec{
					Extend:                    tenancyv1alpha1.WorkspaceTypeExtension{With: []tenancyv1alpha1.WorkspaceTypeReference{{Name: "team"}}},
					AdditionalWorkspaceLabels: map[string]string{"kind": "special"},
				}),
				"leaf": newType("leaf", tenancyv1alpha1.WorkspaceTypeSpec{
					LimitAllowedChildren: &tenancyv1alpha1.WorkspaceTypeSelector{None: true},
				}),
				"teamsonly": newType("teamsonly", tenancyv1alpha1.WorkspaceTypeSpec{
					LimitAllowedChildren: refs(ref("root", "team")),
				}),
				"subteam": newType("subteam", tenancyv1alpha1.WorkspaceTypeSpec{
					Extend: tenancyv1alpha1.WorkspaceTypeExtension{With: []tenancyv1alpha1.WorkspaceTypeReference{ref("root", "teamsonly")}},
				}),
				"broken": newType("broken", tenancyv1alpha1.WorkspaceTypeSpec{
					Extend: tenancyv1alpha1.WorkspaceTypeExtension{With: []tenancyv1alpha1.WorkspaceTypeReference{ref("root", "missing")}},
				}),
			},
			orgCluster: {
				// local is defined in the organization and shadows nothing.
				"local": newType("local", tenancyv1alpha1.WorkspaceTypeSpec{AdditionalWorkspaceLabels: map[string]string{"local": "true"}}),
			},
		},
		allowed: map[string]bool{},
	}
}

func (w *world) config() Config {
	return Config{
		LogicalCluster: func(cluster logicalcluster.Name) (*corev1alpha1.LogicalCluster, error) {
			if lc, ok := w.clusters[cluster]; ok {
				return lc, nil
			}
			return nil, apierrors.NewNotFound(corev1alpha1.Resource("logicalclusters"), corev1alpha1.LogicalClusterName)
		},
		ResolvePath: func(path logicalcluster.Path) (logicalcluster.Name, bool) {
			for name, lc := range w.clusters {
				if p := lc.Annotations[logicalcluster.PathAnnotationKey]; p == path.String() || (p == "" && name.Path().String() == path.String()) {
					return name, true
				}
			}
			return "", false
		},
		WorkspaceType: func(cluster logicalcluster.Name, name string) (*tenancyv1alpha1.WorkspaceType, error) {
			if t, ok := w.types[cluster][name]; ok {
				return t.DeepCopy(), nil
			}
			return nil, apierrors.NewNotFound(tenancyv1alpha1.Resource("workspacetypes"), name)
		},
		Authorizer: authorizer.AuthorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
			c, ok := logicalcluster.ClusterFrom(ctx)
			if !ok || a.GetVerb() != "use" || a.GetAPIGroup() != "tenancy.kcp.io" || a.GetResource() != "workspacetypes" || !a.IsResourceRequest() {
				return authorizer.DecisionDeny, "unexpected attributes", nil
			}
			key := string(c.Name) + "|" + a.GetUser().GetName() + "|" + a.GetName()
			w.asked = append(w.asked, key)
			if w.allowed[key] {
				return authorizer.DecisionAllow, "", nil
			}
			return authorizer.DecisionNoOpinion, "", nil
		}),
	}
}

// allow lets u use every type of the test world.
func (w *world) allow(u string) {
	for cluster, types := range w.types {
		for name := range types {
			w.allowed[string(cluster)+"|"+u+"|"+name] = true
		}
	}
}

var (
	alice  = &user.DefaultInfo{Name: "alice", UID: "a-1", Groups: []string{"team-a", user.AllAuthenticated}, Extra: map[string][]string{"scopes": {"x"}}}
	master = &user.DefaultInfo{Name: "system:admin", Groups: []string{user.SystemPrivilegedGroup}}
)

func newWS(name string, mutate func(*tenancyv1alpha1.Workspace)) *tenancyv1alpha1.Workspace {
	ws := &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if mutate != nil {
		mutate(ws)
	}
	return ws
}

func withType(path, name string) func(*tenancyv1alpha1.Workspace) {
	return func(ws *tenancyv1alpha1.Workspace) {
		r := ref(path, name)
		ws.Spec.Type = &r
	}
}

func attrs(op admission.Operation, ws, old runtime.Object, u user.Info) admission.Attributes {
	name := ""
	if w, ok := ws.(*tenancyv1alpha1.Workspace); ok {
		name = w.Name
	}
	return admission.NewAttributesRecord(ws, old, tenancyv1alpha1.SchemeGroupVersion.WithKind("Workspace"), "", name,
		tenancyv1alpha1.SchemeGroupVersion.WithResource("workspaces"), "", op, nil, false, u)
}

// create runs a create of ws in cluster through the plugin as the admission
// chain does: Admit, then Validate.
func create(t *testing.T, w *world, cluster logicalcluster.Name, ws *tenancyv1alpha1.Workspace, u user.Info) error {
	t.Helper()
	p := New(w.config())
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	ctx := logicalcluster.WithCluster(t.Context(), logicalcluster.Cluster{Name: cluster})
	a := attrs(admission.Create, ws, nil, u)
	if err := p.Admit(ctx, a, nil); err != nil {
		return err
	}
	return p.Validate(ctx, a, nil)
}

// wantError checks err has status code and contains message.
func wantError(t *testing.T, err error, code int32, message string) {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("error %v (%T), want a %d API status", err, err, code)
	}
	if got := status.Status().Code; got != code {
		t.Errorf("code %d, want %d: %v", got, code, err)
	}
	if !strings.Contains(err.Error(), message) {
		t.Errorf("error %q, want it to contain %q", err, message)
	}
}

func TestTypeDefaultingAndResolution(t *testing.T) {
	tests := []struct {
		name     string
		cluster  logicalcluster.Name
		ws       *tenancyv1alpha1.Workspace
		wantType tenancyv1alpha1.WorkspaceTypeReference
	}{
		{name: "default child of root:root", cluster: logicalcluster.Root, ws: newWS("org", nil), wantType: ref("root", "organization")},
		{name: "no default child: universal", cluster: orgCluster, ws: newWS("u", nil), wantType: ref("root", "universal")},
		{name: "empty type name is defaulted", cluster: orgCluster, ws: newWS("u", withType("", "")), wantType: ref("root", "universal")},
		{name: "name only: found in root", cluster: orgCluster, ws: newWS("team", withType("", "team")), wantType: ref("root", "team")},
		{name: "name only: found in the parent", cluster: orgCluster, ws: newWS("l", withType("", "local")), wantType: ref("root:org", "local")},
		{name: "path and name", cluster: teamCluster, ws: newWS("l", withType("root:org", "local")), wantType: ref("root:org", "local")},
		{name: "path by logical cluster name is kept", cluster: orgCluster, ws: newWS("t", withType("root", "team")), wantType: ref("root", "team")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld()
			w.allow("alice")
			if err := create(t, w, tt.cluster, tt.ws, alice); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&tt.wantType, tt.ws.Spec.Type); diff != "" {
				t.Errorf("spec.type (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("default child of an extended type", func(t *testing.T) {
		w := newWorld()
		w.allow("alice")
		w.types[logicalcluster.Root]["team"].Spec.DefaultChildWorkspaceType = &tenancyv1alpha1.WorkspaceTypeReference{Name: "special"}
		w.clusters[teamCluster] = lc("root:org:team", "root:special")
		ws := newWS("s", nil)
		if err := create(t, w, teamCluster, ws, alice); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(ref("root", "special"), *ws.Spec.Type); diff != "" {
			t.Errorf("spec.type (-want +got):\n%s", diff)
		}
	})
}

func TestUnknownTypes(t *testing.T) {
	tests := []struct {
		name    string
		cluster logicalcluster.Name
		ws      *tenancyv1alpha1.Workspace
		code    int32
		message string
	}{
		{name: "no such type", cluster: orgCluster, ws: newWS("x", withType("root", "foo")), code: http.StatusUnprocessableEntity,
			message: `workspace type "root:foo" does not exist`},
		{name: "no such type in parent or root", cluster: orgCluster, ws: newWS("x", withType("", "foo")), code: http.StatusUnprocessableEntity,
			message: `workspace type "foo" does not exist in "root:org" or "root"`},
		{name: "type of another organization", cluster: teamCluster, ws: newWS("x", withType("", "local")), code: http.StatusUnprocessableEntity,
			message: `workspace type "local" does not exist in "root:org:team" or "root"`},
		{name: "path not on this shard", cluster: orgCluster, ws: newWS("x", withType("root:elsewhere", "team")), code: http.StatusUnprocessableEntity,
			message: `the path "root:elsewhere" is not known on this shard`},
		{name: "extended type missing", cluster: orgCluster, ws: newWS("x", withType("root", "broken")), code: http.StatusForbidden,
			message: `workspace type root:broken extends root:missing, which cannot be resolved`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld()
			w.allow("alice")
			wantError(t, create(t, w, tt.cluster, tt.ws, alice), tt.code, tt.message)
		})
	}
}

func TestParents(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(*world)
		cluster logicalcluster.Name
		ws      *tenancyv1alpha1.Workspace
		u       user.Info
		message string // empty: allowed
	}{
		{name: "system cluster", cluster: "system:admin", ws: newWS("x", nil), message: `workspaces cannot be created in the system logical cluster "system:admin"`},
		{name: "system cluster for masters too", cluster: "system:shard", ws: newWS("x", nil), u: master,
			message: `workspaces cannot be created in the system logical cluster "system:shard"`},
		{name: "missing logical cluster", cluster: "gone", ws: newWS("x", nil), message: `logical cluster "gone" does not exist`},
		{name: "logical cluster without type", prepare: func(w *world) { w.clusters["bare"] = lc("root:bare", "") }, cluster: "bare",
			ws: newWS("x", nil), message: `the type of logical cluster "root:bare" is unknown`},
		{name: "logical cluster with a malformed type", prepare: func(w *world) { w.clusters["bad"] = lc("root:bad", "team") }, cluster: "bad",
			ws: newWS("x", nil), message: `is not of the form <path>:<name>`},
		{name: "parent type missing", prepare: func(w *world) { w.clusters["odd"] = lc("root:odd", "root:gone") }, cluster: "odd",
			ws: newWS("x", nil), message: `the type of logical cluster "root:odd" cannot be resolved: workspace type "root:gone" does not exist`},
		{name: "root without LogicalCluster or root type object", prepare: func(w *world) {
			delete(w.clusters, logicalcluster.Root)
			delete(w.types[logicalcluster.Root], "root")
		}, cluster: logicalcluster.Root, ws: newWS("org", withType("root", "organization"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld()
			w.allow("alice")
			if tt.prepare != nil {
				tt.prepare(w)
			}
			u := tt.u
			if u == nil {
				u = alice
			}
			err := create(t, w, tt.cluster, tt.ws, u)
			if tt.message == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantError(t, err, http.StatusForbidden, tt.message)
		})
	}
}

func TestAllowedParentsAndChildren(t *testing.T) {
	tests := []struct {
		name    string
		cluster logicalcluster.Name
		typ     tenancyv1alpha1.WorkspaceTypeReference
		prepare func(*world)
		message string // empty: allowed
	}{
		{name: "organization in root", cluster: logicalcluster.Root, typ: ref("root", "organization")},
		{name: "team in organization", cluster: orgCluster, typ: ref("root", "team")},
		{name: "team in team", cluster: teamCluster, typ: ref("root", "team")},
		{name: "universal anywhere", cluster: teamCluster, typ: ref("root", "universal")},
		{name: "organization in team", cluster: teamCluster, typ: ref("root", "organization"),
			message: `workspace type root:organization only allows parent types [root:root]; the parent "root:org:team" is of type root:team`},
		{name: "team in root", cluster: logicalcluster.Root, typ: ref("root", "team"),
			message: `workspace type root:team only allows parent types [root:organization root:team]; the parent "root" is of type root:root`},
		{name: "root nowhere", cluster: logicalcluster.Root, typ: ref("root", "root"),
			message: `workspace type root:root cannot have a parent workspace`},
		{name: "extending type allowed where its base is", cluster: orgCluster, typ: ref("root", "special")},
		{name: "extending type inherits limits of its base", cluster: logicalcluster.Root, typ: ref("root", "special"),
			message: `workspace type root:special, which extends root:team, only allows parent types [root:organization root:team]`},
		{name: "parent allows no children", cluster: "leafc", prepare: func(w *world) { w.clusters["leafc"] = lc("root:leaf", "root:leaf") },
			typ: ref("root", "universal"), message: `the parent "root:leaf" is of type root:leaf which allows no child workspaces`},
		{name: "parent allows only teams", cluster: "tc", prepare: func(w *world) { w.clusters["tc"] = lc("root:t", "root:teamsonly") },
			typ: ref("root", "universal"), message: `the parent "root:t" is of type root:teamsonly which only allows child types [root:team]; workspace type root:universal is not one of them`},
		{name: "parent allows teams: extension of team", cluster: "tc", prepare: func(w *world) {
			w.clusters["tc"] = lc("root:t", "root:teamsonly")
			w.types[logicalcluster.Root]["team"].Spec.LimitAllowedParents = nil
		}, typ: ref("root", "special")},
		{name: "limits of the parent's extended type", cluster: "sc", prepare: func(w *world) { w.clusters["sc"] = lc("root:s", "root:subteam") },
			typ: ref("root", "universal"), message: `is of type root:subteam, which extends root:teamsonly, which only allows child types [root:team]`},
		{name: "parent type relative reference", cluster: teamCluster, prepare: func(w *world) {
			w.types[logicalcluster.Root]["universal"].Spec.LimitAllowedParents = refs(tenancyv1alpha1.WorkspaceTypeReference{Name: "organization"})
		}, typ: ref("root", "universal"), message: `workspace type root:universal only allows parent types [root:organization]; the parent "root:org:team" is of type root:team`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld()
			if tt.prepare != nil {
				tt.prepare(w)
			}
			w.allow("alice")
			typ := tt.typ
			err := create(t, w, tt.cluster, newWS("x", func(ws *tenancyv1alpha1.Workspace) { ws.Spec.Type = &typ }), alice)
			if tt.message == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantError(t, err, http.StatusForbidden, tt.message)
		})
	}

	// The rules hold for the system too.
	w := newWorld()
	wantError(t, create(t, w, teamCluster, newWS("x", withType("root", "organization")), master), http.StatusForbidden,
		"only allows parent types [root:root]")
}

func TestUsePermission(t *testing.T) {
	w := newWorld()
	err := create(t, w, orgCluster, newWS("x", withType("", "team")), alice)
	wantError(t, err, http.StatusForbidden, `user "alice" is not allowed to use workspace type root:team`)
	if diff := cmp.Diff([]string{"root|alice|team"}, w.asked); diff != "" {
		t.Errorf("decisions asked (-want +got):\n%s", diff)
	}

	// Permission in the type's own cluster is what counts.
	w = newWorld()
	w.allowed["orgc|alice|team"] = true
	wantError(t, create(t, w, orgCluster, newWS("x", withType("", "team")), alice), http.StatusForbidden, "not allowed to use")
	w.allowed["root|alice|team"] = true
	if err := create(t, w, orgCluster, newWS("x", withType("", "team")), alice); err != nil {
		t.Fatal(err)
	}

	// Every type of the extend chain needs use permission, each in its own
	// logical cluster: deep extends special extends team, all in root;
	// orgteam, in the organization, extends root:team.
	extending := func(w *world) {
		w.types[logicalcluster.Root]["deep"] = newType("deep", tenancyv1alpha1.WorkspaceTypeSpec{
			Extend: tenancyv1alpha1.WorkspaceTypeExtension{With: []tenancyv1alpha1.WorkspaceTypeReference{{Name: "special"}}},
		})
		w.types[orgCluster]["orgteam"] = newType("orgteam", tenancyv1alpha1.WorkspaceTypeSpec{
			Extend: tenancyv1alpha1.WorkspaceTypeExtension{With: []tenancyv1alpha1.WorkspaceTypeReference{ref("root", "team")}},
		})
	}
	chain := []struct {
		name    string
		typ     func(*tenancyv1alpha1.Workspace)
		allowed []string
		message string // empty: allowed
		asked   []string
	}{
		{name: "extending type alone", typ: withType("root", "special"), allowed: []string{"root|alice|special"},
			message: `user "alice" is not allowed to use workspace type root:team, which root:special extends`,
			asked:   []string{"root|alice|special", "root|alice|team"}},
		{name: "extended type alone", typ: withType("root", "special"), allowed: []string{"root|alice|team"},
			message: `user "alice" is not allowed to use workspace type root:special`, asked: []string{"root|alice|special"}},
		{name: "whole chain", typ: withType("root", "special"), allowed: []string{"root|alice|special", "root|alice|team"},
			asked: []string{"root|alice|special", "root|alice|team"}},
		{name: "transitively extended type", typ: withType("root", "deep"), allowed: []string{"root|alice|deep", "root|alice|special"},
			message: `user "alice" is not allowed to use workspace type root:team, which root:deep extends`,
			asked:   []string{"root|alice|deep", "root|alice|special", "root|alice|team"}},
		{name: "transitive chain", typ: withType("root", "deep"), allowed: []string{"root|alice|deep", "root|alice|special", "root|alice|team"},
			asked: []string{"root|alice|deep", "root|alice|special", "root|alice|team"}},
		{name: "extended type of another cluster: permission in the extending type's cluster", typ: withType("", "orgteam"),
			allowed: []string{"orgc|alice|orgteam", "orgc|alice|team"},
			message: `user "alice" is not allowed to use workspace type root:team, which root:org:orgteam extends`,
			asked:   []string{"orgc|alice|orgteam", "root|alice|team"}},
		{name: "extended type of another cluster: permission in its own cluster", typ: withType("", "orgteam"),
			allowed: []string{"orgc|alice|orgteam", "root|alice|team"}, asked: []string{"orgc|alice|orgteam", "root|alice|team"}},
	}
	for _, tt := range chain {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld()
			extending(w)
			for _, a := range tt.allowed {
				w.allowed[a] = true
			}
			err := create(t, w, orgCluster, newWS("x", tt.typ), alice)
			if tt.message == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else {
				wantError(t, err, http.StatusForbidden, tt.message)
			}
			if diff := cmp.Diff(tt.asked, w.asked); diff != "" {
				t.Errorf("decisions asked (-want +got):\n%s", diff)
			}
		})
	}

	// A type of the organization is used in the organization.
	w = newWorld()
	w.allowed["orgc|alice|local"] = true
	if err := create(t, w, orgCluster, newWS("x", withType("", "local")), alice); err != nil {
		t.Fatal(err)
	}

	// Masters use every type without asking.
	w = newWorld()
	if err := create(t, w, orgCluster, newWS("x", withType("", "team")), master); err != nil {
		t.Fatal(err)
	}
	if len(w.asked) != 0 {
		t.Errorf("asked %v for a master", w.asked)
	}
}

func owner(t *testing.T, u user.Info) string {
	t.Helper()
	v, err := OwnerAnnotationValue(u)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOwnerAnnotation(t *testing.T) {
	var info authenticationv1.UserInfo
	if err := json.Unmarshal([]byte(owner(t, alice)), &info); err != nil {
		t.Fatal(err)
	}
	want := authenticationv1.UserInfo{Username: "alice", UID: "a-1", Groups: []string{"team-a", user.AllAuthenticated},
		Extra: map[string]authenticationv1.ExtraValue{"scopes": {"x"}}}
	if diff := cmp.Diff(want, info); diff != "" {
		t.Errorf("owner (-want +got):\n%s", diff)
	}

	forged := func(ws *tenancyv1alpha1.Workspace) {
		ws.Annotations = map[string]string{tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey: `{"username":"bob"}`}
	}
	tests := []struct {
		name string
		ws   *tenancyv1alpha1.Workspace
		u    user.Info
		want string
	}{
		{name: "set", ws: newWS("x", nil), u: alice, want: owner(t, alice)},
		{name: "client value replaced", ws: newWS("x", forged), u: alice, want: owner(t, alice)},
		{name: "kept when a master sets it", ws: newWS("x", forged), u: master, want: `{"username":"bob"}`},
		{name: "a master's own when unset", ws: newWS("x", nil), u: master, want: owner(t, master)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld()
			w.allow("alice")
			if err := create(t, w, orgCluster, tt.ws, tt.u); err != nil {
				t.Fatal(err)
			}
			if got := tt.ws.Annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey]; got != tt.want {
				t.Errorf("owner %s, want %s", got, tt.want)
			}
		})
	}

	// Validation alone (a later mutation changed the owner) refuses another
	// owner.
	w := newWorld()
	w.allow("alice")
	p := New(w.config())
	ctx := logicalcluster.WithCluster(t.Context(), logicalcluster.Cluster{Name: orgCluster})
	ws := newWS("x", func(ws *tenancyv1alpha1.Workspace) {
		withType("root", "universal")(ws)
		forged(ws)
	})
	wantError(t, p.Validate(ctx, attrs(admission.Create, ws, nil, alice), nil), http.StatusForbidden,
		"annotation experimental.tenancy.kcp.io/owner must name the requesting user")
}

func TestLabels(t *testing.T) {
	w := newWorld()
	w.allow("alice")
	ws := newWS("x", func(ws *tenancyv1alpha1.Workspace) {
		withType("root", "special")(ws)
		ws.Labels = map[string]string{"tier": "mine"}
	})
	if err := create(t, w, orgCluster, ws, alice); err != nil {
		t.Fatal(err)
	}
	// special's own label wins over team's; the request's label stays.
	if diff := cmp.Diff(map[string]string{"kind": "special", "tier": "mine"}, ws.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}

	ws = newWS("l", withType("", "local"))
	if err := create(t, w, orgCluster, ws, alice); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"local": "true"}, ws.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
}

func TestSystemFieldsOnCreate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*tenancyv1alpha1.Workspace)
		u       user.Info
		message string
	}{
		{name: "cluster by a user", mutate: func(ws *tenancyv1alpha1.Workspace) { ws.Spec.Cluster = "abc" }, u: alice,
			message: "spec.cluster can only be set by the system"},
		{name: "URL by a user", mutate: func(ws *tenancyv1alpha1.Workspace) { ws.Spec.URL = "https://x" }, u: alice,
			message: "spec.URL can only be set by the system"},
		{name: "both by a master", mutate: func(ws *tenancyv1alpha1.Workspace) {
			ws.Spec.Cluster = "abc"
			ws.Spec.URL = "https://x"
		}, u: master},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld()
			w.allow("alice")
			err := create(t, w, orgCluster, newWS("x", tt.mutate), tt.u)
			if tt.message == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantError(t, err, http.StatusForbidden, tt.message)
		})
	}
}

func TestSystemAnnotationsOnCreate(t *testing.T) {
	annotate := func(kv ...string) func(*tenancyv1alpha1.Workspace) {
		return func(ws *tenancyv1alpha1.Workspace) {
			ws.Annotations = map[string]string{}
			for i := 0; i < len(kv); i += 2 {
				ws.Annotations[kv[i]] = kv[i+1]
			}
		}
	}
	tests := []struct {
		name    string
		mutate  func(*tenancyv1alpha1.Workspace)
		u       user.Info
		message string // empty: allowed
	}{
		{name: "chosen cluster by a user", mutate: annotate(clusterAnnotationKey, "abc"), u: alice,
			message: "annotation internal.tenancy.kcp.io/cluster can only be set by the system"},
		{name: "chosen shard by a user", mutate: annotate("core.kcp.io/shard", "other"), u: alice,
			message: "annotation core.kcp.io/shard can only be set by the system"},
		{name: "both by a user", mutate: annotate(clusterAnnotationKey, "abc", "core.kcp.io/shard", "other"), u: alice,
			message: "annotations core.kcp.io/shard, internal.tenancy.kcp.io/cluster can only be set by the system"},
		{name: "empty value by a user", mutate: annotate("core.kcp.io/shard", ""), u: alice,
			message: "annotation core.kcp.io/shard can only be set by the system"},
		{name: "other internal tenancy annotation by a user", mutate: annotate("internal.tenancy.kcp.io/type", "root:root"), u: alice,
			message: "annotation internal.tenancy.kcp.io/type can only be set by the system"},
		{name: "internal kcp.io annotation by a user", mutate: annotate("initializer.internal.kcp.io/x", "y"), u: alice,
			message: "annotation initializer.internal.kcp.io/x can only be set by the system"},
		{name: "annotations of the user's own", mutate: annotate("example.com/note", "hi", "internal.example.com/x", "y"), u: alice},
		{name: "both by a master", mutate: annotate(clusterAnnotationKey, "abc", "core.kcp.io/shard", "other"), u: master},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld()
			w.allow("alice")
			err := create(t, w, orgCluster, newWS("x", tt.mutate), tt.u)
			if tt.message == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantError(t, err, http.StatusForbidden, tt.message)
		})
	}
}

// clusterAnnotationKey is where the workspace controller stores the
// logical cluster it chose for a workspace.
const clusterAnnotationKey = "internal.tenancy.kcp.io/cluster"

func TestUpdate(t *testing.T) {
	stored := newWS("x", func(ws *tenancyv1alpha1.Workspace) {
		withType("root", "team")(ws)
		ws.Annotations = map[string]string{
			tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey: owner(t, alice),
			clusterAnnotationKey: "abc",
			"core.kcp.io/shard":  "root",
		}
		ws.Spec.Cluster = "abc"
		ws.Spec.URL = "https://proxy/clusters/abc"
	})
	tests := []struct {
		name    string
		mutate  func(*tenancyv1alpha1.Workspace)
		u       user.Info
		code    int32
		message string
	}{
		{name: "labels by a user", mutate: func(ws *tenancyv1alpha1.Workspace) { ws.Labels = map[string]string{"a": "b"} }, u: alice},
		{name: "type", mutate: withType("root", "universal"), u: master, code: http.StatusUnprocessableEntity, message: "field is immutable"},
		{name: "type path", mutate: withType("root:org", "team"), u: alice, code: http.StatusUnprocessableEntity, message: "field is immutable"},
		{name: "type removed", mutate: func(ws *tenancyv1alpha1.Workspace) { ws.Spec.Type = nil }, u: alice, code: http.StatusUnprocessableEntity,
			message: "field is immutable"},
		{name: "cluster by a user", mutate: func(ws *tenancyv1alpha1.Workspace) { ws.Spec.Cluster = "def" }, u: alice, code: http.StatusForbidden,
			message: "spec.cluster can only be changed by the system"},
		{name: "URL by a user", mutate: func(ws *tenancyv1alpha1.Workspace) { ws.Spec.URL = "" }, u: alice, code: http.StatusForbidden,
			message: "spec.URL can only be changed by the system"},
		{name: "cluster and URL by a master", mutate: func(ws *tenancyv1alpha1.Workspace) {
			ws.Spec.Cluster = "def"
			ws.Spec.URL = "https://proxy/clusters/def"
		}, u: master},
		{name: "owner by a user", mutate: func(ws *tenancyv1alpha1.Workspace) {
			ws.Annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey] = owner(t, &user.DefaultInfo{Name: "bob"})
		}, u: alice, code: http.StatusForbidden, message: "the owner of a workspace (annotation experimental.tenancy.kcp.io/owner) cannot be changed"},
		{name: "owner removed by a user", mutate: func(ws *tenancyv1alpha1.Workspace) {
			delete(ws.Annotations, tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey)
		}, u: alice, code: http.StatusForbidden, message: "cannot be changed"},
		{name: "chosen cluster changed by a user", mutate: func(ws *tenancyv1alpha1.Workspace) { ws.Annotations[clusterAnnotationKey] = "victim" },
			u: alice, code: http.StatusForbidden, message: "annotation internal.tenancy.kcp.io/cluster can only be changed by the system"},
		{name: "chosen shard changed by a user", mutate: func(ws *tenancyv1alpha1.Workspace) { ws.Annotations["core.kcp.io/shard"] = "other" },
			u: alice, code: http.StatusForbidden, message: "annotation core.kcp.io/shard can only be changed by the system"},
		{name: "scheduling decision removed by a user", mutate: func(ws *tenancyv1alpha1.Workspace) {
			delete(ws.Annotations, clusterAnnotationKey)
			delete(ws.Annotations, "core.kcp.io/shard")
		}, u: alice, code: http.StatusForbidden, message: "annotations core.kcp.io/shard, internal.tenancy.kcp.io/cluster can only be changed by the system"},
		{name: "internal annotation added by a user", mutate: func(ws *tenancyv1alpha1.Workspace) { ws.Annotations["internal.tenancy.kcp.io/x"] = "y" },
			u: alice, code: http.StatusForbidden, message: "annotation internal.tenancy.kcp.io/x can only be changed by the system"},
		{name: "system annotations kept by a user", mutate: func(ws *tenancyv1alpha1.Workspace) { ws.Annotations["example.com/note"] = "hi" }, u: alice},
		{name: "scheduling decision changed by a master", mutate: func(ws *tenancyv1alpha1.Workspace) {
			ws.Annotations[clusterAnnotationKey] = "def"
			delete(ws.Annotations, "core.kcp.io/shard")
		}, u: master},
		{name: "owner by a master", mutate: func(ws *tenancyv1alpha1.Workspace) {
			ws.Annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey] = owner(t, &user.DefaultInfo{Name: "bob"})
		}, u: master},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld()
			p := New(w.config())
			ctx := logicalcluster.WithCluster(t.Context(), logicalcluster.Cluster{Name: orgCluster})
			ws := stored.DeepCopy()
			tt.mutate(ws)
			a := attrs(admission.Update, ws, stored.DeepCopy(), tt.u)
			if err := p.Admit(ctx, a, nil); err != nil {
				t.Fatalf("admit: %v", err)
			}
			err := p.Validate(ctx, a, nil)
			if tt.message == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantError(t, err, tt.code, tt.message)
		})
	}
}

func TestIgnored(t *testing.T) {
	w := newWorld()
	p := New(w.config())
	ctx := logicalcluster.WithCluster(t.Context(), logicalcluster.Cluster{Name: "system:admin"})

	cm := admission.NewAttributesRecord(&corev1.ConfigMap{}, nil, corev1.SchemeGroupVersion.WithKind("ConfigMap"), "default", "cm",
		corev1.SchemeGroupVersion.WithResource("configmaps"), "", admission.Create, nil, false, alice)
	status := admission.NewAttributesRecord(newWS("x", nil), newWS("x", nil), tenancyv1alpha1.SchemeGroupVersion.WithKind("Workspace"), "", "x",
		tenancyv1alpha1.SchemeGroupVersion.WithResource("workspaces"), "status", admission.Update, nil, false, alice)
	for _, a := range []admission.Attributes{cm, status} {
		if err := p.Admit(ctx, a, nil); err != nil {
			t.Errorf("admit %s/%s: %v", a.GetResource().Resource, a.GetSubresource(), err)
		}
		if err := p.Validate(ctx, a, nil); err != nil {
			t.Errorf("validate %s/%s: %v", a.GetResource().Resource, a.GetSubresource(), err)
		}
	}
	if p.Handles(admission.Delete) || p.Handles(admission.Connect) || !p.Handles(admission.Create) || !p.Handles(admission.Update) {
		t.Error("handles other operations than create and update")
	}
}

func TestWaitsForReady(t *testing.T) {
	w := newWorld()
	w.allow("alice")
	cfg := w.config()
	// Ready turns true on its second call: the plugin waited for it.
	calls := 0
	cfg.Ready = func() bool { calls++; return calls > 1 }
	p := New(cfg)
	a := attrs(admission.Create, newWS("x", nil), nil, alice)
	if err := p.Admit(logicalcluster.WithCluster(t.Context(), logicalcluster.Cluster{Name: orgCluster}), a, nil); err != nil {
		t.Fatalf("admit once ready: %v", err)
	}
	if calls < 2 {
		t.Errorf("ready asked %d times, want the plugin to wait for it", calls)
	}
}

func TestNoClusterInContext(t *testing.T) {
	p := New(newWorld().config())
	err := p.Admit(t.Context(), attrs(admission.Create, newWS("x", nil), nil, alice), nil)
	wantError(t, err, http.StatusInternalServerError, "no logical cluster in the request context")
}

func TestValidateInitialization(t *testing.T) {
	err := New(Config{}).ValidateInitialization()
	if err == nil || !strings.Contains(err.Error(), "[LogicalCluster ResolvePath WorkspaceType Authorizer]") {
		t.Errorf("error %v, want every missing function named", err)
	}
}
