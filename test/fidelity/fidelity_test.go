package fidelity

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	_ "k8s.io/kubernetes/pkg/apis/certificates/install"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/events/install"
	_ "k8s.io/kubernetes/pkg/apis/flowcontrol/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/registry/builtin"
	"github.com/tessera-dev/tessera/shard/registry/core/namespaces"
	"github.com/tessera-dev/tessera/shard/registry/store"
)

// kind is one built-in kind under test: upstream's strategy and internal
// type, and a corpus of objects.
type kind struct {
	gvr      schema.GroupVersionResource
	upstream rest.RESTCreateUpdateStrategy
	// cases are new objects (v1), created as they are.
	cases []testCase
	// updates change a copy of a valid, created object.
	updates []testCase
	// edits change valid objects: each is created (valid edited) and
	// applied as an update of the created valid object.
	edits []testCase
	// valid returns a valid object.
	valid func() runtime.Object
}

// name names k in test names and in the keys of deliberate and
// fieldDifferences: its resource, qualified with its group for
// events.k8s.io, whose resource is named as core's.
func (k kind) name() string {
	if k.gvr.Group == "events.k8s.io" {
		return k.gvr.GroupResource().String()
	}
	return k.gvr.Resource
}

type testCase struct {
	name string
	obj  runtime.Object
	// edit changes obj (for updates, the copy of the created object).
	edit func(runtime.Object)
	// from, for updates, is the stored object the update starts from
	// instead of the created valid object: one that an older server (or
	// Kubernetes) stored, which Tessera may no longer create, so that
	// updates keeping what the stored object already has (ratcheting)
	// are compared. It is used as stored, without being created.
	stored runtime.Object
}

// deliberate lists the differences that are on purpose, by kind and case,
// with the reason.
var deliberate = map[string]string{}

// deliberateCauses lists, by kind, the errors Tessera adds on purpose to
// what Kubernetes would accept or refuse, with the reason. They are removed
// from Tessera's refusal before it is compared: a refusal left without
// errors is a deliberate difference, and what is left must match
// Kubernetes.
var deliberateCauses = map[string]deliberateCause{
	// An API that is accepted must take effect: logical clusters run no
	// pods, so a quota on pods or compute resources, or with scopes, which
	// select pods, would be stored and never enforced. Tessera refuses it
	// with a Forbidden error; count quotas work. Kubernetes lets the scope
	// selector change, but an unscoped quota given one would count nothing.
	"resourcequotas": {
		match: func(c metav1.StatusCause) bool {
			return c.Type == metav1.CauseType(field.ErrorTypeForbidden) && strings.Contains(c.Message, "logical clusters") &&
				(strings.HasPrefix(c.Field, "spec.hard[") || c.Field == "spec.scopes" || c.Field == "spec.scopeSelector")
		},
		why: "quotas count objects only: logical clusters have no pods for compute quotas or scopes to select",
	},
	// A logical cluster has no Services, nor endpoints behind them, for
	// the API server to call a webhook through: Tessera refuses
	// clientConfig.service, and webhooks give a URL. The errors within
	// the refused service are not compared (see upstreamOnlyCauses).
	"validatingwebhookconfigurations": {match: webhookServiceCause, why: webhookServiceWhy},
	"mutatingwebhookconfigurations":   {match: webhookServiceCause, why: webhookServiceWhy},
}

const webhookServiceWhy = "logical clusters have no Services to call webhooks through"

// webhookServiceCause matches the errors on a webhook's clientConfig.service
// and within it.
func webhookServiceCause(c metav1.StatusCause) bool {
	_, within, _ := strings.Cut(c.Field, ".clientConfig.service")
	return strings.Contains(c.Field, ".clientConfig.service") && (within == "" || strings.HasPrefix(within, "."))
}

type deliberateCause struct {
	match func(metav1.StatusCause) bool
	why   string
}

// fieldDifferences lists the cases where both refuse an object but report
// different fields, or different errors on a field, by kind and case, with
// the reason. Any other difference in the refusals fails.
var fieldDifferences = map[string]string{}

