package fidelity

import (
	"encoding/pem"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// The edits of a kind change its valid object; each is created, and
// applied as an update of the created valid object (see kind.edits). They
// are h2-fid's kind-specific mutations, written for the valid objects of
// this module: each sets what it needs rather than assuming more of the
// valid object than it has.

func q(s string) resource.Quantity { return resource.MustParse(s) }

var microStamp = metav1.NewMicroTime(time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC))

// coreEventEdits are the edits of a core v1 event.
func coreEventEdits() []testCase {
	type E = *corev1.Event
	reporting := func(controller, instance, action string) func(E) {
		return func(e E) {
			e.EventTime, e.ReportingController, e.ReportingInstance, e.Action = microStamp, controller, instance, action
		}
	}
	return []testCase{
		edit("involved object without namespace", func(e E) { e.InvolvedObject.Namespace = "" }),
		edit("involved object without namespace, in apps", func(e E) { e.InvolvedObject.Namespace = ""; e.Namespace = "apps" }),
		edit("involved object without namespace, in kube-system", func(e E) { e.InvolvedObject.Namespace = ""; e.Namespace = "kube-system" }),
		edit("cluster-scoped involved object", func(e E) { e.InvolvedObject = corev1.ObjectReference{Kind: "Node", Name: "node-1"} }),
		edit("reporting, unqualified controller", reporting("scheduler", "i", "a")),
		edit("reporting, bad controller", reporting("Bad Controller", "i", "a")),
		edit("reporting, no action", reporting("example.com/c", "i", "")),
		edit("reporting, no instance", reporting("example.com/c", "", "a")),
		edit("reporting, long instance", reporting("example.com/c", strings.Repeat("i", 129), "a")),
		edit("reporting, long action", reporting("example.com/c", "i", strings.Repeat("a", 129))),
		edit("reporting, long reason", func(e E) { reporting("example.com/c", "i", "a")(e); e.Reason = strings.Repeat("r", 129) }),
		edit("reporting, long message", func(e E) { reporting("example.com/c", "i", "a")(e); e.Message = strings.Repeat("m", 1025) }),
		edit("long reason", func(e E) { e.Reason = strings.Repeat("r", 129) }),
		edit("long action", func(e E) { e.Action = strings.Repeat("a", 129) }),
		edit("long message", func(e E) { e.Message = strings.Repeat("m", 1025) }),
		edit("long reporting instance", func(e E) { e.ReportingInstance = strings.Repeat("i", 129) }),
		edit("type Info", func(e E) { e.Type = "Info" }),
		edit("no type", func(e E) { e.Type = "" }),
		edit("series count 1", func(e E) { e.Series = &corev1.EventSeries{Count: 1, LastObservedTime: microStamp} }),
		edit("series without time", func(e E) { e.Series = &corev1.EventSeries{Count: 2} }),
		edit("series with reporting", func(e E) {
			reporting("example.com/c", "i", "a")(e)
			e.Series = &corev1.EventSeries{Count: 2, LastObservedTime: microStamp}
		}),
		edit("legacy fields", func(e E) {
			e.Source = corev1.EventSource{Component: "kubelet", Host: "node-1"}
			e.FirstTimestamp, e.LastTimestamp, e.Count = metav1.Unix(1700000000, 0), metav1.Unix(1700000060, 0), 3
		}),
		edit("related", func(e E) { e.Related = &corev1.ObjectReference{Kind: "Node", Name: "n"} }),
		edit("involved object with field path", func(e E) { e.InvolvedObject.FieldPath = "spec.containers{web}"; e.InvolvedObject.UID = "u1" }),
		edit("reporting, no type", func(e E) { reporting("example.com/c", "i", "a")(e); e.Type = "" }),
		edit("reporting, legacy fields", func(e E) {
			reporting("example.com/c", "i", "a")(e)
			e.Source, e.Count, e.FirstTimestamp = corev1.EventSource{Component: "kubelet"}, 2, metav1.Unix(1700000000, 0)
		}),
		edit("reporting, message 1024", func(e E) { reporting("example.com/c", "i", "a")(e); e.Message = strings.Repeat("m", 1024) }),
		edit("reporting controller without event time", func(e E) { e.ReportingController = "Bad Controller" }),
		edit("reporting, related in another namespace", func(e E) {
			reporting("example.com/c", "i", "a")(e)
			e.Related = &corev1.ObjectReference{Kind: "ConfigMap", Namespace: "Bad_NS", Name: "x"}
		}),
		edit("reporting, no reason", func(e E) { reporting("example.com/c", "i", "a")(e); e.Reason = "" }),
		edit("involved object without kind", func(e E) { e.InvolvedObject.Kind = "" }),
		edit("involved object without name", func(e E) { e.InvolvedObject.Name = "" }),
		edit("negative count", func(e E) { e.Count = -1 }),
	}
}

// coreEventUpdates are the updates of a stored core v1 event.
func coreEventUpdates() []testCase {
	type E = *corev1.Event
	return []testCase{
		edit("message changed", func(e E) { e.Message = "changed" }),
		edit("count bumped", func(e E) { e.Count++ }),
		edit("reason changed", func(e E) { e.Reason = "Other" }),
		edit("involved object changed", func(e E) { e.InvolvedObject.Name = "other" }),
		edit("event time set", func(e E) { e.EventTime = microStamp }),
		edit("series added", func(e E) { e.Series = &corev1.EventSeries{Count: 2, LastObservedTime: microStamp} }),
	}
}

