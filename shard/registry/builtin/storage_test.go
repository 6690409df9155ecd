package builtin

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/utils/ptr"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/registry/admissionregistration/policies"
)

// restOptionsGetter is the simplest RESTOptionsGetter a server could use:
// one etcd, undecorated storage, each resource encoded as protobuf in its
// storage version under <group>/<resource>.
type restOptionsGetter struct {
	config   storagebackend.Config
	codecs   serializer.CodecFactory
	versions map[schema.GroupResource]schema.GroupVersion
}

func (g *restOptionsGetter) GetRESTOptions(resource schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	version, ok := g.versions[resource]
	if !ok {
		return generic.RESTOptions{}, fmt.Errorf("no storage version for %s", resource)
	}
	codec, versioner, err := serverstorage.NewStorageCodec(serverstorage.StorageCodecConfig{
		StorageMediaType:  runtime.ContentTypeProtobuf,
		StorageSerializer: g.codecs,
		StorageVersion:    version,
		MemoryVersion:     schema.GroupVersion{Group: version.Group, Version: runtime.APIVersionInternal},
		Config:            g.config,
	})
	if err != nil {
		return generic.RESTOptions{}, fmt.Errorf("storage codec of %s: %w", resource, err)
	}
	config := g.config
	config.Codec = codec
	config.EncodeVersioner = versioner
	prefix := resource.Resource
	if resource.Group != "" {
		prefix = resource.Group + "/" + resource.Resource
	}
	return generic.RESTOptions{
		StorageConfig:           config.ForResource(resource),
		Decorator:               generic.UndecoratedStorage,
		ResourcePrefix:          prefix,
		DeleteCollectionWorkers: 1,
	}, nil
}

// server is the registry of every built-in resource on one etcd.
type server struct {
	scheme  *runtime.Scheme
	storage map[schema.GroupVersionResource]rest.Storage
}

func (s *server) storageFor(t *testing.T, gv schema.GroupVersion, resource string) rest.Storage {
	t.Helper()
	st, ok := s.storage[gv.WithResource(resource)]
	if !ok {
		t.Fatalf("no storage for %s %s", gv, resource)
	}
	return st
}

// newServer builds the storage of every resource against one embedded etcd,
// shared by all tests of this package.
func newServer(t *testing.T) *server {
	t.Helper()
	config := startEtcd(t)

	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	getter := &restOptionsGetter{config: *config, codecs: serializer.NewCodecFactory(scheme), versions: map[schema.GroupResource]schema.GroupVersion{}}
	for _, r := range Resources() {
		getter.versions[r.StorageResource] = r.StorageVersion
	}

	s := &server{scheme: scheme, storage: map[schema.GroupVersionResource]rest.Storage{}}
	for _, r := range Resources() {
		storages, err := r.Storage(scheme, getter)
		if err != nil {
			t.Fatalf("%s %s: %v", r.GroupVersion, r.Resource, err)
		}
		for path, st := range storages {
			s.storage[r.GroupVersion.WithResource(path)] = st
		}
		t.Cleanup(storages[r.Resource].Destroy)
	}
	return s
}

// requestContext is the context of a request to resource r in namespace
// ns by alice.
func requestContext(t *testing.T, gv schema.GroupVersion, resource, ns string) context.Context {
	ctx := genericapirequest.WithRequestInfo(t.Context(), &genericapirequest.RequestInfo{
		IsResourceRequest: true, APIGroup: gv.Group, APIVersion: gv.Version, Resource: resource, Namespace: ns,
	})
	ctx = genericapirequest.WithNamespace(ctx, ns)
	// API Priority and Fairness is configured in system:admin only.
	ctx = logicalcluster.WithCluster(ctx, logicalcluster.Cluster{Name: logicalcluster.SystemAdmin})
	return genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: "alice", UID: "alice-uid", Groups: []string{"devs"}})
}