// upstreamOnlyCauses lists, by kind, errors upstream reports in a refusal
// that Tessera refuses without them, with the reason. They are removed
// from upstream's refusal when Tessera refuses too, in any case (random
// chains included).
var upstreamOnlyCauses = map[string]upstreamOnlyCause{
	// Kubernetes reports a service without a name on service.namespace
	// and one without a namespace on service.name (it passes them to
	// ValidateWebhookService swapped). Tessera refuses the service
	// whole, on purpose (see deliberateCauses).
	"validatingwebhookconfigurations": {match: refusedWebhookService, why: webhookServiceWhy},
	"mutatingwebhookconfigurations":   {match: refusedWebhookService, why: webhookServiceWhy},
}

// refusedWebhookService matches the errors upstream reports within a
// webhook's clientConfig.service that Tessera refuses.
func refusedWebhookService(c metav1.StatusCause, ts outcome) bool {
	return webhookServiceCause(c) && slices.ContainsFunc(ts.causes, func(t metav1.StatusCause) bool {
		return t.Type == metav1.CauseType(field.ErrorTypeForbidden) && strings.HasSuffix(t.Field, ".clientConfig.service")
	})
}

type upstreamOnlyCause struct {
	match func(c metav1.StatusCause, ts outcome) bool
	why   string
}

func TestMain(m *testing.M) {
	// Upstream's declarative validation logs every duplicate error.
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
	os.Exit(m.Run())
}

// outcome is what a strategy made of an object.
type outcome struct {
	err error
	// reason is the reason of a refusal: Invalid, Forbidden, BadRequest...
	reason metav1.StatusReason
	// causes are the errors of a refusal, by field.
	causes []metav1.StatusCause
	obj    runtime.Object
}

func (o outcome) accepted() bool { return o.err == nil }

// fields returns the refused fields, each with the type of its error
// ("spec.x: Required"), sorted, without duplicates: two refusals match
// when they refuse the same fields for the same reasons.
func (o outcome) fields() []string {
	var out []string
	for _, c := range o.causes {
		out = append(out, c.Field+": "+strings.TrimPrefix(string(c.Type), "FieldValue"))
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// refused is the outcome of a refusal.
func refused(err error) outcome {
	o := outcome{err: err, reason: metav1.StatusReasonUnknown}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		st := status.Status()
		o.reason = st.Reason
		if st.Details != nil {
			o.causes = st.Details.Causes
		}
	}
	return o
}

// excuse removes from Tessera's refusal ts the errors deliberateCauses
// lists for k, and returns why, or "" when there are none.
func excuse(k kind, ts outcome) (outcome, string) {
	d, ok := deliberateCauses[k.name()]
	if !ok || ts.accepted() {
		return ts, ""
	}
	var kept []metav1.StatusCause
	for _, c := range ts.causes {
		if !d.match(c) {
			kept = append(kept, c)
		}
	}
	if len(kept) == len(ts.causes) {
		return ts, ""
	}
	ts.causes = kept
	return ts, d.why
}

// excuseUpstream removes from upstream's refusal up the errors
// upstreamOnlyCauses lists for k, when Tessera's ts is a refusal too, and
// reports whether it removed them all.
func excuseUpstream(k kind, up, ts outcome) (outcome, bool) {
	d, ok := upstreamOnlyCauses[k.name()]
	if !ok || up.accepted() || ts.accepted() {
		return up, false
	}
	var kept []metav1.StatusCause
	for _, c := range up.causes {
		if !d.match(c, ts) {
			kept = append(kept, c)
		}
	}
	all := len(up.causes) > 0 && len(kept) == 0
	up.causes = kept
	return up, all
}

// requester is the shard admin every request comes from, with a UID, groups
// and extra values, which certificate signing requests record (as h2-fid's
// test had it).
var requester = &user.DefaultInfo{
	Name: "admin", UID: "a1ce",
	Groups: []string{user.SystemPrivilegedGroup, "developers"},
	Extra:  map[string][]string{"scopes": {"read", "write"}},
}

// requestContext is the context of a create or update of gvr in ns, by
// requester, in the logical cluster system:admin (where Tessera serves
// every built-in kind, flowcontrol included).
func requestContext(gvr schema.GroupVersionResource, ns, verb string) context.Context {
	ctx := genericapirequest.WithRequestInfo(context.Background(), &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: verb, APIGroup: gvr.Group, APIVersion: gvr.Version, Resource: gvr.Resource, Namespace: ns,
	})
	ctx = genericapirequest.WithNamespace(ctx, ns)
	ctx = logicalcluster.WithCluster(ctx, logicalcluster.Cluster{Name: logicalcluster.SystemAdmin})
	return genericapirequest.WithUser(ctx, requester)
}