// eventEdits are the edits of an events.k8s.io event.
func eventEdits() []testCase {
	type E = *eventsv1.Event
	return []testCase{
		edit("no reporting controller", func(e E) { e.ReportingController = "" }),
		edit("no reporting instance", func(e E) { e.ReportingInstance = "" }),
		edit("no action", func(e E) { e.Action = "" }),
		edit("no reason", func(e E) { e.Reason = "" }),
		edit("note 1024", func(e E) { e.Note = strings.Repeat("n", 1024) }),
		edit("note 1025", func(e E) { e.Note = strings.Repeat("n", 1025) }),
		edit("long action", func(e E) { e.Action = strings.Repeat("a", 129) }),
		edit("long reason", func(e E) { e.Reason = strings.Repeat("r", 129) }),
		edit("long reporting instance", func(e E) { e.ReportingInstance = strings.Repeat("i", 129) }),
		edit("no type", func(e E) { e.Type = "" }),
		edit("type Warning", func(e E) { e.Type = corev1.EventTypeWarning }),
		edit("deprecated source", func(e E) { e.DeprecatedSource = corev1.EventSource{Host: "h"} }),
		edit("deprecated first timestamp", func(e E) { e.DeprecatedFirstTimestamp = metav1.Unix(1700000000, 0) }),
		edit("deprecated last timestamp", func(e E) { e.DeprecatedLastTimestamp = metav1.Unix(1700000000, 0) }),
		edit("series", func(e E) { e.Series = &eventsv1.EventSeries{Count: 4, LastObservedTime: microStamp} }),
		edit("series without time", func(e E) { e.Series = &eventsv1.EventSeries{Count: 3} }),
		edit("regarding other namespace", func(e E) { e.Regarding.Namespace = "other" }),
		edit("regarding no namespace in apps", func(e E) { e.Regarding.Namespace = ""; e.Namespace = "apps" }),
		edit("regarding a node", func(e E) { e.Regarding = corev1.ObjectReference{Kind: "Node", Name: "node-1"} }),
		edit("related", func(e E) { e.Related = &corev1.ObjectReference{Kind: "Node", Name: "node-1"} }),
		edit("series with deprecated count", func(e E) {
			e.Series, e.DeprecatedCount = &eventsv1.EventSeries{Count: 2, LastObservedTime: microStamp}, 2
		}),
		edit("series count 0", func(e E) { e.Series = &eventsv1.EventSeries{Count: 0, LastObservedTime: microStamp} }),
		edit("regarding without kind", func(e E) { e.Regarding.Kind = "" }),
		edit("note with newline", func(e E) { e.Note = "a\nb" }),
		edit("reporting controller 129", func(e E) { e.ReportingController = "example.com/" + strings.Repeat("c", 117) }),
	}
}

// eventUpdates are the updates of a stored events.k8s.io event.
func eventUpdates() []testCase {
	type E = *eventsv1.Event
	return []testCase{
		edit("series changed", func(e E) { e.Series = &eventsv1.EventSeries{Count: 9, LastObservedTime: microStamp} }),
		edit("action changed", func(e E) { e.Action = "Other" }),
		edit("regarding changed", func(e E) { e.Regarding.Name = "other" }),
		edit("type changed", func(e E) { e.Type = corev1.EventTypeWarning }),
		edit("reporting controller changed", func(e E) { e.ReportingController = "example.com/other" }),
		edit("series dropped", func(e E) { e.Series = nil }),
		edit("note dropped", func(e E) { e.Note = "" }),
		edit("deprecated count set", func(e E) { e.DeprecatedCount = 4 }),
	}
}

// quotaEdits are the edits of a resource quota on a count.
func quotaEdits() []testCase {
	type Q = *corev1.ResourceQuota
	hard := func(name, v string) func(Q) {
		return func(rq Q) { rq.Spec.Hard[corev1.ResourceName(name)] = q(v) }
	}
	only := func(list corev1.ResourceList, scopes ...corev1.ResourceQuotaScope) func(Q) {
		return func(rq Q) { rq.Spec.Hard, rq.Spec.Scopes = list, scopes }
	}
	selector := func(reqs ...corev1.ScopedResourceSelectorRequirement) func(Q) {
		return func(rq Q) {
			rq.Spec.Hard = corev1.ResourceList{"pods": q("1")}
			rq.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: reqs}
		}
	}
	return []testCase{
		edit("fractional count/configmaps", hard("count/configmaps", "1500m")),
		edit("count of secrets", hard("count/secrets", "3")),
		edit("count of a group's resource", hard("count/deployments.apps", "5")),
		edit("count of nothing", hard("count/", "5")),
		edit("alias configmaps", hard("configmaps", "5")),
		edit("alias secrets", hard("secrets", "5")),
		edit("alias resourcequotas", hard("resourcequotas", "1")),
		edit("fractional alias", hard("secrets", "500m")),
		edit("negative alias", hard("secrets", "-2")),
		edit("unknown resource", hard("gpus", "1")),
		edit("cpu", hard("cpu", "10")),
		edit("requests.memory", hard("requests.memory", "8Gi")),
		edit("storage class resource", hard("gold.storageclass.storage.k8s.io/requests.storage", "1Gi")),
		edit("requests.example.com", hard("requests.example.com/gpu", "2")),
		edit("fractional requests.example.com", hard("requests.example.com/gpu", "500m")),
		edit("limits.example.com", hard("limits.example.com/gpu", "1")),
		edit("example.com unprefixed", hard("example.com/gpu", "1")),
		edit("no hard", func(rq Q) { rq.Spec.Hard = nil }),
		edit("status set", func(rq Q) {
			rq.Status = corev1.ResourceQuotaStatus{Hard: corev1.ResourceList{"pods": q("1")}, Used: corev1.ResourceList{"pods": q("-1")}}
		}),
		edit("unknown scope", only(corev1.ResourceList{"pods": q("1")}, "Weird")),
		edit("scope BestEffort on a count", func(rq Q) { rq.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort} }),
		edit("scope Terminating on cpu", only(corev1.ResourceList{"cpu": q("1")}, corev1.ResourceQuotaScopeTerminating)),
		edit("scope BestEffort on pods", only(corev1.ResourceList{"pods": q("1")}, corev1.ResourceQuotaScopeBestEffort)),
		edit("scope VolumeAttributesClass", only(corev1.ResourceList{"persistentvolumeclaims": q("1")}, corev1.ResourceQuotaScopeVolumeAttributesClass)),
		edit("scope CrossNamespacePodAffinity", only(corev1.ResourceList{"pods": q("1")}, corev1.ResourceQuotaScopeCrossNamespacePodAffinity)),
		edit("duplicate scopes", only(corev1.ResourceList{"pods": q("1")}, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotTerminating)),
		edit("selector Exists with values", selector(corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopeBestEffort, Operator: corev1.ScopeSelectorOpExists, Values: []string{"x"}})),
		edit("selector In without values", selector(corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn})),
		edit("selector bad operator", selector(corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: "Equals", Values: []string{"a"}})),
		edit("selector Terminating In", selector(corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopeTerminating, Operator: corev1.ScopeSelectorOpIn, Values: []string{"a"}})),
		edit("selector unknown scope", selector(corev1.ScopedResourceSelectorRequirement{ScopeName: "Weird", Operator: corev1.ScopeSelectorOpExists})),
		edit("selector priority class", selector(corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpNotIn, Values: []string{"low"}})),
		edit("empty selector", func(rq Q) { rq.Spec.ScopeSelector = &corev1.ScopeSelector{} }),
		edit("count of pods", hard("count/pods", "5")),
		edit("count upper-case", hard("count/Pods", "5")),
		edit("count with space", hard("count/a b", "5")),
		edit("zero count", hard("count/configmaps", "0")),
		edit("huge count", hard("count/configmaps", "1E")),
		edit("count 1k", hard("count/configmaps", "1k")),
		edit("alias services", hard("services", "1")),
		edit("alias persistentvolumeclaims", hard("persistentvolumeclaims", "1")),
	}
}

