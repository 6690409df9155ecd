package integration

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apiextensionsv1client "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	servicesv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/services/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/syncer/servlet/publisher"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// servletCRD is a cert-manager-like CustomResourceDefinition of the
// service cluster with a status subresource; extra adds string fields to
// its spec.
func servletCRD(group, kind, plural string, extra ...string) *apiextensionsv1.CustomResourceDefinition {
	spec := map[string]apiextensionsv1.JSONSchemaProps{"secretName": {Type: "string"}}
	for _, f := range extra {
		spec[f] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind), ShortNames: []string{"cert"}},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", Properties: spec},
						"status": {Type: "object", XPreserveUnknownFields: ptrTo(true)},
					},
				}},
			}},
		},
	}
}

func ptrTo[T any](v T) *T { return &v }

// servletWorkspaces creates the workspaces of a servlet test: one standing
// in for the service cluster, with the given CRDs, the provider's (where
// the Service lives) and a consumer's; it returns them and the CRD client
// of the service cluster.
func servletWorkspaces(t *testing.T, s *framework.Shard, crds ...*apiextensionsv1.CustomResourceDefinition) (service, provider, consumer logicalcluster.Name, client apiextensionsv1client.CustomResourceDefinitionInterface) {
	t.Helper()
	service = logicalcluster.Name(createWorkspace(t, s, logicalcluster.Root, "service-cluster", nil).Spec.Cluster)
	provider = logicalcluster.Name(createWorkspace(t, s, logicalcluster.Root, "provider", nil).Spec.Cluster)
	consumer = logicalcluster.Name(createWorkspace(t, s, logicalcluster.Root, "consumer", nil).Spec.Cluster)
	crdClient, err := apiextensionsclient.NewForConfig(s.Config(service))
	if err != nil {
		t.Fatal(err)
	}
	client = crdClient.ApiextensionsV1().CustomResourceDefinitions()
	for _, crd := range crds {
		if _, err := client.Create(t.Context(), crd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return service, provider, consumer, client
}

// runServletPublisher runs the servlet's publisher in the test process
// until the test ends.
func runServletPublisher(t *testing.T, s *framework.Shard, service, platform logicalcluster.Name, serviceName string) {
	t.Helper()
	p, err := publisher.New(s.Config(service), s.Config(platform), serviceName)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("publisher: %v", err)
		}
	})
}

