package builtin

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAddToSchemeRegistersEveryKind(t *testing.T) {
	s := newScheme(t)
	// A second scheme in the same process is independent of the first.
	other := newScheme(t)
	if s == other {
		t.Fatal("same scheme twice")
	}
	// Registering twice in one scheme is harmless.
	if err := AddToScheme(other); err != nil {
		t.Fatalf("second AddToScheme: %v", err)
	}

	for _, r := range Resources() {
		t.Run(r.GroupVersion.String()+"/"+r.Resource, func(t *testing.T) {
			for _, kind := range []string{r.Kind, r.Kind + "List"} {
				if _, err := s.New(r.GroupVersion.WithKind(kind)); err != nil {
					t.Errorf("external kind: %v", err)
				}
				internal := schema.GroupVersion{Group: r.GroupVersion.Group, Version: runtime.APIVersionInternal}
				if _, err := s.New(internal.WithKind(kind)); err != nil {
					t.Errorf("internal kind: %v", err)
				}
			}
			if _, _, err := s.ConvertFieldLabel(r.GroupVersion.WithKind(r.Kind), "metadata.name", "x"); err != nil {
				t.Errorf("metadata.name field label: %v", err)
			}
			if !s.IsVersionRegistered(r.StorageVersion) {
				t.Errorf("storage version %s not registered", r.StorageVersion)
			}
			if got := s.PrioritizedVersionsForGroup(r.GroupVersion.Group); len(got) == 0 || got[0] != r.GroupVersion {
				t.Errorf("prioritized versions %v", got)
			}
			if want := (r.StorageResource != schema.GroupResource{Group: r.GroupVersion.Group, Resource: r.Resource}); r.SharesStorage() != want {
				t.Errorf("SharesStorage %v", r.SharesStorage())
			}
		})
	}
}

func TestGroupVersions(t *testing.T) {
	want := []schema.GroupVersion{
		{Version: "v1"},
		{Group: "admissionregistration.k8s.io", Version: "v1"},
		{Group: "certificates.k8s.io", Version: "v1"},
		{Group: "coordination.k8s.io", Version: "v1"},
		{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"},
		{Group: "events.k8s.io", Version: "v1"},
		{Group: "rbac.authorization.k8s.io", Version: "v1"},
	}
	if diff := cmp.Diff(want, GroupVersions()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// decode decodes JSON the way the API server decodes request bodies: to the
// internal version of the group, defaulting on the way.
func decode(t *testing.T, s *runtime.Scheme, gv schema.GroupVersion, data string) runtime.Object {
	t.Helper()
	codecs := serializer.NewCodecFactory(s)
	decoder := codecs.DecoderToVersion(codecs.UniversalDeserializer(), schema.GroupVersion{Group: gv.Group, Version: runtime.APIVersionInternal})
	obj, _, err := decoder.Decode([]byte(data), nil, nil)
	if err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	return obj
}

func TestDecodingDefaults(t *testing.T) {
	s := newScheme(t)

	secret := decode(t, s, corev1.SchemeGroupVersion, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"a":"b"}}`).(*corev1.Secret)
	if secret.Type != corev1.SecretTypeOpaque || string(secret.Data["a"]) != "b" || secret.StringData != nil {
		t.Errorf("secret: %+v", secret)
	}

	ns := decode(t, s, corev1.SchemeGroupVersion, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}}`).(*corev1.Namespace)
	if ns.Status.Phase != corev1.NamespaceActive || ns.Labels[corev1.LabelMetadataName] != "team" {
		t.Errorf("namespace: %+v", ns)
	}

	rb := decode(t, s, rbacv1.SchemeGroupVersion, `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"b"},
		"roleRef":{"kind":"Role","name":"r"},"subjects":[{"kind":"User","name":"alice"}]}`).(*rbacv1.RoleBinding)
	if rb.RoleRef.APIGroup != rbacv1.GroupName || rb.Subjects[0].APIGroup != rbacv1.GroupName {
		t.Errorf("role binding: %+v", rb)
	}

	hook := decode(t, s, admissionregistrationv1.SchemeGroupVersion, `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration",
		"metadata":{"name":"p"},"webhooks":[{"name":"p.example.com","clientConfig":{"url":"https://x.example.com"}}]}`).(*admissionregistrationv1.ValidatingWebhookConfiguration)
	if w := hook.Webhooks[0]; w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Fail || w.TimeoutSeconds == nil || *w.TimeoutSeconds != 10 {
		t.Errorf("webhook: %+v", w)
	}

	// events.k8s.io events decode to the core events they are stored as.
	event := decode(t, s, eventsv1.SchemeGroupVersion, `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e","namespace":"default"},
		"regarding":{"kind":"Pod","name":"web"},"note":"started","reason":"Started","type":"Normal"}`).(*corev1.Event)
	if event.InvolvedObject.Name != "web" || event.Message != "started" {
		t.Errorf("event: %+v", event)
	}

	// And encode back to events.k8s.io/v1.
	codecs := serializer.NewCodecFactory(s)
	info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	data, err := runtime.Encode(codecs.EncoderForVersion(info.Serializer, eventsv1.SchemeGroupVersion), event)
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := back.(*eventsv1.Event); !ok || e.Note != "started" || e.Regarding.Name != "web" {
		t.Errorf("encoded events.k8s.io event: %s", data)
	}
}
