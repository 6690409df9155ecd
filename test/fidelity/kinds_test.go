package fidelity

import (
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingwebhookconfiguration"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingwebhookconfiguration"
	"k8s.io/kubernetes/pkg/registry/coordination/lease"
	"k8s.io/kubernetes/pkg/registry/core/configmap"
	"k8s.io/kubernetes/pkg/registry/core/event"
	"k8s.io/kubernetes/pkg/registry/core/limitrange"
	"k8s.io/kubernetes/pkg/registry/core/namespace"
	"k8s.io/kubernetes/pkg/registry/core/resourcequota"
	"k8s.io/kubernetes/pkg/registry/core/secret"
	"k8s.io/kubernetes/pkg/registry/core/serviceaccount"
	"k8s.io/kubernetes/pkg/registry/flowcontrol/flowschema"
	"k8s.io/kubernetes/pkg/registry/flowcontrol/prioritylevelconfiguration"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrole"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding"
	"k8s.io/kubernetes/pkg/registry/rbac/role"
	"k8s.io/kubernetes/pkg/registry/rbac/rolebinding"
	"k8s.io/utils/ptr"
)

func om(name, ns string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: ns} }

func obj[T runtime.Object](name string, o T) testCase { return testCase{name: name, obj: o} }

// from makes c an update of the stored object old rather than of the
// created valid object.
func (c testCase) from(old runtime.Object) testCase {
	c.stored = old
	return c
}

// stored returns obj as the store holds it: with a UID, a creation time
// and a resource version.
func stored(obj runtime.Object) runtime.Object {
	obj = obj.DeepCopyObject()
	m, _ := meta.Accessor(obj)
	m.SetUID("0a0b")
	m.SetCreationTimestamp(metav1.Unix(1700000000, 0))
	m.SetResourceVersion("1")
	return obj
}

// scopedQuota is a quota on pods with two scopes.
func scopedQuota() *corev1.ResourceQuota {
	return &corev1.ResourceQuota{ObjectMeta: om("q", "default"), Spec: corev1.ResourceQuotaSpec{
		Hard:   corev1.ResourceList{"pods": resource.MustParse("1")},
		Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort},
	}}
}

// selectorQuota is a quota on pods of priority class high.
func selectorQuota() *corev1.ResourceQuota {
	return &corev1.ResourceQuota{ObjectMeta: om("q", "default"), Spec: corev1.ResourceQuotaSpec{
		Hard: corev1.ResourceList{"pods": resource.MustParse("1")}, ScopeSelector: priorityClassSelector("high"),
	}}
}

func priorityClassSelector(class string) *corev1.ScopeSelector {
	return &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
		{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{class}},
	}}
}

var eventTime = metav1.NewMicroTime(time.Unix(1700000000, 0))

// newEvent returns a valid events.k8s.io event, changed by edit.
func newEvent(edit func(*eventsv1.Event)) *eventsv1.Event {
	e := &eventsv1.Event{
		ObjectMeta: om("e", "default"), EventTime: eventTime, ReportingController: "example.com/c", ReportingInstance: "i",
		Action: "Scheduled", Reason: "Assigned", Regarding: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "default", Name: "cm"},
		Note: "n", Type: corev1.EventTypeNormal,
	}
	if edit != nil {
		edit(e)
	}
	return e
}

func edit[T runtime.Object](name string, fn func(T)) testCase {
	return testCase{name: name, edit: func(o runtime.Object) { fn(o.(T)) }}
}