func TestStorage(t *testing.T) {
	s := newServer(t)
	t.Run("wiring", func(t *testing.T) { testWiring(t, s) })
	t.Run("crud", func(t *testing.T) { testCRUD(t, s) })
	t.Run("namespace termination", func(t *testing.T) { testNamespaceTermination(t, s) })
	t.Run("events share storage", func(t *testing.T) { testEventsShareStorage(t, s) })
	t.Run("secret fields", func(t *testing.T) { testSecretFields(t, s) })
	t.Run("csr approval", func(t *testing.T) { testCSRApproval(t, s) })
	t.Run("status subresources", func(t *testing.T) { testResourceQuotaStatus(t, s) })
}

func testWiring(t *testing.T, s *server) {
	wantSubresources := map[string][]string{
		"namespaces":                  {"status", "finalize"},
		"resourcequotas":              {"status"},
		"certificatesigningrequests":  {"status", "approval"},
		"flowschemas":                 {"status"},
		"validatingadmissionpolicies": {"status"},
		"prioritylevelconfigurations": {"status"},
	}
	wantShortNames := map[string][]string{
		"namespaces": {"ns"}, "configmaps": {"cm"}, "events": {"ev"}, "limitranges": {"limits"},
		"resourcequotas": {"quota"}, "serviceaccounts": {"sa"}, "certificatesigningrequests": {"csr"},
	}
	for _, r := range Resources() {
		t.Run(r.GroupVersion.String()+"/"+r.Resource, func(t *testing.T) {
			st := s.storageFor(t, r.GroupVersion, r.Resource)

			// What genericapiserver's installer derives from the storage.
			kinds, _, err := s.scheme.ObjectKinds(st.New())
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, k := range kinds {
				found = found || (k.Group == r.GroupVersion.Group && k.Kind == r.Kind)
			}
			if !found {
				t.Errorf("storage object kinds %v have no %s in group %q", kinds, r.Kind, r.GroupVersion.Group)
			}
			if scoper, ok := st.(rest.Scoper); !ok || scoper.NamespaceScoped() != r.Namespaced {
				t.Errorf("namespaced: want %v", r.Namespaced)
			}
			shortNames, ok := st.(rest.ShortNamesProvider)
			if !ok {
				t.Fatal("no ShortNamesProvider")
			}
			if got, want := shortNames.ShortNames(), wantShortNames[r.Resource]; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("short names %v, want %v", got, want)
			}
			if singular, ok := st.(rest.SingularNameProvider); !ok || (singular.GetSingularName()+"s" != r.Resource && strings.TrimSuffix(singular.GetSingularName(), "y")+"ies" != r.Resource) {
				t.Errorf("singular name of %s", r.Resource)
			}
			for _, iface := range []struct {
				name string
				ok   bool
			}{
				{"Creater", is[rest.Creater](st)}, {"Getter", is[rest.Getter](st)}, {"Lister", is[rest.Lister](st)},
				{"Updater", is[rest.Updater](st)}, {"GracefulDeleter", is[rest.GracefulDeleter](st)},
				{"Watcher", is[rest.Watcher](st)}, {"TableConvertor", is[rest.TableConvertor](st)},
			} {
				if !iface.ok {
					t.Errorf("storage is not a %s", iface.name)
				}
			}
			if r.SharesStorage() {
				return
			}
			for _, sub := range wantSubresources[r.Resource] {
				subStorage := s.storageFor(t, r.GroupVersion, r.Resource+"/"+sub)
				if !is[rest.Updater](subStorage) {
					t.Errorf("%s/%s is not an Updater", r.Resource, sub)
				}
			}
		})
	}
	categories, ok := s.storageFor(t, admissionregistrationv1.SchemeGroupVersion, "validatingwebhookconfigurations").(rest.CategoriesProvider)
	if !ok || fmt.Sprint(categories.Categories()) != "[api-extensions]" {
		t.Error("webhook configurations are not in the api-extensions category")
	}
}

func is[T any](v any) bool {
	_, ok := v.(T)
	return ok
}