// quotaUpdates are the updates of a stored count quota.
func quotaUpdates() []testCase {
	type Q = *corev1.ResourceQuota
	return []testCase{
		edit("pods added", func(rq Q) { rq.Spec.Hard["pods"] = q("3") }),
		edit("count dropped", func(rq Q) { delete(rq.Spec.Hard, "count/configmaps") }),
		edit("count replaced", func(rq Q) { rq.Spec.Hard = corev1.ResourceList{"count/secrets": q("1")} }),
		edit("scope added", func(rq Q) { rq.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating} }),
		edit("status changed", func(rq Q) { rq.Status.Used = corev1.ResourceList{"count/configmaps": q("3")} }),
	}
}

// limitRangeEdits are the edits of a limit range whose first item is a
// container's, with max and min CPU.
func limitRangeEdits() []testCase {
	type L = *corev1.LimitRange
	item := func(f func(*corev1.LimitRangeItem)) func(L) {
		return func(lr L) {
			i := &lr.Spec.Limits[0]
			for _, l := range []*corev1.ResourceList{&i.Max, &i.Min, &i.Default, &i.DefaultRequest, &i.MaxLimitRequestRatio} {
				if *l == nil {
					*l = corev1.ResourceList{}
				}
			}
			f(i)
		}
	}
	full := corev1.LimitRangeItem{
		Type:                 corev1.LimitTypeContainer,
		Max:                  corev1.ResourceList{"cpu": q("2"), "memory": q("1Gi")},
		Min:                  corev1.ResourceList{"cpu": q("100m"), "memory": q("64Mi")},
		Default:              corev1.ResourceList{"cpu": q("500m")},
		DefaultRequest:       corev1.ResourceList{"memory": q("128Mi")},
		MaxLimitRequestRatio: corev1.ResourceList{"cpu": q("4")},
	}
	return []testCase{
		edit("container, pod and claim items", func(lr L) {
			lr.Spec.Limits = []corev1.LimitRangeItem{*full.DeepCopy(),
				{Type: corev1.LimitTypePod, Max: corev1.ResourceList{"cpu": q("4"), "memory": q("2Gi")}},
				{Type: corev1.LimitTypePersistentVolumeClaim, Min: corev1.ResourceList{"storage": q("1Gi")}, Max: corev1.ResourceList{"storage": q("10Gi")}},
			}
		}),
		edit("default above max", item(func(i *corev1.LimitRangeItem) { i.Default["cpu"] = q("3") })),
		edit("default below min", item(func(i *corev1.LimitRangeItem) { i.Default["cpu"] = q("50m") })),
		edit("default request above default", item(func(i *corev1.LimitRangeItem) {
			i.Default["cpu"], i.DefaultRequest["cpu"] = q("500m"), q("600m")
		})),
		edit("default request below min", item(func(i *corev1.LimitRangeItem) { i.DefaultRequest["cpu"] = q("50m") })),
		edit("default request above max", item(func(i *corev1.LimitRangeItem) { i.DefaultRequest["cpu"] = q("3") })),
		edit("only default request", item(func(i *corev1.LimitRangeItem) { i.DefaultRequest["cpu"] = q("1") })),
		edit("negative min", item(func(i *corev1.LimitRangeItem) { i.Min["memory"] = q("-1") })),
		edit("ratio below 1", item(func(i *corev1.LimitRangeItem) { i.MaxLimitRequestRatio["cpu"] = q("500m") })),
		edit("ratio above max/min", item(func(i *corev1.LimitRangeItem) { i.MaxLimitRequestRatio["cpu"] = q("30") })),
		edit("ratio within max/min", item(func(i *corev1.LimitRangeItem) { i.MaxLimitRequestRatio["cpu"] = q("10") })),
		edit("unknown resource", item(func(i *corev1.LimitRangeItem) { i.Max["gpu"] = q("1") })),
		edit("pods resource in container", item(func(i *corev1.LimitRangeItem) { i.Max["pods"] = q("1") })),
		edit("storage in container", item(func(i *corev1.LimitRangeItem) { i.Max["storage"] = q("1Gi") })),
		edit("kubernetes.io resource", item(func(i *corev1.LimitRangeItem) { i.Max["kubernetes.io/thing"] = q("1") })),
		edit("bad resource name", item(func(i *corev1.LimitRangeItem) { i.Max["Bad Name"] = q("1") })),
		edit("extended default differs from request", item(func(i *corev1.LimitRangeItem) {
			i.Default["example.com/gpu"], i.DefaultRequest["example.com/gpu"] = q("2"), q("1")
		})),
		edit("extended default equals request", item(func(i *corev1.LimitRangeItem) {
			i.Default["example.com/gpu"], i.DefaultRequest["example.com/gpu"] = q("1"), q("1")
		})),
		edit("hugepages default differs from request", item(func(i *corev1.LimitRangeItem) {
			i.Default["hugepages-2Mi"], i.DefaultRequest["hugepages-2Mi"] = q("4Mi"), q("2Mi")
		})),
		edit("pod item with default request", func(lr L) {
			lr.Spec.Limits = append(lr.Spec.Limits, corev1.LimitRangeItem{Type: corev1.LimitTypePod, DefaultRequest: corev1.ResourceList{"cpu": q("1")}})
		}),
		edit("claim item without storage", func(lr L) {
			lr.Spec.Limits = append(lr.Spec.Limits, corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim, Max: corev1.ResourceList{"cpu": q("1")}})
		}),
		edit("claim item with default", func(lr L) {
			lr.Spec.Limits = append(lr.Spec.Limits, corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim, Default: corev1.ResourceList{"storage": q("1Gi")}})
		}),
		edit("duplicate type", func(lr L) { lr.Spec.Limits = append(lr.Spec.Limits, *lr.Spec.Limits[0].DeepCopy()) }),
		edit("type Node", item(func(i *corev1.LimitRangeItem) { i.Type = "Node" })),
		edit("qualified custom type", item(func(i *corev1.LimitRangeItem) { i.Type = "example.com/Thing" })),
		edit("empty type", item(func(i *corev1.LimitRangeItem) { i.Type = "" })),
		edit("min above max memory", item(func(i *corev1.LimitRangeItem) { i.Max["memory"], i.Min["memory"] = q("1Gi"), q("2Gi") })),
		edit("pod item with ratio", func(lr L) {
			lr.Spec.Limits = append(lr.Spec.Limits, corev1.LimitRangeItem{Type: corev1.LimitTypePod, MaxLimitRequestRatio: corev1.ResourceList{"cpu": q("2")}})
		}),
		edit("claim item with min above max", func(lr L) {
			lr.Spec.Limits = append(lr.Spec.Limits, corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim,
				Min: corev1.ResourceList{"storage": q("2Gi")}, Max: corev1.ResourceList{"storage": q("1Gi")}})
		}),
		edit("ratio without min", item(func(i *corev1.LimitRangeItem) { delete(i.Min, "cpu"); i.MaxLimitRequestRatio["cpu"] = q("3") })),
		edit("zero max", item(func(i *corev1.LimitRangeItem) { i.Max["memory"] = q("0") })),
		edit("fractional memory default", item(func(i *corev1.LimitRangeItem) { i.Default["memory"] = q("100m") })),
		edit("no limits", func(lr L) { lr.Spec.Limits = nil }),
		edit("empty item", func(lr L) { lr.Spec.Limits = []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer}} }),
	}
}

