package workspace

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func shard(name string, labels map[string]string) *corev1alpha1.Shard {
	return &corev1alpha1.Shard{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1alpha1.ShardSpec{BaseURL: "https://" + name + ":6443"},
	}
}

func names(shards []*corev1alpha1.Shard) []string {
	var out []string
	for _, s := range shards {
		out = append(out, s.Name)
	}
	return out
}

func TestNewClusterName(t *testing.T) {
	seen := map[logicalcluster.Name]bool{}
	for range 1000 {
		n := newClusterName()
		if len(n) != clusterNameLength || !n.IsValid() || n[0] < 'a' || n[0] > 'z' {
			t.Fatalf("newClusterName() = %q: want 16 characters of [a-z0-9] starting with a letter", n)
		}
		if seen[n] {
			t.Fatalf("newClusterName() returned %q twice", n)
		}
		seen[n] = true
	}
}

func TestIsGeneratedClusterName(t *testing.T) {
	for i := range 100 {
		if n := newClusterName(); !isGeneratedClusterName(n.String()) {
			t.Fatalf("generated name %d %q refused", i, n)
		}
	}
	for name, want := range map[string]bool{
		"a0b1c2d3e4f5g6h7":  true,
		"zzzzzzzzzzzzzzzz":  true,
		"":                  false,
		"root":              false,
		"system:admin":      false,
		"system:abcdefghij": false,
		"root:abcdefghijkl": false,
		"abcdefghijklmno:":  false,
		"abcdefghijklmnop:": false,
		"abcdefgh-ijklmno":  false,
		"Abcdefghijklmnop":  false,
		"abcdefghijklmnoP":  false,
		"0bcdefghijklmnop":  false,
		"abcdefghijklmno":   false,
		"abcdefghijklmnopq": false,
		"abcdefghijklmné":   false,
		"*":                 false,
	} {
		if got := isGeneratedClusterName(name); got != want {
			t.Errorf("isGeneratedClusterName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestChooseShardIsConsistent(t *testing.T) {
	shards := []*corev1alpha1.Shard{shard("root", nil), shard("s1", nil), shard("s2", nil), shard("s3", nil)}
	reversed := slices.Clone(shards)
	slices.Reverse(reversed)
	without := []*corev1alpha1.Shard{shards[0], shards[1], shards[3]} // s2 removed

	counts := map[string]int{}
	const n = 4000
	for i := range n {
		name := logicalcluster.Name(fmt.Sprintf("cluster%d", i))
		got := chooseShard(name, shards)
		counts[got.Name]++
		if again := chooseShard(name, reversed); again.Name != got.Name {
			t.Fatalf("%s: %s in one order, %s in another", name, got.Name, again.Name)
		}
		// Removing a shard moves only the names that were on it.
		if after := chooseShard(name, without); got.Name != "s2" && after.Name != got.Name {
			t.Fatalf("%s moved from %s to %s when s2 was removed", name, got.Name, after.Name)
		}
	}
	for _, s := range shards {
		if c := counts[s.Name]; c < n/4*8/10 || c > n/4*12/10 {
			t.Errorf("shard %s got %d of %d names, want about %d", s.Name, c, n, n/4)
		}
	}
	if chooseShard("x", nil) != nil {
		t.Errorf("chooseShard without shards is not nil")
	}
}

func TestMatchingShards(t *testing.T) {
	shards := []*corev1alpha1.Shard{
		shard("root", map[string]string{"region": "eu"}),
		shard("s1", map[string]string{"region": "us", "tier": "gold"}),
		shard("s2", map[string]string{"region": "us"}),
	}
	for _, tc := range []struct {
		name     string
		selector *metav1.LabelSelector
		want     []string
		wantErr  bool
	}{
		{name: "no selector", want: []string{"root", "s1", "s2"}},
		{name: "empty selector", selector: &metav1.LabelSelector{}, want: []string{"root", "s1", "s2"}},
		{name: "labels", selector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "us"}}, want: []string{"s1", "s2"}},
		{name: "expression", selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpExists}}}, want: []string{"s1"}},
		{name: "none", selector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "ap"}}},
		{name: "invalid", selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: "Sometimes"}}}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := matchingShards(shards, tc.selector)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, names(got)); diff != "" {
				t.Errorf("matching shards (-want +got):\n%s", diff)
			}
		})
	}
}

// typeLookup is a TypeLookup over WorkspaceTypes keyed by "<cluster>:<name>".
func typeLookup(wts ...*tenancyv1alpha1.WorkspaceType) TypeLookup {
	byRef := map[string]*tenancyv1alpha1.WorkspaceType{}
	for _, wt := range wts {
		byRef[string(logicalcluster.From(wt))+":"+wt.Name] = wt
	}
	return func(ref tenancyv1alpha1.WorkspaceTypeReference) (*tenancyv1alpha1.WorkspaceType, error) {
		wt, ok := byRef[ref.String()]
		if !ok {
			return nil, apierrors.NewNotFound(tenancyv1alpha1.Resource("workspacetypes"), ref.String())
		}
		return wt, nil
	}
}

func wtype(cluster, name string, initializer bool, extends ...tenancyv1alpha1.WorkspaceTypeReference) *tenancyv1alpha1.WorkspaceType {
	return &tenancyv1alpha1.WorkspaceType{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{logicalcluster.AnnotationKey: cluster}},
		Spec: tenancyv1alpha1.WorkspaceTypeSpec{
			Initializer: initializer,
			Extend:      tenancyv1alpha1.WorkspaceTypeExtension{With: extends},
		},
	}
}