// fixture returns a valid new object of resource r named name.
func fixture(t *testing.T, r Resource, name, ns string) runtime.Object {
	t.Helper()
	meta := metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"test": "crud"}}
	url := admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://webhook.example.com/admit")}
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
	}}
	switch r.GroupVersion.WithResource(r.Resource) {
	case corev1.SchemeGroupVersion.WithResource("namespaces"):
		return &corev1.Namespace{ObjectMeta: meta}
	case corev1.SchemeGroupVersion.WithResource("configmaps"):
		return &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"a": "1"}}
	case corev1.SchemeGroupVersion.WithResource("secrets"):
		return &corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"a": []byte("1")}}
	case corev1.SchemeGroupVersion.WithResource("events"):
		return &corev1.Event{ObjectMeta: meta, InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: "x"}, Reason: "Test", Message: "m", Type: corev1.EventTypeNormal}
	case eventsv1.SchemeGroupVersion.WithResource("events"):
		return &corev1.Event{
			ObjectMeta: meta, InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: "x"}, Reason: "Test", Message: "m",
			Type: corev1.EventTypeNormal, EventTime: metav1.NewMicroTime(time.Now()), Action: "Tested", ReportingController: "tessera.dev/test", ReportingInstance: "t",
		}
	case corev1.SchemeGroupVersion.WithResource("limitranges"):
		return &corev1.LimitRange{ObjectMeta: meta, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}
	case corev1.SchemeGroupVersion.WithResource("resourcequotas"):
		return &corev1.ResourceQuota{ObjectMeta: meta, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("10")}}}
	case corev1.SchemeGroupVersion.WithResource("serviceaccounts"):
		return &corev1.ServiceAccount{ObjectMeta: meta}
	case admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations"):
		return &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: meta, Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "m.example.com", ClientConfig: url, Rules: rules,
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
		}}}
	case admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"):
		return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: meta, Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "v.example.com", ClientConfig: url, Rules: rules,
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "humans", Expression: `!request.userInfo.username.startsWith("system:")`}},
		}}}
	case certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"):
		return &certificatesv1.CertificateSigningRequest{ObjectMeta: meta, Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: pemRequest(t), SignerName: certificatesv1.KubeAPIServerClientSignerName, Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
		}}
	case coordinationv1.SchemeGroupVersion.WithResource("leases"):
		return &coordinationv1.Lease{ObjectMeta: meta, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("me"), LeaseDurationSeconds: ptr.To[int32](15)}}
	case admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies"):
		p := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: meta, Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "object.metadata.name != 'forbidden'"}},
		}}
		policies.SetPolicyDefaults(p) // as decoding does
		return p
	case admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicies"):
		p := &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: meta, Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				},
			}}},
			Mutations: []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration, ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{
				Expression: "Object{metadata: Object.metadata{labels: {'mutated': 'yes'}}}",
			}}},
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
		}}
		policies.SetMutatingPolicyDefaults(p) // as decoding does
		return p
	case admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicybindings"):
		return &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: meta, Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "p"}}
	case admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicybindings"):
		return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: meta, Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		}}
	case flowcontrolv1.SchemeGroupVersion.WithResource("flowschemas"):
		return &flowcontrolv1.FlowSchema{ObjectMeta: meta, Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "crud"},
			MatchingPrecedence:         500,
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: "devs"}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}},
			}},
		}}
	case flowcontrolv1.SchemeGroupVersion.WithResource("prioritylevelconfigurations"):
		return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: meta, Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](5),
				LimitResponse:            flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
			},
		}}
	case rbacv1.SchemeGroupVersion.WithResource("roles"):
		return &rbacv1.Role{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}}
	case rbacv1.SchemeGroupVersion.WithResource("clusterroles"):
		return &rbacv1.ClusterRole{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}}}
	case rbacv1.SchemeGroupVersion.WithResource("rolebindings"):
		return &rbacv1.RoleBinding{ObjectMeta: meta, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "r"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}
	case rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings"):
		return &rbacv1.ClusterRoleBinding{ObjectMeta: meta, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "r"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "ci", Name: "builder"}}}
	}
	t.Fatalf("no fixture for %s %s", r.GroupVersion, r.Resource)
	return nil
}

