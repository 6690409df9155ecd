package deploye2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// chartDir is the chart under test.
var chartDir = func() string {
	p, err := filepath.Abs("../../../deploy/charts/tessera")
	if err != nil {
		panic(err)
	}
	return p
}()

// servletChartDir is the servlet's chart.
var servletChartDir = func() string {
	p, err := filepath.Abs("../../../deploy/charts/tessera-servlet")
	if err != nil {
		panic(err)
	}
	return p
}()

// render runs helm template of the Tessera chart with the given --set
// values and returns the objects by kind/name.
func render(ctx SpecContext, sets ...string) (map[string]*unstructured.Unstructured, error) {
	return renderChart(ctx, chartDir, sets...)
}

// renderChart runs helm template of dir with the given --set values and
// returns the objects by kind/name.
func renderChart(ctx SpecContext, dir string, sets ...string) (map[string]*unstructured.Unstructured, error) {
	args := []string{"template", "t", dir, "--namespace", "ns"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	out, err := env.Helm(ctx, os.DevNull, args...)
	if err != nil {
		return nil, err
	}
	objs := map[string]*unstructured.Unstructured{}
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if err.Error() == "EOF" {
				break
			}
			return nil, err
		}
		if m == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		objs[u.GetKind()+"/"+u.GetName()] = u
	}
	return objs, nil
}

func as[T any](u *unstructured.Unstructured) *T {
	GinkgoHelper()
	Expect(u).NotTo(BeNil())
	var t T
	Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &t)).To(Succeed())
	return &t
}

func args(c corev1.Container) string { return strings.Join(c.Args, " ") }

