package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/syncer/servlet"
	"github.com/tessera-dev/tessera/syncer/servlet/objects"
	"github.com/tessera-dev/tessera/syncer/servlet/published"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

var (
	certificatesGVR = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}
	zertifikateGVR  = schema.GroupVersionResource{Group: "certs.example.corp", Version: "v1beta1", Resource: "zertifikate"}
)

// startServlet runs a servlet replica in the test process; stop cancels
// it and waits until it has released its Lease.
func startServlet(t *testing.T, s *framework.Shard, service, provider logicalcluster.Name, identity string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- servlet.Run(ctx, servlet.Config{
			Platform: s.Config(provider), Service: s.Config(service), ServiceName: "certificate-management",
			LeaseNamespace: "default", LeaseName: "tessera-servlet", Identity: identity, Workers: 2,
		})
	}()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("servlet %s: %v", identity, err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// TestServletSyncs plays the seed's sync loop with the servlet's leader
// election, publisher and engines, a workspace standing in for the service
// cluster: a Zertifikat (a Certificate projected to v1beta1) created in a
// consumer workspace appears on the service cluster under the configured
// name with the servlet's labels, held by a finalizer; spec and label
// changes follow;
// the status a controller writes there comes back, and so does the
// related Secret it makes, while a related ConfigMap the user makes goes
// down under its regex-rewritten name, and a Secret of the user's that
// holds a related name is left alone; related objects are watched (a
// change, or a copy deleted or changed, is followed within seconds); a
// servlet killed and
// restarted after changes on both sides neither duplicates nor loses
// anything; a copy whose labels were mangled is adopted, not duplicated;
// a copy deleted on the service cluster is made again; a name taken by a
// foreign object is reported and the object left alone; a Zertifikat
// deleted in the workspace takes its copy and the copies of its related
// objects with it, leaving the originals.
func TestServletSyncs(t *testing.T) {
	s := framework.StartShard(t)
	service, provider, consumer, _ := servletWorkspaces(t, s, servletCRD("cert-manager.io", "Certificate", "certificates"))

	stop := startServlet(t, s, service, provider, "replica-a")
	startServlet(t, s, service, provider, "replica-b") // waits for the Lease
	applyEventually(t, s, provider, servletExample(t, "service.yaml"))
	applyEventually(t, s, service, servletExample(t, "publishedresource-certificates.yaml"))
	eventually(t, 30*time.Second, "the APIExport certs.example.corp", func(ctx context.Context) (bool, error) {
		e, err := kcpClient(t, s, provider).APIExports().Get(ctx, "certs.example.corp", metav1.GetOptions{})
		return err == nil && len(e.Spec.LatestResourceSchemas) == 1 && len(e.Spec.PermissionClaims) == 2, nil
	})
	bindCertificates(t, s, consumer)

	zerts := dynamicClient(t, s, consumer).Resource(zertifikateGVR).Namespace("default")
	certs := dynamicClient(t, s, service).Resource(certificatesGVR).Namespace("kube-system")
	localName := func(name string) string {
		return string(consumer) + "-" + published.Hash("default") + "-" + published.Hash(name)
	}
	createZert := func(name, secret string) {
		t.Helper()
		eventually(t, 30*time.Second, "creating Zertifikat "+name, func(ctx context.Context) (bool, error) {
			_, err := zerts.Create(ctx, zertifikat(name, secret), metav1.CreateOptions{})
			return err == nil, err
		})
	}
	waitCert := func(name, what string, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
		t.Helper()
		var c *unstructured.Unstructured
		eventually(t, 30*time.Second, what, func(ctx context.Context) (bool, error) {
			var err error
			c, err = certs.Get(ctx, localName(name), metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil && cond(c), err
		})
		return c
	}
	secretName := func(u *unstructured.Unstructured) string {
		v, _, _ := unstructured.NestedString(u.Object, "spec", "secretName")
		return v
	}

	createZert("my-cert", "my-cert")
	cert := waitCert("my-cert", "the Certificate on the service cluster", func(c *unstructured.Unstructured) bool { return secretName(c) == "my-cert" })
	if r, ok := objects.RemoteOf(cert.GetLabels(), cert.GetAnnotations()); !ok || r != (published.Remote{Cluster: string(consumer), Namespace: "default", Name: "my-cert"}) {
		t.Errorf("the Certificate's labels %v do not name the Zertifikat", cert.GetLabels())
	}
	if z, err := zerts.Get(t.Context(), "my-cert", metav1.GetOptions{}); err != nil || !slices.Contains(z.GetFinalizers(), objects.Finalizer) {
		t.Errorf("the Zertifikat lacks the servlet's finalizer (%v)", err)
	}

	// The service's controller writes status; it comes back up.
	status := map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
	cert.Object["status"] = status
	if _, err := certs.UpdateStatus(t.Context(), cert, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the status back in the workspace", func(ctx context.Context) (bool, error) {
		z, err := zerts.Get(ctx, "my-cert", metav1.GetOptions{})
		return err == nil && equality.Semantic.DeepEqual(z.Object["status"], status), err
	})

	// A label the user sets follows; the servlet's own stay.
	label, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": "a"}}})
	if _, err := zerts.Patch(t.Context(), "my-cert", types.MergePatchType, label, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCert("my-cert", "the label on the copy", func(c *unstructured.Unstructured) bool {
		return c.GetLabels()["team"] == "a" && c.GetLabels()[objects.LabelRemoteCluster] == string(consumer)
	})

	// Related objects: the Secret the service's controller makes comes up
	// to the workspace, the ConfigMap the user makes goes down.
	if _, err := kube(t, s, service).CoreV1().Secrets("kube-system").Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "my-cert"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte("CERT"), "tls.key": []byte("KEY")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube(t, s, consumer).CoreV1().ConfigMaps("default").Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "my-cert-settings"}, Data: map[string]string{"duration": "90d"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the related Secret in the workspace and ConfigMap on the service cluster", func(ctx context.Context) (bool, error) {
		secret, err := kube(t, s, consumer).CoreV1().Secrets("default").Get(ctx, "my-cert", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		cm, err := kube(t, s, service).CoreV1().ConfigMaps("kube-system").Get(ctx, "my-cert-settings", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return string(secret.Data["tls.crt"]) == "CERT" && secret.Type == corev1.SecretTypeTLS && cm.Data["duration"] == "90d", nil
	})

	// Related objects are watched on both sides: a change at the origin
	// follows, and a copy deleted is made again, within seconds (not at a
	// resync).
	svcSecrets, userSecrets := kube(t, s, service).CoreV1().Secrets("kube-system"), kube(t, s, consumer).CoreV1().Secrets("default")
	if _, err := svcSecrets.Update(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "my-cert"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte("CERT2"), "tls.key": []byte("KEY")},
	}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the changed Secret in the workspace", func(ctx context.Context) (bool, error) {
		secret, err := userSecrets.Get(ctx, "my-cert", metav1.GetOptions{})
		return err == nil && string(secret.Data["tls.crt"]) == "CERT2", nil
	})
	if err := userSecrets.Delete(t.Context(), "my-cert", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the deleted Secret copy made again", func(ctx context.Context) (bool, error) {
		secret, err := userSecrets.Get(ctx, "my-cert", metav1.GetOptions{})
		return err == nil && string(secret.Data["tls.crt"]) == "CERT2", nil
	})
	tamper, _ := json.Marshal(map[string]any{"data": map[string]any{"tls.crt": "Rm9yZ2Vk"}})
	if _, err := userSecrets.Patch(t.Context(), "my-cert", types.MergePatchType, tamper, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the changed Secret copy made as the original again", func(ctx context.Context) (bool, error) {
		secret, err := userSecrets.Get(ctx, "my-cert", metav1.GetOptions{})
		return err == nil && string(secret.Data["tls.crt"]) == "CERT2", nil
	})
	settings, _ := json.Marshal(map[string]any{"data": map[string]any{"duration": "30d"}})
	if _, err := kube(t, s, consumer).CoreV1().ConfigMaps("default").Patch(t.Context(), "my-cert-settings", types.MergePatchType, settings, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the changed ConfigMap on the service cluster", func(ctx context.Context) (bool, error) {
		cm, err := kube(t, s, service).CoreV1().ConfigMaps("kube-system").Get(ctx, "my-cert-settings", metav1.GetOptions{})
		return err == nil && cm.Data["duration"] == "30d", nil
	})

	// A Secret of the user's that holds a related name is not overwritten;
	// the other related object is still copied.
	if _, err := kube(t, s, consumer).CoreV1().Secrets("default").Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "users-own"}, StringData: map[string]string{"mine": "yes"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube(t, s, service).CoreV1().Secrets("kube-system").Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "users-own"}, StringData: map[string]string{"tls.crt": "CERT"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube(t, s, consumer).CoreV1().ConfigMaps("default").Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "users-own-settings"}, Data: map[string]string{"duration": "1d"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createZert("users", "users-own")
	eventually(t, 30*time.Second, "the other related object of the colliding one on the service cluster", func(ctx context.Context) (bool, error) {
		_, err := kube(t, s, service).CoreV1().ConfigMaps("kube-system").Get(ctx, "users-own-settings", metav1.GetOptions{})
		return err == nil, nil
	})
	if secret, err := kube(t, s, consumer).CoreV1().Secrets("default").Get(t.Context(), "users-own", metav1.GetOptions{}); err != nil || string(secret.Data["mine"]) != "yes" || len(secret.Data) != 1 {
		t.Errorf("the user's Secret was overwritten: %v %v", err, secret)
	}

	// The leader goes; the other replica takes over. Meanwhile a spec
	// changes and a second Zertifikat is created.
	stop()
	patchSecret(t, zerts, "my-cert", "renamed")
	createZert("second", "second")
	waitCert("my-cert", "the spec change after the failover", func(c *unstructured.Unstructured) bool { return secretName(c) == "renamed" })
	waitCert("second", "the Zertifikat created during the failover", func(c *unstructured.Unstructured) bool { return true })
	startServlet(t, s, service, provider, "replica-c")
	countCerts := func(want int) {
		t.Helper()
		eventually(t, 30*time.Second, "the number of Certificates", func(ctx context.Context) (bool, error) {
			l, err := certs.List(ctx, metav1.ListOptions{})
			return err == nil && len(l.Items) == want, err
		})
	}
	countCerts(3)

	// Mangled labels: the copy is adopted again, not duplicated.
	mangle, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{objects.LabelRemoteCluster: nil}}})
	if _, err := certs.Patch(t.Context(), localName("second"), types.MergePatchType, mangle, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCert("second", "the mangled copy to be adopted", func(c *unstructured.Unstructured) bool {
		return c.GetLabels()[objects.LabelRemoteCluster] == string(consumer)
	})
	countCerts(3)

	// A copy deleted on the service cluster is made again: the workspace
	// is the source of truth.
	if err := certs.Delete(t.Context(), localName("second"), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the deleted copy to be made again", func(ctx context.Context) (bool, error) {
		l, err := certs.List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 3, err
	})

	// A foreign object holds the name of a third copy.
	foreign := zertifikat(localName("third"), "foreign")
	foreign.SetAPIVersion("cert-manager.io/v1")
	foreign.SetKind("Certificate")
	foreign.SetNamespace("kube-system")
	if _, err := certs.Create(t.Context(), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createZert("third", "third")
	eventually(t, 30*time.Second, "a NameCollision event", func(ctx context.Context) (bool, error) {
		l, err := kube(t, s, service).CoreV1().Events("kube-system").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		return slices.ContainsFunc(l.Items, func(e corev1.Event) bool {
			return e.Reason == "NameCollision" && e.InvolvedObject.Name == localName("third")
		}), nil
	})
	if c, err := certs.Get(t.Context(), localName("third"), metav1.GetOptions{}); err != nil || secretName(c) != "foreign" || len(c.GetLabels()) != 0 {
		t.Errorf("the foreign Certificate was changed: %v %v", err, c)
	}

	// Deleted in the workspace: the copy goes, with the copies of its
	// related objects on both sides, then the Zertifikat. The originals
	// stay. (my-cert's secretName is "renamed" since the failover.)
	if _, err := svcSecrets.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "renamed"}, Data: map[string][]byte{"tls.crt": []byte("CERT3")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube(t, s, consumer).CoreV1().ConfigMaps("default").Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "renamed-settings"}, Data: map[string]string{"duration": "7d"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the related copies of the renamed Zertifikat", func(ctx context.Context) (bool, error) {
		_, errSecret := userSecrets.Get(ctx, "renamed", metav1.GetOptions{})
		_, errCM := kube(t, s, service).CoreV1().ConfigMaps("kube-system").Get(ctx, "renamed-settings", metav1.GetOptions{})
		return errSecret == nil && errCM == nil, nil
	})
	if err := zerts.Delete(t.Context(), "my-cert", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the copies and the Zertifikat to go", func(ctx context.Context) (bool, error) {
		_, errLocal := certs.Get(ctx, localName("my-cert"), metav1.GetOptions{})
		_, errRemote := zerts.Get(ctx, "my-cert", metav1.GetOptions{})
		_, errSecret := userSecrets.Get(ctx, "renamed", metav1.GetOptions{})
		_, errCM := kube(t, s, service).CoreV1().ConfigMaps("kube-system").Get(ctx, "renamed-settings", metav1.GetOptions{})
		return apierrors.IsNotFound(errLocal) && apierrors.IsNotFound(errRemote) && apierrors.IsNotFound(errSecret) && apierrors.IsNotFound(errCM), nil
	})
	if _, err := svcSecrets.Get(t.Context(), "renamed", metav1.GetOptions{}); err != nil {
		t.Errorf("the service's own Secret went with the Zertifikat: %v", err)
	}
	if _, err := kube(t, s, consumer).CoreV1().ConfigMaps("default").Get(t.Context(), "renamed-settings", metav1.GetOptions{}); err != nil {
		t.Errorf("the user's own ConfigMap went with the Zertifikat: %v", err)
	}
}