// policyRules are a role's rules on resources.
func policyRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods", "pods/log"}},
		{Verbs: []string{"update"}, APIGroups: []string{"apps"}, Resources: []string{"deployments"}, ResourceNames: []string{"web"}},
	}
}

// ruleEdits are the edits of the rules of a role or cluster role: each
// starts from policyRules.
func ruleEdits(rules func(o any) *[]rbacv1.PolicyRule) []testCase {
	e := func(name string, f func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule) testCase {
		return testCase{name: name, edit: func(o runtime.Object) {
			r := rules(o)
			*r = f(policyRules())
		}}
	}
	return []testCase{
		e("resource rules", func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule { return r }),
		e("rule without verbs", func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule { r[0].Verbs = nil; return r }),
		e("rule without api groups", func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule { r[0].APIGroups = nil; return r }),
		e("rule without resources", func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule { r[0].Resources = nil; return r }),
		e("rule with resource names only", func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule {
			r[1].Resources = nil
			return r
		}),
		e("rule with non-resource urls", func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule {
			return append(r, rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/metrics/*"}})
		}),
		e("non-resource urls without verbs", func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule {
			return append(r, rbacv1.PolicyRule{NonResourceURLs: []string{"/healthz"}})
		}),
		e("rule mixing resources and urls", func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule { r[0].NonResourceURLs = []string{"/metrics"}; return r }),
		e("empty rule", func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule { return append(r, rbacv1.PolicyRule{}) }),
		e("wildcards", func([]rbacv1.PolicyRule) []rbacv1.PolicyRule {
			return []rbacv1.PolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}
		}),
		e("no rules", func([]rbacv1.PolicyRule) []rbacv1.PolicyRule { return nil }),
		e("empty verb", func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule { r[0].Verbs = []string{""}; return r }),
	}
}

// roleEdits are the edits of a role.
func roleEdits() []testCase {
	return ruleEdits(func(o any) *[]rbacv1.PolicyRule { return &o.(*rbacv1.Role).Rules })
}

// clusterRoleEdits are the edits of a cluster role.
func clusterRoleEdits() []testCase {
	type R = *rbacv1.ClusterRole
	return append(ruleEdits(func(o any) *[]rbacv1.PolicyRule { return &o.(R).Rules }),
		edit("empty aggregation rule", func(r R) { r.AggregationRule = &rbacv1.AggregationRule{} }),
		edit("aggregation rule with rules", func(r R) {
			r.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"a": "b"}}}}
		}),
		edit("aggregation selector In without values", func(r R) {
			r.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
				{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: metav1.LabelSelectorOpIn}}},
			}}
		}),
		edit("aggregation selector bad label", func(r R) {
			r.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"a b": "c"}}}}
		}),
		edit("aggregation selector empty", func(r R) {
			r.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{}}}
		}),
	)
}

// bindingEdits are the edits of the subjects and role reference of a
// role binding or cluster role binding.
func bindingEdits(parts func(o any) (*[]rbacv1.Subject, *rbacv1.RoleRef)) []testCase {
	ref := func(name string, f func(*rbacv1.RoleRef)) testCase {
		return testCase{name: name, edit: func(o runtime.Object) { _, r := parts(o); f(r) }}
	}
	subject := func(name string, s rbacv1.Subject) testCase {
		return testCase{name: name, edit: func(o runtime.Object) { subjects, _ := parts(o); *subjects = append(*subjects, s) }}
	}
	return []testCase{
		ref("role ref without api group", func(r *rbacv1.RoleRef) { r.APIGroup = "" }),
		ref("role ref other api group", func(r *rbacv1.RoleRef) { r.APIGroup = "example.com" }),
		ref("role ref kind User", func(r *rbacv1.RoleRef) { r.Kind = "User" }),
		ref("role ref kind Role", func(r *rbacv1.RoleRef) { r.Kind = "Role" }),
		ref("role ref kind ClusterRole", func(r *rbacv1.RoleRef) { r.Kind = "ClusterRole" }),
		ref("role ref without name", func(r *rbacv1.RoleRef) { r.Name = "" }),
		ref("role ref name with slash", func(r *rbacv1.RoleRef) { r.Name = "a/b" }),
		ref("role ref name with percent", func(r *rbacv1.RoleRef) { r.Name = "a%b" }),
		ref("role ref name with colon", func(r *rbacv1.RoleRef) { r.Name = "system:view" }),
		ref("role ref without kind", func(r *rbacv1.RoleRef) { r.Kind = "" }),
		subject("user without api group", rbacv1.Subject{Kind: "User", Name: "bob"}),
		subject("user with other api group", rbacv1.Subject{Kind: "User", APIGroup: "example.com", Name: "bob"}),
		subject("group without api group", rbacv1.Subject{Kind: "Group", Name: "system:authenticated"}),
		subject("group with other api group", rbacv1.Subject{Kind: "Group", APIGroup: "example.com", Name: "g"}),
		subject("group with namespace", rbacv1.Subject{Kind: "Group", APIGroup: rbacv1.GroupName, Name: "g", Namespace: "default"}),
		subject("service account with api group", rbacv1.Subject{Kind: "ServiceAccount", APIGroup: rbacv1.GroupName, Name: "sa", Namespace: "default"}),
		subject("service account, other namespace", rbacv1.Subject{Kind: "ServiceAccount", Name: "builder", Namespace: "ci"}),
		subject("service account bad name", rbacv1.Subject{Kind: "ServiceAccount", Name: "Bad_SA", Namespace: "default"}),
		subject("service account bad namespace", rbacv1.Subject{Kind: "ServiceAccount", Name: "sa", Namespace: "Bad_NS"}),
		subject("subject without name", rbacv1.Subject{Kind: "User", APIGroup: rbacv1.GroupName}),
		subject("subject without kind", rbacv1.Subject{Name: "r"}),
		subject("subject lower-case kind", rbacv1.Subject{Kind: "user", Name: "r"}),
		subject("user name with colon", rbacv1.Subject{Kind: "User", Name: "system:serviceaccount:a:b"}),
		subject("user with an e-mail name", rbacv1.Subject{Kind: "User", APIGroup: rbacv1.GroupName, Name: "alice@example.com"}),
		{name: "no subjects", edit: func(o runtime.Object) { subjects, _ := parts(o); *subjects = nil }},
	}
}

func roleBindingEdits() []testCase {
	return bindingEdits(func(o any) (*[]rbacv1.Subject, *rbacv1.RoleRef) {
		b := o.(*rbacv1.RoleBinding)
		return &b.Subjects, &b.RoleRef
	})
}

func clusterRoleBindingEdits() []testCase {
	return bindingEdits(func(o any) (*[]rbacv1.Subject, *rbacv1.RoleRef) {
		b := o.(*rbacv1.ClusterRoleBinding)
		return &b.Subjects, &b.RoleRef
	})
}

// csrEdits are the edits of a certificate signing request for a custom
// signer.
func csrEdits() []testCase {
	type C = *certificatesv1.CertificateSigningRequest
	signer := func(name string) func(C) { return func(c C) { c.Spec.SignerName = name } }
	usages := func(u ...certificatesv1.KeyUsage) func(C) { return func(c C) { c.Spec.Usages = u } }
	return []testCase{
		edit("no request", func(c C) { c.Spec.Request = nil }),
		edit("certificate instead of request", func(c C) {
			c.Spec.Request = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1}})
		}),
		edit("unqualified signer", signer("signer")),
		edit("signer with two slashes", signer("example.com/a/b")),
		edit("signer with space", signer("example.com/a b")),
		edit("signer with upper-case domain", signer("Example.com/a")),
		edit("long signer", signer("example.com/"+strings.Repeat("s", 600))),
		edit("kube-apiserver-client signer", func(c C) {
			c.Spec.SignerName = certificatesv1.KubeAPIServerClientSignerName
			c.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
		}),
		edit("kube-apiserver-client-kubelet signer", signer(certificatesv1.KubeAPIServerClientKubeletSignerName)),
		edit("legacy-unknown signer", signer("kubernetes.io/legacy-unknown")),
		edit("other kubernetes.io signer", signer("kubernetes.io/custom")),
		edit("expiration 599", func(c C) { c.Spec.ExpirationSeconds = ptr.To[int32](599) }),
		edit("expiration 600", func(c C) { c.Spec.ExpirationSeconds = ptr.To[int32](600) }),
		edit("no usages", usages()),
		edit("duplicate usage", usages(certificatesv1.UsageClientAuth, certificatesv1.UsageClientAuth)),
		edit("server and client auth", usages(certificatesv1.UsageServerAuth, certificatesv1.UsageClientAuth, certificatesv1.UsageKeyEncipherment)),
		edit("username set", func(c C) { c.Spec.Username = "mallory" }),
		edit("groups set", func(c C) { c.Spec.Groups = []string{"system:masters"} }),
		edit("extra set", func(c C) { c.Spec.Extra = map[string]certificatesv1.ExtraValue{"k": {"v"}} }),
		edit("approved", func(c C) {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Self"}}
		}),
		edit("certificate issued", func(c C) { c.Status.Certificate = []byte("x") }),
		edit("expiration negative", func(c C) { c.Spec.ExpirationSeconds = ptr.To[int32](-1) }),
		edit("unknown usage", usages("flying")),
		edit("empty usage", usages("")),
		edit("uid set", func(c C) { c.Spec.UID = "other" }),
		edit("request with trailing data", func(c C) { c.Spec.Request = append(append([]byte{}, c.Spec.Request...), "junk"...) }),
		edit("two requests", func(c C) { c.Spec.Request = append(append([]byte{}, c.Spec.Request...), c.Spec.Request...) }),
		edit("denied and approved", func(c C) {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{
				{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}, {Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue}}
		}),
	}
}

// csrUpdates are the updates of a stored certificate signing request.
func csrUpdates() []testCase {
	type C = *certificatesv1.CertificateSigningRequest
	return []testCase{
		edit("signer changed", func(c C) { c.Spec.SignerName = "example.com/other" }),
		edit("usages changed", func(c C) { c.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth} }),
		edit("request changed", func(c C) { c.Spec.Request = []byte("x") }),
		edit("username changed", func(c C) { c.Spec.Username = "mallory" }),
	}
}

// leaseEdits are the edits of a held lease.
func leaseEdits() []testCase {
	type L = *coordinationv1.Lease
	return []testCase{
		edit("acquired and renewed", func(l L) {
			l.Spec.AcquireTime, l.Spec.RenewTime, l.Spec.LeaseTransitions = &microStamp, &microStamp, ptr.To[int32](2)
		}),
		edit("negative duration", func(l L) { l.Spec.LeaseDurationSeconds = ptr.To[int32](-5) }),
		edit("no holder", func(l L) { l.Spec.HolderIdentity = nil }),
		edit("empty holder", func(l L) { l.Spec.HolderIdentity = ptr.To("") }),
		edit("negative transitions with holder", func(l L) { l.Spec.LeaseTransitions = ptr.To[int32](-1) }),
		edit("strategy OldestEmulationVersion", func(l L) { l.Spec.Strategy = ptr.To(coordinationv1.OldestEmulationVersion) }),
		edit("strategy unknown", func(l L) { l.Spec.Strategy = ptr.To(coordinationv1.CoordinatedLeaseStrategy("Newest")) }),
		edit("strategy custom", func(l L) { l.Spec.Strategy = ptr.To(coordinationv1.CoordinatedLeaseStrategy("example.com/mine")) }),
		edit("strategy with two slashes", func(l L) { l.Spec.Strategy = ptr.To(coordinationv1.CoordinatedLeaseStrategy("example.com/a/b")) }),
		edit("preferred holder without strategy", func(l L) { l.Spec.PreferredHolder = ptr.To("other") }),
		edit("strategy empty", func(l L) { l.Spec.Strategy = ptr.To(coordinationv1.CoordinatedLeaseStrategy("")) }),
		edit("empty preferred holder", func(l L) { l.Spec.PreferredHolder = ptr.To("") }),
		edit("no duration", func(l L) { l.Spec.LeaseDurationSeconds = nil }),
		edit("preferred holder with strategy", func(l L) {
			l.Spec.PreferredHolder, l.Spec.Strategy = ptr.To("other"), ptr.To(coordinationv1.OldestEmulationVersion)
		}),
	}
}

// leaseUpdates are the updates of a stored lease.
func leaseUpdates() []testCase {
	type L = *coordinationv1.Lease
	return []testCase{
		edit("renewed", func(l L) { l.Spec.RenewTime = &metav1.MicroTime{Time: microStamp.Add(10 * time.Second)} }),
		edit("taken over", func(l L) {
			l.Spec.HolderIdentity, l.Spec.LeaseTransitions = ptr.To("other"), ptr.To[int32](1)
		}),
		edit("released", func(l L) { l.Spec.HolderIdentity = nil }),
		edit("duration zeroed", func(l L) { l.Spec.LeaseDurationSeconds = ptr.To[int32](0) }),
	}
}

// flowSchemaEdits are the edits of a flow schema: each rule edit starts
// from h2-fid's rule of users, groups and service accounts on resources
// and URLs.
func flowSchemaEdits() []testCase {
	type F = *flowcontrolv1.FlowSchema
	rule := func(f func(r *flowcontrolv1.PolicyRulesWithSubjects)) func(F) {
		return func(fs F) {
			r := flowcontrolv1.PolicyRulesWithSubjects{
				Subjects: []flowcontrolv1.Subject{
					{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "alice"}},
					{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: "system:authenticated"}},
					{Kind: flowcontrolv1.SubjectKindServiceAccount, ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: "batch", Name: "*"}},
				},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{
					{Verbs: []string{"get", "list"}, APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Namespaces: []string{"*"}},
					{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}, ClusterScope: true},
				},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/metrics/*"}}},
			}
			f(&r)
			fs.Spec.Rules = []flowcontrolv1.PolicyRulesWithSubjects{r}
		}
	}
	return []testCase{
		edit("full rule", rule(func(*flowcontrolv1.PolicyRulesWithSubjects) {})),
		edit("precedence 1", func(fs F) { fs.Spec.MatchingPrecedence = 1 }),
		edit("precedence negative", func(fs F) { fs.Spec.MatchingPrecedence = -1 }),
		edit("distinguisher ByUser", func(fs F) {
			fs.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType}
		}),
		edit("distinguisher ByGroup", func(fs F) { fs.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: "ByGroup"} }),
		edit("no priority level", func(fs F) { fs.Spec.PriorityLevelConfiguration.Name = "" }),
		edit("bad priority level", func(fs F) { fs.Spec.PriorityLevelConfiguration.Name = "Bad_Name" }),
		edit("rule without subjects", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.Subjects = nil })),
		edit("rule without rules", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.ResourceRules, r.NonResourceRules = nil, nil })),
		edit("subject kind Robot", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.Subjects[0].Kind = "Robot" })),
		edit("user subject without user", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.Subjects[0].User = nil })),
		edit("user subject empty name", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.Subjects[0].User.Name = "" })),
		edit("user subject with group", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) {
			r.Subjects[0].Group = &flowcontrolv1.GroupSubject{Name: "g"}
		})),
		edit("group subject empty name", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.Subjects[1].Group.Name = "" })),
		edit("sa subject bad namespace", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.Subjects[2].ServiceAccount.Namespace = "Bad_NS" })),
		edit("sa subject no namespace", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.Subjects[2].ServiceAccount.Namespace = "" })),
		edit("sa subject bad name", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.Subjects[2].ServiceAccount.Name = "Bad_Name" })),
		edit("sa subject no name", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.Subjects[2].ServiceAccount.Name = "" })),
		edit("verbs star and get", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.ResourceRules[0].Verbs = []string{"*", "get"} })),
		edit("unknown verb", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.ResourceRules[0].Verbs = []string{"fly"} })),
		edit("no verbs", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.ResourceRules[0].Verbs = nil })),
		edit("no api groups", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.ResourceRules[0].APIGroups = nil })),
		edit("api groups star and one", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.ResourceRules[0].APIGroups = []string{"*", "apps"} })),
		edit("no resources", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.ResourceRules[0].Resources = nil })),
		edit("no namespaces, not cluster scope", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.ResourceRules[0].Namespaces = nil })),
		edit("bad namespace", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.ResourceRules[0].Namespaces = []string{"Bad_NS"} })),
		edit("namespaces star and one", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.ResourceRules[0].Namespaces = []string{"*", "a"} })),
		edit("resources star and one", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.ResourceRules[0].Resources = []string{"*", "pods"} })),
		edit("non-resource url without slash", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) {
			r.NonResourceRules[0].NonResourceURLs = []string{"healthz"}
		})),
		edit("non-resource url inner star", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) {
			r.NonResourceRules[0].NonResourceURLs = []string{"/a/*/b"}
		})),
		edit("non-resource url star and others", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) {
			r.NonResourceRules[0].NonResourceURLs = []string{"*", "/healthz"}
		})),
		edit("non-resource verb unknown", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.NonResourceRules[0].Verbs = []string{"fly"} })),
		edit("non-resource rule without urls", rule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.NonResourceRules[0].NonResourceURLs = nil })),
		edit("status conditions", func(fs F) {
			fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: "Dangling", Status: "True"}}
		}),
	}
}

