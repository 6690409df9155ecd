package physicale2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tessera-dev/tessera/test/e2e/framework/physical"
)

var _ = Describe("Physical clusters", Ordered, Label("physical"), func() {
	var (
		pcs     []*physical.Cluster
		clients []kubernetes.Interface
	)

	BeforeAll(func(ctx SpecContext) {
		var err error
		pcs, err = env.PhysicalClusters(ctx, clusters)
		Expect(err).NotTo(HaveOccurred())
		for _, pc := range pcs {
			c, err := pc.Client()
			Expect(err).NotTo(HaveOccurred())
			clients = append(clients, c)
		}
	})

	It("run the pods of a Deployment", func(ctx SpecContext) {
		pc, client := pcs[0], clients[0]
		ns := "e2e-deployment"
		_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		labels := map[string]string{"app": "web"}
		_, err = client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: labels},
			Spec: appsv1.DeploymentSpec{
				Replicas: new(int32(2)),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{
						Name: "web", Image: "registry.k8s.io/pause:3.10", ImagePullPolicy: corev1.PullIfNotPresent,
					}}},
				},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		runningPods := func(n int) func(Gomega) {
			return func(g Gomega) {
				pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(pods.Items).To(HaveLen(n))
				for _, p := range pods.Items {
					g.Expect(p.Spec.NodeName).NotTo(BeEmpty(), "pod %s is scheduled", p.Name)
					g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "pod %s", p.Name)
					g.Expect(p.Status.Conditions).To(ContainElement(And(
						HaveField("Type", corev1.PodReady), HaveField("Status", corev1.ConditionTrue))), "pod %s is Ready", p.Name)
				}
			}
		}
		By("waiting for the scheduler, the controllers and the node to run two pods")
		Eventually(runningPods(2)).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
		Eventually(func(g Gomega) {
			d, err := client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Status.AvailableReplicas).To(Equal(int32(2)))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())

		By("scaling it with kubectl")
		_, err = env.Kubectl(ctx, pc.Kubeconfig, "-n", ns, "scale", "deployment/web", "--replicas=3")
		Expect(err).NotTo(HaveOccurred())
		_, err = env.Kubectl(ctx, pc.Kubeconfig, "-n", ns, "rollout", "status", "deployment/web", "--timeout=2m")
		Expect(err).NotTo(HaveOccurred())
		Eventually(runningPods(3)).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())

		By("deleting it and waiting for the garbage collector to remove its pods")
		Expect(client.AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{})).To(Succeed())
		Eventually(func(g Gomega) {
			pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pods.Items).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	})

	It("are separate clusters", func(ctx SpecContext) {
		if len(pcs) < 2 {
			Skip("one physical cluster only")
		}
		_, err := clients[0].CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "only-in-p1"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = clients[1].CoreV1().ConfigMaps("default").Get(ctx, "only-in-p1", metav1.GetOptions{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a configmap of %s is seen in %s: %v", pcs[0].Name, pcs[1].Name, err)
	})

	It("listen on loopback addresses only", func() {
		provider, err := env.PhysicalProvider()
		Expect(err).NotTo(HaveOccurred())
		if provider.Name() != "local" {
			Skip("only the local provider runs its clusters as processes of this suite")
		}
		n, err := env.Listening()
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeNumerically(">=", 3*len(pcs)), "etcd (client and peer) and kube-apiserver of every cluster listen")
		Expect(env.NonLoopbackListeners()).To(BeEmpty())
	})
})