// bindCertificates binds the Service's export certs.example.corp of
// root:provider in cluster, accepting its claims on Secrets and
// ConfigMaps, and waits until the binding is Bound.
func bindCertificates(t *testing.T, s *framework.Shard, cluster logicalcluster.Name) {
	t.Helper()
	binding := &apisv1alpha1.APIBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "certs"},
		Spec: apisv1alpha1.APIBindingSpec{
			Reference: apisv1alpha1.BindingReference{Export: &apisv1alpha1.ExportBindingReference{Path: "root:provider", Name: "certs.example.corp"}},
			PermissionClaims: []apisv1alpha1.AcceptablePermissionClaim{
				{PermissionClaim: apisv1alpha1.PermissionClaim{GroupResource: apisv1alpha1.GroupResource{Resource: "configmaps"}, All: true}, State: apisv1alpha1.ClaimAccepted},
				{PermissionClaim: apisv1alpha1.PermissionClaim{GroupResource: apisv1alpha1.GroupResource{Resource: "secrets"}, All: true}, State: apisv1alpha1.ClaimAccepted},
			},
		},
	}
	if _, err := kcpClient(t, s, cluster).APIBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitBound(t, s, cluster, "certs")
}

// servletExample returns a manifest of deploy/servlet/examples.
func servletExample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "servlet", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func zertifikat(name, secret string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "certs.example.corp/v1beta1", "kind": "Zertifikat",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec":     map[string]any{"secretName": secret},
	}}
}