func ref(path, name string) tenancyv1alpha1.WorkspaceTypeReference {
	return tenancyv1alpha1.WorkspaceTypeReference{Path: path, Name: tenancyv1alpha1.WorkspaceTypeName(name)}
}

func TestTypeInitializers(t *testing.T) {
	lookup := typeLookup(
		wtype("root", "universal", true),
		wtype("root", "organization", false, ref("root", "universal")),
		wtype("root", "plain", false),
		// A type in an organization (logical cluster "orgcluster", path
		// root:org) extending a sibling by name and root types by path.
		wtype("orgcluster", "base", true, ref("root", "universal")),
		wtype("orgcluster", "custom", true, ref("", "base"), ref("root", "organization"), ref("root", "universal")),
		wtype("root", "loop-a", true, ref("root", "loop-b")),
		wtype("root", "loop-b", false, ref("root", "loop-a")),
		wtype("root", "broken", true, ref("root", "missing")),
	)
	for _, tc := range []struct {
		name    string
		ref     tenancyv1alpha1.WorkspaceTypeReference
		want    []corev1alpha1.LogicalClusterInitializer
		wantErr func(error) bool
	}{
		{name: "own initializer", ref: ref("root", "universal"), want: []corev1alpha1.LogicalClusterInitializer{"root:universal"}},
		{name: "none", ref: ref("root", "plain")},
		{name: "inherited", ref: ref("root", "organization"), want: []corev1alpha1.LogicalClusterInitializer{"root:universal"}},
		{name: "initializers are named by cluster name, not path, deduplicated",
			// root:org resolves to logical cluster orgcluster.
			ref:  ref("orgcluster", "custom"),
			want: []corev1alpha1.LogicalClusterInitializer{"orgcluster:custom", "orgcluster:base", "root:universal"}},
		{name: "cycle", ref: ref("root", "loop-a"), wantErr: func(err error) bool { return errors.Is(err, errTypeCycle) }},
		{name: "missing type", ref: ref("root", "nope"), wantErr: isTypeNotFound},
		{name: "missing extended type", ref: ref("root", "broken"), wantErr: isTypeNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := typeInitializers(tc.ref, lookup)
			if tc.wantErr != nil {
				if err == nil || !tc.wantErr(err) {
					t.Fatalf("err = %v, want a different error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("initializers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewLogicalCluster(t *testing.T) {
	ws := &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{
			Name: "team", UID: "uid-1",
			Annotations: map[string]string{
				tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey: `{"username":"alice"}`,
				logicalcluster.AnnotationKey:                            "parentcluster",
			},
		},
		Spec: tenancyv1alpha1.WorkspaceSpec{Type: &tenancyv1alpha1.WorkspaceTypeReference{Path: "root", Name: "universal"}},
	}
	info := parentInfoFrom("parentcluster", &corev1alpha1.LogicalCluster{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		logicalcluster.PathAnnotationKey:         "root:org",
		corev1alpha1.RequiredGroupsAnnotationKey: "admins",
	}}})
	got := newLogicalCluster(ws, "parentcluster", info, "s1", []corev1alpha1.LogicalClusterInitializer{"root:universal", corev1alpha1.OwnerInitializer})
	want := &corev1alpha1.LogicalCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name: "cluster",
			Annotations: map[string]string{
				"kcp.io/path":                          "root:org:team",
				"internal.tenancy.kcp.io/type":         "root:universal",
				"core.kcp.io/shard":                    "s1",
				"experimental.tenancy.kcp.io/owner":    `{"username":"alice"}`,
				"authorization.kcp.io/required-groups": "admins",
			},
		},
		Spec: corev1alpha1.LogicalClusterSpec{
			Owner: &corev1alpha1.LogicalClusterOwner{
				APIVersion: "tenancy.kcp.io/v1alpha1", Resource: "workspaces", Name: "team", Cluster: "parentcluster", UID: "uid-1",
			},
			Initializers: []corev1alpha1.LogicalClusterInitializer{"system:owner", "root:universal"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LogicalCluster (-want +got):\n%s", diff)
	}
	if !ownedBy(got, ws) {
		t.Errorf("the new LogicalCluster is not owned by its workspace")
	}

	// Without owner annotation and in root (no parent LogicalCluster).
	delete(ws.Annotations, tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey)
	got = newLogicalCluster(ws, "root", parentInfoFrom("root", nil), "root", nil)
	if p := got.Annotations["kcp.io/path"]; p != "root:team" {
		t.Errorf("path = %q, want root:team", p)
	}
	if len(got.Spec.Initializers) != 0 {
		t.Errorf("initializers = %v, want none", got.Spec.Initializers)
	}
	for _, k := range []string{tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey, corev1alpha1.RequiredGroupsAnnotationKey} {
		if _, ok := got.Annotations[k]; ok {
			t.Errorf("annotation %s set", k)
		}
	}
}

func TestWorkspaceURL(t *testing.T) {
	s := shard("s1", nil)
	if got := workspaceURL(s, logicalcluster.NewPath("root:org")); got != "https://s1:6443/clusters/root:org" {
		t.Errorf("URL from baseURL = %q", got)
	}
	s.Spec.ExternalURL = "https://proxy.example.com/"
	if got := workspaceURL(s, logicalcluster.NewPath("root:org")); got != "https://proxy.example.com/clusters/root:org" {
		t.Errorf("URL from externalURL = %q", got)
	}
}