// priorityLevelEdits are the edits of a limited priority level.
func priorityLevelEdits() []testCase {
	type P = *flowcontrolv1.PriorityLevelConfiguration
	lim := func(f func(l *flowcontrolv1.LimitedPriorityLevelConfiguration)) func(P) {
		return func(pl P) {
			if pl.Spec.Limited == nil {
				pl.Spec.Limited = &flowcontrolv1.LimitedPriorityLevelConfiguration{}
			}
			f(pl.Spec.Limited)
		}
	}
	queuing := func(queues, handSize, length int32) func(P) {
		return lim(func(l *flowcontrolv1.LimitedPriorityLevelConfiguration) {
			l.LimitResponse = flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
				Queuing: &flowcontrolv1.QueuingConfiguration{Queues: queues, HandSize: handSize, QueueLengthLimit: length}}
		})
	}
	return []testCase{
		edit("queuing", queuing(128, 6, 50)),
		edit("negative shares", lim(func(l *flowcontrolv1.LimitedPriorityLevelConfiguration) {
			l.NominalConcurrencyShares = ptr.To[int32](-1)
		})),
		edit("zero shares", lim(func(l *flowcontrolv1.LimitedPriorityLevelConfiguration) {
			l.NominalConcurrencyShares = ptr.To[int32](0)
		})),
		edit("lendable 101", lim(func(l *flowcontrolv1.LimitedPriorityLevelConfiguration) { l.LendablePercent = ptr.To[int32](101) })),
		edit("lendable negative", lim(func(l *flowcontrolv1.LimitedPriorityLevelConfiguration) { l.LendablePercent = ptr.To[int32](-1) })),
		edit("borrowing negative", lim(func(l *flowcontrolv1.LimitedPriorityLevelConfiguration) { l.BorrowingLimitPercent = ptr.To[int32](-1) })),
		edit("borrowing 500", lim(func(l *flowcontrolv1.LimitedPriorityLevelConfiguration) { l.BorrowingLimitPercent = ptr.To[int32](500) })),
		edit("hand size above queues", queuing(4, 5, 10)),
		edit("negative hand size", queuing(4, -1, 10)),
		edit("negative queues", queuing(-1, 1, 10)),
		edit("negative queue length", queuing(4, 1, -1)),
		edit("too much entropy", queuing(10000, 10, 10)),
		edit("one queue", queuing(1, 1, 1)),
		edit("reject with queuing", lim(func(l *flowcontrolv1.LimitedPriorityLevelConfiguration) {
			l.LimitResponse.Type = flowcontrolv1.LimitResponseTypeReject
			l.LimitResponse.Queuing = &flowcontrolv1.QueuingConfiguration{Queues: 1, HandSize: 1, QueueLengthLimit: 1}
		})),
		edit("limit response type Drop", lim(func(l *flowcontrolv1.LimitedPriorityLevelConfiguration) { l.LimitResponse.Type = "Drop" })),
		edit("limit response type empty", lim(func(l *flowcontrolv1.LimitedPriorityLevelConfiguration) { l.LimitResponse.Type = "" })),
		edit("limited without limited", func(pl P) { pl.Spec.Limited = nil }),
		edit("limited with exempt", func(pl P) { pl.Spec.Exempt = &flowcontrolv1.ExemptPriorityLevelConfiguration{} }),
		edit("type Unlimited", func(pl P) { pl.Spec.Type = "Unlimited" }),
		edit("no type", func(pl P) { pl.Spec.Type = "" }),
		edit("status conditions", func(pl P) {
			pl.Status.Conditions = []flowcontrolv1.PriorityLevelConfigurationCondition{{Type: "X", Status: "True"}}
		}),
	}
}

