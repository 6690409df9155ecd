package integration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/syncer/servlet/published"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestServletAcrossShards runs the servlet against an installation of two
// shards: the Service's export is in root's provider workspace, one
// consumer is on root and one on shard-1. The endpoint slice lists both
// shards' apiexport virtual workspaces and the servlet watches both: each
// consumer's Zertifikat is copied to the service cluster, gets its status
// and related Secret back, and deleting it deletes its copies.
func TestServletAcrossShards(t *testing.T) {
	caCert, caKey := framework.NewInstallationCA(t)
	root := framework.StartShard(t, framework.WithInstallationCA(caCert, caKey))
	shard1 := framework.StartShard(t, framework.WithInstallationCA(caCert, caKey), framework.JoiningRoot(root, "shard-1"))
	eventually(t, time.Minute, "shard-1 registered", func(ctx context.Context) (bool, error) {
		_, err := kcpClient(t, root, logicalcluster.Root).Shards().Get(ctx, "shard-1", metav1.GetOptions{})
		return err == nil, nil
	})
	service := logicalcluster.Name(createWorkspaceOn(t, root, logicalcluster.Root, "service-cluster", "root").Spec.Cluster)
	provider := logicalcluster.Name(createWorkspaceOn(t, root, logicalcluster.Root, "provider", "root").Spec.Cluster)
	near := logicalcluster.Name(createWorkspaceOn(t, root, logicalcluster.Root, "near-consumer", "root").Spec.Cluster)
	far := logicalcluster.Name(createWorkspaceOn(t, root, logicalcluster.Root, "far-consumer", "shard-1").Spec.Cluster)
	crds, err := apiextensionsclient.NewForConfig(root.Config(service))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crds.ApiextensionsV1().CustomResourceDefinitions().Create(t.Context(), servletCRD("cert-manager.io", "Certificate", "certificates"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	startServlet(t, root, service, provider, "replica-a")
	applyEventually(t, root, provider, servletExample(t, "service.yaml"))
	applyEventually(t, root, service, servletExample(t, "publishedresource-certificates.yaml"))
	eventually(t, 30*time.Second, "the endpoint slice to list both shards", func(ctx context.Context) (bool, error) {
		s, err := kcpClient(t, root, provider).APIExportEndpointSlices().Get(ctx, "certs.example.corp", metav1.GetOptions{})
		return err == nil && len(s.Status.APIExportEndpoints) == 2, nil
	})

	certs := dynamicClient(t, root, service).Resource(certificatesGVR).Namespace("kube-system")
	for _, c := range []struct {
		shard   *framework.Shard
		cluster logicalcluster.Name
	}{{root, near}, {shard1, far}} {
		bindCertificates(t, c.shard, c.cluster)
		zerts := dynamicClient(t, c.shard, c.cluster).Resource(zertifikateGVR).Namespace("default")
		eventually(t, 30*time.Second, "creating a Zertifikat in "+string(c.cluster), func(ctx context.Context) (bool, error) {
			_, err := zerts.Create(ctx, zertifikat("cert", "cert-"+string(c.cluster)), metav1.CreateOptions{})
			return err == nil, nil
		})
		local := string(c.cluster) + "-" + published.Hash("default") + "-" + published.Hash("cert")
		var cert *unstructured.Unstructured
		eventually(t, 30*time.Second, "the copy of "+string(c.cluster)+"'s Zertifikat", func(ctx context.Context) (bool, error) {
			var err error
			cert, err = certs.Get(ctx, local, metav1.GetOptions{})
			return err == nil, nil
		})
		status := map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
		cert.Object["status"] = status
		if _, err := certs.UpdateStatus(t.Context(), cert, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := kube(t, root, service).CoreV1().Secrets("kube-system").Create(t.Context(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "cert-" + string(c.cluster)}, Data: map[string][]byte{"tls.crt": []byte(c.cluster)},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		consumerSecrets := kube(t, c.shard, c.cluster).CoreV1().Secrets("default")
		eventually(t, 30*time.Second, "status and Secret back in "+string(c.cluster), func(ctx context.Context) (bool, error) {
			z, err := zerts.Get(ctx, "cert", metav1.GetOptions{})
			if err != nil || !equality.Semantic.DeepEqual(z.Object["status"], status) {
				return false, nil
			}
			s, err := consumerSecrets.Get(ctx, "cert-"+string(c.cluster), metav1.GetOptions{})
			return err == nil && string(s.Data["tls.crt"]) == string(c.cluster), nil
		})
		if err := zerts.Delete(t.Context(), "cert", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "the copies and the Zertifikat in "+string(c.cluster)+" to go", func(ctx context.Context) (bool, error) {
			_, errLocal := certs.Get(ctx, local, metav1.GetOptions{})
			_, errRemote := zerts.Get(ctx, "cert", metav1.GetOptions{})
			_, errSecret := consumerSecrets.Get(ctx, "cert-"+string(c.cluster), metav1.GetOptions{})
			return apierrors.IsNotFound(errLocal) && apierrors.IsNotFound(errRemote) && apierrors.IsNotFound(errSecret), nil
		})
	}
}