// noStorage builds Tessera's registries without etcd: only their
// strategies are used.
type noStorage struct{ scheme *runtime.Scheme }

func (g noStorage) GetRESTOptions(resource schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	cfg := storagebackend.NewDefaultConfig("/registry", nil)
	return generic.RESTOptions{
		StorageConfig: cfg.ForResource(resource),
		Decorator: func(*storagebackend.ConfigForResource, string, func(runtime.Object) (string, error), func() runtime.Object, func() runtime.Object,
			storage.AttrFunc, storage.IndexerFuncs, *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
			return nil, func() {}, nil
		},
		ResourcePrefix: resource.Group + "/" + resource.Resource,
	}, nil
}

// strategies are Tessera's create and update strategies of a resource.
type strategies struct {
	create rest.RESTCreateStrategy
	update rest.RESTUpdateStrategy
}

// tessera returns Tessera's scheme and the create and update strategies of
// every built-in resource.
func tessera(t *testing.T) (*runtime.Scheme, map[schema.GroupVersionResource]strategies) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := builtin.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	stores := map[schema.GroupVersionResource]strategies{}
	for _, r := range builtin.Resources() {
		storages, err := r.Storage(scheme, noStorage{scheme})
		if err != nil {
			t.Fatalf("%s: %v", r.Resource, err)
		}
		st, ok := storages[r.Resource].(*store.REST)
		if !ok {
			continue
		}
		stores[r.GroupVersion.WithResource(r.Resource)] = strategies{st.Store.CreateStrategy, st.Store.UpdateStrategy}
	}
	// Namespaces have a storage of their own (deletion goes through the
	// namespace controller); their strategy is the package's.
	ns := namespaces.NewStrategy(scheme)
	stores[corev1.SchemeGroupVersion.WithResource("namespaces")] = strategies{ns, ns}
	return scheme, stores
}

// viaUpstream defaults obj (a v1 object) with upstream's scheme, converts
// it to the internal version, runs upstream's strategy (create, or update
// over old), and converts the result back to v1.
func viaUpstream(k kind, obj, old runtime.Object) outcome {
	obj = obj.DeepCopyObject()
	legacyscheme.Scheme.Default(obj)
	internal, err := legacyscheme.Scheme.ConvertToVersion(obj, schema.GroupVersion{Group: k.gvr.Group, Version: runtime.APIVersionInternal})
	if err != nil {
		return outcome{err: fmt.Errorf("converting to internal: %w", err)}
	}
	ns := namespaceOf(obj)
	if old == nil {
		fillSystemFields(internal)
		err = rest.BeforeCreate(k.upstream, requestContext(k.gvr, ns, "create"), internal)
	} else {
		old = old.DeepCopyObject()
		legacyscheme.Scheme.Default(old)
		oldInternal, cerr := legacyscheme.Scheme.ConvertToVersion(old, schema.GroupVersion{Group: k.gvr.Group, Version: runtime.APIVersionInternal})
		if cerr != nil {
			return outcome{err: cerr}
		}
		err = rest.BeforeUpdate(k.upstream, requestContext(k.gvr, ns, "update"), internal, oldInternal)
	}
	if err != nil {
		return refused(err)
	}
	back, cerr := legacyscheme.Scheme.ConvertToVersion(internal, k.gvr.GroupVersion())
	if cerr != nil {
		return outcome{err: cerr}
	}
	return outcome{obj: back}
}