func pemRequest(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// testCRUD creates, gets, lists, updates, prints and deletes one object of
// every resource through the rest interfaces the API server calls.
func testCRUD(t *testing.T, s *server) {
	for _, r := range Resources() {
		t.Run(r.GroupVersion.String()+"/"+r.Resource, func(t *testing.T) {
			ns := ""
			if r.Namespaced {
				ns = "crud"
			}
			name := "crud-" + r.GroupVersion.Group + "-" + r.Resource
			if r.GroupVersion.Group == "" {
				name = "crud-core-" + r.Resource
			}
			ctx := requestContext(t, r.GroupVersion, r.Resource, ns)
			st := s.storageFor(t, r.GroupVersion, r.Resource)

			created, err := st.(rest.Creater).Create(ctx, fixture(t, r, name, ns), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			createdMeta, _ := meta.Accessor(created)
			if createdMeta.GetUID() == "" || createdMeta.GetResourceVersion() == "" {
				t.Errorf("created object has no uid or resourceVersion: %+v", createdMeta)
			}
			if _, err := st.(rest.Creater).Create(ctx, fixture(t, r, name, ns), rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
				t.Errorf("second create: %v, want AlreadyExists", err)
			}

			got, err := st.(rest.Getter).Get(ctx, name, &metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get: %v", err)
			}

			updated := got.DeepCopyObject()
			updatedMeta, _ := meta.Accessor(updated)
			updatedMeta.SetLabels(map[string]string{"test": "crud", "updated": "yes"})
			result, _, err := st.(rest.Updater).Update(ctx, name, rest.DefaultUpdatedObjectInfo(updated), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("update: %v", err)
			}
			if resultMeta, _ := meta.Accessor(result); resultMeta.GetLabels()["updated"] != "yes" {
				t.Errorf("update lost the label: %v", resultMeta.GetLabels())
			}

			list, err := st.(rest.Lister).List(ctx, &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name)})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if items, _ := meta.ExtractList(list); len(items) != 1 {
				t.Errorf("list by name: %d items, want 1", len(items))
			}

			table, err := st.(rest.TableConvertor).ConvertToTable(ctx, list, nil)
			if err != nil {
				t.Fatalf("table: %v", err)
			}
			if len(table.Rows) != 1 || len(table.ColumnDefinitions) < 2 || len(table.Rows[0].Cells) != len(table.ColumnDefinitions) {
				t.Errorf("table: %d rows, %d columns", len(table.Rows), len(table.ColumnDefinitions))
			}
			if table.Rows[0].Object.Object == nil {
				t.Error("table row carries no object")
			}

			if _, _, err := st.(rest.GracefulDeleter).Delete(ctx, name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if r.Resource == "namespaces" {
				return // deleted in two phases, see testNamespaceTermination
			}
			if _, err := st.(rest.Getter).Get(ctx, name, &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("get after delete: %v, want NotFound", err)
			}
		})
	}
}

func testNamespaceTermination(t *testing.T, s *server) {
	ctx := requestContext(t, corev1.SchemeGroupVersion, "namespaces", "")
	namespaces := s.storageFor(t, corev1.SchemeGroupVersion, "namespaces")
	finalize := s.storageFor(t, corev1.SchemeGroupVersion, "namespaces/finalize").(rest.Updater)
	status := s.storageFor(t, corev1.SchemeGroupVersion, "namespaces/status").(rest.Updater)
	get := func(name string) (*corev1.Namespace, error) {
		obj, err := namespaces.(rest.Getter).Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return obj.(*corev1.Namespace), nil
	}
	update := func(st rest.Updater, ns *corev1.Namespace) (*corev1.Namespace, error) {
		obj, _, err := st.Update(ctx, ns.Name, rest.DefaultUpdatedObjectInfo(ns), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			return nil, err
		}
		return obj.(*corev1.Namespace), nil
	}
	del := func(name string, options *metav1.DeleteOptions) (*corev1.Namespace, bool, error) {
		obj, deleted, err := namespaces.(rest.GracefulDeleter).Delete(ctx, name, rest.ValidateAllObjectFunc, options)
		if err != nil {
			return nil, false, err
		}
		return obj.(*corev1.Namespace), deleted, nil
	}

	// "default" is a namespace like any other.
	created, err := namespaces.(rest.Creater).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	ns := created.(*corev1.Namespace)
	if ns.Status.Phase != corev1.NamespaceActive || len(ns.Spec.Finalizers) != 1 || ns.Spec.Finalizers[0] != corev1.FinalizerKubernetes {
		t.Fatalf("created namespace: %+v", ns)
	}
	if ns.Labels[corev1.LabelMetadataName] != "default" {
		t.Errorf("labels %v", ns.Labels)
	}

	// Writes to the namespace keep spec.finalizers and status.
	changed := ns.DeepCopy()
	changed.Spec.Finalizers = nil
	changed.Status.Phase = corev1.NamespaceTerminating
	if ns, err = update(namespaces.(rest.Updater), changed); err != nil {
		t.Fatalf("update: %v", err)
	}
	if len(ns.Spec.Finalizers) != 1 || ns.Status.Phase != corev1.NamespaceActive {
		t.Errorf("update changed finalizers or status: %+v", ns)
	}

	// Preconditions are honoured.
	wrongUID := types.UID("not-the-uid")
	if _, _, err := del("default", &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}}); !apierrors.IsConflict(err) {
		t.Errorf("delete with wrong uid: %v, want Conflict", err)
	}
	if _, _, err := del("default", &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr.To("1")}}); !apierrors.IsConflict(err) {
		t.Errorf("delete with wrong resourceVersion: %v, want Conflict", err)
	}

	// The first delete marks the namespace Terminating.
	terminating, deleted, err := del("default", nil)
	if err != nil {
		t.Fatalf("delete: %v", err)
	}
	if deleted || terminating.DeletionTimestamp == nil || terminating.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("first delete: deleted %v, namespace %+v", deleted, terminating)
	}
	stored, err := get("default")
	if err != nil || stored.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("after first delete: %v %+v", err, stored)
	}

	// Repeated deletes change nothing.
	again, deleted, err := del("default", nil)
	if err != nil || deleted || again.ResourceVersion != stored.ResourceVersion {
		t.Errorf("second delete: %v deleted=%v rv %s, want rv %s", err, deleted, again.ResourceVersion, stored.ResourceVersion)
	}

	// The status of a terminating namespace stays Terminating.
	active := stored.DeepCopy()
	active.Status.Phase = corev1.NamespaceActive
	if _, err := update(status, active); !apierrors.IsInvalid(err) {
		t.Errorf("status Active while terminating: %v, want Invalid", err)
	}

	// Emptying spec.finalizers through finalize removes the namespace.
	finalized := stored.DeepCopy()
	finalized.Spec.Finalizers = nil
	if _, err := update(finalize, finalized); err != nil {
		t.Fatalf("finalize: %v", err)
	}
	if _, err := get("default"); !apierrors.IsNotFound(err) {
		t.Errorf("get after finalize: %v, want NotFound", err)
	}

	// With metadata.finalizers left, the namespace stays until they are
	// gone too.
	held := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}}}
	if _, err := namespaces.(rest.Creater).Create(ctx, held, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatalf("create held: %v", err)
	}
	if _, _, err := del("held", nil); err != nil {
		t.Fatalf("delete held: %v", err)
	}
	stored, err = get("held")
	if err != nil {
		t.Fatal(err)
	}
	stored.Spec.Finalizers = nil
	if _, err := update(finalize, stored); err != nil {
		t.Fatalf("finalize held: %v", err)
	}
	if stored, err = get("held"); err != nil || len(stored.Spec.Finalizers) != 0 {
		t.Fatalf("held after finalize: %v %+v", err, stored)
	}
	// A delete now goes through the generic store, which waits for
	// metadata.finalizers.
	if _, deleted, err := del("held", nil); err != nil || deleted {
		t.Fatalf("delete held again: %v deleted=%v", err, deleted)
	}
	stored, err = get("held")
	if err != nil {
		t.Fatal(err)
	}
	stored.Finalizers = nil
	if _, err := update(namespaces.(rest.Updater), stored); err != nil {
		t.Fatalf("removing the last finalizer: %v", err)
	}
	if _, err := get("held"); !apierrors.IsNotFound(err) {
		t.Errorf("get after removing the last finalizer: %v, want NotFound", err)
	}

	// The delete propagation policy sets the garbage collector's
	// finalizer.
	if _, err := namespaces.(rest.Creater).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "orphaned"}}, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	orphan := metav1.DeletePropagationOrphan
	marked, _, err := del("orphaned", &metav1.DeleteOptions{PropagationPolicy: &orphan})
	if err != nil || len(marked.Finalizers) != 1 || marked.Finalizers[0] != metav1.FinalizerOrphanDependents {
		t.Errorf("delete with orphan policy: %v, finalizers %v", err, marked.Finalizers)
	}
}