// configMapEdits are the edits of a config map with data and binary data.
func configMapEdits() []testCase {
	type C = *corev1.ConfigMap
	return []testCase{
		edit("key ..", func(c C) { c.Data = map[string]string{"..": ""} }),
		edit("empty key", func(c C) { c.Data = map[string]string{"": "x"} }),
		edit("key 253 characters", func(c C) { c.Data = map[string]string{strings.Repeat("k", 253): ""} }),
		edit("key 254 characters", func(c C) { c.Data = map[string]string{strings.Repeat("k", 254): ""} }),
		edit("binary key with space", func(c C) { c.BinaryData = map[string][]byte{"a b": nil} }),
		edit("exactly 1MiB", func(c C) {
			c.Data, c.BinaryData = map[string]string{"a": strings.Repeat("x", corev1.MaxSecretSize-1)}, nil
		}),
		edit("over 1MiB together", func(c C) {
			c.Data = map[string]string{"a": strings.Repeat("x", corev1.MaxSecretSize/2)}
			c.BinaryData = map[string][]byte{"b": make([]byte, corev1.MaxSecretSize/2+1)}
		}),
		edit("immutable false", func(c C) { c.Immutable = ptr.To(false) }),
	}
}

// configMapUpdates are the updates of a stored config map.
func configMapUpdates() []testCase {
	type C = *corev1.ConfigMap
	return []testCase{
		edit("binaryData changed", func(c C) { c.BinaryData = map[string][]byte{"x": {1}} }),
		edit("immutable cleared", func(c C) { c.Immutable = ptr.To(false) }),
		edit("immutable and data changed", func(c C) { c.Immutable, c.Data = ptr.To(true), map[string]string{"z": "2"} }),
	}
}