// viaTessera does the same with Tessera's scheme and strategies. The
// internal version of Tessera's groups is its v1 types, but for
// events.k8s.io, whose internal type is the core v1 Event.
func viaTessera(scheme *runtime.Scheme, st strategies, k kind, obj, old runtime.Object) outcome {
	obj = obj.DeepCopyObject()
	scheme.Default(obj)
	ns := namespaceOf(obj)
	internalVersion := schema.GroupVersion{Group: k.gvr.Group, Version: runtime.APIVersionInternal}
	internal, err := scheme.ConvertToVersion(obj, internalVersion)
	if err != nil {
		return outcome{err: fmt.Errorf("converting to internal: %w", err)}
	}
	if old == nil {
		fillSystemFields(internal)
		err = rest.BeforeCreate(st.create, requestContext(k.gvr, ns, "create"), internal)
	} else {
		old = old.DeepCopyObject()
		scheme.Default(old)
		oldInternal, cerr := scheme.ConvertToVersion(old, internalVersion)
		if cerr != nil {
			return outcome{err: cerr}
		}
		err = rest.BeforeUpdate(st.update, requestContext(k.gvr, ns, "update"), internal, oldInternal)
	}
	if err != nil {
		return refused(err)
	}
	back, err := scheme.ConvertToVersion(internal, k.gvr.GroupVersion())
	if err != nil {
		return outcome{err: err}
	}
	return outcome{obj: back}
}

// fillSystemFields does what the generic store does before BeforeCreate.
func fillSystemFields(obj runtime.Object) {
	if m, err := meta.Accessor(obj); err == nil {
		rest.FillObjectMetaSystemFields(m)
	}
}

func namespaceOf(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetNamespace()
}