var _ = Describe("The chart", Label("deploy", "chart"), func() {
	It("is lint clean and renders a root shard, further shards, the cache server, the front-proxy and the certificate Job", func(ctx SpecContext) {
		_, err := env.Helm(ctx, os.DevNull, "lint", "--strict", chartDir)
		Expect(err).NotTo(HaveOccurred())

		objs, err := render(ctx)
		Expect(err).NotTo(HaveOccurred())
		// One StatefulSet of every shard, rolled one pod at a time: its
		// first pod is root (--root-at-ordinal-zero), the others join it.
		Expect(objs).NotTo(HaveKey("StatefulSet/t-root"))
		shards := as[appsv1.StatefulSet](objs["StatefulSet/t-shard"])
		Expect(*shards.Spec.Replicas).To(BeEquivalentTo(3))
		Expect(shards.Spec.UpdateStrategy.Type).To(Equal(appsv1.RollingUpdateStatefulSetStrategyType))
		Expect(shards.Spec.VolumeClaimTemplates).To(HaveLen(1), "embedded etcd on a PersistentVolumeClaim by default")
		shard := shards.Spec.Template.Spec.Containers[0]
		Expect(args(shard)).To(ContainSubstring("--shard-name=$(POD_NAME) --root-at-ordinal-zero"))
		Expect(args(shard)).To(ContainSubstring("--root-shard-kubeconfig-file="))
		Expect(args(shards.Spec.Template.Spec.Containers[1])).To(ContainSubstring("--shard-name=$(POD_NAME) --root-at-ordinal-zero"))
		pdb := objs["PodDisruptionBudget/t-shard"]
		Expect(pdb).NotTo(BeNil())
		Expect(pdb.Object["spec"]).To(HaveKeyWithValue("maxUnavailable", BeEquivalentTo(1)))
		Expect(args(shard)).To(ContainSubstring("--shard-external-url=https://t-front-proxy.ns.svc"))
		Expect(shard.ReadinessProbe.HTTPGet.Path).To(Equal("/readyz"))
		Expect(shard.LivenessProbe.HTTPGet.Path).To(Equal("/livez"))
		Expect(shards.Spec.Template.Spec.Containers[1].Name).To(Equal("virtual-workspaces"), "virtual workspaces run beside every shard")
		Expect(objs).To(HaveKey("StatefulSet/t-cache"))
		Expect(objs).To(HaveKey("Deployment/t-front-proxy"))
		Expect(objs).To(HaveKey("Job/t-certs-1"))
		Expect(objs).To(HaveKey("PodDisruptionBudget/t-shard"))
		Expect(objs).To(HaveKey("Pod/t-check"), "helm test hook")
		Expect(objs).NotTo(HaveKey("NetworkPolicy/t-internal"))
		svc := as[corev1.Service](objs["Service/t-front-proxy"])
		Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))

		job := objs["Job/t-certs-1"]
		Expect(job).NotTo(BeNil())
		jobArgs, _, _ := unstructured.NestedSlice(job.Object, "spec", "template", "spec", "containers")
		Expect(jobArgs).NotTo(BeEmpty())
		Expect(jobArgs[0].(map[string]any)["args"]).To(ContainElement(
			"--serving=t-virtual-workspaces-tls=t-shard-0.t-shard.ns.svc.cluster.local,t-shard-1.t-shard.ns.svc.cluster.local,t-shard-2.t-shard.ns.svc.cluster.local,localhost,127.0.0.1"))
		kubeconfigs := objs["ConfigMap/t-kubeconfigs"]
		Expect(kubeconfigs).NotTo(BeNil())
		Expect(kubeconfigs.Object["data"]).To(HaveKeyWithValue("root.kubeconfig", ContainSubstring("server: https://t-shard-0.t-shard.ns.svc.cluster.local:6443")))
	})

	It("takes its settings from values: shards, service, external etcd, external hostname, network policy", func(ctx SpecContext) {
		objs, err := render(ctx, "shards.count=0", "frontProxy.service.type=NodePort", "frontProxy.service.nodePort=30443",
			"etcd.external.enabled=true", "etcd.external.servers={https://etcd:2379}", "etcd.external.clientSecret=etcd-client",
			"externalHostname=tessera.example.com", "externalPort=8443", "networkPolicy.enabled=true", "certificates.caSecret=my-ca")
		Expect(err).NotTo(HaveOccurred())
		root := as[appsv1.StatefulSet](objs["StatefulSet/t-shard"])
		Expect(*root.Spec.Replicas).To(BeEquivalentTo(1), "shards.count=0 leaves only root")
		Expect(root.Spec.VolumeClaimTemplates).To(BeEmpty())
		a := args(root.Spec.Template.Spec.Containers[0])
		Expect(a).To(ContainSubstring("--etcd-servers=https://etcd:2379"))
		Expect(a).To(ContainSubstring("--etcd-prefix=/tessera/$(POD_NAME)/registry"))
		Expect(a).To(ContainSubstring("--etcd-certfile=/etc/tessera/etcd/tls.crt"))
		Expect(a).To(ContainSubstring("--shard-external-url=https://tessera.example.com:8443"))
		svc := as[corev1.Service](objs["Service/t-front-proxy"])
		Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeNodePort))
		Expect(svc.Spec.Ports[0].NodePort).To(BeEquivalentTo(30443))
		Expect(objs).To(HaveKey("NetworkPolicy/t-internal"))
		Expect(objs).To(HaveKey("NetworkPolicy/t-front-proxy"))
		for _, v := range root.Spec.Template.Spec.Volumes {
			if v.Name == "ca" {
				Expect(v.Secret.SecretName).To(Equal("my-ca"))
			}
		}
	})

	It("lets cert-manager issue the certificates with an Issuer of the given CA", func(ctx SpecContext) {
		objs, err := render(ctx, "certificates.certManager.enabled=true", "certificates.caSecret=my-ca",
			"certificates.certManager.issuerRef.name=tessera-ca", "certificates.certManager.issuerRef.kind=ClusterIssuer")
		Expect(err).NotTo(HaveOccurred())
		for _, n := range []string{"t-cache-tls", "t-front-proxy-tls", "t-virtual-workspaces-tls", "t-shard-admin", "t-front-proxy-client", "t-admin"} {
			c := objs["Certificate/"+n]
			Expect(c).NotTo(BeNil(), "Certificate %s", n)
			kind, _, _ := unstructured.NestedString(c.Object, "spec", "issuerRef", "kind")
			Expect(kind).To(Equal("ClusterIssuer"))
		}
		vw := objs["Certificate/t-virtual-workspaces-tls"]
		ips, _, _ := unstructured.NestedStringSlice(vw.Object, "spec", "ipAddresses")
		Expect(ips).To(Equal([]string{"127.0.0.1"}))
		orgs, _, _ := unstructured.NestedStringSlice(objs["Certificate/t-shard-admin"].Object, "spec", "subject", "organizations")
		Expect(orgs).To(Equal([]string{"system:masters"}))
		job := as[batchv1.Job](objs["Job/t-certs-1"])
		a := args(job.Spec.Template.Spec.Containers[0])
		Expect(a).To(ContainSubstring("--ca-secret=my-ca"))
		Expect(a).To(ContainSubstring("--kubeconfig-secret=t-admin-kubeconfig=t-admin@"))
		Expect(a).NotTo(ContainSubstring("--serving"), "cert-manager issues them")
	})

	DescribeTable("refuses bad values at install, naming them",
		func(ctx SpecContext, set, want string) {
			_, err := render(ctx, set)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("an unknown service type", "frontProxy.service.type=Ingress", "frontProxy.service.type"),
		Entry("a negative shard count", "shards.count=-1", "shards.count"),
		Entry("root's values of the two-StatefulSet chart", "root.extraArgs={--v=2}", "root"),
		Entry("a misspelt key", "shard.homeWorkspace=true", "homeWorkspace"),
		Entry("external etcd without servers", "etcd.external.enabled=true", "servers"),
		Entry("a storage size that is not a quantity", "etcd.storage.size=lots", "etcd.storage.size"),
		Entry("a pull policy kubelet does not know", "image.pullPolicy=Sometimes", "image.pullPolicy"),
		Entry("an extra argument that is not a flag", "shards.extraArgs={-v=2}", "shards.extraArgs"),
		Entry("cert-manager without the CA it signs with", "certificates.certManager.enabled=true", "caSecret"),
	)
})