// secretEdits are the edits of an opaque secret with data and string data.
func secretEdits() []testCase {
	type S = *corev1.Secret
	typed := func(t corev1.SecretType, data map[string][]byte) func(S) {
		return func(s S) { s.Type, s.Data, s.StringData = t, data, nil }
	}
	return []testCase{
		edit("stringData overrides data", func(s S) { s.StringData = map[string]string{"a": "other"} }),
		edit("empty stringData", func(s S) { s.StringData = map[string]string{} }),
		edit("bad stringData key", func(s S) { s.StringData = map[string]string{"a b": "x"} }),
		edit("over 1MiB with stringData", func(s S) { s.StringData = map[string]string{"big": strings.Repeat("x", corev1.MaxSecretSize)} }),
		edit("unqualified custom type", typed("custom", nil)),
		edit("type too long", typed(corev1.SecretType(strings.Repeat("t", 254)), nil)),
		edit("tls without cert", typed(corev1.SecretTypeTLS, map[string][]byte{corev1.TLSPrivateKeyKey: []byte("k")})),
		edit("dockercfg invalid json", typed(corev1.SecretTypeDockercfg, map[string][]byte{corev1.DockerConfigKey: []byte("{")})),
		edit("dockercfg missing", typed(corev1.SecretTypeDockercfg, nil)),
		edit("dockercfg", typed(corev1.SecretTypeDockercfg, map[string][]byte{corev1.DockerConfigKey: []byte("{}")})),
		edit("dockerconfigjson array", typed(corev1.SecretTypeDockerConfigJson, map[string][]byte{corev1.DockerConfigJsonKey: []byte("[]")})),
		edit("basic auth username only", typed(corev1.SecretTypeBasicAuth, map[string][]byte{corev1.BasicAuthUsernameKey: []byte("u")})),
		edit("basic auth empty password", typed(corev1.SecretTypeBasicAuth, map[string][]byte{corev1.BasicAuthPasswordKey: nil})),
		edit("ssh auth empty key", typed(corev1.SecretTypeSSHAuth, map[string][]byte{corev1.SSHAuthPrivateKey: nil})),
		edit("ssh auth with key", typed(corev1.SecretTypeSSHAuth, map[string][]byte{corev1.SSHAuthPrivateKey: []byte("k")})),
		edit("bootstrap token", typed(corev1.SecretTypeBootstrapToken, map[string][]byte{"token-id": []byte("abcdef")})),
		edit("tls with stringData", func(s S) {
			s.Type, s.Data = corev1.SecretTypeTLS, nil
			s.StringData = map[string]string{corev1.TLSCertKey: "c", corev1.TLSPrivateKeyKey: "k"}
		}),
	}
}

