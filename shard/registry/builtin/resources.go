package builtin

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/tessera-dev/tessera/shard/registry/admissionregistration/policies"
	"github.com/tessera-dev/tessera/shard/registry/admissionregistration/webhookconfigurations"
	"github.com/tessera-dev/tessera/shard/registry/certificates/certificatesigningrequests"
	"github.com/tessera-dev/tessera/shard/registry/coordination/leases"
	"github.com/tessera-dev/tessera/shard/registry/core/configmaps"
	"github.com/tessera-dev/tessera/shard/registry/core/events"
	"github.com/tessera-dev/tessera/shard/registry/core/limitranges"
	"github.com/tessera-dev/tessera/shard/registry/core/namespaces"
	"github.com/tessera-dev/tessera/shard/registry/core/resourcequotas"
	"github.com/tessera-dev/tessera/shard/registry/core/secrets"
	"github.com/tessera-dev/tessera/shard/registry/core/serviceaccounts"
	"github.com/tessera-dev/tessera/shard/registry/flowcontrol"
	"github.com/tessera-dev/tessera/shard/registry/rbac"
)

// StorageFunc builds the REST storage of a resource and of its
// subresources, keyed like genericapiserver's VersionedResourcesStorageMap:
// "configmaps", "namespaces/status", "namespaces/finalize". The scheme must
// have been set up with AddToScheme.
type StorageFunc func(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error)

// Resource is one built-in API resource.
type Resource struct {
	// GroupVersion is the group version the resource is served in.
	GroupVersion schema.GroupVersion
	// Resource is the plural resource name, e.g. "configmaps".
	Resource string
	// Kind is the kind of the objects, e.g. "ConfigMap".
	Kind string
	// Namespaced is true for resources that live in namespaces.
	Namespaced bool

	// StorageResource is the resource the storage asks the
	// RESTOptionsGetter for, and so the etcd prefix the objects live
	// under. It is {GroupVersion.Group, Resource}, except for a resource
	// that is a second view of another resource's objects: events.k8s.io
	// events are core events, stored as {"", "events"}.
	StorageResource schema.GroupResource
	// StorageVersion is the version the objects are encoded in in etcd:
	// GroupVersion, except core v1 for events.k8s.io events.
	StorageVersion schema.GroupVersion

	// Storage builds the REST storage of the resource and its
	// subresources. A resource that shares another's storage gets its own
	// REST (and, under a caching decorator, its own watch cache) over the
	// same keys, as in Kubernetes.
	Storage StorageFunc
}

// SharesStorage reports whether the resource serves the objects of another
// resource (StorageResource) rather than its own.
func (r Resource) SharesStorage() bool {
	return r.StorageResource != (schema.GroupResource{Group: r.GroupVersion.Group, Resource: r.Resource})
}

// Resources returns the built-in resources, core group first.
func Resources() []Resource {
	return []Resource{
		own(corev1.SchemeGroupVersion, "namespaces", "Namespace", false, namespaceStorage),
		own(corev1.SchemeGroupVersion, "configmaps", "ConfigMap", true, single("configmaps", configmaps.NewREST)),
		own(corev1.SchemeGroupVersion, "secrets", "Secret", true, single("secrets", secrets.NewREST)),
		own(corev1.SchemeGroupVersion, "events", "Event", true, single("events", events.NewREST)),
		own(corev1.SchemeGroupVersion, "limitranges", "LimitRange", true, single("limitranges", limitranges.NewREST)),
		own(corev1.SchemeGroupVersion, "resourcequotas", "ResourceQuota", true, resourceQuotaStorage),
		own(corev1.SchemeGroupVersion, "serviceaccounts", "ServiceAccount", true, single("serviceaccounts", serviceaccounts.NewREST)),
		own(admissionregistrationv1.SchemeGroupVersion, "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", false,
			single("mutatingwebhookconfigurations", webhookconfigurations.NewMutatingREST)),
		own(admissionregistrationv1.SchemeGroupVersion, "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", false,
			single("validatingwebhookconfigurations", webhookconfigurations.NewValidatingREST)),
		own(admissionregistrationv1.SchemeGroupVersion, "validatingadmissionpolicies", "ValidatingAdmissionPolicy", false,
			withStatus("validatingadmissionpolicies", policies.NewPolicyREST)),
		own(admissionregistrationv1.SchemeGroupVersion, "validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding", false,
			single("validatingadmissionpolicybindings", policies.NewBindingREST)),
		own(admissionregistrationv1.SchemeGroupVersion, "mutatingadmissionpolicies", "MutatingAdmissionPolicy", false,
			single("mutatingadmissionpolicies", policies.NewMutatingPolicyREST)),
		own(admissionregistrationv1.SchemeGroupVersion, "mutatingadmissionpolicybindings", "MutatingAdmissionPolicyBinding", false,
			single("mutatingadmissionpolicybindings", policies.NewMutatingBindingREST)),
		own(certificatesv1.SchemeGroupVersion, "certificatesigningrequests", "CertificateSigningRequest", false, csrStorage),
		own(coordinationv1.SchemeGroupVersion, "leases", "Lease", true, single("leases", leases.NewREST)),
		own(flowcontrolv1.SchemeGroupVersion, "flowschemas", "FlowSchema", false, withStatus("flowschemas", flowcontrol.NewFlowSchemaREST)),
		own(flowcontrolv1.SchemeGroupVersion, "prioritylevelconfigurations", "PriorityLevelConfiguration", false,
			withStatus("prioritylevelconfigurations", flowcontrol.NewPriorityLevelREST)),
		{
			GroupVersion:    eventsv1.SchemeGroupVersion,
			Resource:        "events",
			Kind:            "Event",
			Namespaced:      true,
			StorageResource: corev1.Resource("events"),
			StorageVersion:  corev1.SchemeGroupVersion,
			Storage:         single("events", events.NewREST),
		},
		own(rbacv1.SchemeGroupVersion, "roles", "Role", true, single("roles", rbac.NewRoleREST)),
		own(rbacv1.SchemeGroupVersion, "rolebindings", "RoleBinding", true, single("rolebindings", rbac.NewRoleBindingREST)),
		own(rbacv1.SchemeGroupVersion, "clusterroles", "ClusterRole", false, single("clusterroles", rbac.NewClusterRoleREST)),
		own(rbacv1.SchemeGroupVersion, "clusterrolebindings", "ClusterRoleBinding", false, single("clusterrolebindings", rbac.NewClusterRoleBindingREST)),
	}
}

