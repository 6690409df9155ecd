package deploye2e

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
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
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/tessera-dev/tessera/syncer/servlet/published"
	"github.com/tessera-dev/tessera/test/e2e/framework"
	"github.com/tessera-dev/tessera/test/e2e/framework/physical"
)

const (
	release = "tessera"
	ns      = "tessera"
)

// shardNames are the shards of the installation: root (the shards
// StatefulSet's first pod) and the other pods of that StatefulSet.
var shardNames = []string{"root", release + "-shard-1", release + "-shard-2"}

const thingsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.team.dev
spec:
  group: team.dev
  names: {kind: Thing, listKind: ThingList, plural: things, singular: thing}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

const widgetsExport = `apiVersion: apis.kcp.io/v1alpha1
kind: APIResourceSchema
metadata:
  name: v1.widgets.example.dev
spec:
  group: example.dev
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: apis.kcp.io/v1alpha1
kind: APIExport
metadata:
  name: example.dev
spec:
  latestResourceSchemas: [v1.widgets.example.dev]
`

var _ = Describe("The chart installed into a cluster whose pods run", Ordered, Label("deploy", "install"), func() {
	var (
		cl    *realCluster
		kube  kubernetes.Interface
		ts    *framework.Tessera
		admin *framework.WS
		// shardOf is the shard of each workspace of root:org.
		shardOf = map[string]string{}
	)

	helm := func(ctx context.Context, args ...string) string {
		GinkgoHelper()
		out, err := env.Helm(ctx, cl.Kubeconfig, append(args, "--namespace", ns)...)
		Expect(err).NotTo(HaveOccurred())
		return out
	}
	kubectl := func(ctx SpecContext, args ...string) string {
		GinkgoHelper()
		out, err := admin.Kubectl(ctx, args...)
		Expect(err).NotTo(HaveOccurred())
		return out
	}
	at := func(ctx SpecContext, path string, args ...string) string {
		GinkgoHelper()
		out, err := ts.Kubectl(ctx, path, args...)
		Expect(err).NotTo(HaveOccurred())
		return out
	}
	file := func(name, content string) string {
		GinkgoHelper()
		p := filepath.Join(env.Dir, name)
		Expect(os.WriteFile(p, []byte(content), 0o600)).To(Succeed())
		return p
	}
	readShards := func(ctx SpecContext) {
		GinkgoHelper()
		out := at(ctx, "root:org", "get", "workspaces", "-o",
			`jsonpath={range .items[*]}{.metadata.name}={.metadata.annotations.core\.kcp\.io/shard}{"\n"}{end}`)
		for _, l := range strings.Fields(out) {
			name, shard, _ := strings.Cut(l, "=")
			shardOf[name] = shard
		}
	}
	// shardPods returns the pods of the shards by name.
	shardPods := func(ctx context.Context) map[string]corev1.Pod {
		GinkgoHelper()
		pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + release + ",app.kubernetes.io/component=shard"})
		Expect(err).NotTo(HaveOccurred())
		m := map[string]corev1.Pod{}
		for _, p := range pods.Items {
			m[p.Name] = p
		}
		return m
	}

	BeforeAll(func(ctx SpecContext) {
		var err error
		cl, err = startRealCluster(ctx)
		Expect(err).NotTo(HaveOccurred())
		kube, err = cl.Client()
		Expect(err).NotTo(HaveOccurred())
		Expect(cl.ImportImages(ctx)).To(Succeed())

		By("installing the chart: a root shard, two shards, the cache server, two front-proxies")
		start := time.Now()
		helm(ctx, "install", release, chartDir, "--create-namespace", "--wait", "--timeout", "8m",
			"--set", "image.repository="+cl.Repository, "--set", "image.tag="+cl.Tag,
			"--set", "image.pullPolicy=Never",
			"--set", "shards.count=2",
			"--set", "frontProxy.service.type=NodePort",
			"--set", "frontProxy.service.nodePort="+strconv.Itoa(cl.ProxyNodePort),
			"--set", "externalHostname="+cl.ProxyHost,
			"--set", "externalPort="+strconv.Itoa(cl.ProxyPort),
			"--set", "etcd.storage.size=1Gi", "--set", "cacheServer.storage.size=1Gi",
			// root:compute, for the syncer.
			// (The other shards ignore it.)
			"--set", "shards.extraArgs[0]=--batteries-included=root-compute-workspace")
		installed := time.Since(start)

		secret, err := kube.CoreV1().Secrets(ns).Get(ctx, release+"-admin-kubeconfig", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		adminKubeconfig := file("admin.kubeconfig", string(secret.Data["kubeconfig"]))
		ts, err = env.TesseraAt(adminKubeconfig)
		Expect(err).NotTo(HaveOccurred())
		Expect(ts.URL).To(Equal(fmt.Sprintf("https://%s:%d", cl.ProxyHost, cl.ProxyPort)))
		Eventually(func(g Gomega) {
			_, err := ts.Kubectl(ctx, "root", "get", "workspaces")
			g.Expect(err).NotTo(HaveOccurred())
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		usable := time.Since(start)
		AddReportEntry("helm install --wait", installed.Round(time.Second).String())
		AddReportEntry("helm install to a usable front-proxy", usable.Round(time.Second).String())
		By(fmt.Sprintf("helm install took %s; the front-proxy answered after %s", installed.Round(time.Second), usable.Round(time.Second)))

		admin, err = ts.AdminWS("admin")
		Expect(err).NotTo(HaveOccurred())
	}, NodeTimeout(15*time.Minute))

	It("registers three shards and spreads workspaces over them", func(ctx SpecContext) {
		out := at(ctx, "root", "get", "shards", "-o", `jsonpath={range .items[*]}{.metadata.name} {.spec.baseURL}{"\n"}{end}`)
		for _, n := range shardNames {
			Expect(out).To(MatchRegexp(`(?m)^`+regexp.QuoteMeta(n)+` https://`), "kubectl get shards:\n%s", out)
		}
		Expect(kubectl(ctx, "ws", "create", "org", "--enter", "--location-selector", "name=root")).To(ContainSubstring(`Current workspace is "root:org".`))
		teams := 9
		for i := 1; i <= teams; i++ {
			kubectl(ctx, "ws", "create", fmt.Sprintf("team-%d", i))
		}
		readShards(ctx)
		count := func() map[string]int {
			m := map[string]int{}
			for _, s := range shardOf {
				m[s]++
			}
			return m
		}
		for len(count()) < 3 && teams < 15 {
			teams++
			kubectl(ctx, "ws", "create", fmt.Sprintf("team-%d", teams))
			readShards(ctx)
		}
		By(fmt.Sprintf("%d teams by shard: %v", teams, count()))
		for _, n := range shardNames {
			Expect(count()).To(HaveKey(n))
		}
	})

	// teamOn returns a team workspace on the shard.
	teamOn := func(shard string) string {
		GinkgoHelper()
		var names []string
		for n, s := range shardOf {
			if s == shard && strings.HasPrefix(n, "team-") {
				names = append(names, n)
			}
		}
		Expect(names).NotTo(BeEmpty(), "a team on %s", shard)
		sort.Strings(names)
		return "root:org:" + names[0]
	}

	It("serves a CRD and its objects in a workspace on a non-root shard", func(ctx SpecContext) {
		team := teamOn(shardNames[2])
		at(ctx, team, "apply", "-f", file("crd.yaml", thingsCRD))
		at(ctx, team, "wait", "--for=condition=Established", "crd/things.team.dev", "--timeout=60s")
		Eventually(func(g Gomega) {
			_, err := ts.Kubectl(ctx, team, "create", "-f", file("thing.yaml", "apiVersion: team.dev/v1\nkind: Thing\nmetadata: {name: one, namespace: default}\n"))
			g.Expect(err).NotTo(HaveOccurred())
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		Expect(at(ctx, team, "get", "things", "-o", "name")).To(Equal("thing.team.dev/one\n"))
	})

	It("binds an export of one shard in a workspace on another", func(ctx SpecContext) {
		kubectl(ctx, "ws", "use", "root:org")
		kubectl(ctx, "ws", "create", "provider", "--location-selector", "name="+shardNames[1])
		kubectl(ctx, "ws", "create", "consumer", "--location-selector", "name="+shardNames[2])
		readShards(ctx)
		Expect(shardOf).To(HaveKeyWithValue("provider", shardNames[1]))
		Expect(shardOf).To(HaveKeyWithValue("consumer", shardNames[2]))
		at(ctx, "root:org:provider", "apply", "-f", file("widgets.yaml", widgetsExport))
		kubectl(ctx, "ws", "use", "root:org:consumer")
		Expect(kubectl(ctx, "kcp", "bind", "apiexport", "root:org:provider:example.dev")).To(ContainSubstring("created and bound"))
		Eventually(func(g Gomega) {
			_, err := ts.Kubectl(ctx, "root:org:consumer", "create", "-f", file("widget.yaml", "apiVersion: example.dev/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\n"))
			g.Expect(err).NotTo(HaveOccurred())
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		Expect(at(ctx, "root:org:consumer", "get", "widgets", "-o", "name")).To(Equal("widget.example.dev/w\n"))
	})

	It("runs a workload of a workspace on one shard on the cluster itself, through a syncer pod of a SyncTarget on another", func(ctx SpecContext) {
		// The seed's quickstart: the compute workspace on one shard, the
		// user's on another, root:compute's export on root.
		kubectl(ctx, "ws", "use", "root:org")
		kubectl(ctx, "ws", "create", "compute", "--location-selector", "name="+shardNames[1])
		kubectl(ctx, "ws", "create", "app", "--location-selector", "name="+shardNames[2])
		readShards(ctx)
		Expect(shardOf).To(HaveKeyWithValue("compute", shardNames[1]))
		Expect(shardOf).To(HaveKeyWithValue("app", shardNames[2]))
		kubectl(ctx, "ws", "use", "root:org:compute")
		manifest := filepath.Join(env.Dir, "syncer-kind-main.yaml")
		kubectl(ctx, "kcp", "workload", "sync", "kind", "--syncer-image", cl.Repository+"/tessera-syncer:"+cl.Tag, "-o", manifest)
		apply, err := env.Kubectl(ctx, cl.Kubeconfig, "apply", "-f", manifest)
		Expect(err).NotTo(HaveOccurred(), "%s", apply)
		DeferCleanup(func(ctx SpecContext) {
			out, err := env.Kubectl(ctx, cl.Kubeconfig, "delete", "-f", manifest, "--ignore-not-found", "--wait=true", "--timeout=2m")
			Expect(err).NotTo(HaveOccurred(), "%s", out)
		}, NodeTimeout(3*time.Minute))
		start := time.Now()
		Eventually(func(g Gomega) {
			_, err := admin.Kubectl(ctx, "wait", "--for=condition=Ready", "synctarget/kind", "--timeout=10s")
			g.Expect(err).NotTo(HaveOccurred())
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		By(fmt.Sprintf("the SyncTarget was Ready %s after the syncer's manifest was applied", time.Since(start).Round(time.Second)))

		kubectl(ctx, "ws", "use", "root:org:app")
		Expect(kubectl(ctx, "kcp", "bind", "compute", "root:org:compute")).To(ContainSubstring("is ready"))
		Eventually(func(g Gomega) {
			_, err := admin.Kubectl(ctx, "create", "deployment", "pause", "--image="+physical.RealPauseImage)
			g.Expect(err).NotTo(HaveOccurred())
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		start = time.Now()
		Eventually(func(g Gomega) {
			out, err := admin.Kubectl(ctx, "get", "deployments")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out).To(MatchRegexp(`(?m)^pause\s+1/1\s+1\s+1\s`))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		By(fmt.Sprintf("kubectl get deployments showed READY 1/1 %s after the create", time.Since(start).Round(time.Second)))
		pods, err := kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "app=pause"})
		Expect(err).NotTo(HaveOccurred())
		Expect(pods.Items).To(HaveLen(1))
		Expect(pods.Items[0].Namespace).To(HavePrefix("kcp-"))
		Expect(pods.Items[0].Status.Phase).To(Equal(corev1.PodRunning))

		By("deleting the Deployment in the workspace deletes it in the cluster")
		kubectl(ctx, "delete", "deployment", "pause")
		Eventually(func(g Gomega) {
			pods, err := kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "app=pause"})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pods.Items).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	})

	It("publishes a CRD of the cluster itself through a servlet pod of its chart, with only its platform rights, to a workspace on another shard", func(ctx SpecContext) {
		// The provider's workspace on one shard, the consumer's on another.
		kubectl(ctx, "ws", "use", "root:org")
		kubectl(ctx, "ws", "create", "certs", "--location-selector", "name="+shardNames[1])
		kubectl(ctx, "ws", "create", "certs-consumer", "--location-selector", "name="+shardNames[2])
		readShards(ctx)
		Expect(shardOf).To(HaveKeyWithValue("certs", shardNames[1]))
		Expect(shardOf).To(HaveKeyWithValue("certs-consumer", shardNames[2]))
		consumer := strings.TrimSpace(at(ctx, "root:org", "get", "workspace", "certs-consumer", "-o", "jsonpath={.spec.cluster}"))

		By("the servlet's identity in the provider's workspace: a service account with the rules of platform-rbac.yaml")
		examples := filepath.Join("..", "..", "..", "deploy", "servlet")
		rbac, err := os.ReadFile(filepath.Join(examples, "platform-rbac.yaml"))
		Expect(err).NotTo(HaveOccurred())
		saRBAC := strings.Replace(string(rbac), "{apiGroup: rbac.authorization.k8s.io, kind: User, name: tessera-servlet}",
			"{kind: ServiceAccount, name: tessera-servlet, namespace: default}", 1)
		Expect(saRBAC).NotTo(Equal(string(rbac)))
		at(ctx, "root:org:certs", "apply", "-f", file("servlet-platform-rbac.yaml", saRBAC+`---
apiVersion: v1
kind: ServiceAccount
metadata: {name: tessera-servlet, namespace: default}
---
apiVersion: v1
kind: Secret
type: kubernetes.io/service-account-token
metadata:
  name: tessera-servlet-token
  namespace: default
  annotations: {kubernetes.io/service-account.name: tessera-servlet}
`))
		var token []byte
		Eventually(func(g Gomega) {
			out, err := ts.Kubectl(ctx, "root:org:certs", "get", "secret", "tessera-servlet-token", "-n", "default", "-o", "jsonpath={.data.token}")
			g.Expect(err).NotTo(HaveOccurred())
			token, err = base64.StdEncoding.DecodeString(out)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(token).NotTo(BeEmpty())
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		raw, err := clientcmd.LoadFromFile(ts.Kubeconfig)
		Expect(err).NotTo(HaveOccurred())
		ca := raw.Clusters[raw.Contexts[ts.Context].Cluster].CertificateAuthorityData
		platform := clientcmdapi.NewConfig()
		platform.Clusters["platform"] = &clientcmdapi.Cluster{Server: ts.URL + "/clusters/root:org:certs", CertificateAuthorityData: ca}
		platform.AuthInfos["servlet"] = &clientcmdapi.AuthInfo{Token: string(token)}
		platform.Contexts["platform"] = &clientcmdapi.Context{Cluster: "platform", AuthInfo: "servlet"}
		platform.CurrentContext = "platform"
		platformKubeconfig, err := clientcmd.Write(*platform)
		Expect(err).NotTo(HaveOccurred())

		By("installing the servlet's chart on the cluster, with the Certificate CRD it publishes")
		const servletNS = "tessera-servlet"
		cluster := func(args ...string) {
			GinkgoHelper()
			out, err := env.Kubectl(ctx, cl.Kubeconfig, args...)
			Expect(err).NotTo(HaveOccurred(), "%s", out)
		}
		cluster("apply", "-f", filepath.Join(examples, "examples", "certificate-crd.yaml"))
		cluster("create", "namespace", servletNS)
		cluster("-n", servletNS, "create", "secret", "generic", "platform", "--from-file=kubeconfig="+file("servlet-platform.kubeconfig", string(platformKubeconfig)))
		DeferCleanup(func(ctx SpecContext) {
			if CurrentSpecReport().Failed() {
				out, _ := env.Kubectl(ctx, cl.Kubeconfig, "-n", servletNS, "logs", "-l", "app.kubernetes.io/name=tessera-servlet", "--tail=60", "--prefix")
				GinkgoWriter.Printf("servlet pods' logs:\n%s\n", out)
				out, _ = env.Kubectl(ctx, cl.Kubeconfig, "-n", servletNS, "get", "pods", "-o", "wide")
				GinkgoWriter.Printf("servlet pods:\n%s\n", out)
			}
			_, _ = env.Helm(ctx, cl.Kubeconfig, "uninstall", "servlet", "--namespace", servletNS, "--wait")
			for _, args := range [][]string{
				{"delete", "namespace", servletNS, "--ignore-not-found", "--wait=true", "--timeout=2m"},
				{"delete", "crd", "certificates.cert-manager.io", "publishedresources.services.kdp.k8c.io", "--ignore-not-found"},
			} {
				out, err := env.Kubectl(ctx, cl.Kubeconfig, args...)
				Expect(err).NotTo(HaveOccurred(), "%s", out)
			}
		}, NodeTimeout(3*time.Minute))
		start := time.Now()
		_, err = env.Helm(ctx, cl.Kubeconfig, "install", "servlet", servletChartDir, "--namespace", servletNS, "--wait", "--timeout", "3m",
			"--set", "serviceName=certificate-management", "--set", "platform.kubeconfigSecret.name=platform",
			"--set", "image.repository="+cl.Repository+"/tessera-servlet", "--set", "image.tag="+cl.Tag, "--set", "image.pullPolicy=Never",
			"--set", "rbac.publishedResources[0].apiGroups={cert-manager.io}",
			"--set", "rbac.publishedResources[0].resources={certificates,certificates/status}")
		Expect(err).NotTo(HaveOccurred())
		at(ctx, "root:org:certs", "apply", "-f", filepath.Join(examples, "examples", "service.yaml"))
		Eventually(func(g Gomega) {
			out, err := env.Kubectl(ctx, cl.Kubeconfig, "apply", "-f", filepath.Join(examples, "examples", "publishedresource-certificates.yaml"))
			g.Expect(err).NotTo(HaveOccurred(), "%s", out)
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		Eventually(func(g Gomega) {
			out, err := ts.Kubectl(ctx, "root:org:certs", "get", "apiexports.v1alpha1.apis.kcp.io", "certs.example.corp", "-o", "jsonpath={.spec.latestResourceSchemas}")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out).To(ContainSubstring("zertifikate.certs.example.corp"))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		By(fmt.Sprintf("the servlet pods published the CRD %s after helm install", time.Since(start).Round(time.Second)))

		By("a Zertifikat in the consumer's workspace: down to the cluster, status and Secret back")
		kubectl(ctx, "ws", "use", "root:org:certs-consumer")
		kubectl(ctx, "kcp", "bind", "apiexport", "root:org:certs:certs.example.corp", "--accept-all-permission-claims")
		Eventually(func(g Gomega) {
			_, err := admin.Kubectl(ctx, "create", "-f", file("zertifikat.yaml",
				"apiVersion: certs.example.corp/v1beta1\nkind: Zertifikat\nmetadata: {name: my-cert, namespace: default}\nspec: {secretName: my-cert}\n"))
			g.Expect(err).NotTo(HaveOccurred())
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		clusterConfig, err := cl.Config()
		Expect(err).NotTo(HaveOccurred())
		dyn, err := dynamic.NewForConfig(clusterConfig)
		Expect(err).NotTo(HaveOccurred())
		certs := dyn.Resource(schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}).Namespace("kube-system")
		local := consumer + "-" + published.Hash("default") + "-" + published.Hash("my-cert")
		var cert *unstructured.Unstructured
		Eventually(func(g Gomega) {
			cert, err = certs.Get(ctx, local, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		cert.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
		_, err = certs.UpdateStatus(ctx, cert, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = kube.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "my-cert"},
			Data: map[string][]byte{"tls.crt": []byte("CERT")}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			Expect(kube.CoreV1().Secrets("kube-system").Delete(ctx, "my-cert", metav1.DeleteOptions{})).To(Succeed())
		})
		Eventually(func(g Gomega) {
			out, err := admin.Kubectl(ctx, "get", "zertifikate", "my-cert", "-o", "jsonpath={.status.conditions[0].type}")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out).To(Equal("Ready"))
			out, err = admin.Kubectl(ctx, "get", "secret", "my-cert", "-o", "jsonpath={.data.tls\\.crt}")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out).To(Equal(base64.StdEncoding.EncodeToString([]byte("CERT"))))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())

		By("deleting the Zertifikat deletes its copy on the cluster")
		kubectl(ctx, "delete", "zertifikat", "my-cert", "--timeout=1m")
		Eventually(func(g Gomega) {
			_, err := certs.Get(ctx, local, metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	})

	It("rolls the shards one pod at a time on helm upgrade while a client keeps writing, and loses nothing acknowledged", func(ctx SpecContext) {
		// One workspace on each shard, written to every 100 ms each.
		targets := map[string]string{}
		for _, s := range shardNames {
			targets[s] = teamOn(s)
		}
		before := shardPods(ctx)
		Expect(before).To(HaveLen(3))

		w := newWriter(ts, targets)
		writeCtx, stop := context.WithCancel(context.Background())
		done := w.run(writeCtx)
		DeferCleanup(stop)
		time.Sleep(2 * time.Second)

		// While the upgrade runs, count the shard pods, root included, that
		// are not ready or missing.
		var mu sync.Mutex
		maxDown := 0
		sampleCtx, stopSampling := context.WithCancel(ctx)
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			for sampleCtx.Err() == nil {
				if pods, err := kube.CoreV1().Pods(ns).List(sampleCtx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + release + ",app.kubernetes.io/component=shard"}); err == nil {
					down := max(0, 3-len(pods.Items))
					for _, p := range pods.Items {
						if !podReady(&p) || p.DeletionTimestamp != nil {
							down++
						}
					}
					mu.Lock()
					maxDown = max(maxDown, down)
					mu.Unlock()
				}
				time.Sleep(250 * time.Millisecond)
			}
		}()

		By("helm upgrade with another log level: every shard pod is replaced")
		start := time.Now()
		helm(ctx, "upgrade", release, chartDir, "--reuse-values", "--wait", "--timeout", "8m",
			"--set", "shards.extraArgs={--batteries-included=root-compute-workspace,--v=1}")
		rolled := time.Since(start)
		stopSampling()
		<-sampled
		time.Sleep(2 * time.Second)
		stop()
		<-done

		after := shardPods(ctx)
		for name, p := range after {
			Expect(p.UID).NotTo(Equal(before[name].UID), "pod %s was not replaced", name)
			Expect(strings.Join(p.Spec.Containers[0].Args, " ")).To(ContainSubstring("--v=1"))
		}
		mu.Lock()
		Expect(maxDown).To(BeNumerically("<=", 1), "shards not ready at once, root included")
		mu.Unlock()

		// The front-proxies' logs of the upgrade stay in the work directory.
		if pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=front-proxy"}); err == nil {
			for _, p := range pods.Items {
				if b, err := kube.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx); err == nil {
					_ = os.WriteFile(filepath.Join(env.Dir, "upgrade-"+p.Name+".log"), b, 0o600)
				}
			}
		}
		report := w.report()
		AddReportEntry("rolling helm upgrade", rolled.Round(time.Second).String())
		AddReportEntry("writes during the upgrade", report)
		By(fmt.Sprintf("the upgrade took %s; %s", rolled.Round(time.Second), report))
		Expect(w.unexpected()).To(BeEmpty(), "errors other than brief unavailability")
		for shard, path := range targets {
			Expect(w.acked[path]).NotTo(BeEmpty(), "no write to %s on %s was acknowledged", path, shard)
		}

		By("every acknowledged write is there")
		for _, path := range targets {
			client, err := ts.Client(path)
			Expect(err).NotTo(HaveOccurred())
			var list *corev1.ConfigMapList
			Eventually(func() error {
				list, err = client.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{LabelSelector: "e2e=writer"})
				return err
			}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
			have := map[string]bool{}
			for _, cm := range list.Items {
				have[cm.Name] = true
			}
			var lost []string
			for _, n := range w.acked[path] {
				if !have[n] {
					lost = append(lost, n)
				}
			}
			Expect(lost).To(BeEmpty(), "acknowledged ConfigMaps missing in %s", path)
		}
	})

	It("brings a deleted shard pod back with its data", func(ctx SpecContext) {
		team := teamOn(shardNames[2])
		pod := shardPods(ctx)[shardNames[2]]
		Expect(kube.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{})).To(Succeed())
		Eventually(func(g Gomega) {
			p, err := kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.UID).NotTo(Equal(pod.UID))
			g.Expect(podReady(p)).To(BeTrue())
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		Eventually(func(g Gomega) {
			out, err := ts.Kubectl(ctx, team, "get", "things", "-o", "name")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out).To(Equal("thing.team.dev/one\n"))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	})

	It("passes helm test", func(ctx SpecContext) {
		out := helm(ctx, "test", release, "--timeout", "4m")
		Expect(out).To(MatchRegexp(`(?m)TEST SUITE:\s+` + release + `-check[\s\S]*Phase:\s+Succeeded`))
		By("the check's workspace is gone again")
		Eventually(func(g Gomega) {
			out, err := ts.Kubectl(ctx, "root", "get", "workspaces", "-o", "name")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out).NotTo(ContainSubstring("check-"))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	})

	It("measures the installation's memory at idle and with 1,000 workspaces", func(ctx SpecContext) {
		time.Sleep(5 * time.Second)
		idle, err := installationRSS()
		Expect(err).NotTo(HaveOccurred())
		kubectl(ctx, "ws", "use", "root")
		kubectl(ctx, "ws", "create", "bulk")
		Expect(createWorkspaces(ctx, ts, "root:bulk", 1000)).To(Succeed())
		time.Sleep(5 * time.Second)
		loaded, err := installationRSS()
		Expect(err).NotTo(HaveOccurred())
		AddReportEntry("installation RSS at idle", idle)
		AddReportEntry("installation RSS with 1,000 more workspaces", loaded)
		By(fmt.Sprintf("RSS of the installation: idle %s; with 1,000 workspaces %s", idle, loaded))
	})

	It("leaves only the PersistentVolumeClaims after helm uninstall", func(ctx SpecContext) {
		helm(ctx, "uninstall", release, "--wait", "--timeout", "3m")
		Eventually(func(g Gomega) {
			g.Expect(leftovers(ctx, kube)).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		pvcs, err := kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + release})
		Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, p := range pvcs.Items {
			names = append(names, p.Name)
		}
		Expect(names).To(ConsistOf("data-"+release+"-shard-0", "data-"+release+"-shard-1", "data-"+release+"-shard-2", "data-"+release+"-cache-0"))
	})
})

func podReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// leftovers lists what is left in the namespace besides what Kubernetes puts
// in every namespace and the PersistentVolumeClaims.
func leftovers(ctx context.Context, kube kubernetes.Interface) ([]string, error) {
	var left []string
	add := func(kind string, names ...string) {
		for _, n := range names {
			left = append(left, kind+"/"+n)
		}
	}
	core := kube.CoreV1()
	if l, err := core.Pods(ns).List(ctx, metav1.ListOptions{}); err != nil {
		return nil, err
	} else {
		for _, x := range l.Items {
			add("pod", x.Name)
		}
	}
	if l, err := core.Services(ns).List(ctx, metav1.ListOptions{}); err != nil {
		return nil, err
	} else {
		for _, x := range l.Items {
			add("service", x.Name)
		}
	}
	if l, err := core.Secrets(ns).List(ctx, metav1.ListOptions{}); err != nil {
		return nil, err
	} else {
		for _, x := range l.Items {
			add("secret", x.Name)
		}
	}
	if l, err := core.ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil {
		return nil, err
	} else {
		for _, x := range l.Items {
			if x.Name != "kube-root-ca.crt" {
				add("configmap", x.Name)
			}
		}
	}
	if l, err := core.ServiceAccounts(ns).List(ctx, metav1.ListOptions{}); err != nil {
		return nil, err
	} else {
		for _, x := range l.Items {
			if x.Name != "default" {
				add("serviceaccount", x.Name)
			}
		}
	}
	if l, err := kube.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{}); err != nil {
		return nil, err
	} else {
		for _, x := range l.Items {
			add("statefulset", x.Name)
		}
	}
	if l, err := kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{}); err != nil {
		return nil, err
	} else {
		for _, x := range l.Items {
			add("deployment", x.Name)
		}
	}
	if l, err := kube.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{}); err != nil {
		return nil, err
	} else {
		for _, x := range l.Items {
			add("job", x.Name)
		}
	}
	if l, err := kube.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{}); err != nil {
		return nil, err
	} else {
		for _, x := range l.Items {
			add("poddisruptionbudget", x.Name)
		}
	}
	if l, err := kube.RbacV1().Roles(ns).List(ctx, metav1.ListOptions{}); err != nil {
		return nil, err
	} else {
		for _, x := range l.Items {
			add("role", x.Name)
		}
	}
	if l, err := kube.RbacV1().RoleBindings(ns).List(ctx, metav1.ListOptions{}); err != nil {
		return nil, err
	} else {
		for _, x := range l.Items {
			add("rolebinding", x.Name)
		}
	}
	return left, nil
}

// writer creates a ConfigMap in each target workspace every 100 ms through
// the front-proxy and records what was acknowledged and what failed.
type writer struct {
	ts      *framework.Tessera
	targets map[string]string

	mu     sync.Mutex
	acked  map[string][]string
	fails  map[string]int
	others []string
	// longest is the longest time a workspace answered no write.
	longest  map[string]time.Duration
	attempts int
	// kinds counts the failures by what they said.
	kinds map[string]int
	// hangs are the requests that got no answer, with their start.
	hangs []string
}

func newWriter(ts *framework.Tessera, targets map[string]string) *writer {
	return &writer{ts: ts, targets: targets, acked: map[string][]string{}, fails: map[string]int{}, longest: map[string]time.Duration{}, kinds: map[string]int{}}
}

func (w *writer) run(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, path := range w.targets {
		client, err := w.ts.Client(path)
		Expect(err).NotTo(HaveOccurred())
		wg.Add(1)
		go func() {
			defer wg.Done()
			lastOK := time.Now()
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("w-%05d", i)
				reqCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
				_, err := client.CoreV1().ConfigMaps("default").Create(reqCtx, &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"e2e": "writer"}},
				}, metav1.CreateOptions{})
				cancel()
				now := time.Now()
				w.mu.Lock()
				w.attempts++
				switch {
				case err == nil:
					w.acked[path] = append(w.acked[path], name)
					lastOK = now
				case ctx.Err() != nil:
				default:
					w.fails[path]++
					w.kinds[failureKind(err)]++
					if errors.Is(err, context.DeadlineExceeded) {
						w.hangs = append(w.hangs, fmt.Sprintf("%s at %s", path, now.Add(-10*time.Second).Format("15:04:05.000")))
					}
					if !unavailable(err) {
						w.others = append(w.others, fmt.Sprintf("%s %s: %v", path, name, err))
					}
					w.longest[path] = max(w.longest[path], now.Sub(lastOK))
				}
				w.mu.Unlock()
				time.Sleep(100 * time.Millisecond)
			}
		}()
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}

// unavailable tells the errors of a shard or proxy that is briefly away.
func unavailable(err error) bool {
	if apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsInternalError(err) && strings.Contains(err.Error(), "shutting down") {
		return true
	}
	// A request that gets no answer for 10 s is not brief unavailability.
	if errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	s := err.Error()
	for _, m := range []string{"connection refused", "connection reset", "EOF", "broken pipe", "503", "no route", "i/o timeout"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

func (w *writer) unexpected() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.others...)
}

func (w *writer) report() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var parts []string
	for shard, path := range w.targets {
		parts = append(parts, fmt.Sprintf("%s on %s: %d acknowledged, %d failed, longest without a write %s", path, shard, len(w.acked[path]), w.fails[path], w.longest[path].Round(10*time.Millisecond)))
	}
	sort.Strings(parts)
	var kinds []string
	for k, n := range w.kinds {
		kinds = append(kinds, fmt.Sprintf("%dx %s", n, k))
	}
	sort.Strings(kinds)
	out := strings.Join(parts, "; ") + "; failures: " + strings.Join(kinds, ", ")
	if len(w.hangs) > 0 {
		out += "; no answer within 10 s: " + strings.Join(w.hangs, ", ")
	}
	return out
}

// failureKind shortens an error to what kind of failure it was.
func failureKind(err error) string {
	if st, ok := err.(apierrors.APIStatus); ok {
		s := st.Status()
		msg := s.Message
		if len(msg) > 80 {
			msg = msg[:80]
		}
		return fmt.Sprintf("%d %s: %s", s.Code, s.Reason, msg)
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	if len(msg) > 80 {
		msg = msg[:80]
	}
	return msg
}

// createWorkspaces creates n workspaces under parent with 8 clients and
// waits until all are Ready.
func createWorkspaces(ctx context.Context, ts *framework.Tessera, parent string, n int) error {
	dyn, err := ts.Dynamic(parent)
	if err != nil {
		return err
	}
	return createAndWait(ctx, dyn, n)
}

// installationRSS sums the resident memory of the installation's processes,
// which run from the images' /usr/local/bin.
func installationRSS() (string, error) {
	sum, n, err := rssOf(func(argv0 string) bool { return strings.HasPrefix(argv0, "/usr/local/bin/tessera") })
	if err != nil {
		return "", err
	}
	if n == 0 {
		return "", errors.New("no process of the installation runs on this machine")
	}
	return fmt.Sprintf("%s in %d processes", sum, n), nil
}
