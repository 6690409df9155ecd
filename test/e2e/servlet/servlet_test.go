package servlete2e

import (
	"context"
	"fmt"
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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
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

var _ = Describe("tessera-servlet", Ordered, Label("servlet"), func() {
	var (
		t        *framework.Tessera
		svcDyn   dynamic.Interface
		consumer string // logical cluster
		zerts    dynamic.ResourceInterface
		args     []string
		servlet  *process.Process
		provider string // logical cluster
		// stopFixture stops the service's fixture controller.
		fixtureCtx  context.Context
		stopFixture context.CancelFunc = func() {}
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
		// Not client-go's 5 requests per second: the spec with 100
		// workspaces polls many objects at once.
		cfg.QPS, cfg.Burst = 100, 200
		svcDyn, err = dynamic.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())

		By("installing the Certificate CRD on the service cluster and starting its fixture controller")
		examples := filepath.Join("..", "..", "..", "deploy", "servlet", "examples")
		_, err = env.Kubectl(ctx, svc.Kubeconfig, "apply", "-f", filepath.Join(examples, "certificate-crd.yaml"))
		Expect(err).NotTo(HaveOccurred())
		fixtureCtx, stopFixture = context.WithCancel(context.Background())
		// Clients of its own, as a controller has.
		fixtureDyn, err := dynamic.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		fixtureKube, err := kubernetes.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		go runFixtureController(fixtureCtx, fixtureDyn, fixtureKube)

		By("creating the provider and consumer workspaces")
		provider = createWorkspace(ctx, env.Name("provider"))
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
		stopFixture()
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
		eventually(ctx, func(g Gomega) {
			cert, err := certs.Get(ctx, localName("my-cert"), metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			secretName, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
			g.Expect(secretName).To(Equal("my-cert"))
		})

		By("the fixture controller's status and Secret coming back")
		consumerKube, err := t.Client(consumer)
		Expect(err).NotTo(HaveOccurred())
		eventually(ctx, func(g Gomega) {
			z, err := zerts.Get(ctx, "my-cert", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ready(z)).To(BeTrue())
			s, err := consumerKube.CoreV1().Secrets("default").Get(ctx, "my-cert", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(s.Data["tls.crt"])).To(Equal("CERT " + localName("my-cert")))
		})
	})

	It("syncs 100 workspaces at once", func(ctx SpecContext) {
		const n = 100
		root, err := t.Dynamic("root")
		Expect(err).NotTo(HaveOccurred())
		names := make([]string, n)
		for i := range names {
			names[i] = env.Name(fmt.Sprintf("many-%03d", i))
		}
		start := time.Now()
		errs := make(chan error, n)
		sem := make(chan struct{}, 20)
		for _, name := range names {
			go func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				errs <- oneOfMany(ctx, t, root, provider, name, svcDyn)
			}()
		}
		var failed []error
		for range names {
			if err := <-errs; err != nil {
				failed = append(failed, err)
			}
		}
		Expect(failed).To(BeEmpty())
		GinkgoWriter.Printf("100 workspaces created, bound, and their Zertifikate synced down and back with status and Secret in %v\n", time.Since(start))
	})

	It("adopts a copy whose labels were mangled, and makes a deleted copy again", func(ctx SpecContext) {
		certs := svcDyn.Resource(certificates).Namespace("kube-system")
		eventually(ctx, func(g Gomega) {
			_, err := zerts.Create(ctx, zertifikat("mangled"), metav1.CreateOptions{})
			g.Expect(err).NotTo(HaveOccurred())
		})
		var uid types.UID
		eventually(ctx, func(g Gomega) {
			c, err := certs.Get(ctx, localName("mangled"), metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			uid = c.GetUID()
		})
		_, err := certs.Patch(ctx, localName("mangled"), types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"servlet.kdp.k8c.io/remote-object-cluster":null,"servlet.kdp.k8c.io/remote-object-name-hash":"x"}}}`), metav1.PatchOptions{})
		Expect(err).NotTo(HaveOccurred())
		eventually(ctx, func(g Gomega) {
			c, err := certs.Get(ctx, localName("mangled"), metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(c.GetUID()).To(Equal(uid))
			g.Expect(c.GetLabels()).To(HaveKeyWithValue("servlet.kdp.k8c.io/remote-object-cluster", consumer))
			g.Expect(c.GetLabels()).To(HaveKeyWithValue("servlet.kdp.k8c.io/remote-object-name-hash", published.Hash("mangled")))
		})

		By("deleting the copy on the service cluster: the workspace is the source of truth")
		Expect(certs.Delete(ctx, localName("mangled"), metav1.DeleteOptions{})).To(Succeed())
		eventually(ctx, func(g Gomega) {
			c, err := certs.Get(ctx, localName("mangled"), metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(c.GetUID()).NotTo(Equal(uid))
		})
		eventually(ctx, func(g Gomega) {
			l, err := certs.List(ctx, metav1.ListOptions{LabelSelector: "servlet.kdp.k8c.io/remote-object-cluster=" + consumer})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(l.Items).To(HaveLen(2)) // my-cert and mangled
		})
	})

	It("neither duplicates nor loses anything when killed and restarted", func(ctx SpecContext) {
		servlet.Kill()
		_, err := zerts.Create(ctx, zertifikat("while-down"), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		start()
		certs := svcDyn.Resource(certificates).Namespace("kube-system")
		eventually(ctx, func(g Gomega) {
			l, err := certs.List(ctx, metav1.ListOptions{LabelSelector: "servlet.kdp.k8c.io/remote-object-cluster=" + consumer})
			g.Expect(err).NotTo(HaveOccurred())
			var names []string
			for _, c := range l.Items {
				names = append(names, c.GetName())
			}
			g.Expect(names).To(ConsistOf(localName("my-cert"), localName("mangled"), localName("while-down")))
		})
		eventually(ctx, func(g Gomega) {
			z, err := zerts.Get(ctx, "while-down", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ready(z)).To(BeTrue())
		})
	})

	It("deletes the copy and the Secret's copy, then the Zertifikat", func(ctx SpecContext) {
		consumerKube, err := t.Client(consumer)
		Expect(err).NotTo(HaveOccurred())
		Expect(zerts.Delete(ctx, "my-cert", metav1.DeleteOptions{})).To(Succeed())
		certs := svcDyn.Resource(certificates).Namespace("kube-system")
		eventually(ctx, func(g Gomega) {
			_, errLocal := certs.Get(ctx, localName("my-cert"), metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(errLocal)).To(BeTrue())
			_, errRemote := zerts.Get(ctx, "my-cert", metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(errRemote)).To(BeTrue())
			_, errSecret := consumerKube.CoreV1().Secrets("default").Get(ctx, "my-cert", metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(errSecret)).To(BeTrue())
		})
	})
})

// oneOfMany creates a workspace name under root, binds the Service's
// export there accepting its claims, creates a Zertifikat and waits for
// its copy on the service cluster, its status and its Secret to come back.
func oneOfMany(ctx context.Context, t *framework.Tessera, root dynamic.Interface, provider, name string, svcDyn dynamic.Interface) error {
	poll := func(what string, f func(context.Context) (bool, error)) error {
		if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, f); err != nil {
			return fmt.Errorf("%s: %s: %w", name, what, err)
		}
		return nil
	}
	ws := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace", "metadata": map[string]any{"name": name}}}
	if _, err := root.Resource(workspaces).Create(ctx, ws, metav1.CreateOptions{}); err != nil {
		return err
	}
	var cluster string
	if err := poll("workspace Ready", func(ctx context.Context) (bool, error) {
		ws, err := root.Resource(workspaces).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		phase, _, _ := unstructured.NestedString(ws.Object, "status", "phase")
		cluster, _, _ = unstructured.NestedString(ws.Object, "spec", "cluster")
		return phase == "Ready", nil
	}); err != nil {
		return err
	}
	dyn, err := t.Dynamic(cluster)
	if err != nil {
		return err
	}
	kube, err := t.Client(cluster)
	if err != nil {
		return err
	}
	binding := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apis.kcp.io/v1alpha1", "kind": "APIBinding", "metadata": map[string]any{"name": "certs"},
		"spec": map[string]any{
			"reference": map[string]any{"export": map[string]any{"path": provider, "name": "certs.example.corp"}},
			"permissionClaims": []any{
				map[string]any{"resource": "secrets", "all": true, "state": "Accepted"},
				map[string]any{"resource": "configmaps", "all": true, "state": "Accepted"},
			},
		},
	}}
	if _, err := dyn.Resource(apiBindings).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return err
	}
	z := dyn.Resource(zertifikate).Namespace("default")
	if err := poll("creating the Zertifikat", func(ctx context.Context) (bool, error) {
		_, err := z.Create(ctx, zertifikat(name), metav1.CreateOptions{})
		return err == nil, nil
	}); err != nil {
		return err
	}
	// Named after the workspace, so that the Secrets of all workspaces do
	// not collide in the one namespace of the service cluster.
	local := cluster + "-" + published.Hash("default") + "-" + published.Hash(name)
	if err := poll("the copy on the service cluster", func(ctx context.Context) (bool, error) {
		_, err := svcDyn.Resource(certificates).Namespace("kube-system").Get(ctx, local, metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		return err
	}
	return poll("status and Secret back", func(ctx context.Context) (bool, error) {
		got, err := z.Get(ctx, name, metav1.GetOptions{})
		if err != nil || !ready(got) {
			return false, nil
		}
		s, err := kube.CoreV1().Secrets("default").Get(ctx, name, metav1.GetOptions{})
		return err == nil && string(s.Data["tls.crt"]) == "CERT "+local, nil
	})
}

// ready tells whether a Zertifikat has the status the fixture controller
// writes.
func ready(z *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(z.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// runFixtureController plays the service's controller (cert-manager) on
// the service cluster until ctx is done: every Certificate gets a Ready
// status and a Secret named by spec.secretName in its namespace, holding
// "CERT <certificate name>". It is an informer with a 2-second resync, so
// a failed write is tried again.
func runFixtureController(ctx context.Context, dyn dynamic.Interface, kube kubernetes.Interface) {
	defer GinkgoRecover()
	informer := dynamicinformer.NewFilteredDynamicInformer(dyn, certificates, metav1.NamespaceAll, 2*time.Second, cache.Indexers{}, nil).Informer()
	reconcile := func(obj any) {
		cert, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		if !ready(cert) {
			cert = cert.DeepCopy()
			cert.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
			if _, err := dyn.Resource(certificates).Namespace(cert.GetNamespace()).UpdateStatus(ctx, cert, metav1.UpdateOptions{}); err != nil && ctx.Err() == nil {
				GinkgoWriter.Printf("fixture controller: status of %s: %v\n", cert.GetName(), err)
			}
		}
		secretName, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
		if secretName == "" {
			return
		}
		_, err := kube.CoreV1().Secrets(cert.GetNamespace()).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: secretName}, Data: map[string][]byte{"tls.crt": []byte("CERT " + cert.GetName())},
		}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) && ctx.Err() == nil {
			GinkgoWriter.Printf("fixture controller: Secret %s: %v\n", secretName, err)
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    reconcile,
		UpdateFunc: func(_, obj any) { reconcile(obj) },
	}); err != nil {
		panic(err)
	}
	informer.RunWithContext(ctx)
}

func zertifikat(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "certs.example.corp/v1beta1", "kind": "Zertifikat",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec":     map[string]any{"secretName": name},
	}}
}
