package realclustere2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/tessera-dev/tessera/test/e2e/framework"
	"github.com/tessera-dev/tessera/test/e2e/framework/physical"
)

const ns = "e2e-real"

var _ = Describe("A real physical cluster", Ordered, Label("real"), func() {
	var (
		pc     *physical.Cluster
		client kubernetes.Interface
		image  string
		before hostState
	)

	BeforeAll(func(ctx SpecContext) {
		// The state before this suite's cluster, read once no other suite's
		// real cluster runs (suites take turns).
		provider, err := env.RealProvider()
		Expect(err).NotTo(HaveOccurred())
		if real, ok := provider.(*physical.Real); ok {
			real.BeforeStart = func() { before = readHostState() }
		} else {
			before = readHostState()
		}
		pc, err = env.RealCluster(ctx)
		Expect(err).NotTo(HaveOccurred())
		client, err = pc.Client()
		Expect(err).NotTo(HaveOccurred())
		var tarball string
		tarball, image, err = env.BuildImage(ctx, "echo", "./test/e2e/realcluster/echo", "docker.io/tessera-e2e", "e2e")
		Expect(err).NotTo(HaveOccurred())
		Expect(env.LoadImage(ctx, pc, tarball)).To(Succeed())
		_, err = client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
	}, NodeTimeout(5*time.Minute))

	container := func(args ...string) corev1.Container {
		return corev1.Container{
			Name: "echo", Image: image, ImagePullPolicy: corev1.PullNever, Args: args,
			Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
		}
	}
	get := func(url string) (string, error) {
		// A new connection each time: one made before kube-proxy wrote the
		// Service's rules went elsewhere and must not be reused.
		c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
		resp, err := c.Get(url)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("%s: %s", url, resp.Status)
		}
		return string(b), err
	}

	It("runs a Deployment's pod that this machine reaches through its ClusterIP, its NodePort and kubectl port-forward", func(ctx SpecContext) {
		labels := map[string]string{"app": "web"}
		_, err := client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{container()}},
				},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		svc, err := client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: corev1.ServiceSpec{
				Type:     corev1.ServiceTypeNodePort,
				Selector: labels,
				Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		var pod corev1.Pod
		Eventually(func(g Gomega) {
			pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pods.Items).To(HaveLen(1))
			pod = pods.Items[0]
			g.Expect(pod.Status.ContainerStatuses).To(ContainElement(HaveField("Ready", true)))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())

		By("the pod's process answering on its pod IP, its ClusterIP and the node's NodePort")
		for _, url := range []string{
			"http://" + net.JoinHostPort(pod.Status.PodIP, "8080") + "/",
			"http://" + net.JoinHostPort(svc.Spec.ClusterIP, "80") + "/",
			fmt.Sprintf("http://%s/", net.JoinHostPort(pc.NodeAddress, fmt.Sprint(svc.Spec.Ports[0].NodePort))),
		} {
			Eventually(func(g Gomega) {
				body, err := get(url)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(body).To(HavePrefix("host=" + pod.Name + " "))
			}).WithContext(ctx).WithTimeout(30*time.Second).Should(Succeed(), url)
		}

		By("kubectl port-forward to the Service")
		kubectl, err := framework.KubectlPath()
		Expect(err).NotTo(HaveOccurred())
		pf := exec.CommandContext(ctx, kubectl, "--kubeconfig", pc.Kubeconfig, "-n", ns, "port-forward", "--address=127.0.0.1", "service/web", ":80")
		var stderr strings.Builder
		pf.Stderr = &stderr
		out, err := pf.StdoutPipe()
		Expect(err).NotTo(HaveOccurred())
		Expect(pf.Start()).To(Succeed())
		defer func() {
			_ = pf.Process.Kill()
			_ = pf.Wait()
		}()
		line, err := bufio.NewReader(out).ReadString('\n')
		Expect(err).NotTo(HaveOccurred(), "kubectl port-forward: %s", &stderr)
		// "Forwarding from 127.0.0.1:43567 -> 8080"
		fields := strings.Fields(line)
		Expect(fields).To(HaveLen(5), line)
		body, err := get("http://" + fields[2] + "/")
		Expect(err).NotTo(HaveOccurred())
		Expect(body).To(HavePrefix("host=" + pod.Name + " "))
	})

	// runJob runs the echo image as a Job and returns the log of its pod
	// that succeeded.
	runJob := func(ctx SpecContext, name string, args ...string) string {
		_, err := client.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: batchv1.JobSpec{
				BackoffLimit: new(int32(6)),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{container(args...)},
				}},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			job, err := client.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(job.Status.Succeeded).To(BeEquivalentTo(1))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + name})
		Expect(err).NotTo(HaveOccurred())
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodSucceeded {
				b, err := client.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
				Expect(err).NotTo(HaveOccurred())
				return string(b)
			}
		}
		Fail("no pod of job " + name + " succeeded")
		return ""
	}

	It("lets a pod reach a Service by its DNS name, and the API server through the kubernetes Service", func(ctx SpecContext) {
		Expect(runJob(ctx, "dns", "-get", "http://web."+ns+".svc.cluster.local/")).To(HavePrefix("host=web-"),
			"the job fetched the Deployment's answer, as its log shows")
		Expect(runJob(ctx, "api", "-get", "https://kubernetes.default.svc.cluster.local/version",
			"-ca", "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt")).To(ContainSubstring(`"gitVersion": "v1.37.0"`),
			"the job verified the API server's certificate and read its version")
	})

	It("binds a StatefulSet's claim to the default StorageClass and keeps its data across a pod delete", func(ctx SpecContext) {
		labels := map[string]string{"app": "store"}
		_, err := client.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: "store"},
			Spec: appsv1.StatefulSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{func() corev1.Container {
						c := container("-data", "/data")
						c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
						return c
					}()}},
				},
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
					ObjectMeta: metav1.ObjectMeta{Name: "data"},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
					},
				}},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		answer := func(uid string) func(Gomega) string {
			return func(g Gomega) string {
				pod, err := client.CoreV1().Pods(ns).Get(ctx, "store-0", metav1.GetOptions{})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(string(pod.UID)).NotTo(Equal(uid))
				g.Expect(pod.Status.ContainerStatuses).To(ContainElement(HaveField("Ready", true)))
				body, err := get("http://" + net.JoinHostPort(pod.Status.PodIP, "8080") + "/")
				g.Expect(err).NotTo(HaveOccurred())
				return strings.TrimSpace(body)
			}
		}
		Eventually(answer("")).WithContext(ctx).WithTimeout(time.Minute).Should(Equal("host=store-0 starts=1"))
		pvc, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-store-0", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(pvc.Status.Phase).To(Equal(corev1.ClaimBound))
		Expect(pvc.Spec.StorageClassName).To(HaveValue(Equal(physical.RealStorageClass)))

		pod, err := client.CoreV1().Pods(ns).Get(ctx, "store-0", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(client.CoreV1().Pods(ns).Delete(ctx, "store-0", metav1.DeleteOptions{})).To(Succeed())
		Eventually(answer(string(pod.UID))).WithContext(ctx).WithTimeout(time.Minute).Should(Equal("host=store-0 starts=2"),
			"the new pod found the file the first one wrote")
	})

	It("leaves the machine as it found it when deleted", func(ctx SpecContext) {
		Expect(readHostState()).NotTo(Equal(before), "the running cluster changed the machine (bridge, address, paths)")
		Expect(env.DeleteRealCluster(ctx)).To(Succeed())
		Expect(readHostState()).To(Equal(before))
	})
})
