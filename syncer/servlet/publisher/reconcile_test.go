package publisher

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	servicesv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/services/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

func crdOf(group, kind, plural string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names:    apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind)},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true}},
		},
	}
}

func pr(name, kind string, edit ...func(*servicesv1alpha1.PublishedResource)) *servicesv1alpha1.PublishedResource {
	p := &servicesv1alpha1.PublishedResource{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       servicesv1alpha1.PublishedResourceSpec{Resource: servicesv1alpha1.SourceResourceDescriptor{APIGroup: "cert-manager.io", Version: "v1", Kind: kind}},
	}
	for _, e := range edit {
		e(p)
	}
	return p
}

// TestReconcile checks what a publishing pass exports and reports, with
// plain functions for the clients.
func TestReconcile(t *testing.T) {
	crds := []*apiextensionsv1.CustomResourceDefinition{crdOf("cert-manager.io", "Certificate", "certificates"), crdOf("cert-manager.io", "Issuer", "issuers")}
	related := func(p *servicesv1alpha1.PublishedResource) {
		p.Spec.Related = []servicesv1alpha1.RelatedResourceSpec{{Identifier: "tls", Origin: "service", Kind: "Secret", Reference: servicesv1alpha1.RelatedResourceReference{Name: servicesv1alpha1.ResourceLocator{Path: "spec.secretName"}}}}
	}
	tests := []struct {
		name        string
		prs         []*servicesv1alpha1.PublishedResource
		serviceErr  error
		wantSchemas []string // suffixes, sorted by PublishedResource
		wantClaims  []string
		wantReasons map[string]string // PublishedResource → Ready reason ("" for True)
		wantErr     bool
	}{
		{
			name:        "two valid ones; the related Secret is claimed",
			prs:         []*servicesv1alpha1.PublishedResource{pr("certs", "Certificate", related), pr("issuers", "Issuer")},
			wantSchemas: []string{".certificates.certs.example.corp", ".issuers.certs.example.corp"},
			wantClaims:  []string{"secrets"},
			wantReasons: map[string]string{"certs": "", "issuers": ""},
		},
		{
			name: "invalid, missing CRD and a second claim on the same resource are reported, not exported",
			prs: []*servicesv1alpha1.PublishedResource{
				pr("a-certs", "Certificate"),
				pr("b-certs-again", "Certificate"),
				pr("c-broken", "Issuer", func(p *servicesv1alpha1.PublishedResource) {
					p.Spec.Naming = &servicesv1alpha1.ResourceNaming{Name: "x"}
				}),
				pr("d-missing", "Order"),
			},
			wantSchemas: []string{".certificates.certs.example.corp"},
			wantReasons: map[string]string{"a-certs": "", "b-certs-again": ReasonConflict, "c-broken": ReasonInvalidSpec, "d-missing": ReasonCRDNotFound},
		},
		{
			name:        "no Service: every PublishedResource says so and the pass fails",
			prs:         []*servicesv1alpha1.PublishedResource{pr("certs", "Certificate")},
			serviceErr:  errors.New(`reading Service certificate-management: services "certificate-management" not found`),
			wantReasons: map[string]string{"certs": ReasonServiceNotFound},
			wantErr:     true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				created  []string
				exported []string
				claims   []string
				exportOK bool
				statuses = map[string]*servicesv1alpha1.PublishedResource{}
			)
			r := &publishing{
				apiGroup: func(context.Context) (string, error) { return "certs.example.corp", tt.serviceErr },
				listPublished: func() ([]*servicesv1alpha1.PublishedResource, error) {
					return slices.Clone(tt.prs), nil
				},
				listCRDs: func() ([]*apiextensionsv1.CustomResourceDefinition, error) { return crds, nil },
				ensureSchema: func(_ context.Context, s *apisv1alpha1.APIResourceSchema) error {
					created = append(created, s.Name)
					return nil
				},
				ensureExport: func(_ context.Context, name string, schemas []string, cl []apisv1alpha1.PermissionClaim) error {
					exportOK = name == "certs.example.corp"
					exported = schemas
					for _, c := range cl {
						claims = append(claims, c.Resource)
					}
					return nil
				},
				updateStatus: func(_ context.Context, p *servicesv1alpha1.PublishedResource) error {
					statuses[p.Name] = p
					return nil
				},
			}
			err := r.reconcile(t.Context())
			if (err != nil) != tt.wantErr {
				t.Fatalf("reconcile error %v, want error %t", err, tt.wantErr)
			}
			if len(tt.wantSchemas) > 0 || !tt.wantErr {
				if !exportOK || len(exported) != len(tt.wantSchemas) {
					t.Fatalf("exported %v, want %v", exported, tt.wantSchemas)
				}
				for i, suffix := range tt.wantSchemas {
					if !strings.HasSuffix(exported[i], suffix) || !slices.Contains(created, exported[i]) {
						t.Errorf("exported[%d] = %s (created %v), want a created schema *%s", i, exported[i], created, suffix)
					}
				}
				if !slices.Equal(claims, tt.wantClaims) {
					t.Errorf("claims %v, want %v", claims, tt.wantClaims)
				}
			}
			for name, reason := range tt.wantReasons {
				st := statuses[name]
				if st == nil {
					t.Errorf("%s: no status written", name)
					continue
				}
				c := conditionsv1alpha1.Get(st, conditionsv1alpha1.ReadyCondition)
				if reason == "" && (c == nil || c.Status != "True" || st.Status.ResourceSchemaName == "") {
					t.Errorf("%s: Ready %+v, schema %q; want True with a schema", name, c, st.Status.ResourceSchemaName)
				}
				if reason != "" && (c == nil || c.Status != "False" || c.Reason != reason || c.Message == "") {
					t.Errorf("%s: Ready %+v, want False with reason %s and a message", name, c, reason)
				}
			}
		})
	}
}
