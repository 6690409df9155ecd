package integration

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/syncer/servlet"
	"github.com/tessera-dev/tessera/syncer/servlet/published"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestServletMinimalRBAC runs the servlet in the platform as the user
// tessera-servlet, who has nothing but the rules of
// deploy/servlet/platform-rbac.yaml in the provider's workspace: before
// they are applied it is refused and publishes nothing (and keeps
// trying while it holds the Lease); once they are, it publishes the
// Service's export and syncs a consumer's Zertifikat down, and its status
// and related Secret back.
func TestServletMinimalRBAC(t *testing.T) {
	s := framework.StartShard(t)
	service, provider, consumer, _ := servletWorkspaces(t, s, servletCRD("cert-manager.io", "Certificate", "certificates"))
	platform := s.Config(provider)
	platform.Impersonate = rest.ImpersonationConfig{UserName: "tessera-servlet"}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- servlet.Run(ctx, servlet.Config{
			Platform: platform, Service: s.Config(service), ServiceName: "certificate-management",
			LeaseNamespace: "default", LeaseName: "tessera-servlet", Identity: "limited", Workers: 2,
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("servlet: %v", err)
		}
	})

	// Without the rules: refused, nothing published.
	applyEventually(t, s, service, servletExample(t, "publishedresource-certificates.yaml"))
	time.Sleep(3 * time.Second)
	if _, err := kcpClient(t, s, provider).APIExports().Get(t.Context(), "certs.example.corp", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the APIExport exists (or %v) while the servlet's user has no rights in the workspace", err)
	}

	applyEventually(t, s, provider, servletExample(t, "../platform-rbac.yaml"))
	applyEventually(t, s, provider, servletExample(t, "service.yaml"))
	eventually(t, time.Minute, "the APIExport certs.example.corp, published with the minimal rights", func(ctx context.Context) (bool, error) {
		e, err := kcpClient(t, s, provider).APIExports().Get(ctx, "certs.example.corp", metav1.GetOptions{})
		return err == nil && len(e.Spec.LatestResourceSchemas) == 1, nil
	})
	bindCertificates(t, s, consumer)
	zerts := dynamicClient(t, s, consumer).Resource(zertifikateGVR).Namespace("default")
	eventually(t, 30*time.Second, "creating a Zertifikat", func(ctx context.Context) (bool, error) {
		_, err := zerts.Create(ctx, zertifikat("my-cert", "my-cert"), metav1.CreateOptions{})
		return err == nil, nil
	})
	certs := dynamicClient(t, s, service).Resource(certificatesGVR).Namespace("kube-system")
	local := string(consumer) + "-" + published.Hash("default") + "-" + published.Hash("my-cert")
	var cert *unstructured.Unstructured
	eventually(t, 30*time.Second, "the copy on the service cluster", func(ctx context.Context) (bool, error) {
		var err error
		cert, err = certs.Get(ctx, local, metav1.GetOptions{})
		return err == nil, nil
	})
	cert.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
	if _, err := certs.UpdateStatus(t.Context(), cert, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	applyEventually(t, s, service, "apiVersion: v1\nkind: Secret\nmetadata: {name: my-cert, namespace: kube-system}\nstringData: {tls.crt: CERT}\n")
	eventually(t, 30*time.Second, "status and Secret back in the workspace", func(ctx context.Context) (bool, error) {
		z, err := zerts.Get(ctx, "my-cert", metav1.GetOptions{})
		if err != nil || z.Object["status"] == nil {
			return false, nil
		}
		secret, err := kube(t, s, consumer).CoreV1().Secrets("default").Get(ctx, "my-cert", metav1.GetOptions{})
		return err == nil && string(secret.Data["tls.crt"]) == "CERT", nil
	})
}