// secretUpdates are the updates of a stored secret.
func secretUpdates() []testCase {
	type S = *corev1.Secret
	return []testCase{
		edit("type cleared", func(s S) { s.Type = "" }),
		edit("data changed by stringData", func(s S) { s.StringData = map[string]string{"k": "new"} }),
		edit("immutable and data changed", func(s S) { s.Immutable, s.Data = ptr.To(true), map[string][]byte{"z": nil} }),
	}
}

// namespaceEdits are the edits of a namespace.
func namespaceEdits() []testCase {
	type N = *corev1.Namespace
	finalizers := func(f ...corev1.FinalizerName) func(N) { return func(n N) { n.Spec.Finalizers = f } }
	return []testCase{
		edit("spec finalizer kubernetes", finalizers("kubernetes")),
		edit("spec finalizer unqualified", finalizers("cleanup")),
		edit("spec finalizer two slashes", finalizers("example.com/a/b")),
		edit("spec finalizer bad domain", finalizers("Example_com/a")),
		edit("spec finalizer orphan", finalizers("orphan")),
		edit("spec finalizer duplicate", finalizers("example.com/a", "example.com/a")),
		edit("spec finalizer empty", finalizers("")),
		edit("status bogus phase", func(n N) { n.Status.Phase = "Bogus" }),
		edit("name label differs", func(n N) { n.Labels = map[string]string{corev1.LabelMetadataName: "other"} }),
		edit("status conditions", func(n N) {
			n.Status.Conditions = []corev1.NamespaceCondition{{Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionTrue}}
		}),
	}
}

// namespaceUpdates are the updates of a stored namespace.
func namespaceUpdates() []testCase {
	type N = *corev1.Namespace
	return []testCase{
		edit("name label removed", func(n N) { delete(n.Labels, corev1.LabelMetadataName) }),
		edit("name label changed", func(n N) { n.Labels = map[string]string{corev1.LabelMetadataName: "other"} }),
		edit("spec finalizer added", func(n N) { n.Spec.Finalizers = append(n.Spec.Finalizers, "example.com/x") }),
		edit("status phase set", func(n N) { n.Status.Phase = corev1.NamespaceTerminating }),
	}
}

// serviceAccountEdits are the edits of a service account.
func serviceAccountEdits() []testCase {
	type A = *corev1.ServiceAccount
	return []testCase{
		edit("secret without name", func(a A) { a.Secrets = append(a.Secrets, corev1.ObjectReference{Kind: "Secret"}) }),
		edit("secret in another namespace", func(a A) { a.Secrets = append(a.Secrets, corev1.ObjectReference{Name: "x", Namespace: "y"}) }),
		edit("image pull secret without name", func(a A) { a.ImagePullSecrets = append(a.ImagePullSecrets, corev1.LocalObjectReference{}) }),
		edit("mountable secrets annotation", func(a A) { a.Annotations = map[string]string{"kubernetes.io/enforce-mountable-secrets": "true"} }),
		edit("automount off", func(a A) { a.AutomountServiceAccountToken = ptr.To(false) }),
	}
}

// webhookServiceEdits are the edits of the client configuration of a
// validating webhook to call a Service, which Tessera refuses on purpose
// (see deliberateCauses).
func webhookServiceEdits() []testCase {
	type V = *admissionregistrationv1.ValidatingWebhookConfiguration
	service := func(s admissionregistrationv1.ServiceReference, keepURL bool) func(V) {
		return func(c V) {
			if !keepURL {
				c.Webhooks[0].ClientConfig.URL = nil
			}
			c.Webhooks[0].ClientConfig.Service = &s
		}
	}
	return []testCase{
		edit("service", service(admissionregistrationv1.ServiceReference{Namespace: "hooks", Name: "audit", Port: ptr.To[int32](8443), Path: ptr.To("/validate")}, false)),
		edit("url and service", service(admissionregistrationv1.ServiceReference{Namespace: "default", Name: "hooks"}, true)),
		edit("service without namespace", service(admissionregistrationv1.ServiceReference{Name: "hooks"}, false)),
		edit("service without name", service(admissionregistrationv1.ServiceReference{Namespace: "default"}, false)),
		edit("service path without slash", service(admissionregistrationv1.ServiceReference{Namespace: "default", Name: "hooks", Path: ptr.To("no-slash")}, false)),
		edit("service port 0", service(admissionregistrationv1.ServiceReference{Namespace: "default", Name: "hooks", Port: ptr.To[int32](0)}, false)),
	}
}