func testEventsShareStorage(t *testing.T, s *server) {
	eventsCtx := requestContext(t, eventsv1.SchemeGroupVersion, "events", "shared")
	coreCtx := requestContext(t, corev1.SchemeGroupVersion, "events", "shared")
	eventsStorage := s.storageFor(t, eventsv1.SchemeGroupVersion, "events")
	coreStorage := s.storageFor(t, corev1.SchemeGroupVersion, "events")
	r := Resource{GroupVersion: eventsv1.SchemeGroupVersion, Resource: "events"}

	// events.k8s.io validates strictly: no reportingController, no event.
	invalid := fixture(t, r, "strict", "shared").(*corev1.Event)
	invalid.ReportingController = ""
	if _, err := eventsStorage.(rest.Creater).Create(eventsCtx, invalid, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("events.k8s.io event without reportingController: %v, want Invalid", err)
	}

	if _, err := eventsStorage.(rest.Creater).Create(eventsCtx, fixture(t, r, "shared", "shared"), rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatalf("create through events.k8s.io: %v", err)
	}
	got, err := coreStorage.(rest.Getter).Get(coreCtx, "shared", &metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get through core: %v", err)
	}
	event := got.(*corev1.Event)
	if event.ReportingController != "tessera.dev/test" || event.Message != "m" {
		t.Errorf("core view: %+v", event)
	}
	converted, err := s.scheme.ConvertToVersion(event, eventsv1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	if e := converted.(*eventsv1.Event); e.Note != "m" || e.Regarding.Kind != "ConfigMap" {
		t.Errorf("events.k8s.io view: %+v", e)
	}

	list, err := eventsStorage.(rest.Lister).List(eventsCtx, &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("reportingComponent", "tessera.dev/test")})
	if err != nil {
		t.Fatal(err)
	}
	if items, _ := meta.ExtractList(list); len(items) != 1 {
		t.Errorf("list by reportingComponent: %d items, want 1", len(items))
	}
	if _, _, err := coreStorage.(rest.GracefulDeleter).Delete(coreCtx, "shared", rest.ValidateAllObjectFunc, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := eventsStorage.(rest.Getter).Get(eventsCtx, "shared", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("events.k8s.io get after core delete: %v, want NotFound", err)
	}
}

func testSecretFields(t *testing.T, s *server) {
	ctx := requestContext(t, corev1.SchemeGroupVersion, "secrets", "fields")
	secrets := s.storageFor(t, corev1.SchemeGroupVersion, "secrets")
	create := func(secret *corev1.Secret) *corev1.Secret {
		t.Helper()
		obj, err := secrets.(rest.Creater).Create(ctx, secret, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s: %v", secret.Name, err)
		}
		return obj.(*corev1.Secret)
	}
	created := create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "string-data", Namespace: "fields"}, Type: corev1.SecretTypeOpaque, StringData: map[string]string{"password": "hunter2"}})
	if string(created.Data["password"]) != "hunter2" || created.StringData != nil {
		t.Errorf("stringData not merged: %+v", created)
	}
	create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls", Namespace: "fields"}, Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": nil, "tls.key": nil}})

	list, err := secrets.(rest.Lister).List(ctx, &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("type", string(corev1.SecretTypeTLS))})
	if err != nil {
		t.Fatal(err)
	}
	items, _ := meta.ExtractList(list)
	if len(items) != 1 || items[0].(*corev1.Secret).Name != "tls" {
		t.Errorf("secrets of type tls: %v", items)
	}

	// Immutable secrets keep their data.
	immutable := create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "frozen", Namespace: "fields"}, Type: corev1.SecretTypeOpaque, Immutable: ptr.To(true), Data: map[string][]byte{"a": []byte("1")}})
	immutable.Data["a"] = []byte("2")
	if _, _, err := secrets.(rest.Updater).Update(ctx, "frozen", rest.DefaultUpdatedObjectInfo(immutable), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("changing an immutable secret: %v, want Invalid", err)
	}
}