// TestServletPublishes runs the servlet's publisher with a workspace
// standing in for the service cluster: it installs the PublishedResource
// CRD there and the Service CRD in the provider's workspace; the seed's
// Zertifikat projection of a Certificate CRD becomes an APIResourceSchema
// of the Service's APIExport, which a consumer binds and then lists
// Zertifikate with kubectl. A changed CRD gets a new schema, a second
// PublishedResource joins the export and leaves it when deleted, an
// invalid one is reported in its Ready condition and not published, and a
// new API group of the Service is published at once.
func TestServletPublishes(t *testing.T) {
	s := framework.StartShard(t)
	service, provider, consumer, crds := servletWorkspaces(t, s,
		servletCRD("cert-manager.io", "Certificate", "certificates"),
		servletCRD("cert-manager.io", "Issuer", "issuers"))

	runServletPublisher(t, s, service, provider, "certificate-management")
	applyEventually(t, s, provider, `apiVersion: core.kdp.k8c.io/v1alpha1
kind: Service
metadata:
  name: certificate-management
spec:
  apiGroup: certs.example.corp
  catalogMetadata:
    title: Certificate Management
    description: Acquire certificates signed by Example Corp's internal CA.
`)
	applyEventually(t, s, service, `apiVersion: services.kdp.k8c.io/v1alpha1
kind: PublishedResource
metadata:
  name: publish-certmanager-certs
spec:
  resource:
    kind: Certificate
    apiGroup: cert-manager.io
    version: v1
  naming:
    namespace: kube-system
    name: "$remoteClusterName-$remoteNamespaceHash-$remoteNameHash"
  projection:
    version: v1beta1
    kind: Zertifikat
    plural: Zertifikate
    shortNames: [zerts]
`)

	exports := kcpClient(t, s, provider).APIExports()
	schemas := kcpClient(t, s, provider).APIResourceSchemas()
	exported := func(what string, want func([]string) bool) []string {
		t.Helper()
		var latest []string
		eventually(t, 30*time.Second, what, func(ctx context.Context) (bool, error) {
			e, err := exports.Get(ctx, "certs.example.corp", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			latest = e.Spec.LatestResourceSchemas
			return want(latest), nil
		})
		return latest
	}
	first := exported("the export to list the Zertifikat schema", func(l []string) bool {
		return len(l) == 1 && strings.HasSuffix(l[0], ".zertifikate.certs.example.corp")
	})[0]
	schema, err := schemas.Get(t.Context(), first, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := schema.Spec.Names; n.Kind != "Zertifikat" || n.Plural != "zertifikate" || !slices.Equal(n.ShortNames, []string{"zerts"}) ||
		len(schema.Spec.Versions) != 1 || schema.Spec.Versions[0].Name != "v1beta1" || schema.Spec.Group != "certs.example.corp" {
		t.Errorf("schema %s: names %+v, group %s, versions %d, want the projected Zertifikat v1beta1 in certs.example.corp", first, n, schema.Spec.Group, len(schema.Spec.Versions))
	}
	waitPublished(t, s, service, "publish-certmanager-certs", func(pr *servicesv1alpha1.PublishedResource) bool {
		return conditionsv1alpha1.IsTrue(pr, conditionsv1alpha1.ReadyCondition) && pr.Status.ResourceSchemaName == first
	})

	// A consumer binds the Service and uses the projected resource.
	createBinding(t, s, consumer, "certs", "root:provider", "certs.example.corp")
	waitBound(t, s, consumer, "certs")
	applyEventually(t, s, consumer, `apiVersion: certs.example.corp/v1beta1
kind: Zertifikat
metadata:
  name: my-cert
  namespace: default
spec:
  secretName: my-cert
`)
	if out, err := s.Kubectl(consumer, "get", "zerts", "-n", "default", "-o", "name"); err != nil || strings.TrimSpace(out) != "zertifikat.certs.example.corp/my-cert" {
		t.Errorf("kubectl get zerts = %q, %v; want the Zertifikat", out, err)
	}

	// A changed CRD is published as a new schema.
	crd, err := crds.Get(t.Context(), "certificates.cert-manager.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crd.Spec.Versions[0].Schema = servletCRD("cert-manager.io", "Certificate", "certificates", "commonName").Spec.Versions[0].Schema
	if _, err := crds.Update(t.Context(), crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	second := exported("a new schema for the changed CRD", func(l []string) bool {
		return len(l) == 1 && l[0] != first && strings.HasSuffix(l[0], ".zertifikate.certs.example.corp")
	})[0]
	if s, err := schemas.Get(t.Context(), second, metav1.GetOptions{}); err != nil || !strings.Contains(string(s.Spec.Versions[0].Schema.Raw), "commonName") {
		t.Errorf("schema %s lacks the CRD's new field (err %v)", second, err)
	}

	// A second PublishedResource joins the export; an invalid one does not.
	applyEventually(t, s, service, `apiVersion: services.kdp.k8c.io/v1alpha1
kind: PublishedResource
metadata:
  name: publish-issuers
spec:
  resource: {kind: Issuer, apiGroup: cert-manager.io, version: v1}
---
apiVersion: services.kdp.k8c.io/v1alpha1
kind: PublishedResource
metadata:
  name: publish-broken
spec:
  resource: {kind: Issuer, apiGroup: cert-manager.io, version: v1}
  naming: {name: "issuer-$remoteWorkspace"}
  projection: {kind: Aussteller}
`)
	exported("the export to list the Issuer schema too", func(l []string) bool {
		return len(l) == 2 && slices.ContainsFunc(l, func(n string) bool { return strings.HasSuffix(n, ".issuers.certs.example.corp") })
	})
	broken := waitPublished(t, s, service, "publish-broken", func(pr *servicesv1alpha1.PublishedResource) bool {
		return conditionsv1alpha1.IsFalse(pr, conditionsv1alpha1.ReadyCondition)
	})
	if msg := conditionsv1alpha1.GetMessage(broken, conditionsv1alpha1.ReadyCondition); !strings.Contains(msg, "spec.naming.name") || !strings.Contains(msg, "unknown placeholder $remoteWorkspace") {
		t.Errorf("Ready message of the broken PublishedResource = %q, want it to name the unknown placeholder", msg)
	}
	if got := exported("the export as it was", func(l []string) bool { return len(l) == 2 }); slices.ContainsFunc(got, func(n string) bool { return strings.Contains(n, "aussteller") }) {
		t.Errorf("the invalid PublishedResource was published: %v", got)
	}

	// A deleted PublishedResource leaves the export.
	if err := dynamicClient(t, s, service).Resource(publisher.PublishedResourcesGVR).Delete(t.Context(), "publish-issuers", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	exported("the Issuer schema to leave the export", func(l []string) bool { return slices.Equal(l, []string{second}) })

	// The Service is watched: a new API group is published at once, as an
	// export of that name.
	applyEventually(t, s, provider, `apiVersion: core.kdp.k8c.io/v1alpha1
kind: Service
metadata:
  name: certificate-management
spec:
  apiGroup: certs2.example.corp
`)
	eventually(t, 15*time.Second, "the export of the Service's new API group", func(ctx context.Context) (bool, error) {
		e, err := exports.Get(ctx, "certs2.example.corp", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && len(e.Spec.LatestResourceSchemas) == 1 && strings.HasSuffix(e.Spec.LatestResourceSchemas[0], ".zertifikate.certs2.example.corp"), err
	})
}

// waitPublished waits until the PublishedResource name satisfies cond, and
// returns it.
func waitPublished(t *testing.T, s *framework.Shard, service logicalcluster.Name, name string, cond func(*servicesv1alpha1.PublishedResource) bool) *servicesv1alpha1.PublishedResource {
	t.Helper()
	var pr *servicesv1alpha1.PublishedResource
	eventually(t, 30*time.Second, "PublishedResource "+name+" status", func(ctx context.Context) (bool, error) {
		u, err := dynamicClient(t, s, service).Resource(publisher.PublishedResourcesGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if pr, err = publisher.ToPublishedResource(u); err != nil {
			return false, err
		}
		return cond(pr), nil
	})
	return pr
}