func patchSecret(t *testing.T, c interface {
	Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*unstructured.Unstructured, error)
}, name, secret string) {
	t.Helper()
	p, _ := json.Marshal(map[string]any{"spec": map[string]any{"secretName": secret}})
	if _, err := c.Patch(t.Context(), name, types.MergePatchType, p, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestServletProjectsScope syncs a projection that changes the scope: a
// namespaced Issuer CRD of the service cluster published as a
// cluster-scoped Aussteller. An Aussteller created in the consumer's
// workspace is copied into the namespace the naming gives, its status
// comes back, and deleting it deletes the copy.
func TestServletProjectsScope(t *testing.T) {
	s := framework.StartShard(t)
	service, provider, consumer, _ := servletWorkspaces(t, s, servletCRD("cert-manager.io", "Issuer", "issuers"))
	startServlet(t, s, service, provider, "replica-a")
	applyEventually(t, s, provider, servletExample(t, "service.yaml"))
	applyEventually(t, s, service, `apiVersion: services.kdp.k8c.io/v1alpha1
kind: PublishedResource
metadata:
  name: publish-issuers
spec:
  resource: {kind: Issuer, apiGroup: cert-manager.io, version: v1}
  naming: {namespace: issuers, name: "$remoteClusterName-$remoteName"}
  projection: {kind: Aussteller, plural: Aussteller, scope: Cluster}
`)
	eventually(t, 30*time.Second, "the APIExport certs.example.corp", func(ctx context.Context) (bool, error) {
		e, err := kcpClient(t, s, provider).APIExports().Get(ctx, "certs.example.corp", metav1.GetOptions{})
		return err == nil && len(e.Spec.LatestResourceSchemas) == 1, nil
	})
	createBinding(t, s, consumer, "certs", "root:provider", "certs.example.corp")
	waitBound(t, s, consumer, "certs")

	aussteller := dynamicClient(t, s, consumer).Resource(schema.GroupVersionResource{Group: "certs.example.corp", Version: "v1", Resource: "aussteller"})
	issuers := dynamicClient(t, s, service).Resource(schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "issuers"}).Namespace("issuers")
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "certs.example.corp/v1", "kind": "Aussteller",
		"metadata": map[string]any{"name": "corp-ca"},
		"spec":     map[string]any{"secretName": "ca"},
	}}
	eventually(t, 30*time.Second, "creating the cluster-scoped Aussteller", func(ctx context.Context) (bool, error) {
		_, err := aussteller.Create(ctx, obj, metav1.CreateOptions{})
		return err == nil, err
	})
	localName := string(consumer) + "-corp-ca"
	var issuer *unstructured.Unstructured
	eventually(t, 30*time.Second, "the namespaced copy", func(ctx context.Context) (bool, error) {
		var err error
		issuer, err = issuers.Get(ctx, localName, metav1.GetOptions{})
		return err == nil, nil
	})
	if r, ok := objects.RemoteOf(issuer.GetLabels(), issuer.GetAnnotations()); !ok || r != (published.Remote{Cluster: string(consumer), Name: "corp-ca"}) {
		t.Errorf("the copy's labels %v do not name the cluster-scoped Aussteller", issuer.GetLabels())
	}
	status := map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
	issuer.Object["status"] = status
	if _, err := issuers.UpdateStatus(t.Context(), issuer, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the status back on the Aussteller", func(ctx context.Context) (bool, error) {
		a, err := aussteller.Get(ctx, "corp-ca", metav1.GetOptions{})
		return err == nil && equality.Semantic.DeepEqual(a.Object["status"], status), err
	})
	if err := aussteller.Delete(t.Context(), "corp-ca", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the copy and the Aussteller to go", func(ctx context.Context) (bool, error) {
		_, errLocal := issuers.Get(ctx, localName, metav1.GetOptions{})
		_, errRemote := aussteller.Get(ctx, "corp-ca", metav1.GetOptions{})
		return apierrors.IsNotFound(errLocal) && apierrors.IsNotFound(errRemote), nil
	})
}
