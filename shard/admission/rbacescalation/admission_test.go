package rbacescalation

import (
	"context"
	"errors"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

var (
	readConfigMaps = rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}
	readSecrets    = rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"secrets"}}
	everything     = []rbacv1.PolicyRule{
		{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
		{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
	}
)

// deps gives alice readConfigMaps in namespace ns of cluster a, root
// everything, and lets carol escalate and bind only what allowed says.
func deps(allowed func(authorizer.Attributes) bool) Dependencies {
	return Dependencies{
		RulesFor: func(_ context.Context, cluster logicalcluster.Name, u user.Info, namespace string) ([]rbacv1.PolicyRule, error) {
			switch {
			case cluster != "a":
				return nil, nil
			case u.GetName() == "root":
				return everything, nil
			case u.GetName() == "alice" && namespace == "ns":
				return []rbacv1.PolicyRule{readConfigMaps}, nil
			case u.GetName() == "dave":
				return []rbacv1.PolicyRule{readConfigMaps}, errors.New(`clusterrole.rbac.authorization.k8s.io "gone" not found`)
			}
			return nil, nil
		},
		RoleRefRules: func(cluster logicalcluster.Name, ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
			switch ref.Name {
			case "cm-reader":
				return []rbacv1.PolicyRule{readConfigMaps}, nil
			case "secret-reader":
				return []rbacv1.PolicyRule{readSecrets}, nil
			}
			return nil, apierrors.NewNotFound(rbacv1.Resource(strings.ToLower(ref.Kind)), ref.Name)
		},
		Authorizer: authorizer.AuthorizerFunc(func(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
			if allowed != nil && allowed(attrs) {
				return authorizer.DecisionAllow, "", nil
			}
			return authorizer.DecisionNoOpinion, "", nil
		}),
	}
}

func attrs(obj, old runtime.Object, op admission.Operation, resource, namespace, name string, u user.Info) admission.Attributes {
	gvr := rbacv1.SchemeGroupVersion.WithResource(resource)
	kind := map[string]string{"roles": "Role", "clusterroles": "ClusterRole", "rolebindings": "RoleBinding", "clusterrolebindings": "ClusterRoleBinding"}[resource]
	return admission.NewAttributesRecord(obj, old, rbacv1.SchemeGroupVersion.WithKind(kind), namespace, name, gvr, "", op, nil, false, u)
}

func roleWith(rules ...rbacv1.PolicyRule) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"}, Rules: rules}
}

func bindingTo(kind, name string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "eve"}}}
}