func kinds() []kind {
	return []kind{
		{
			gvr: corev1.SchemeGroupVersion.WithResource("configmaps"), upstream: configmap.Strategy,
			edits: configMapEdits(),
			valid: func() runtime.Object {
				return &corev1.ConfigMap{ObjectMeta: om("cm", "default"), Data: map[string]string{"a": "b"}, BinaryData: map[string][]byte{"c": []byte("d")}}
			},
			cases: []testCase{
				obj("bad key", &corev1.ConfigMap{ObjectMeta: om("cm", "default"), Data: map[string]string{"a/b": "x"}}),
				obj("dot key", &corev1.ConfigMap{ObjectMeta: om("cm", "default"), Data: map[string]string{".": "x"}}),
				obj("dotted keys", &corev1.ConfigMap{ObjectMeta: om("cm", "default"), Data: map[string]string{".a": "x", "a.b_c-d": "y"}}),
				obj("key in data and binaryData", &corev1.ConfigMap{ObjectMeta: om("cm", "default"), Data: map[string]string{"a": "x"}, BinaryData: map[string][]byte{"a": nil}}),
				obj("too large", &corev1.ConfigMap{ObjectMeta: om("cm", "default"), Data: map[string]string{"a": strings.Repeat("x", 1024*1024+1)}}),
				obj("immutable", &corev1.ConfigMap{ObjectMeta: om("cm", "default"), Immutable: ptr.To(true)}),
			},
			updates: append(configMapUpdates(),
				edit("data changed", func(c *corev1.ConfigMap) { c.Data = map[string]string{"z": "1"} }),
				edit("made immutable", func(c *corev1.ConfigMap) { c.Immutable = ptr.To(true) }),
			),
		},
		{
			gvr: corev1.SchemeGroupVersion.WithResource("secrets"), upstream: secret.Strategy,
			edits: secretEdits(),
			valid: func() runtime.Object {
				return &corev1.Secret{ObjectMeta: om("s", "default"), Data: map[string][]byte{"a": []byte("b")}, StringData: map[string]string{"c": "d"}}
			},
			cases: []testCase{
				obj("bad key", &corev1.Secret{ObjectMeta: om("s", "default"), Data: map[string][]byte{"a/b": nil}}),
				obj("tls without key", &corev1.Secret{ObjectMeta: om("s", "default"), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": []byte("x")}}),
				obj("tls", &corev1.Secret{ObjectMeta: om("s", "default"), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": []byte("x"), "tls.key": []byte("y")}}),
				obj("sa token without annotation", &corev1.Secret{ObjectMeta: om("s", "default"), Type: corev1.SecretTypeServiceAccountToken}),
				obj("sa token", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default", Annotations: map[string]string{corev1.ServiceAccountNameKey: "default"}}, Type: corev1.SecretTypeServiceAccountToken}),
				obj("dockerconfigjson bad", &corev1.Secret{ObjectMeta: om("s", "default"), Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{".dockerconfigjson": []byte("{")}}),
				obj("dockerconfigjson", &corev1.Secret{ObjectMeta: om("s", "default"), Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{".dockerconfigjson": []byte(`{"auths":{}}`)}}),
				obj("basic auth empty", &corev1.Secret{ObjectMeta: om("s", "default"), Type: corev1.SecretTypeBasicAuth}),
				obj("ssh auth", &corev1.Secret{ObjectMeta: om("s", "default"), Type: corev1.SecretTypeSSHAuth}),
				obj("custom type", &corev1.Secret{ObjectMeta: om("s", "default"), Type: "example.com/thing"}),
				obj("bad type", &corev1.Secret{ObjectMeta: om("s", "default"), Type: "a b"}),
				obj("too large", &corev1.Secret{ObjectMeta: om("s", "default"), Data: map[string][]byte{"a": []byte(strings.Repeat("x", 1024*1024+1))}}),
			},
			updates: append(secretUpdates(),
				edit("type changed", func(s *corev1.Secret) { s.Type = corev1.SecretTypeBasicAuth }),
				edit("made immutable", func(s *corev1.Secret) { s.Immutable = ptr.To(true) }),
				edit("data changed", func(s *corev1.Secret) { s.Data = map[string][]byte{"x": []byte("y")} }),
			),
		},
		{
			gvr: corev1.SchemeGroupVersion.WithResource("namespaces"), upstream: namespace.Strategy,
			edits: namespaceEdits(),
			valid: func() runtime.Object { return &corev1.Namespace{ObjectMeta: om("team", "")} },
			cases: []testCase{
				obj("dotted name", &corev1.Namespace{ObjectMeta: om("a.b", "")}),
				obj("64-character name", &corev1.Namespace{ObjectMeta: om(strings.Repeat("n", 64), "")}),
				obj("spec finalizer", &corev1.Namespace{ObjectMeta: om("team", ""), Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"example.com/x"}}}),
				obj("bad spec finalizer", &corev1.Namespace{ObjectMeta: om("team", ""), Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"a/b/c"}}}),
				obj("status set", &corev1.Namespace{ObjectMeta: om("team", ""), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}),
			},
			updates: append(namespaceUpdates(),
				edit("spec finalizers changed", func(n *corev1.Namespace) { n.Spec.Finalizers = nil }),
			),
		},
		{
			gvr: corev1.SchemeGroupVersion.WithResource("serviceaccounts"), upstream: serviceaccount.Strategy,
			edits: serviceAccountEdits(),
			valid: func() runtime.Object { return &corev1.ServiceAccount{ObjectMeta: om("sa", "default")} },
			cases: []testCase{
				obj("secrets", &corev1.ServiceAccount{ObjectMeta: om("sa", "default"), Secrets: []corev1.ObjectReference{{Name: "s"}}}),
				obj("image pull secrets", &corev1.ServiceAccount{ObjectMeta: om("sa", "default"), ImagePullSecrets: []corev1.LocalObjectReference{{Name: "p"}}}),
			},
		},
		{
			gvr: corev1.SchemeGroupVersion.WithResource("limitranges"), upstream: limitrange.Strategy,
			edits: limitRangeEdits(),
			valid: func() runtime.Object {
				return &corev1.LimitRange{ObjectMeta: om("lr", "default"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
					Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}, Min: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				}}}}
			},
			cases: []testCase{
				obj("min above max", &corev1.LimitRange{ObjectMeta: om("lr", "default"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
					Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}, Min: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
				}}}}),
				obj("only max: defaults follow", &corev1.LimitRange{ObjectMeta: om("lr", "default"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
					Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
				}}}}),
				obj("negative", &corev1.LimitRange{ObjectMeta: om("lr", "default"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
					Type: corev1.LimitTypePod, Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")},
				}}}}),
				obj("pod with default", &corev1.LimitRange{ObjectMeta: om("lr", "default"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
					Type: corev1.LimitTypePod, Default: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				}}}}),
				obj("pvc storage", &corev1.LimitRange{ObjectMeta: om("lr", "default"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
					Type: corev1.LimitTypePersistentVolumeClaim, Min: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				}}}}),
			},
		},
		{
			gvr: corev1.SchemeGroupVersion.WithResource("resourcequotas"), upstream: resourcequota.Strategy,
			edits: quotaEdits(),
			valid: func() runtime.Object {
				return &corev1.ResourceQuota{ObjectMeta: om("q", "default"), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/configmaps": resource.MustParse("10")}}}
			},
			cases: []testCase{
				obj("negative", &corev1.ResourceQuota{ObjectMeta: om("q", "default"), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/configmaps": resource.MustParse("-1")}}}),
				obj("fractional count", &corev1.ResourceQuota{ObjectMeta: om("q", "default"), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"pods": resource.MustParse("1500m")}}}),
				obj("bad resource name", &corev1.ResourceQuota{ObjectMeta: om("q", "default"), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"a b": resource.MustParse("1")}}}),
				obj("scopes", &corev1.ResourceQuota{ObjectMeta: om("q", "default"), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"pods": resource.MustParse("1")}, Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort}}}),
				obj("status set", &corev1.ResourceQuota{ObjectMeta: om("q", "default"), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"configmaps": resource.MustParse("1")}}, Status: corev1.ResourceQuotaStatus{Used: corev1.ResourceList{"configmaps": resource.MustParse("1")}}}),
				obj("pods", &corev1.ResourceQuota{ObjectMeta: om("q", "default"), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"pods": resource.MustParse("1"), "requests.cpu": resource.MustParse("1")}}}),
			},
			updates: append(quotaUpdates(),
				edit("hard changed", func(q *corev1.ResourceQuota) { q.Spec.Hard["count/configmaps"] = resource.MustParse("20") }),
				edit("scope selector added", func(q *corev1.ResourceQuota) { q.Spec.ScopeSelector = priorityClassSelector("high") }),
				// Quotas with scopes, stored before (or by Kubernetes):
				// Tessera creates none.
				edit("scopes reordered", func(q *corev1.ResourceQuota) {
					q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeNotTerminating}
				}).from(stored(scopedQuota())),
				edit("scopes changed", func(q *corev1.ResourceQuota) {
					q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}
				}).from(stored(scopedQuota())),
				edit("scopes kept", func(q *corev1.ResourceQuota) { q.Spec.Hard["pods"] = resource.MustParse("5") }).from(stored(scopedQuota())),
				edit("scope selector changed", func(q *corev1.ResourceQuota) { q.Spec.ScopeSelector = priorityClassSelector("low") }).from(stored(selectorQuota())),
				edit("scope selector dropped", func(q *corev1.ResourceQuota) { q.Spec.ScopeSelector = nil }).from(stored(selectorQuota())),
				edit("scope selector invalid", func(q *corev1.ResourceQuota) { q.Spec.ScopeSelector.MatchExpressions[0].Values = nil }).from(stored(selectorQuota())),
			),
		},
		{
			gvr: corev1.SchemeGroupVersion.WithResource("events"), upstream: event.Strategy,
			edits:   coreEventEdits(),
			updates: coreEventUpdates(),
			valid: func() runtime.Object {
				return &corev1.Event{ObjectMeta: om("e", "default"), InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "default", Name: "cm"}, Reason: "Tested", Message: "m", Type: corev1.EventTypeNormal}
			},
			cases: []testCase{
				obj("involved object in another namespace", &corev1.Event{ObjectMeta: om("e", "default"), InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "other", Name: "cm"}}),
				obj("bad type", &corev1.Event{ObjectMeta: om("e", "default"), InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "default", Name: "cm"}, Type: "Bad"}),
				obj("events.k8s.io fields", &corev1.Event{ObjectMeta: om("e", "default"), InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "default", Name: "cm"}, EventTime: metav1.NowMicro(), ReportingController: "example.com/c", ReportingInstance: "i", Action: "A", Reason: "R", Type: corev1.EventTypeWarning}),
				obj("eventTime without controller", &corev1.Event{ObjectMeta: om("e", "default"), InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "default", Name: "cm"}, EventTime: metav1.NowMicro()}),
				obj("upper-case namespace of the involved object", &corev1.Event{ObjectMeta: om("e", "Default"), InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "Default", Name: "cm"}}),
				obj("unqualified finalizer", &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "default", Finalizers: []string{"cleanup"}}, InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "default", Name: "cm"}}),
			},
		},
		{
			gvr: eventsv1.SchemeGroupVersion.WithResource("events"), upstream: event.Strategy,
			edits: eventEdits(),
			valid: func() runtime.Object { return newEvent(nil) },
			cases: []testCase{
				obj("no eventTime", newEvent(func(e *eventsv1.Event) { e.EventTime = metav1.MicroTime{} })),
				obj("bad type", newEvent(func(e *eventsv1.Event) { e.Type = "Info" })),
				obj("deprecated count", newEvent(func(e *eventsv1.Event) { e.DeprecatedCount = 2 })),
				obj("series count 1", newEvent(func(e *eventsv1.Event) { e.Series = &eventsv1.EventSeries{Count: 1, LastObservedTime: eventTime} })),
				obj("regarding no namespace", newEvent(func(e *eventsv1.Event) { e.Regarding.Namespace = "" })),
				obj("regarding no namespace in kube-system", newEvent(func(e *eventsv1.Event) { e.Regarding.Namespace = ""; e.Namespace = "kube-system" })),
				obj("upper-case namespace of the regarded object", newEvent(func(e *eventsv1.Event) { e.Namespace = "Default"; e.Regarding.Namespace = "Default" })),
				obj("bad reporting controller", newEvent(func(e *eventsv1.Event) { e.ReportingController = "a b" })),
			},
			updates: append(eventUpdates(),
				edit("note changed", func(e *eventsv1.Event) { e.Note = "changed" }),
				edit("series added", func(e *eventsv1.Event) { e.Series = &eventsv1.EventSeries{Count: 2, LastObservedTime: eventTime} }),
				edit("bad series added", func(e *eventsv1.Event) { e.Series = &eventsv1.EventSeries{Count: 1} }),
				edit("eventTime changed", func(e *eventsv1.Event) { e.EventTime = metav1.NewMicroTime(eventTime.Add(time.Minute)) }),
				edit("stored unqualified finalizer kept", func(e *eventsv1.Event) { e.Labels = map[string]string{"touched": "yes"} }).from(stored(newEvent(func(e *eventsv1.Event) { e.Finalizers = []string{"cleanup"} }))),
			),
		},
		{
			gvr: coordinationv1.SchemeGroupVersion.WithResource("leases"), upstream: lease.Strategy,
			edits:   leaseEdits(),
			updates: leaseUpdates(),
			valid: func() runtime.Object {
				return &coordinationv1.Lease{ObjectMeta: om("l", "default"), Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("me"), LeaseDurationSeconds: ptr.To[int32](15)}}
			},
			cases: []testCase{
				obj("zero duration", &coordinationv1.Lease{ObjectMeta: om("l", "default"), Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To[int32](0)}}),
				obj("negative transitions", &coordinationv1.Lease{ObjectMeta: om("l", "default"), Spec: coordinationv1.LeaseSpec{LeaseTransitions: ptr.To[int32](-1)}}),
				obj("strategy without preferred holder", &coordinationv1.Lease{ObjectMeta: om("l", "default"), Spec: coordinationv1.LeaseSpec{Strategy: ptr.To(coordinationv1.OldestEmulationVersion)}}),
			},
		},
		{
			gvr: rbacv1.SchemeGroupVersion.WithResource("roles"), upstream: role.Strategy,
			edits: roleEdits(),
			valid: func() runtime.Object {
				return &rbacv1.Role{ObjectMeta: om("r", "default"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}}
			},
			cases: []testCase{
				obj("no verbs", &rbacv1.Role{ObjectMeta: om("r", "default"), Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}}}}),
				obj("no api groups", &rbacv1.Role{ObjectMeta: om("r", "default"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, Resources: []string{"configmaps"}}}}),
				obj("non-resource urls in a role", &rbacv1.Role{ObjectMeta: om("r", "default"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/x"}}}}),
				obj("name with colon", &rbacv1.Role{ObjectMeta: om("system:r", "default")}),
			},
		},
		{
			gvr: rbacv1.SchemeGroupVersion.WithResource("clusterroles"), upstream: clusterrole.Strategy,
			edits: clusterRoleEdits(),
			valid: func() runtime.Object {
				return &rbacv1.ClusterRole{ObjectMeta: om("cr", ""), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}}}
			},
			cases: []testCase{
				obj("resources and urls", &rbacv1.ClusterRole{ObjectMeta: om("cr", ""), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"x"}, NonResourceURLs: []string{"/x"}}}}),
				obj("aggregation", &rbacv1.ClusterRole{ObjectMeta: om("cr", ""), AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"a": "b"}}}}}),
				obj("bad aggregation selector", &rbacv1.ClusterRole{ObjectMeta: om("cr", ""), AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"a/b/c": "b"}}}}}),
				obj("name with colon", &rbacv1.ClusterRole{ObjectMeta: om("system:cr", "")}),
			},
		},
		{
			gvr: rbacv1.SchemeGroupVersion.WithResource("rolebindings"), upstream: rolebinding.Strategy,
			edits: roleBindingEdits(),
			valid: func() runtime.Object {
				return &rbacv1.RoleBinding{ObjectMeta: om("rb", "default"), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "r"},
					Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}, {Kind: rbacv1.ServiceAccountKind, Name: "sa", Namespace: "default"}}}
			},
			cases: []testCase{
				obj("bad role kind", &rbacv1.RoleBinding{ObjectMeta: om("rb", "default"), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Bad", Name: "r"}}),
				obj("role ref without name", &rbacv1.RoleBinding{ObjectMeta: om("rb", "default"), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role"}}),
				obj("service account without namespace", &rbacv1.RoleBinding{ObjectMeta: om("rb", "default"), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "r"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "sa"}}}),
				obj("user without api group", &rbacv1.RoleBinding{ObjectMeta: om("rb", "default"), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "r"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}}}),
				obj("bad subject kind", &rbacv1.RoleBinding{ObjectMeta: om("rb", "default"), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "r"}, Subjects: []rbacv1.Subject{{Kind: "Robot", Name: "r2"}}}),
			},
			updates: []testCase{
				edit("role ref changed", func(b *rbacv1.RoleBinding) { b.RoleRef.Name = "other" }),
			},
		},
		{
			gvr: rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings"), upstream: clusterrolebinding.Strategy,
			edits: clusterRoleBindingEdits(),
			valid: func() runtime.Object {
				return &rbacv1.ClusterRoleBinding{ObjectMeta: om("crb", ""), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cr"},
					Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "devs"}}}
			},
			cases: []testCase{
				obj("role kind Role", &rbacv1.ClusterRoleBinding{ObjectMeta: om("crb", ""), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "r"}}),
				obj("service account without namespace", &rbacv1.ClusterRoleBinding{ObjectMeta: om("crb", ""), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cr"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "sa"}}}),
			},
			updates: []testCase{
				edit("role ref changed", func(b *rbacv1.ClusterRoleBinding) { b.RoleRef.Name = "other" }),
			},
		},
		{
			gvr: admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"), upstream: validatingwebhookconfiguration.Strategy,
			edits: webhookServiceEdits(),
			valid: func() runtime.Object {
				return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: om("v", ""), Webhooks: []admissionregistrationv1.ValidatingWebhook{validatingWebhook("a.example.com")}}
			},
			cases: []testCase{
				obj("no side effects", &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: om("v", ""), Webhooks: []admissionregistrationv1.ValidatingWebhook{func() admissionregistrationv1.ValidatingWebhook {
					w := validatingWebhook("a.example.com")
					w.SideEffects = nil
					return w
				}()}}),
				obj("duplicate names", &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: om("v", ""), Webhooks: []admissionregistrationv1.ValidatingWebhook{validatingWebhook("a.example.com"), validatingWebhook("a.example.com")}}),
				obj("unqualified name", &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: om("v", ""), Webhooks: []admissionregistrationv1.ValidatingWebhook{validatingWebhook("a")}}),
				obj("http url", &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: om("v", ""), Webhooks: []admissionregistrationv1.ValidatingWebhook{func() admissionregistrationv1.ValidatingWebhook {
					w := validatingWebhook("a.example.com")
					w.ClientConfig.URL = ptr.To("http://example.com/x")
					return w
				}()}}),
				obj("bad match condition", &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: om("v", ""), Webhooks: []admissionregistrationv1.ValidatingWebhook{func() admissionregistrationv1.ValidatingWebhook {
					w := validatingWebhook("a.example.com")
					w.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "m", Expression: "object.("}}
					return w
				}()}}),
				vwh("webhook name with uppercase", func(w *admissionregistrationv1.ValidatingWebhook) { w.Name = "Hook.example.com" }),
				vwh("side effects Some", func(w *admissionregistrationv1.ValidatingWebhook) {
					w.SideEffects = ptr.To(admissionregistrationv1.SideEffectClassSome)
				}),
				vwh("no review versions", func(w *admissionregistrationv1.ValidatingWebhook) { w.AdmissionReviewVersions = nil }),
				vwh("bad review version", func(w *admissionregistrationv1.ValidatingWebhook) { w.AdmissionReviewVersions = []string{"v1", "V 2"} }),
				vwh("duplicate review version", func(w *admissionregistrationv1.ValidatingWebhook) { w.AdmissionReviewVersions = []string{"v1", "v1"} }),
				vwh("timeout 0", func(w *admissionregistrationv1.ValidatingWebhook) { w.TimeoutSeconds = ptr.To[int32](0) }),
				vwh("timeout 31", func(w *admissionregistrationv1.ValidatingWebhook) { w.TimeoutSeconds = ptr.To[int32](31) }),
				vwh("bad failure policy", func(w *admissionregistrationv1.ValidatingWebhook) {
					w.FailurePolicy = ptr.To(admissionregistrationv1.FailurePolicyType("Sometimes"))
				}),
				vwh("bad match policy", func(w *admissionregistrationv1.ValidatingWebhook) {
					w.MatchPolicy = ptr.To(admissionregistrationv1.MatchPolicyType("Fuzzy"))
				}),
				vwh("url with fragment", func(w *admissionregistrationv1.ValidatingWebhook) {
					w.ClientConfig.URL = ptr.To("https://example.com/hook#x")
				}),
				vwh("url with user", func(w *admissionregistrationv1.ValidatingWebhook) {
					w.ClientConfig.URL = ptr.To("https://u:p@example.com/hook")
				}),
				vwh("no url nor service", func(w *admissionregistrationv1.ValidatingWebhook) { w.ClientConfig.URL = nil }),
				vwh("rule without operations", func(w *admissionregistrationv1.ValidatingWebhook) { w.Rules[0].Operations = nil }),
				vwh("rule star with others", func(w *admissionregistrationv1.ValidatingWebhook) {
					w.Rules[0].Operations = []admissionregistrationv1.OperationType{"*", "CREATE"}
				}),
				vwh("rule bad operation", func(w *admissionregistrationv1.ValidatingWebhook) {
					w.Rules[0].Operations = []admissionregistrationv1.OperationType{"PATCH"}
				}),
				vwh("rule */* and others", func(w *admissionregistrationv1.ValidatingWebhook) { w.Rules[0].Resources = []string{"*/*", "pods"} }),
				vwh("rule pods/* and pods/status", func(w *admissionregistrationv1.ValidatingWebhook) {
					w.Rules[0].Resources = []string{"pods/*", "pods/status"}
				}),
				vwh("rule empty api version", func(w *admissionregistrationv1.ValidatingWebhook) { w.Rules[0].APIVersions = []string{""} }),
				vwh("rule bad scope", func(w *admissionregistrationv1.ValidatingWebhook) {
					w.Rules[0].Scope = ptr.To(admissionregistrationv1.ScopeType("Global"))
				}),
				vwh("no rules", func(w *admissionregistrationv1.ValidatingWebhook) { w.Rules = nil }),
				vwh("bad namespace selector", func(w *admissionregistrationv1.ValidatingWebhook) {
					w.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Is"}}}
				}),
				vwh("namespace selector bad value", func(w *admissionregistrationv1.ValidatingWebhook) {
					w.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "not valid!"}}
				}),
				vwh("match condition not bool", func(w *admissionregistrationv1.ValidatingWebhook) {
					w.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "c", Expression: "'x'"}}
				}),
				vwh("match condition empty expression", func(w *admissionregistrationv1.ValidatingWebhook) {
					w.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "c", Expression: " "}}
				}),
				vwh("match condition authorizer", func(w *admissionregistrationv1.ValidatingWebhook) {
					w.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "c", Expression: "authorizer.group('').resource('pods').check('get').allowed()"}}
				}),
				vwh("65 match conditions", func(w *admissionregistrationv1.ValidatingWebhook) {
					for i := range 65 {
						w.MatchConditions = append(w.MatchConditions, admissionregistrationv1.MatchCondition{Name: "c" + strings.Repeat("x", i), Expression: "true"})
					}
				}),
				obj("unknown review version", &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: om("v", ""), Webhooks: []admissionregistrationv1.ValidatingWebhook{func() admissionregistrationv1.ValidatingWebhook {
					w := validatingWebhook("a.example.com")
					w.AdmissionReviewVersions = []string{"v2"}
					return w
				}()}}),
			},
			updates: []testCase{
				edit("match condition added", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
					c.Webhooks[0].MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "m", Expression: "true"}}
				}),
				edit("bad match condition added", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
					c.Webhooks[0].MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "m", Expression: "object.("}}
				}),
				// Configurations stored with match conditions that no
				// longer validate.
				edit("stored bad match conditions kept", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
					c.Labels = map[string]string{"touched": "yes"}
				}).from(stored(validatingWithConditions(badMatchConditions()...))),
				edit("stored bad match conditions kept, rules changed", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
					c.Webhooks[0].Rules[0].Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.Update}
				}).from(stored(validatingWithConditions(badMatchConditions()...))),
				edit("stored bad match conditions, one dropped", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
					c.Webhooks[0].MatchConditions = c.Webhooks[0].MatchConditions[1:]
				}).from(stored(validatingWithConditions(badMatchConditions()...))),
				edit("stored bad match conditions, webhook added", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
					c.Webhooks = append(c.Webhooks, validatingWebhook("b.example.com"))
				}).from(stored(validatingWithConditions(badMatchConditions()...))),
			},
		},
		{
			gvr: admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations"), upstream: mutatingwebhookconfiguration.Strategy,
			valid: func() runtime.Object {
				w := validatingWebhook("a.example.com")
				return &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: om("m", ""), Webhooks: []admissionregistrationv1.MutatingWebhook{{
					Name: w.Name, ClientConfig: w.ClientConfig, Rules: w.Rules, SideEffects: w.SideEffects, AdmissionReviewVersions: w.AdmissionReviewVersions,
				}}}
			},
			updates: []testCase{
				edit("bad match condition added", func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
					c.Webhooks[0].MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "m", Expression: "object.("}}
				}),
				edit("stored bad match conditions kept", func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
					c.Labels = map[string]string{"touched": "yes"}
				}).from(stored(mutatingWithConditions(badMatchConditions()...))),
				edit("stored bad match conditions, one dropped", func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
					c.Webhooks[0].MatchConditions = c.Webhooks[0].MatchConditions[1:]
				}).from(stored(mutatingWithConditions(badMatchConditions()...))),
			},
		},
		{
			gvr: flowcontrolv1.SchemeGroupVersion.WithResource("prioritylevelconfigurations"), upstream: prioritylevelconfiguration.Strategy,
			edits: priorityLevelEdits(),
			valid: func() runtime.Object {
				return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: om("pl", ""), Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
					Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}},
				}}
			},
			cases: []testCase{
				obj("queuing defaults", &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: om("pl", ""), Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
					Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue}},
				}}),
				obj("exempt with limited", &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: om("pl", ""), Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
					Type: flowcontrolv1.PriorityLevelEnablementExempt, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{},
				}}),
				obj("type Exempt, not named exempt", &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: om("pl", ""), Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
					Type: flowcontrolv1.PriorityLevelEnablementExempt,
				}}),
				obj("named exempt, type Limited", &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: om("exempt", ""), Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
					Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}},
				}}),
				obj("mandatory exempt", bootstrap.MandatoryPriorityLevelConfigurationExempt.DeepCopy()),
				obj("mandatory exempt, other exempt shares", func() runtime.Object {
					pl := bootstrap.MandatoryPriorityLevelConfigurationExempt.DeepCopy()
					pl.Spec.Exempt.NominalConcurrencyShares = ptr.To[int32](10)
					return pl
				}()),
				obj("mandatory exempt, defaulted exempt", func() runtime.Object {
					pl := bootstrap.MandatoryPriorityLevelConfigurationExempt.DeepCopy()
					pl.Spec.Exempt = nil
					return pl
				}()),
				obj("mandatory catch-all", bootstrap.MandatoryPriorityLevelConfigurationCatchAll.DeepCopy()),
				obj("mandatory catch-all, other shares", func() runtime.Object {
					pl := bootstrap.MandatoryPriorityLevelConfigurationCatchAll.DeepCopy()
					pl.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](50)
					return pl
				}()),
				obj("catch-all, queuing", func() runtime.Object {
					pl := bootstrap.MandatoryPriorityLevelConfigurationCatchAll.DeepCopy()
					pl.Spec.Limited.LimitResponse = flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: &flowcontrolv1.QueuingConfiguration{}}
					return pl
				}()),
			},
			updates: []testCase{
				edit("stored invalid name kept", func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Labels = map[string]string{"touched": "yes"} }).
					from(stored(&flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: om("Bad_Name", ""), Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
						Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}},
					}})),
				edit("mandatory catch-all changed", func(pl *flowcontrolv1.PriorityLevelConfiguration) {
					pl.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](50)
				}).
					from(stored(bootstrap.MandatoryPriorityLevelConfigurationCatchAll)),
				edit("mandatory exempt shares changed", func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Spec.Exempt.LendablePercent = ptr.To[int32](20) }).
					from(stored(bootstrap.MandatoryPriorityLevelConfigurationExempt)),
			},
		},
		{
			gvr: flowcontrolv1.SchemeGroupVersion.WithResource("flowschemas"), upstream: flowschema.Strategy,
			edits: flowSchemaEdits(),
			valid: func() runtime.Object {
				return &flowcontrolv1.FlowSchema{ObjectMeta: om("fs", ""), Spec: flowcontrolv1.FlowSchemaSpec{
					PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "pl"}, MatchingPrecedence: 500,
					Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
						Subjects:      []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: "devs"}}},
						ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*"}, ClusterScope: true}},
					}},
				}}
			},
			cases: []testCase{
				obj("precedence too high", &flowcontrolv1.FlowSchema{ObjectMeta: om("fs", ""), Spec: flowcontrolv1.FlowSchemaSpec{
					PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "pl"}, MatchingPrecedence: 10001}}),
				obj("no precedence", &flowcontrolv1.FlowSchema{ObjectMeta: om("fs", ""), Spec: flowcontrolv1.FlowSchemaSpec{
					PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "pl"}}}),
				obj("named exempt", &flowcontrolv1.FlowSchema{ObjectMeta: om("exempt", ""), Spec: flowcontrolv1.FlowSchemaSpec{
					PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "exempt"}, MatchingPrecedence: 1}}),
				obj("mandatory exempt", bootstrap.MandatoryFlowSchemaExempt.DeepCopy()),
				obj("mandatory catch-all", bootstrap.MandatoryFlowSchemaCatchAll.DeepCopy()),
				obj("mandatory catch-all, other precedence", func() runtime.Object {
					fs := bootstrap.MandatoryFlowSchemaCatchAll.DeepCopy()
					fs.Spec.MatchingPrecedence = 9999
					return fs
				}()),
				obj("mandatory catch-all, defaulted precedence", func() runtime.Object {
					fs := bootstrap.MandatoryFlowSchemaCatchAll.DeepCopy()
					fs.Spec.MatchingPrecedence = 0
					return fs
				}()),
			},
			updates: []testCase{
				edit("precedence changed", func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = 600 }),
				edit("stored invalid name kept", func(fs *flowcontrolv1.FlowSchema) { fs.Labels = map[string]string{"touched": "yes"} }).
					from(stored(&flowcontrolv1.FlowSchema{ObjectMeta: om("Bad_Name", ""), Spec: flowcontrolv1.FlowSchemaSpec{
						PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "pl"}, MatchingPrecedence: 500}})),
				edit("mandatory exempt changed", func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = 2 }).
					from(stored(bootstrap.MandatoryFlowSchemaExempt)),
				edit("mandatory catch-all relabeled", func(fs *flowcontrolv1.FlowSchema) { fs.Labels = map[string]string{"touched": "yes"} }).
					from(stored(bootstrap.MandatoryFlowSchemaCatchAll)),
			},
		},
	}
}

