package apise2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"

	"github.com/tessera-dev/tessera/test/e2e/framework"
)

// cowboysCRD is the CRD the provider starts from.
const cowboysCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: cowboys.wildwest.dev
spec:
  group: wildwest.dev
  names:
    kind: Cowboy
    listKind: CowboyList
    plural: cowboys
    singular: cowboy
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              intent:
                type: string
          status:
            type: object
            properties:
              result:
                type: string
    subresources:
      status: {}
`

// schemaName is the APIResourceSchema `kubectl kcp crd snapshot --prefix
// v220920-6039d110` makes of cowboysCRD.
const schemaName = "v220920-6039d110.cowboys.wildwest.dev"

// apiExport is an APIExport of the cowboys schema.
func apiExport(name string) string {
	return `apiVersion: apis.kcp.io/v1alpha1
kind: APIExport
metadata:
  name: ` + name + `
spec:
  latestResourceSchemas:
  - ` + schemaName + "\n"
}

// seedBinding is the quickstart's APIBinding, verbatim: the older
// reference form, spec.reference.workspace.
const seedBinding = `apiVersion: apis.kcp.io/v1alpha1
kind: APIBinding
metadata:
  name: cowboys
spec:
  reference:
    workspace:
      path: root:wildwest:cowboys-service
      exportName: wildwest.dev
`

// cowboy is a Cowboy whose intent is its name.
func cowboy(name string) string {
	return `apiVersion: wildwest.dev/v1alpha1
kind: Cowboy
metadata:
  name: ` + name + `
spec:
  intent: ` + name + "\n"
}

// lines splits kubectl's output into lines.
func lines(out string) []string {
	return strings.Split(strings.TrimRight(out, "\n"), "\n")
}

// line matches a whole line by a regular expression.
func line(re string) types.GomegaMatcher {
	return MatchRegexp(`^` + re + `$`)
}

// specTimeout bounds each spec, kubectl commands included.
const specTimeout = 3 * time.Minute

