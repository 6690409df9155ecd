package servlete2e

import (
	"context"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tessera-dev/tessera/syncer/servlet/published"
	"github.com/tessera-dev/tessera/test/e2e/framework"
	"github.com/tessera-dev/tessera/test/e2e/framework/process"
)

var (
	workspaces   = schema.GroupVersionResource{Group: "tenancy.kcp.io", Version: "v1alpha1", Resource: "workspaces"}
	apiBindings  = schema.GroupVersionResource{Group: "apis.kcp.io", Version: "v1alpha1", Resource: "apibindings"}
	certificates = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}
	zertifikate  = schema.GroupVersionResource{Group: "certs.example.corp", Version: "v1beta1", Resource: "zertifikate"}
)

const certificateCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: certificates.cert-manager.io
spec:
  group: cert-manager.io
  names: {kind: Certificate, listKind: CertificateList, plural: certificates, singular: certificate}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              secretName: {type: string}
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
`

var _ = Describe("tessera-servlet", Ordered, Label("servlet"), func() {
	var (
		t        *framework.Tessera
		svcKube  kubernetes.Interface
		svcDyn   dynamic.Interface
		consumer string // logical cluster
		zerts    dynamic.ResourceInterface
		args     []string
		servlet  *process.Process
	)
	eventually := func(ctx context.Context, f func(Gomega)) {
		GinkgoHelper()
		Eventually(f).WithContext(ctx).WithTimeout(time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
	}
	start := func() {
		GinkgoHelper()
		bin, err := framework.BinDir()
		Expect(err).NotTo(HaveOccurred())
		servlet, err = env.Group().Start(process.Spec{Name: "servlet", Path: filepath.Join(bin, "tessera-servlet"), Args: args, CleanExit: true})
		Expect(err).NotTo(HaveOccurred())
	}
	createWorkspace := func(ctx context.Context, name string) string {
		GinkgoHelper()
		root, err := t.Dynamic("root")
		Expect(err).NotTo(HaveOccurred())
		ws := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace", "metadata": map[string]any{"name": name}}}
		_, err = root.Resource(workspaces).Create(ctx, ws, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		var cluster string
		eventually(ctx, func(g Gomega) {
			ws, err := root.Resource(workspaces).Get(ctx, name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			phase, _, _ := unstructured.NestedString(ws.Object, "status", "phase")
			g.Expect(phase).To(Equal("Ready"))
			cluster, _, _ = unstructured.NestedString(ws.Object, "spec", "cluster")
		})
		return cluster
	}
	apply := func(ctx context.Context, kubeconfig, server, manifest string) {
		GinkgoHelper()
		eventually(ctx, func(g Gomega) {
			path := filepath.Join(env.Dir, "manifest.yaml")
			g.Expect(os.WriteFile(path, []byte(manifest), 0o600)).To(Succeed())
			a := []string{"apply", "-f", path}
			if server != "" {
				a = append(a, "--server", server, "--context", t.Context)
			}
			_, err := env.Kubectl(ctx, kubeconfig, a...)
			g.Expect(err).NotTo(HaveOccurred())
		})
	}
	localName := func(name string) string {
		return consumer + "-" + published.Hash("default") + "-" + published.Hash(name)
	}

	BeforeAll(func(ctx SpecContext) {
		var err error
		t, err = env.Tessera(ctx)
		Expect(err).NotTo(HaveOccurred())
		pcs, err := env.PhysicalClusters(ctx, 1)
		Expect(err).NotTo(HaveOccurred())
		svc := pcs[0]
		cfg, err := clientcmd.BuildConfigFromFlags("", svc.Kubeconfig)
		Expect(err).NotTo(HaveOccurred())
		svcKube, err = kubernetes.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		svcDyn, err = dynamic.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())

		By("installing the Certificate CRD on the service cluster")
		apply(ctx, svc.Kubeconfig, "", certificateCRD)

		By("creating the provider and consumer workspaces")
		provider := createWorkspace(ctx, env.Name("provider"))
		consumer = createWorkspace(ctx, env.Name("consumer"))

		// The servlet reaches the provider's workspace with the admin's
		// credentials: a kubeconfig whose server is the workspace's URL.
		raw, err := clientcmd.LoadFromFile(t.Kubeconfig)
		Expect(err).NotTo(HaveOccurred())
		raw.CurrentContext = t.Context
		raw.Clusters[raw.Contexts[t.Context].Cluster].Server = t.ClusterURL(provider)
		platformKubeconfig := filepath.Join(env.Dir, "servlet-platform.kubeconfig")
		Expect(clientcmd.WriteToFile(*raw, platformKubeconfig)).To(Succeed())
		args = []string{"--platform-kubeconfig=" + platformKubeconfig, "--service-kubeconfig=" + svc.Kubeconfig,
			"--service-name=certificate-management", "--namespace=default"}
		start()

		By("creating the Service and the PublishedResource")
		examples := filepath.Join("..", "..", "..", "deploy", "servlet", "examples")
		// Eventually: the servlet installs the CRDs of both.
		eventually(ctx, func(g Gomega) {
			_, err := env.Kubectl(ctx, t.Kubeconfig, "apply", "-f", filepath.Join(examples, "service.yaml"), "--server", t.ClusterURL(provider), "--context", t.Context)
			g.Expect(err).NotTo(HaveOccurred())
			_, err = env.Kubectl(ctx, svc.Kubeconfig, "apply", "-f", filepath.Join(examples, "publishedresource-certificates.yaml"))
			g.Expect(err).NotTo(HaveOccurred())
		})

		By("binding the Service's export in the consumer workspace, accepting its claims on Secrets and ConfigMaps")
		apply(ctx, t.Kubeconfig, t.ClusterURL(consumer), `apiVersion: apis.kcp.io/v1alpha1