// schemeAdder is the AddToScheme of a package of built-in resources.
type schemeAdder struct {
	what string
	fn   func(*runtime.Scheme) error
}

// schemeAdders returns the AddToScheme of every package of built-in
// resources.
func schemeAdders() []schemeAdder {
	return []schemeAdder{
		{"namespaces", namespaces.AddToScheme},
		{"configmaps", configmaps.AddToScheme},
		{"secrets", secrets.AddToScheme},
		{"events", events.AddToScheme},
		{"limitranges", limitranges.AddToScheme},
		{"resourcequotas", resourcequotas.AddToScheme},
		{"serviceaccounts", serviceaccounts.AddToScheme},
		{"webhook configurations", webhookconfigurations.AddToScheme},
		{"admission policies", policies.AddToScheme},
		{"certificatesigningrequests", certificatesigningrequests.AddToScheme},
		{"leases", leases.AddToScheme},
		{"flowcontrol", flowcontrol.AddToScheme},
		{"rbac", rbac.AddToScheme},
	}
}

// GroupVersions returns the group versions of the built-in resources, in
// the order of Resources.
func GroupVersions() []schema.GroupVersion {
	var gvs []schema.GroupVersion
	seen := map[schema.GroupVersion]bool{}
	for _, r := range Resources() {
		if !seen[r.GroupVersion] {
			seen[r.GroupVersion] = true
			gvs = append(gvs, r.GroupVersion)
		}
	}
	return gvs
}

// own describes a resource stored under its own name and version.
func own(gv schema.GroupVersion, resource, kind string, namespaced bool, storage StorageFunc) Resource {
	return Resource{
		GroupVersion:    gv,
		Resource:        resource,
		Kind:            kind,
		Namespaced:      namespaced,
		StorageResource: schema.GroupResource{Group: gv.Group, Resource: resource},
		StorageVersion:  gv,
		Storage:         storage,
	}
}

// single adapts the constructor of a storage without subresources.
func single[T rest.Storage](resource string, newREST func(*runtime.Scheme, generic.RESTOptionsGetter) (T, error)) StorageFunc {
	return func(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		storage, err := newREST(scheme, optsGetter)
		if err != nil {
			return nil, fmt.Errorf("building %s storage: %w", resource, err)
		}
		return map[string]rest.Storage{resource: storage}, nil
	}
}

// withStatus builds a resource with a status subresource.
func withStatus[T, S rest.Storage](resource string, newREST func(*runtime.Scheme, generic.RESTOptionsGetter) (T, S, error)) StorageFunc {
	return func(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		main, status, err := newREST(scheme, optsGetter)
		if err != nil {
			return nil, fmt.Errorf("building %s storage: %w", resource, err)
		}
		return map[string]rest.Storage{resource: main, resource + "/status": status}, nil
	}
}

func namespaceStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	main, status, finalize, err := namespaces.NewREST(scheme, optsGetter)
	if err != nil {
		return nil, fmt.Errorf("building namespaces storage: %w", err)
	}
	return map[string]rest.Storage{"namespaces": main, "namespaces/status": status, "namespaces/finalize": finalize}, nil
}

func resourceQuotaStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	main, status, err := resourcequotas.NewREST(scheme, optsGetter)
	if err != nil {
		return nil, fmt.Errorf("building resourcequotas storage: %w", err)
	}
	return map[string]rest.Storage{"resourcequotas": main, "resourcequotas/status": status}, nil
}

func csrStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	main, status, approval, err := certificatesigningrequests.NewREST(scheme, optsGetter)
	if err != nil {
		return nil, fmt.Errorf("building certificatesigningrequests storage: %w", err)
	}
	return map[string]rest.Storage{
		"certificatesigningrequests":          main,
		"certificatesigningrequests/status":   status,
		"certificatesigningrequests/approval": approval,
	}, nil
}
