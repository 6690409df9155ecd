package shardede2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/format"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/tessera-dev/tessera/test/e2e/framework"
	"github.com/tessera-dev/tessera/test/e2e/framework/process"
	"github.com/tessera-dev/tessera/test/e2e/framework/sharded"
)

var workspaces = schema.GroupVersionResource{Group: "tenancy.kcp.io", Version: "v1alpha1", Resource: "workspaces"}

// schema of a namespaced resource <plural>.example.dev, kind <kind>.
func resourceSchema(plural, kind string) string {
	return `apiVersion: apis.kcp.io/v1alpha1
kind: APIResourceSchema
metadata:
  name: v1.` + plural + `.example.dev
spec:
  group: example.dev
  names:
    kind: ` + kind + `
    listKind: ` + kind + `List
    plural: ` + plural + `
    singular: ` + strings.ToLower(kind) + `
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      type: object
      x-kubernetes-preserve-unknown-fields: true
`
}

func apiExport(schemas ...string) string {
	s := "apiVersion: apis.kcp.io/v1alpha1\nkind: APIExport\nmetadata:\n  name: example.dev\nspec:\n  latestResourceSchemas:\n"
	for _, n := range schemas {
		s += "  - " + n + "\n"
	}
	return s
}

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

// idleWatch is how long the watch started first stays idle before the last
// spec checks it: E2E_IDLE_WATCH, default 10m.
func idleWatch() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("E2E_IDLE_WATCH")); err == nil {
		return d
	}
	return 10 * time.Minute
}