kind: APIBinding
metadata:
  name: certs
spec:
  reference:
    export: {path: `+provider+`, name: certs.example.corp}
  permissionClaims:
  - {resource: secrets, all: true, state: Accepted}
  - {resource: configmaps, all: true, state: Accepted}
`)
		up, err := t.Dynamic(consumer)
		Expect(err).NotTo(HaveOccurred())
		eventually(ctx, func(g Gomega) {
			b, err := up.Resource(apiBindings).Get(ctx, "certs", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			phase, _, _ := unstructured.NestedString(b.Object, "status", "phase")
			g.Expect(phase).To(Equal("Bound"))
		})
		zerts = up.Resource(zertifikate).Namespace("default")
	})

	AfterAll(func() {
		if servlet != nil {
			Expect(servlet.Stop(10 * time.Second)).To(Succeed())
		}
	})

	It("syncs a Zertifikat down, its status and Secret up", func(ctx SpecContext) {
		eventually(ctx, func(g Gomega) {
			_, err := zerts.Create(ctx, zertifikat("my-cert"), metav1.CreateOptions{})
			g.Expect(err).NotTo(HaveOccurred())
		})
		certs := svcDyn.Resource(certificates).Namespace("kube-system")
		var cert *unstructured.Unstructured
		eventually(ctx, func(g Gomega) {
			var err error
			cert, err = certs.Get(ctx, localName("my-cert"), metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
		})

		By("playing the service's controller: status and the Secret")
		cert.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
		_, err := certs.UpdateStatus(ctx, cert, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = svcKube.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "my-cert"}, Data: map[string][]byte{"tls.crt": []byte("CERT")},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		consumerKube, err := t.Client(consumer)
		Expect(err).NotTo(HaveOccurred())
		eventually(ctx, func(g Gomega) {
			z, err := zerts.Get(ctx, "my-cert", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			ready, _, _ := unstructured.NestedSlice(z.Object, "status", "conditions")
			g.Expect(ready).To(HaveLen(1))
			s, err := consumerKube.CoreV1().Secrets("default").Get(ctx, "my-cert", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(s.Data["tls.crt"])).To(Equal("CERT"))
		})
	})

	It("neither duplicates nor loses anything when killed and restarted", func(ctx SpecContext) {
		servlet.Kill()
		_, err := zerts.Create(ctx, zertifikat("while-down"), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		start()
		certs := svcDyn.Resource(certificates).Namespace("kube-system")
		eventually(ctx, func(g Gomega) {
			l, err := certs.List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			var names []string
			for _, c := range l.Items {
				names = append(names, c.GetName())
			}
			g.Expect(names).To(ConsistOf(localName("my-cert"), localName("while-down")))
		})
	})

	It("deletes the copy, then the Zertifikat", func(ctx SpecContext) {
		Expect(zerts.Delete(ctx, "my-cert", metav1.DeleteOptions{})).To(Succeed())
		certs := svcDyn.Resource(certificates).Namespace("kube-system")
		eventually(ctx, func(g Gomega) {
			_, errLocal := certs.Get(ctx, localName("my-cert"), metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(errLocal)).To(BeTrue())
			_, errRemote := zerts.Get(ctx, "my-cert", metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(errRemote)).To(BeTrue())
		})
	})
})

func zertifikat(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "certs.example.corp/v1beta1", "kind": "Zertifikat",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec":     map[string]any{"secretName": name},
	}}
}