var _ = Describe("The servlet's chart", Label("deploy", "chart"), func() {
	required := []string{"serviceName=certificate-management", "platform.kubeconfigSecret.name=platform"}

	It("is lint clean and renders the servlet's Deployment, ServiceAccount and RBAC from values", func(ctx SpecContext) {
		lint := []string{"lint", "--strict", servletChartDir}
		for _, s := range required {
			lint = append(lint, "--set", s)
		}
		_, err := env.Helm(ctx, os.DevNull, lint...)
		Expect(err).NotTo(HaveOccurred())

		objs, err := renderChart(ctx, servletChartDir, append(required, "replicas=3", "qps=50", "workers=8", "image.tag=v9",
			"rbac.publishedResources[0].apiGroups={cert-manager.io}", "rbac.publishedResources[0].resources={certificates,certificates/status}")...)
		Expect(err).NotTo(HaveOccurred())
		d := as[appsv1.Deployment](objs["Deployment/t-tessera-servlet"])
		Expect(*d.Spec.Replicas).To(BeEquivalentTo(3))
		c := d.Spec.Template.Spec.Containers[0]
		Expect(c.Image).To(Equal("ghcr.io/tessera-dev/tessera-servlet:v9"))
		Expect(c.Args).To(ContainElements("--platform-kubeconfig=/platform/kubeconfig", "--service-name=certificate-management",
			"--namespace=ns", "--lease-name=tessera-servlet", "--qps=50", "--workers=8"))
		Expect(d.Spec.Template.Spec.Volumes[0].Secret.SecretName).To(Equal("platform"))
		Expect(d.Spec.Template.Spec.ServiceAccountName).To(Equal("t-tessera-servlet"))
		Expect(*d.Spec.Template.Spec.SecurityContext.RunAsNonRoot).To(BeTrue())
		role := as[rbacv1.ClusterRole](objs["ClusterRole/t-tessera-servlet"])
		Expect(role.Rules).To(ContainElement(rbacv1.PolicyRule{APIGroups: []string{"cert-manager.io"}, Resources: []string{"certificates", "certificates/status"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}))
		Expect(role.Rules).NotTo(ContainElement(HaveField("APIGroups", []string{"*"})), "narrowed to the published groups")
		Expect(objs).To(HaveKey("ServiceAccount/t-tessera-servlet"))
		Expect(objs).To(HaveKey("RoleBinding/t-tessera-servlet-leader-election"))

		By("the plain manifest says the same as the chart's defaults")
		manifest, err := os.ReadFile("../../../deploy/servlet/tessera-servlet.yaml")
		Expect(err).NotTo(HaveOccurred())
		Expect(string(manifest)).To(ContainSubstring("deploy/charts/tessera-servlet"))
	})

	DescribeTable("refuses bad values at install, naming them",
		func(ctx SpecContext, sets []string, want string) {
			_, err := renderChart(ctx, servletChartDir, sets...)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("no Service", []string{"platform.kubeconfigSecret.name=platform"}, "serviceName"),
		Entry("no platform kubeconfig", []string{"serviceName=certificate-management"}, "kubeconfigSecret"),
		Entry("no replica", append(required, "replicas=0"), "replicas"),
		Entry("a misspelt key", append(required, "worker=2"), "worker"),
		Entry("a resource rule without resources", append(required, "rbac.publishedResources[0].apiGroups={x}"), "resources"),
	)
})

var _ = Describe("make test-e2e-kind", Label("deploy", "kind"), func() {
	It("fails at once with a clear message where no container engine runs", func(ctx SpecContext) {
		script, err := filepath.Abs("../../../hack/e2e.sh")
		Expect(err).NotTo(HaveOccurred())
		start := time.Now()
		cmd := exec.CommandContext(ctx, script, "kind")
		cmd.Env = append(os.Environ(), "KIND_EXPERIMENTAL_PROVIDER=tessera-no-such-engine")
		out, err := cmd.CombinedOutput()
		Expect(err).To(HaveOccurred(), "%s", out)
		Expect(string(out)).To(ContainSubstring("needs a container engine for kind"))
		Expect(time.Since(start)).To(BeNumerically("<", 30*time.Second))
	})
})
