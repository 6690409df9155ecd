package physicale2e

import (
	"encoding/json"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/test/e2e/framework/physical"
)

var _ = Describe("The helm CLI", Ordered, Label("physical", "helm"), func() {
	var (
		pc    *physical.Cluster
		chart string
	)
	const (
		release = "e2e"
		ns      = "e2e-helm"
	)

	helm := func(ctx SpecContext, args ...string) string {
		GinkgoHelper()
		out, err := env.Helm(ctx, pc.Kubeconfig, args...)
		Expect(err).NotTo(HaveOccurred())
		return out
	}

	BeforeAll(func(ctx SpecContext) {
		pcs, err := env.PhysicalClusters(ctx, clusters)
		Expect(err).NotTo(HaveOccurred())
		pc = pcs[len(pcs)-1]
		chart, err = filepath.Abs("testdata/chart")
		Expect(err).NotTo(HaveOccurred())
	})

	It("installs, tests, upgrades and uninstalls a chart in a physical cluster", func(ctx SpecContext) {
		client, err := pc.Client()
		Expect(err).NotTo(HaveOccurred())
		runningPods := func(n int) func(Gomega) {
			return func(g Gomega) {
				pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + release + ",app.kubernetes.io/name=e2e-web"})
				g.Expect(err).NotTo(HaveOccurred())
				var running int
				for _, p := range pods.Items {
					if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
						running++
					}
				}
				g.Expect(running).To(Equal(n))
			}
		}

		helm(ctx, "lint", "--strict", chart)
		Expect(helm(ctx, "template", release, chart, "--namespace", ns)).To(ContainSubstring("kind: Deployment"))

		By("installing with --wait: the chart requires Kubernetes >= 1.30, so helm must see the server's version")
		helm(ctx, "install", release, chart, "--namespace", ns, "--create-namespace", "--wait", "--timeout", "2m")
		var status struct {
			Info struct {
				Status string `json:"status"`
			} `json:"info"`
			Version int `json:"version"`
		}
		Expect(json.Unmarshal([]byte(helm(ctx, "status", release, "--namespace", ns, "-o", "json")), &status)).To(Succeed())
		Expect(status.Info.Status).To(Equal("deployed"))
		Expect(status.Version).To(Equal(1))
		Eventually(runningPods(1)).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, release+"-settings", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(cm.Data).To(HaveKeyWithValue("greeting", "hello"))

		By("running the chart's test hook")
		helm(ctx, "test", release, "--namespace", ns, "--timeout", "2m")

		By("upgrading with new values")
		helm(ctx, "upgrade", release, chart, "--namespace", ns, "--set", "replicaCount=2", "--set", "greeting=bonjour", "--wait", "--timeout", "2m")
		Expect(json.Unmarshal([]byte(helm(ctx, "status", release, "--namespace", ns, "-o", "json")), &status)).To(Succeed())
		Expect(status.Info.Status).To(Equal("deployed"))
		Expect(status.Version).To(Equal(2))
		Eventually(runningPods(2)).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		cm, err = client.CoreV1().ConfigMaps(ns).Get(ctx, release+"-settings", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(cm.Data).To(HaveKeyWithValue("greeting", "bonjour"))

		By("uninstalling")
		helm(ctx, "uninstall", release, "--namespace", ns, "--wait", "--timeout", "2m")
		Expect(helm(ctx, "list", "--namespace", ns, "-q")).To(BeEmpty())
		Eventually(func(g Gomega) {
			_, err := client.AppsV1().Deployments(ns).Get(ctx, release+"-web", metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the deployment is gone: %v", err)
			_, err = client.CoreV1().ConfigMaps(ns).Get(ctx, release+"-settings", metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the configmap is gone: %v", err)
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		Eventually(runningPods(0)).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	})
})
