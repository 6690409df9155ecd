package sharde2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/tessera-dev/tessera/test/e2e/framework"
)

const clusterAnnotation = "kcp.io/cluster"

var _ = Describe("A tessera shard process", Ordered, Label("shard", "kubectl"), func() {
	var (
		ts   *framework.Tessera
		a, b string
	)

	// kubectl runs the real kubectl as the shard admin against a logical
	// cluster and fails the spec when it fails.
	kubectl := func(ctx SpecContext, cluster string, args ...string) string {
		GinkgoHelper()
		out, err := ts.Kubectl(ctx, cluster, args...)
		Expect(err).NotTo(HaveOccurred())
		return out
	}
	manifest := func(name, content string) string {
		GinkgoHelper()
		dir := filepath.Join(env.Dir, "manifests")
		Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
		p := filepath.Join(dir, name)
		Expect(os.WriteFile(p, []byte(content), 0o644)).To(Succeed())
		return p
	}

	BeforeAll(func(ctx SpecContext) {
		var err error
		ts, err = env.Tessera(ctx)
		Expect(err).NotTo(HaveOccurred())
		a, b = env.Name("e2e-a"), env.Name("e2e-b")
		By("creating logical clusters " + a + " and " + b + " as the shard admin")
		for _, c := range []string{a, b} {
			Expect(ts.CreateLogicalCluster(ctx, c)).To(Succeed())
			if ts.Process == nil {
				// Leave an installation someone else runs as it was.
				DeferCleanup(ts.DeleteLogicalCluster, c)
			}
		}
	})

	It("serves every logical cluster to kubectl as a cluster of its own", func(ctx SpecContext) {
		for _, c := range []string{a, b} {
			out := kubectl(ctx, c, "get", "namespaces")
			for _, s := range []string{"NAME", "STATUS", "default", "Active"} {
				Expect(out).To(ContainSubstring(s), "kubectl get namespaces in %s", c)
			}
			out = kubectl(ctx, c, "api-resources", "-o", "name")
			for _, r := range []string{"configmaps", "namespaces", "customresourcedefinitions.apiextensions.k8s.io", "logicalclusters.core.kcp.io"} {
				Expect(strings.Fields(out)).To(ContainElement(r), "kubectl api-resources in %s", c)
			}
			Expect(kubectl(ctx, c, "get", "logicalcluster", "cluster", "-o", "jsonpath={.metadata.annotations.kcp\\.io/cluster}")).To(Equal(c))
		}
	})

	It("keeps the objects of two logical clusters apart", func(ctx SpecContext) {
		for _, c := range []string{a, b} {
			kubectl(ctx, c, "create", "namespace", "shop")
			kubectl(ctx, c, "-n", "shop", "create", "configmap", "settings", "--from-literal=owner="+c)
		}
		By("reading back the same name in both clusters")
		for _, c := range []string{a, b} {
			var cm corev1.ConfigMap
			Expect(json.Unmarshal([]byte(kubectl(ctx, c, "-n", "shop", "get", "configmap", "settings", "-o", "json")), &cm)).To(Succeed())
			Expect(cm.Data).To(HaveKeyWithValue("owner", c))
			Expect(cm.Annotations).To(HaveKeyWithValue(clusterAnnotation, c))
		}

		By("creating an object in one cluster only")
		kubectl(ctx, a, "-n", "shop", "create", "configmap", "only-in-a")
		out, err := ts.Kubectl(ctx, b, "-n", "shop", "get", "configmap", "only-in-a")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("NotFound"))

		By("watching one cluster with client-go while both change")
		clientA, err := ts.Client(a)
		Expect(err).NotTo(HaveOccurred())
		clientB, err := ts.Client(b)
		Expect(err).NotTo(HaveOccurred())
		w, err := clientA.CoreV1().ConfigMaps("shop").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=watched"})
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()
		for _, cl := range []kubernetes.Interface{clientB, clientA} {
			_, err := cl.CoreV1().ConfigMaps("shop").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "watched"}}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
		}
		var ev watch.Event
		Eventually(w.ResultChan()).WithTimeout(30 * time.Second).Should(Receive(&ev))
		Expect(ev.Type).To(Equal(watch.Added))
		Expect(ev.Object.(*corev1.ConfigMap).Annotations).To(HaveKeyWithValue(clusterAnnotation, a), "the watch of %s saw the object of another cluster", a)
		Consistently(w.ResultChan()).WithTimeout(2 * time.Second).ShouldNot(Receive())

		By("deleting the namespace in one cluster")
		kubectl(ctx, b, "delete", "namespace", "shop", "--wait=false")
		Eventually(func(g Gomega) {
			_, err := clientB.CoreV1().Namespaces().Get(ctx, "shop", metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "namespace shop in %s still exists: %v", b, err)
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		Expect(kubectl(ctx, a, "get", "namespace", "shop", "-o", "jsonpath={.status.phase}")).To(Equal("Active"))
		Expect(kubectl(ctx, a, "-n", "shop", "get", "configmaps", "-o", "name")).To(ContainSubstring("configmap/settings"))
	})

	It("gives every logical cluster its own CRDs", func(ctx SpecContext) {
		crd := func(field, typ string) string {
			return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.e2e.tessera.dev
spec:
  group: e2e.tessera.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: The spec of a widget in this cluster.
            properties:
              ` + field + `: {type: ` + typ + `, description: "The ` + field + ` of the widget."}
`
		}
		widget := func(name, field, value string) string {
			return "apiVersion: e2e.tessera.dev/v1\nkind: Widget\nmetadata:\n  name: " + name + "\n  namespace: default\nspec:\n  " + field + ": " + value + "\n"
		}

		By("checking that neither cluster serves widgets yet")
		_, err := ts.Kubectl(ctx, a, "get", "widgets")
		Expect(err).To(MatchError(ContainSubstring("the server doesn't have a resource type")))

		By("creating the same CRD with different schemas in the two clusters")
		kubectl(ctx, a, "apply", "-f", manifest("crd-a.yaml", crd("size", "integer")))
		kubectl(ctx, b, "apply", "-f", manifest("crd-b.yaml", crd("color", "string")))
		for _, c := range []string{a, b} {
			kubectl(ctx, c, "wait", "--for=condition=Established", "crd/widgets.e2e.tessera.dev", "--timeout=60s")
		}

		By("validating each cluster's widgets by its own schema")
		Eventually(func(g Gomega) {
			_, err := ts.Kubectl(ctx, a, "apply", "-f", manifest("w-a.yaml", widget("small", "size", "3")))
			g.Expect(err).NotTo(HaveOccurred())
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		_, err = ts.Kubectl(ctx, a, "apply", "-f", manifest("w-a-bad.yaml", widget("big", "size", "huge")))
		Expect(err).To(MatchError(ContainSubstring("spec.size")))
		Eventually(func(g Gomega) {
			_, err := ts.Kubectl(ctx, b, "apply", "-f", manifest("w-b.yaml", widget("blue", "color", "blue")))
			g.Expect(err).NotTo(HaveOccurred())
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		_, err = ts.Kubectl(ctx, b, "apply", "-f", manifest("w-b-size.yaml", widget("sized", "size", "3")))
		Expect(err).To(MatchError(ContainSubstring(`unknown field "spec.size"`)))

		Expect(kubectl(ctx, a, "get", "wd", "-o", "name")).To(Equal("widget.e2e.tessera.dev/small\n"))
		Expect(kubectl(ctx, b, "get", "wd", "-o", "name")).To(Equal("widget.e2e.tessera.dev/blue\n"))
		Expect(kubectl(ctx, a, "explain", "widgets.spec")).To(And(ContainSubstring("size"), Not(ContainSubstring("color"))))
		Expect(kubectl(ctx, b, "explain", "widgets.spec")).To(And(ContainSubstring("color"), Not(ContainSubstring("size"))))

		By("reading the widgets with the dynamic client")
		widgets := schema.GroupVersionResource{Group: "e2e.tessera.dev", Version: "v1", Resource: "widgets"}
		dynA, err := ts.Dynamic(a)
		Expect(err).NotTo(HaveOccurred())
		list, err := dynA.Resource(widgets).Namespace("default").List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(list.Items).To(HaveLen(1))
		Expect(list.Items[0].GetName()).To(Equal("small"))
		Expect(list.Items[0].Object["spec"]).To(HaveKeyWithValue("size", BeNumerically("==", 3)))
	})

	It("serves wildcard requests to shard admins and refuses them to other users", func(ctx SpecContext) {
		By("listing configmaps across logical clusters as the shard admin")
		raw := kubectl(ctx, "", "get", "--raw", "/clusters/*/api/v1/configmaps")
		var list corev1.ConfigMapList
		Expect(json.Unmarshal([]byte(raw), &list)).To(Succeed())
		owners := map[string]bool{}
		for _, cm := range list.Items {
			if cm.Namespace == "shop" && cm.Name == "settings" {
				owners[cm.Annotations[clusterAnnotation]] = true
			}
		}
		Expect(owners).To(HaveKey(a))
		cfg, err := ts.Config("*")
		Expect(err).NotTo(HaveOccurred())
		dyn, err := dynamic.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		ul, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		clusters := map[string]bool{}
		for _, ns := range ul.Items {
			if ns.GetName() == "default" {
				clusters[ns.GetAnnotations()[clusterAnnotation]] = true
			}
		}
		Expect(clusters).To(And(HaveKey(a), HaveKey(b)))

		if ts.UserKubeconfig == "" {
			Skip("this installation has no non-admin user; set TESSERA_E2E_USER_TOKEN")
		}
		By("trying the same as a user who is not a shard admin")
		out, err := ts.UserKubectl(ctx, "", "get", "--raw", "/clusters/*/api/v1/configmaps")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("Forbidden"))
		userCfg, err := ts.UserConfig("*")
		Expect(err).NotTo(HaveOccurred())
		userClient, err := kubernetes.NewForConfig(userCfg)
		Expect(err).NotTo(HaveOccurred())
		_, err = userClient.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "wildcard list by a non-admin: %v", err)
		_, err = userClient.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "wildcard watch by a non-admin: %v", err)
	})

	It("listens on loopback addresses only", func() {
		if ts.Process == nil {
			Skip("the installation was not started by this suite")
		}
		n, err := env.Listening()
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeNumerically(">=", 2), "the shard and its embedded etcd listen")
		Expect(env.NonLoopbackListeners()).To(BeEmpty())
	})
})