func testCSRApproval(t *testing.T, s *server) {
	gv := certificatesv1.SchemeGroupVersion
	ctx := requestContext(t, gv, "certificatesigningrequests", "")
	main := s.storageFor(t, gv, "certificatesigningrequests")
	approval := s.storageFor(t, gv, "certificatesigningrequests/approval").(rest.Updater)
	r := Resource{GroupVersion: gv, Resource: "certificatesigningrequests"}

	created, err := main.(rest.Creater).Create(ctx, fixture(t, r, "approve-me", ""), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	csr := created.(*certificatesv1.CertificateSigningRequest)
	if csr.Spec.Username != "alice" {
		t.Errorf("requestor %q, want alice", csr.Spec.Username)
	}
	approved := csr.DeepCopy()
	approved.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test"}}
	update := func(st rest.Updater, obj *certificatesv1.CertificateSigningRequest) (runtime.Object, error) {
		out, _, err := st.Update(ctx, obj.Name, rest.DefaultUpdatedObjectInfo(obj), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		return out, err
	}
	// Writes to the request itself drop the approval.
	out, err := update(main.(rest.Updater), approved.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if len(out.(*certificatesv1.CertificateSigningRequest).Status.Conditions) != 0 {
		t.Error("main resource approved the request")
	}
	out, err = update(approval, approved.DeepCopy())
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	if c := out.(*certificatesv1.CertificateSigningRequest).Status.Conditions; len(c) != 1 || c[0].LastUpdateTime.IsZero() {
		t.Errorf("approved conditions: %+v", c)
	}
}

func testResourceQuotaStatus(t *testing.T, s *server) {
	ctx := requestContext(t, corev1.SchemeGroupVersion, "resourcequotas", "quota")
	main := s.storageFor(t, corev1.SchemeGroupVersion, "resourcequotas")
	status := s.storageFor(t, corev1.SchemeGroupVersion, "resourcequotas/status").(rest.Updater)
	created, err := main.(rest.Creater).Create(ctx, fixture(t, Resource{GroupVersion: corev1.SchemeGroupVersion, Resource: "resourcequotas"}, "compute", "quota"), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rq := created.(*corev1.ResourceQuota)
	rq.Spec.Hard[corev1.ResourceConfigMaps] = resource.MustParse("99")
	rq.Status.Hard = corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("10")}
	rq.Status.Used = corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("3")}
	out, _, err := status.Update(ctx, "compute", rest.DefaultUpdatedObjectInfo(rq), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.ResourceQuota)
	if pods := got.Spec.Hard[corev1.ResourceConfigMaps]; pods.Value() != 10 {
		t.Errorf("status update changed spec: hard pods %s", pods.String())
	}
	if used := got.Status.Used[corev1.ResourceConfigMaps]; used.Value() != 3 {
		t.Errorf("status update lost status: used pods %s", used.String())
	}
}