func TestValidate(t *testing.T) {
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{"system:authenticated"}}
	root := &user.DefaultInfo{Name: "root", Groups: []string{"system:authenticated"}}
	master := &user.DefaultInfo{Name: "admin", Groups: []string{user.SystemPrivilegedGroup}}
	aggregated := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "agg"}, AggregationRule: &rbacv1.AggregationRule{}}
	for _, tc := range []struct {
		name    string
		allowed func(authorizer.Attributes) bool
		a       admission.Attributes
		cluster logicalcluster.Name
		wantErr string
	}{
		{name: "role within the creator's rules", a: attrs(roleWith(readConfigMaps), nil, admission.Create, "roles", "ns", "r", alice)},
		{name: "role with a subset of the creator's rules", a: attrs(roleWith(rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"x"}}), nil, admission.Create, "roles", "ns", "r", alice)},
		{name: "role with more than the creator has", a: attrs(roleWith(readConfigMaps, readSecrets), nil, admission.Create, "roles", "ns", "r", alice),
			wantErr: `roles.rbac.authorization.k8s.io "r" is forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" +
				`{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`},
		{name: "the creator's rules are those of the role's namespace", a: attrs(&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "other"}, Rules: []rbacv1.PolicyRule{readConfigMaps}}, nil, admission.Create, "roles", "other", "r", alice),
			wantErr: "not currently held"},
		{name: "the creator's rules are those of the request's cluster", cluster: "b", a: attrs(roleWith(readConfigMaps), nil, admission.Create, "roles", "ns", "r", alice),
			wantErr: "not currently held"},
		{name: "resolution errors are reported", a: attrs(roleWith(readSecrets), nil, admission.Create, "roles", "ns", "r", &user.DefaultInfo{Name: "dave"}),
			wantErr: `resolution errors: clusterrole.rbac.authorization.k8s.io "gone" not found`},
		{name: "escalate on the role", allowed: func(at authorizer.Attributes) bool {
			return at.GetVerb() == "escalate" && at.GetResource() == "roles" && at.GetNamespace() == "ns" && at.GetName() == "r"
		}, a: attrs(roleWith(readSecrets), nil, admission.Create, "roles", "ns", "r", alice)},
		{name: "escalate on another role", allowed: func(at authorizer.Attributes) bool {
			return at.GetVerb() == "escalate" && at.GetName() == "other"
		}, a: attrs(roleWith(readSecrets), nil, admission.Create, "roles", "ns", "r", alice), wantErr: "not currently held"},
		{name: "system:masters", a: attrs(roleWith(readSecrets), nil, admission.Create, "roles", "ns", "r", master)},
		{name: "update adding rules", a: attrs(roleWith(readConfigMaps, readSecrets), roleWith(readConfigMaps), admission.Update, "roles", "ns", "r", alice), wantErr: "not currently held"},
		{name: "update of GC fields only", a: attrs(func() *rbacv1.Role {
			r := roleWith(readSecrets)
			r.Finalizers = []string{"x"}
			r.OwnerReferences = []metav1.OwnerReference{{Name: "o"}}
			return r
		}(), roleWith(readSecrets), admission.Update, "roles", "ns", "r", alice)},
		{name: "aggregated ClusterRole needs everything", a: attrs(aggregated, nil, admission.Create, "clusterroles", "", "agg", alice),
			wantErr: "must have cluster-admin privileges to use the aggregationRule"},
		{name: "aggregated ClusterRole by a cluster admin", a: attrs(aggregated, nil, admission.Create, "clusterroles", "", "agg", root)},
		{name: "dropping an aggregation rule needs everything too", a: attrs(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "agg"}}, aggregated, admission.Update, "clusterroles", "", "agg", alice),
			wantErr: "aggregationRule"},
		{name: "binding to a role within the creator's rules", a: attrs(bindingTo("ClusterRole", "cm-reader"), nil, admission.Create, "rolebindings", "ns", "b", alice)},
		{name: "binding to a role beyond the creator's rules", a: attrs(bindingTo("ClusterRole", "secret-reader"), nil, admission.Create, "rolebindings", "ns", "b", alice),
			wantErr: `rolebindings.rbac.authorization.k8s.io "b" is forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:`},
		{name: "bind on that ClusterRole", allowed: func(at authorizer.Attributes) bool {
			return at.GetVerb() == "bind" && at.GetResource() == "clusterroles" && at.GetAPIGroup() == rbacv1.GroupName && at.GetName() == "secret-reader" && at.GetNamespace() == "ns"
		}, a: attrs(bindingTo("ClusterRole", "secret-reader"), nil, admission.Create, "rolebindings", "ns", "b", alice)},
		{name: "bind on another ClusterRole", allowed: func(at authorizer.Attributes) bool {
			return at.GetVerb() == "bind" && at.GetName() == "view"
		}, a: attrs(bindingTo("ClusterRole", "secret-reader"), nil, admission.Create, "rolebindings", "ns", "b", alice), wantErr: "not currently held"},
		{name: "binding to a missing role", a: attrs(bindingTo("Role", "missing"), nil, admission.Create, "rolebindings", "ns", "b", alice),
			wantErr: `role.rbac.authorization.k8s.io "missing" not found`},
		{name: "ClusterRoleBinding checks cluster-wide rules", a: attrs(&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cm-reader"}}, nil, admission.Create, "clusterrolebindings", "", "b", alice),
			wantErr: "not currently held"},
		{name: "other resources pass", a: admission.NewAttributesRecord(nil, nil, rbacv1.SchemeGroupVersion.WithKind("ConfigMap"), "ns", "c",
			rbacv1.SchemeGroupVersion.WithResource("configmaps"), "", admission.Create, nil, false, alice)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(deps(tc.allowed))
			if err := p.ValidateInitialization(); err != nil {
				t.Fatal(err)
			}
			cluster := tc.cluster
			if cluster == "" {
				cluster = "a"
			}
			err := p.Validate(logicalcluster.WithName(context.Background(), cluster), tc.a, nil)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("admitted, want %q", tc.wantErr)
			case tc.wantErr != "" && (!apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v (forbidden %v), want a 403 containing %q", err, apierrors.IsForbidden(err), tc.wantErr)
			}
		})
	}
}

func TestLiveRoleLookup(t *testing.T) {
	d := deps(nil)
	d.LiveRoleRefRules = func(_ context.Context, cluster logicalcluster.Name, ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
		if cluster != "a" || namespace != "ns" || ref.Name != "fresh" {
			t.Errorf("live lookup of %s %s/%s", cluster, namespace, ref.Name)
		}
		return []rbacv1.PolicyRule{readConfigMaps}, nil
	}
	p := New(d)
	alice := &user.DefaultInfo{Name: "alice"}
	ctx := logicalcluster.WithName(context.Background(), "a")
	if err := p.Validate(ctx, attrs(bindingTo("Role", "fresh"), nil, admission.Create, "rolebindings", "ns", "b", alice), nil); err != nil {
		t.Errorf("binding to a role only the API server knows: %v", err)
	}
	// Roles the cache knows are not looked up live.
	if err := p.Validate(ctx, attrs(bindingTo("ClusterRole", "cm-reader"), nil, admission.Create, "rolebindings", "ns", "b", alice), nil); err != nil {
		t.Errorf("binding to a cached role: %v", err)
	}
}

func TestValidateInitialization(t *testing.T) {
	if err := New(Dependencies{}).ValidateInitialization(); err == nil {
		t.Error("missing dependencies were accepted")
	}
}

func TestNotReady(t *testing.T) {
	d := deps(nil)
	d.Ready = func() bool { return false }
	p := New(d)
	if testing.Short() {
		t.Skip("waits 10 seconds for readiness")
	}
	err := p.Validate(logicalcluster.WithName(context.Background(), "a"),
		attrs(roleWith(readConfigMaps), nil, admission.Create, "roles", "ns", "r", &user.DefaultInfo{Name: "alice"}), nil)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "not yet ready") {
		t.Errorf("err = %v", err)
	}
}