// normalize clears what BeforeCreate fills with fresh values: the UID, the
// creation time, and a random name (a LimitRange without a name gets a
// UUID).
func normalize(obj runtime.Object, requested runtime.Object) runtime.Object {
	obj = obj.DeepCopyObject()
	m, _ := meta.Accessor(obj)
	m.SetUID("")
	m.SetCreationTimestamp(metav1.Time{})
	if r, err := meta.Accessor(requested); err == nil && r.GetName() == "" && r.GetGenerateName() == "" {
		m.SetName("")
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return obj
}

// guarded returns the outcome of run, or a refusal for "panic" when it
// panics, so that one case that crashes a side fails alone.
func guarded(run func() outcome) (o outcome) {
	defer func() {
		if r := recover(); r != nil {
			o = outcome{err: fmt.Errorf("panic: %v", r), reason: "panic"}
		}
	}()
	return run()
}

// compare runs one case through both and reports differences. It returns
// the object Tessera would store when both accept it alike, else nil.
func compare(t *testing.T, scheme *runtime.Scheme, st strategies, k kind, name string, obj, old runtime.Object) runtime.Object {
	t.Helper()
	up := guarded(func() outcome { return viaUpstream(k, obj, old) })
	ts := guarded(func() outcome { return viaTessera(scheme, st, k, obj, old) })
	key := k.name() + "/" + name
	if reason, ok := deliberate[key]; ok {
		t.Logf("%s: deliberate difference (%s): upstream %v, Tessera %v", key, reason, up.err, ts.err)
		return nil
	}
	up, upExcused := excuseUpstream(k, up, ts)
	ts, why := excuse(k, ts)
	if why != "" && len(ts.causes) == 0 {
		// Tessera refuses only for deliberate reasons.
		if up.accepted() || upExcused {
			t.Logf("%s: deliberate difference (%s): Tessera %v", key, why, ts.err)
			return nil
		}
		t.Errorf("%s: upstream refuses (%v), Tessera only on purpose (%s): %v", key, up.err, why, ts.err)
		return nil
	}
	if up.accepted() != ts.accepted() {
		t.Errorf("%s: upstream accepted=%v (%v), Tessera accepted=%v (%v)", key, up.accepted(), up.err, ts.accepted(), ts.err)
		return nil
	}
	if !up.accepted() {
		if up.reason != ts.reason || !slices.Equal(up.fields(), ts.fields()) {
			if reason, ok := fieldDifferences[key]; ok {
				t.Logf("%s: both refuse, %s %v (upstream) and %s %v (Tessera): %s", key, up.reason, up.fields(), ts.reason, ts.fields(), reason)
				return nil
			}
			t.Errorf("%s: both refuse, differently:\nupstream: %s %v\nTessera:  %s %v\nupstream: %v\nTessera:  %v", key, up.reason, up.fields(), ts.reason, ts.fields(), up.err, ts.err)
			return nil
		}
		return nil
	}
	if a, b := normalize(up.obj, obj), normalize(ts.obj, obj); !equality.Semantic.DeepEqual(a, b) {
		t.Errorf("%s: defaulted objects differ:\nupstream: %+v\nTessera:  %+v", key, a, b)
		return nil
	}
	return ts.obj
}

func TestFidelity(t *testing.T) {
	scheme, stores := tessera(t)
	total := 0
	for _, k := range append(kinds(), policyKinds()...) {
		st, ok := stores[k.gvr]
		if !ok {
			t.Errorf("Tessera serves no %s", k.gvr)
			continue
		}
		t.Run(k.name(), func(t *testing.T) {
			creates := append(corpus(k), k.cases...)
			for _, e := range k.edits {
				obj := k.valid()
				e.edit(obj)
				creates = append(creates, testCase{name: e.name, obj: obj})
			}
			for _, c := range creates {
				compare(t, scheme, st, k, "create "+c.name, c.obj, nil)
				total++
			}
			base := k.valid()
			created := viaTessera(scheme, st, k, base, nil)
			if created.err != nil {
				t.Fatalf("the valid %s is refused: %v", k.gvr.Resource, created.err)
			}
			old := created.obj
			m, _ := meta.Accessor(old)
			m.SetResourceVersion("1")
			updates := append(append(updateCorpus(), k.updates...), k.edits...)
			for _, c := range append(updates, ratchetCorpus(creates)...) {
				from := old
				if c.stored != nil {
					from = c.stored
				}
				obj := from.DeepCopyObject()
				c.edit(obj)
				compare(t, scheme, st, k, "update "+c.name, obj, from)
				total++
			}
			for _, c := range randomChains(k) {
				total += runChain(t, scheme, st, k, c, old)
			}
		})
	}
	t.Logf("%d cases compared", total)
}

// runChain applies the edits of c in sequence to stored, as updates of
// what the previous step stored (from its start, created, or else stored),
// comparing every step, then creates the object it starts from with all of
// them. It returns the number of cases compared.
func runChain(t *testing.T, scheme *runtime.Scheme, st strategies, k kind, c chain, stored runtime.Object) int {
	t.Helper()
	n := 0
	// kept are the edits stored so far, all the edits applied.
	var kept, all []string
	created := k.valid()
	if c.start != nil && applyEdit(*c.start, created) {
		kept, all = []string{c.start.name}, []string{c.start.name}
		if start := compare(t, scheme, st, k, fmt.Sprintf("%s start: %s", c.name, c.start.name), created, nil); start != nil {
			m, _ := meta.Accessor(start)
			m.SetResourceVersion("1")
			stored = start
		} else {
			created = k.valid()
			kept, all = nil, nil
		}
		n++
	}
	for step, e := range c.edits {
		obj := stored.DeepCopyObject()
		if !applyEdit(e, obj) {
			continue
		}
		if applyEdit(e, created) {
			all = append(all, e.name)
		}
		name := fmt.Sprintf("%s step %d: %s", c.name, step, strings.Join(append(kept, e.name), " + "))
		if next := compare(t, scheme, st, k, name, obj, stored); next != nil {
			m, _ := meta.Accessor(next)
			m.SetResourceVersion(fmt.Sprint(step + 2))
			stored = next
			kept = append(kept, e.name)
		}
		n++
	}
	compare(t, scheme, st, k, fmt.Sprintf("%s created: %s", c.name, strings.Join(all, " + ")), created, nil)
	return n + 1
}