var _ = Describe("A sharded installation through the front-proxy", Ordered, Label("sharded"), func() {
	var (
		in    *sharded.Installation
		ts    *framework.Tessera
		admin *framework.WS
		// shardOf is the shard of each workspace of root:org by name.
		shardOf = map[string]string{}

		watchStarted time.Time
		watchEvents  chan watch.Event
		watchClosed  chan struct{}
		watchStop    func()
	)

	kubectl := func(ctx SpecContext, w *framework.WS, args ...string) string {
		GinkgoHelper()
		out, err := w.Kubectl(ctx, args...)
		Expect(err).NotTo(HaveOccurred())
		return out
	}
	// at runs kubectl as kcp-admin through the proxy in a workspace path.
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
	// readShards records the shard of every workspace of root:org.
	readShards := func(ctx SpecContext) {
		GinkgoHelper()
		out := at(ctx, "root:org", "get", "workspaces", "-o",
			`jsonpath={range .items[*]}{.metadata.name}={.metadata.annotations.core\.kcp\.io/shard}{"\n"}{end}`)
		for _, l := range strings.Fields(out) {
			name, shard, _ := strings.Cut(l, "=")
			shardOf[name] = shard
		}
	}

	BeforeAll(func(ctx SpecContext) {
		var err error
		in, ts, err = env.Sharded(ctx)
		Expect(err).NotTo(HaveOccurred())
		admin, err = ts.AdminWS("admin")
		Expect(err).NotTo(HaveOccurred())

		By("starting a watch through the proxy that stays idle until the last spec")
		client, err := ts.Client("root")
		Expect(err).NotTo(HaveOccurred())
		// Not the node's context, which ends with BeforeAll.
		w, err := client.CoreV1().ConfigMaps("default").Watch(context.Background(), metav1.ListOptions{FieldSelector: "metadata.name=idle-watch"})
		Expect(err).NotTo(HaveOccurred())
		watchStarted, watchStop = time.Now(), w.Stop
		watchEvents, watchClosed = make(chan watch.Event, 16), make(chan struct{})
		go func() {
			defer close(watchClosed)
			for ev := range w.ResultChan() {
				watchEvents <- ev
			}
		}()
		DeferCleanup(func() { watchStop() })
	}, NodeTimeout(5*time.Minute))

	It("spreads the team workspaces of an organization over the three shards", func(ctx SpecContext) {
		// The organization stays on root: the proxy resolves root:org:<team>
		// through org's shard, and the specs kill shard-2 (see the Pending
		// spec on routing below a killed shard).
		out := kubectl(ctx, admin, "ws", "create", "org", "--enter", "--location-selector", "name=root")
		Expect(out).To(ContainSubstring(`Current workspace is "root:org".`))
		teams := 9
		for i := 1; i <= teams; i++ {
			kubectl(ctx, admin, "ws", "create", fmt.Sprintf("team-%d", i), "--type", "team")
		}
		readShards(ctx)
		count := func() map[string]int {
			m := map[string]int{}
			for _, s := range shardOf {
				m[s]++
			}
			return m
		}
		// Logical cluster names are random, so 9 workspaces leave a shard
		// empty about once in 13 runs: a few more then.
		for len(count()) < 3 && teams < 15 {
			teams++
			kubectl(ctx, admin, "ws", "create", fmt.Sprintf("team-%d", teams), "--type", "team")
			readShards(ctx)
		}
		By(fmt.Sprintf("%d teams by shard: %v", teams, count()))
		Expect(shardOf).To(HaveLen(teams))
		Expect(count()).To(HaveKey("root"))
		Expect(count()).To(HaveKey("shard-1"))
		Expect(count()).To(HaveKey("shard-2"))

		out, err := env.Kubectl(ctx, in.Kubeconfig, "--context", "root", "get", "shards")
		Expect(err).NotTo(HaveOccurred())
		for _, n := range sharded.ShardNames {
			Expect(out).To(MatchRegexp(`(?m)^`+regexp.QuoteMeta(n)+`\s+`+regexp.QuoteMeta(in.Shard(n).URL)+`\s+`+regexp.QuoteMeta(in.Proxy.URL)+`\s`),
				"kubectl get shards:\n%s", out)
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

	It("serves a CRD of a team workspace on a non-root shard through the proxy", func(ctx SpecContext) {
		team := teamOn("shard-2")
		at(ctx, team, "apply", "-f", file("crd.yaml", thingsCRD))
		at(ctx, team, "wait", "--for=condition=Established", "crd/things.team.dev", "--timeout=60s")
		Eventually(func(g Gomega) {
			_, err := ts.Kubectl(ctx, team, "create", "-f", file("thing.yaml", "apiVersion: team.dev/v1\nkind: Thing\nmetadata: {name: one, namespace: default}\n"))
			g.Expect(err).NotTo(HaveOccurred())
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		Expect(at(ctx, team, "get", "things", "-o", "name")).To(Equal("thing.team.dev/one\n"))
	})

	It("forbids the non-admin user until a ClusterRoleBinding lets them in", func(ctx SpecContext) {
		team := teamOn("shard-1")
		out, err := ts.UserKubectl(ctx, team, "get", "configmaps")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("Forbidden"))
		at(ctx, team, "create", "clusterrolebinding", "e2e-user-admin", "--clusterrole", "cluster-admin", "--user", "e2e-user")
		Eventually(func(g Gomega) {
			_, err := ts.UserKubectl(ctx, team, "get", "configmaps", "-n", "default")
			g.Expect(err).NotTo(HaveOccurred())
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		out, err = ts.UserKubectl(ctx, team, "create", "configmap", "by-user", "-n", "default")
		Expect(err).NotTo(HaveOccurred())
		Expect(ts.UserKubectl(ctx, team, "get", "configmaps", "-n", "default", "-o", "name")).To(ContainSubstring("configmap/by-user\n"))
	})

	// consumers are the workspaces that bind example.dev, by shard.
	consumers := map[string]string{"shard-1": "consumer-b", "root": "consumer-r", "shard-2": "consumer-c"}

	It("binds an export of shard-2 in workspaces on every shard", func(ctx SpecContext) {
		kubectl(ctx, admin, "ws", "use", "root:org")
		kubectl(ctx, admin, "ws", "create", "provider", "--location-selector", "name=shard-2")
		for shard, ws := range consumers {
			kubectl(ctx, admin, "ws", "create", ws, "--location-selector", "name="+shard)
		}
		readShards(ctx)
		Expect(shardOf).To(HaveKeyWithValue("provider", "shard-2"))
		for shard, ws := range consumers {
			Expect(shardOf).To(HaveKeyWithValue(ws, shard))
		}

		at(ctx, "root:org:provider", "apply", "-f", file("widgets.yaml", resourceSchema("widgets", "Widget")+"---\n"+apiExport("v1.widgets.example.dev")))
		for _, ws := range consumers {
			kubectl(ctx, admin, "ws", "use", "root:org:"+ws)
			Expect(kubectl(ctx, admin, "kcp", "bind", "apiexport", "root:org:provider:example.dev")).To(ContainSubstring("created and bound"))
			Eventually(func(g Gomega) {
				_, err := ts.Kubectl(ctx, "root:org:"+ws, "create", "-f", file("widget.yaml",
					"apiVersion: example.dev/v1\nkind: Widget\nmetadata: {name: w-"+ws+", namespace: default}\n"))
				g.Expect(err).NotTo(HaveOccurred())
			}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		}
		Expect(at(ctx, "root:org:consumer-b", "get", "widgets", "-o", "name")).To(Equal("widget.example.dev/w-consumer-b\n"))
	})

	// sliceURLs are the URLs of the export's APIExportEndpointSlice.
	var sliceURLs []string
	// widgetsAt lists the widgets of every consumer through a virtual
	// workspace URL of example.dev, with kubectl.
	widgetsAt := func(ctx SpecContext, g Gomega, u string) []string {
		out, err := env.Kubectl(ctx, in.Kubeconfig, "--context", "base", "--server", u+"/clusters/*", "get", "widgets", "-A", "--no-headers",
			"-o", "custom-columns=NAME:.metadata.name")
		g.Expect(err).NotTo(HaveOccurred())
		return strings.Fields(out)
	}

	It("lists the export's virtual workspace URL on every shard in its APIExportEndpointSlice", func(ctx SpecContext) {
		at(ctx, "root:org:provider", "apply", "-f", file("slice.yaml", `apiVersion: apis.kcp.io/v1alpha1
kind: APIExportEndpointSlice
metadata:
  name: example.dev
spec:
  export:
    path: root:org:provider
    name: example.dev
`))
		Eventually(func(g Gomega) {
			out, err := ts.Kubectl(ctx, "root:org:provider", "get", "apiexportendpointslice", "example.dev", "-o", "jsonpath={.status.endpoints[*].url}")
			g.Expect(err).NotTo(HaveOccurred())
			sliceURLs = strings.Fields(out)
			g.Expect(sliceURLs).To(HaveLen(3))
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		for _, n := range sharded.ShardNames {
			Expect(sliceURLs).To(ContainElement(in.Shard(n).VW.URL+"/services/apiexport/root:org:provider/example.dev"), "the endpoint of %s's virtual workspaces", n)
		}
		By("listing the widgets of the consumer on the export's shard through that shard's virtual workspaces")
		Eventually(func(g Gomega) {
			g.Expect(widgetsAt(ctx, g, in.Shard("shard-2").VW.URL+"/services/apiexport/root:org:provider/example.dev")).To(ConsistOf("w-consumer-c"))
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
	})

	It("lists the consumers' objects of all shards through the export's virtual workspace URLs", func(ctx SpecContext) {
		Eventually(func(g Gomega) {
			var got []string
			for _, u := range sliceURLs {
				got = append(got, widgetsAt(ctx, g, u)...)
			}
			g.Expect(got).To(ConsistOf("w-consumer-b", "w-consumer-r", "w-consumer-c"))
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
	})

	It("brings a change of the export made while the cache server was down to a binding on another shard", func(ctx SpecContext) {
		By("stopping the cache server")
		Expect(in.Cache.Stop(30 * time.Second)).To(Succeed())
		By("adding gadgets to the export on shard-2")
		at(ctx, "root:org:provider", "apply", "-f", file("gadgets.yaml", resourceSchema("gadgets", "Gadget")+"---\n"+apiExport("v1.widgets.example.dev", "v1.gadgets.example.dev")))
		time.Sleep(2 * time.Second)
		By("restarting the cache server")
		Expect(in.Cache.Restart(ctx)).To(Succeed())
		restarted := time.Now()
		Eventually(func(g Gomega) {
			_, err := ts.Kubectl(ctx, "root:org:consumer-b", "get", "gadgets")
			g.Expect(err).NotTo(HaveOccurred())
		}).WithContext(ctx).WithTimeout(90 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		AddReportEntry("gadgets served on shard-1 after the cache restart", time.Since(restarted).Round(100*time.Millisecond).String())
		Expect(at(ctx, "root:org:consumer-b", "get", "apibinding", "example.dev", "-o", "jsonpath={.status.boundResources[*].resource}")).
			To(ContainSubstring("gadgets"))
	})

	It("keeps other shards serving while shard-2 is killed, and shard-2 keeps what it acknowledged", func(ctx SpecContext) {
		const acked = 20
		for i := range acked {
			at(ctx, "root:org:provider", "create", "configmap", fmt.Sprintf("ack-%d", i), "-n", "default")
		}
		By("killing shard-2 (SIGKILL)")
		in.Shard("shard-2").Kill()

		Expect(at(ctx, "root:org:consumer-b", "get", "widgets", "-o", "name")).To(Equal("widget.example.dev/w-consumer-b\n"))
		Expect(at(ctx, teamOn("root"), "get", "namespaces", "default", "-o", "name")).To(Equal("namespace/default\n"))
		for _, ws := range []string{"root:org:provider", teamOn("shard-2")} {
			out, err := ts.Kubectl(ctx, ws, "get", "configmaps", "-n", "default")
			Expect(err).To(HaveOccurred(), "%s on the killed shard", ws)
			Expect(out).To(ContainSubstring("ServiceUnavailable"), "%s on the killed shard answers 503", ws)
		}

		By("restarting shard-2")
		Expect(in.Shard("shard-2").Restart(ctx)).To(Succeed())
		Eventually(func(g Gomega) {
			out, err := ts.Kubectl(ctx, "root:org:provider", "get", "configmaps", "-n", "default", "-o", "name")
			g.Expect(err).NotTo(HaveOccurred())
			for i := range acked {
				g.Expect(out).To(ContainSubstring(fmt.Sprintf("configmap/ack-%d\n", i)))
			}
		}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())
		Expect(at(ctx, "root:org:consumer-c", "get", "widgets", "-o", "name")).To(Equal("widget.example.dev/w-consumer-c\n"))
	})

	// A resolution the proxy has cached keeps routing while the shard it
	// was read from is down: no Workspace there can change meanwhile.
	It("routes a workspace on a live shard whose parent is on a killed shard", func(ctx SpecContext) {
		kubectl(ctx, admin, "ws", "use", "root")
		kubectl(ctx, admin, "ws", "create", "org2", "--location-selector", "name=shard-2", "--enter")
		kubectl(ctx, admin, "ws", "create", "child", "--location-selector", "name=root")
		Expect(at(ctx, "root:org2:child", "get", "namespaces", "default", "-o", "name")).To(Equal("namespace/default\n"))
		in.Shard("shard-2").Kill()
		DeferCleanup(func(ctx SpecContext) { Expect(in.Shard("shard-2").Restart(ctx)).To(Succeed()) })
		Expect(at(ctx, "root:org2:child", "get", "namespaces", "default", "-o", "name")).To(Equal("namespace/default\n"))
	})

	// Right after the shards registered, before the cache server has
	// replicated every Shard to every shard, a workspace on shard-1 whose
	// parent is on shard-2 must not be taken for an orphan (shard-1 asks
	// shard-2, which made it, not a list of shards that may lack it).
	It("keeps a workspace created right after the shards joined", func(ctx SpecContext) {
		bin, err := framework.BinDir()
		Expect(err).NotTo(HaveOccurred())
		kubectlBin, err := framework.KubectlPath()
		Expect(err).NotTo(HaveOccurred())
		// A group of its own: the process names are the installation's.
		group, err := process.NewGroup(filepath.Join(env.Dir, "fresh", "logs"), os.Getenv("TESSERA_E2E_LEDGER"))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(group.StopAll(30 * time.Second)).To(BeEmpty()) })
		fresh, err := sharded.Start(ctx, sharded.Options{Dir: filepath.Join(env.Dir, "fresh"), BinDir: bin, Group: group,
			NoFsync: true, NoReplicationWait: true})
		Expect(err).NotTo(HaveOccurred())
		for _, step := range [][]string{
			{"ws", "create", "parent", "--location-selector", "name=shard-2", "--enter"},
			{"ws", "create", "child", "--location-selector", "name=shard-1"},
		} {
			_, err := framework.Run(ctx, []string{"KUBECONFIG=" + fresh.Kubeconfig, "PATH=" + bin + ":" + os.Getenv("PATH")}, kubectlBin, step...)
			Expect(err).NotTo(HaveOccurred())
		}
	})

	It("stops routing a deleted workspace within a second", func(ctx SpecContext) {
		kubectl(ctx, admin, "ws", "use", "root:org")
		kubectl(ctx, admin, "ws", "create", "gone", "--location-selector", "name=shard-1")
		client, err := ts.Client("root:org:gone")
		Expect(err).NotTo(HaveOccurred())
		_, err = client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred(), "the workspace is routed before it is deleted")
		parent, err := ts.Dynamic("root:org")
		Expect(err).NotTo(HaveOccurred())

		deleted := time.Now()
		Expect(parent.Resource(workspaces).Delete(ctx, "gone", metav1.DeleteOptions{})).To(Succeed())
		var goneAt, unroutedAt time.Time
		Eventually(func(g Gomega) {
			now := time.Now()
			if goneAt.IsZero() {
				if _, err := parent.Resource(workspaces).Get(ctx, "gone", metav1.GetOptions{}); apierrors.IsNotFound(err) {
					goneAt = now
				}
			}
			if _, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err == nil || !apierrors.IsNotFound(err) {
				unroutedAt = time.Time{}
			} else if unroutedAt.IsZero() {
				unroutedAt = now
			}
			g.Expect(goneAt.IsZero()).To(BeFalse(), "the Workspace is gone")
			g.Expect(unroutedAt.IsZero()).To(BeFalse(), "the proxy answers 404")
		}).WithContext(ctx).WithTimeout(90 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
		lag := max(unroutedAt.Sub(goneAt), 0)
		AddReportEntry("routing lag after deletion", fmt.Sprintf("%s after the Workspace was gone (%s after the delete request)",
			lag.Round(time.Millisecond), unroutedAt.Sub(deleted).Round(time.Millisecond)))
		GinkgoWriter.Printf("deleted workspace routed for %s after the Workspace was gone\n", lag)
		Expect(lag).To(BeNumerically("<", time.Second))
	})

	It("keeps a watch through the proxy open while idle and delivers a later event", func(ctx SpecContext) {
		idle := idleWatch()
		wait := time.Until(watchStarted.Add(idle))
		By(fmt.Sprintf("waiting %s more, the watch idle for %s in all", wait.Round(time.Second), idle))
		select {
		case <-watchClosed:
			Fail(fmt.Sprintf("the watch ended after %s", time.Since(watchStarted).Round(time.Second)))
		case ev := <-watchEvents:
			Fail(fmt.Sprintf("the idle watch got an event after %s: %s %s", time.Since(watchStarted).Round(time.Second), ev.Type, format.Object(ev.Object, 1)))
		case <-time.After(wait):
		case <-ctx.Done():
			Fail("interrupted")
		}
		client, err := ts.Client("root")
		Expect(err).NotTo(HaveOccurred())
		_, err = client.CoreV1().ConfigMaps("default").Create(ctx, configMap("idle-watch"), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(watchEvents).WithTimeout(10 * time.Second).Should(Receive(HaveField("Type", watch.Added)))
		AddReportEntry("idle watch", fmt.Sprintf("open for %s, the event received", time.Since(watchStarted).Round(time.Second)))
	}, SpecTimeout(idleWatch()+2*time.Minute))
})

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