// vwh is a case of a validating webhook configuration whose webhook is
// changed by edit.
func vwh(name string, edit func(*admissionregistrationv1.ValidatingWebhook)) testCase {
	w := validatingWebhook("a.example.com")
	edit(&w)
	return obj(name, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: om("v", ""), Webhooks: []admissionregistrationv1.ValidatingWebhook{w}})
}

// badMatchConditions are match conditions Kubernetes refuses on create:
// an expression that does not compile, a bad name, a duplicate name.
func badMatchConditions() []admissionregistrationv1.MatchCondition {
	return []admissionregistrationv1.MatchCondition{
		{Name: "a", Expression: "object.("}, {Name: "bad name!", Expression: "true"}, {Name: "a", Expression: "true"},
	}
}

func validatingWithConditions(conditions ...admissionregistrationv1.MatchCondition) *admissionregistrationv1.ValidatingWebhookConfiguration {
	w := validatingWebhook("a.example.com")
	w.MatchConditions = conditions
	return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: om("v", ""), Webhooks: []admissionregistrationv1.ValidatingWebhook{w}}
}

func mutatingWithConditions(conditions ...admissionregistrationv1.MatchCondition) *admissionregistrationv1.MutatingWebhookConfiguration {
	w := validatingWebhook("a.example.com")
	return &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: om("m", ""), Webhooks: []admissionregistrationv1.MutatingWebhook{{
		Name: w.Name, ClientConfig: w.ClientConfig, Rules: w.Rules, SideEffects: w.SideEffects, AdmissionReviewVersions: w.AdmissionReviewVersions,
		MatchConditions: conditions,
	}}}
}

func validatingWebhook(name string) admissionregistrationv1.ValidatingWebhook {
	return admissionregistrationv1.ValidatingWebhook{
		Name:                    name,
		ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://example.com/hook")},
		Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"},
	}
}