// The quickstart: a provider snapshots its CRD into an APIResourceSchema
// and exports it from root:wildwest:cowboys-service; a consumer binds the
// export with kubectl kcp bind and creates a Cowboy; a second consumer binds
// it with the quickstart's APIBinding YAML; the provider lists the Cowboys
// of every consumer through the apiexport virtual workspace, where an
// export nothing binds lists none.
var _ = Describe("APIs as a service: the quickstart through kubectl", Ordered, Label("apis", "kubectl"), func() {
	var (
		ts *framework.Tessera
		// provider and consumer are two terminals, both the admin's.
		provider, consumer *framework.WS
		// dir is the terminals' working directory: crd.yaml, schema.yaml
		// and the other manifests.
		dir string
		// org, consumerWS and seedWS are the workspaces in root the
		// quickstart names: wildwest, consumer and seed-consumer, with
		// this run's suffix against an installation someone else runs.
		org, consumerWS, seedWS string
	)

	// providerPath is the workspace of the cowboys export.
	providerPath := func() string { return "root:" + org + ":cowboys-service" }
	// otherPath is the workspace of the export nothing binds.
	otherPath := func() string { return "root:" + org + ":other-service" }
	// virtual is the URL of the apiexport virtual workspace of an export,
	// across all its consumers.
	virtual := func(path, export string) string {
		return ts.URL + "/services/apiexport/" + path + "/" + export + "/clusters/*"
	}

	// kubectl runs kubectl in a terminal and fails the spec, with the
	// output, when it fails.
	kubectl := func(ctx SpecContext, w *framework.WS, args ...string) string {
		GinkgoHelper()
		out, err := w.Kubectl(ctx, args...)
		Expect(err).NotTo(HaveOccurred())
		return out
	}
	// expect runs kubectl and checks that its output has a line matching
	// each regular expression.
	expect := func(ctx SpecContext, w *framework.WS, args []string, res ...string) string {
		GinkgoHelper()
		out := kubectl(ctx, w, args...)
		for _, re := range res {
			Expect(lines(out)).To(ContainElement(line(re)), "the output of kubectl %s:\n%s", strings.Join(args, " "), out)
		}
		return out
	}
	// file writes a file into the working directory and returns its path.
	file := func(name, content string) string {
		GinkgoHelper()
		p := filepath.Join(dir, name)
		Expect(os.WriteFile(p, []byte(content), 0o644)).To(Succeed())
		return p
	}
	// current is the line kubectl ws prints for the current workspace.
	current := func(path string) string {
		return regexp.QuoteMeta(`Current workspace is "` + path + `".`)
	}
	// identity waits until an export of the current workspace of the
	// provider has its identity, and returns kubectl get -o yaml of it.
	identity := func(ctx SpecContext, export string) string {
		GinkgoHelper()
		var out string
		Eventually(func(g Gomega) {
			var err error
			out, err = provider.Kubectl(ctx, "get", "apiexport", export, "-o", "yaml")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(lines(out)).To(ContainElement(line(`  identityHash: [0-9a-f]{64}`)),
				"kubectl get apiexport %s -o yaml has no status.identityHash:\n%s", export, out)
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		return out
	}
	// listsNothing checks that kubectl lists no cowboys, and succeeds, in
	// the virtual workspace of an export.
	listsNothing := func(ctx SpecContext, path, export string) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			out, err := provider.Kubectl(ctx, "--server="+virtual(path, export), "get", "cowboys", "-A")
			g.Expect(err).NotTo(HaveOccurred(), "the virtual workspace of %s:%s", path, export)
			g.Expect(lines(out)).To(ContainElement("No resources found"),
				"kubectl get cowboys -A in the virtual workspace of %s:%s", path, export)
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
	}

	// discovers waits until kubectl api-resources in the consumer's
	// current workspace has cowboys, as the one line of wildwest.dev.
	discovers := func(ctx SpecContext) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			out, err := consumer.Kubectl(ctx, "api-resources")
			g.Expect(err).NotTo(HaveOccurred())
			var wildwest []string
			for _, l := range lines(out) {
				if strings.Contains(l, "wildwest") {
					wildwest = append(wildwest, l)
				}
			}
			g.Expect(wildwest).To(ConsistOf(line(`cowboys\s+wildwest\.dev/v1alpha1\s+true\s+Cowboy`)), "kubectl api-resources | grep wildwest")
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
	}

	BeforeAll(func(ctx SpecContext) {
		var err error
		ts, err = env.Tessera(ctx)
		Expect(err).NotTo(HaveOccurred())
		provider, err = ts.AdminWS("provider")
		Expect(err).NotTo(HaveOccurred())
		consumer, err = ts.AdminWS("consumer")
		Expect(err).NotTo(HaveOccurred())
		dir = filepath.Join(env.Dir, "quickstart")
		Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
		org, consumerWS, seedWS = "wildwest", "consumer", "seed-consumer"
		if ts.Process == nil {
			// Leave an installation someone else runs as it was, and do
			// not collide with what is there.
			org, consumerWS, seedWS = env.Name(org), env.Name(consumerWS), env.Name(seedWS)
			DeferCleanup(func(ctx SpecContext) {
				_, err := ts.Kubectl(ctx, "root", "delete", "workspace", org, consumerWS, seedWS, "--ignore-not-found", "--wait=false")
				Expect(err).NotTo(HaveOccurred())
			})
		}
	})

	It("publishes the cowboys API from the provider's workspace", SpecTimeout(specTimeout), func(ctx SpecContext) {
		By("creating " + providerPath() + " and entering it")
		expect(ctx, provider, []string{"ws", "create", org, "--enter"}, current("root:"+org))
		expect(ctx, provider, []string{"ws", "create", "cowboys-service", "--enter"}, current(providerPath()))

		By("snapshotting the CRD into an APIResourceSchema: kubectl kcp crd snapshot -f crd.yaml --prefix v220920-6039d110 > schema.yaml")
		schema, err := provider.KubectlOutput(ctx, "kcp", "crd", "snapshot", "-f", file("crd.yaml", cowboysCRD), "--prefix", "v220920-6039d110")
		Expect(err).NotTo(HaveOccurred())
		Expect(lines(schema)).To(ContainElements("kind: APIResourceSchema", "  name: "+schemaName), "the snapshot:\n%s", schema)
		expect(ctx, provider, []string{"apply", "-f", file("schema.yaml", schema)},
			regexp.QuoteMeta("apiresourceschema.apis.kcp.io/"+schemaName+" created"))

		By("exporting it as wildwest.dev")
		expect(ctx, provider, []string{"apply", "-f", file("apiexport.yaml", apiExport("wildwest.dev"))},
			regexp.QuoteMeta("apiexport.apis.kcp.io/wildwest.dev created"))
		// kubectl reads the preferred version, v1alpha2 (as in kcp), where
		// latestResourceSchemas are spec.resources[].schema.
		out := identity(ctx, "wildwest.dev")
		Expect(lines(out)).To(ContainElements("apiVersion: apis.kcp.io/v1alpha2", "    schema: "+schemaName), "kubectl get apiexport -o yaml:\n%s", out)
	})

	It("lists nothing, and succeeds, in an export's virtual workspace before anything binds it", SpecTimeout(specTimeout), func(ctx SpecContext) {
		By("exporting the same schema as other.dev from " + otherPath())
		expect(ctx, provider, []string{"ws", "root:" + org}, current("root:"+org))
		expect(ctx, provider, []string{"ws", "create", "other-service", "--enter"}, current(otherPath()))
		expect(ctx, provider, []string{"apply", "-f", filepath.Join(dir, "schema.yaml")},
			regexp.QuoteMeta("apiresourceschema.apis.kcp.io/"+schemaName+" created"))
		expect(ctx, provider, []string{"apply", "-f", file("other.yaml", apiExport("other.dev"))},
			regexp.QuoteMeta("apiexport.apis.kcp.io/other.dev created"))
		identity(ctx, "other.dev")

		By("listing cowboys across the consumers of either export, of which there are none")
		listsNothing(ctx, otherPath(), "other.dev")
		listsNothing(ctx, providerPath(), "wildwest.dev")
	})

	It("binds the export into a consumer with kubectl kcp bind", SpecTimeout(specTimeout), func(ctx SpecContext) {
		expect(ctx, consumer, []string{"ws", "root"}, current("root"))
		expect(ctx, consumer, []string{"ws", "create", consumerWS, "--enter"}, current("root:"+consumerWS))
		export := providerPath() + ":wildwest.dev"
		expect(ctx, consumer, []string{"kcp", "bind", "apiexport", export}, regexp.QuoteMeta("wildwest.dev created and bound."))

		By("finding cowboys in discovery and in kubectl explain")
		discovers(ctx)
		Eventually(func(g Gomega) {
			out, err := consumer.Kubectl(ctx, "explain", "cowboys.spec")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out).To(And(MatchRegexp(`(?m)^KIND:\s+Cowboy$`), MatchRegexp(`(?m)^\s+intent\s+<string>$`)), "kubectl explain cowboys.spec")
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

		By("creating the Cowboy one")
		expect(ctx, consumer, []string{"create", "-f", file("one.yaml", cowboy("one"))}, regexp.QuoteMeta("cowboy.wildwest.dev/one created"))
		Expect(kubectl(ctx, consumer, "get", "cowboy", "one", "-o", "jsonpath={.spec.intent}")).To(Equal("one"))
	})

	It("binds the export with the quickstart's APIBinding, in the older reference form, in a second consumer", SpecTimeout(specTimeout), func(ctx SpecContext) {
		expect(ctx, consumer, []string{"ws", "root"}, current("root"))
		expect(ctx, consumer, []string{"ws", "create", seedWS, "--enter"}, current("root:"+seedWS))
		binding := strings.ReplaceAll(seedBinding, "root:wildwest:", "root:"+org+":")
		expect(ctx, consumer, []string{"apply", "-f", file("apibinding.yaml", binding)}, regexp.QuoteMeta("apibinding.apis.kcp.io/cowboys created"))
		expect(ctx, consumer, []string{"wait", "--for=jsonpath={.status.phase}=Bound", "apibinding/cowboys", "--timeout=60s"},
			regexp.QuoteMeta("apibinding.apis.kcp.io/cowboys condition met"))
		Expect(kubectl(ctx, consumer, "get", "apibinding", "cowboys", "-o", "jsonpath={.spec.reference.export.path} {.spec.reference.export.name}")).
			To(Equal(providerPath()+" wildwest.dev"), "spec.reference.workspace becomes spec.reference.export")

		By("creating the Cowboy two")
		discovers(ctx)
		expect(ctx, consumer, []string{"create", "-f", file("two.yaml", cowboy("two"))}, regexp.QuoteMeta("cowboy.wildwest.dev/two created"))
	})

	It("shows the provider the cowboys of every consumer through the export's virtual workspace", SpecTimeout(specTimeout), func(ctx SpecContext) {
		By("finding the consumers' logical clusters")
		expect(ctx, consumer, []string{"ws", "root"}, current("root"))
		clusterOf := func(ws string) string {
			GinkgoHelper()
			c := kubectl(ctx, consumer, "get", "workspace", ws, "-o", "jsonpath={.spec.cluster}")
			Expect(c).To(MatchRegexp(`^[a-z0-9]+$`), "workspace %s's spec.cluster", ws)
			return c
		}
		one, two := clusterOf(consumerWS), clusterOf(seedWS)

		By("listing cowboys across the consumers of wildwest.dev")
		Eventually(func(g Gomega) {
			out, err := provider.Kubectl(ctx, "--server="+virtual(providerPath(), "wildwest.dev"), "get", "cowboys", "-A",
				"-o", `custom-columns=WORKSPACE:.metadata.annotations.kcp\.io/cluster,NAME:.metadata.name`)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(lines(out)).To(ConsistOf(line(`WORKSPACE\s+NAME`), line(one+`\s+one`), line(two+`\s+two`)),
				"kubectl get cowboys -A in the virtual workspace of wildwest.dev")
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

		By("listing none of them through the export nothing binds")
		listsNothing(ctx, otherPath(), "other.dev")
	})
})
