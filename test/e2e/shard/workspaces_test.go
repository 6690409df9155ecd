package sharde2e

import (
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tessera-dev/tessera/test/e2e/framework"
)

// workspaceNameRE is what a user name must look like to be its own home
// workspace name; other names get a cleaned-up form with a hash suffix.
var workspaceNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

var _ = Describe("Workspaces through kubectl ws", Ordered, Label("shard", "workspaces"), func() {
	var (
		ts    *framework.Tessera
		admin *framework.WS
		// org is the organization this run creates in root; its name is
		// unique so that runs against a shared installation do not collide.
		org string
	)

	// kubectl runs kubectl in a kubectl ws session and fails the spec, with
	// the output, when it fails.
	kubectl := func(ctx SpecContext, w *framework.WS, args ...string) string {
		GinkgoHelper()
		out, err := w.Kubectl(ctx, args...)
		Expect(err).NotTo(HaveOccurred())
		return out
	}
	// expect runs kubectl and checks that its output has every line.
	expect := func(ctx SpecContext, w *framework.WS, args []string, lines ...string) string {
		GinkgoHelper()
		out := kubectl(ctx, w, args...)
		for _, l := range lines {
			Expect(strings.Split(out, "\n")).To(ContainElement(l), "the output of kubectl %s:\n%s", strings.Join(args, " "), out)
		}
		return out
	}

	BeforeAll(func(ctx SpecContext) {
		var err error
		ts, err = env.Tessera(ctx)
		Expect(err).NotTo(HaveOccurred())
		admin, err = ts.AdminWS("admin")
		Expect(err).NotTo(HaveOccurred())
		org = env.Name("e2e-org")
		DeferCleanup(func(ctx SpecContext) {
			// Whatever a failed spec left behind; nothing when the last
			// spec deleted it.
			_, err := ts.Kubectl(ctx, "root", "delete", "workspace", org, "--ignore-not-found", "--wait=false")
			Expect(err).NotTo(HaveOccurred())
		})
	})

	It("starts in root and creates an organization and a team in it", func(ctx SpecContext) {
		expect(ctx, admin, []string{"ws", "."}, `Current workspace is "root".`)

		By("creating an organization, the default type in root, and entering it")
		out := kubectl(ctx, admin, "ws", "create", org, "--enter")
		Expect(out).To(ContainSubstring(`Workspace "%s" (type root:organization) created.`, org))
		Expect(strings.Split(out, "\n")).To(ContainElements(
			`Workspace "`+org+`" (type root:organization) is ready to use.`,
			`Current workspace is "root:`+org+`".`,
		), "the output of kubectl ws create %s --enter:\n%s", org, out)

		By("creating a team in the organization")
		out = kubectl(ctx, admin, "ws", "create", "team1", "--type", "team")
		Expect(out).To(ContainSubstring(`Workspace "team1" (type root:team) created.`))
		Expect(strings.Split(out, "\n")).To(ContainElement(`Workspace "team1" (type root:team) is ready to use.`),
			"the output of kubectl ws create team1 --type team:\n%s", out)
		expect(ctx, admin, []string{"ws", "."}, `Current workspace is "root:`+org+`".`)

		out = kubectl(ctx, admin, "get", "workspaces")
		Expect(out).To(MatchRegexp(`(?m)^NAME\s+TYPE\s+PHASE\s+URL\s+AGE$`), "kubectl get workspaces:\n%s", out)
		Expect(out).To(MatchRegexp(`(?m)^team1\s+team\s+Ready\s+`+regexp.QuoteMeta(ts.ClusterURL("root:"+org+":team1"))+`\s`),
			"kubectl get workspaces:\n%s", out)
	})

	It("switches into a child, up to the parent and back", func(ctx SpecContext) {
		team := "root:" + org + ":team1"
		expect(ctx, admin, []string{"ws", "root:" + org}, `Current workspace is "root:`+org+`".`)
		expect(ctx, admin, []string{"ws", "team1"}, `Current workspace is "`+team+`".`)
		expect(ctx, admin, []string{"create", "configmap", "c", "--from-literal=a=b"}, "configmap/c created")
		expect(ctx, admin, []string{"ws", ".."}, `Current workspace is "root:`+org+`".`)
		out, err := admin.Kubectl(ctx, "get", "configmap", "c")
		Expect(err).To(HaveOccurred(), "configmap c is in the team, not in the organization:\n%s", out)
		Expect(out).To(ContainSubstring("NotFound"))
		expect(ctx, admin, []string{"ws", "-"}, `Current workspace is "`+team+`".`)
		Expect(kubectl(ctx, admin, "get", "configmap", "c", "-o", "jsonpath={.data.a}")).To(Equal("b"))
		expect(ctx, admin, []string{"ws", "-"}, `Current workspace is "root:`+org+`".`)
		expect(ctx, admin, []string{"config", "get-contexts", "-o", "name"}, "workspace.kcp.io/current", "workspace.kcp.io/previous")
	})

	It("prints the tree of workspaces from root", func(ctx SpecContext) {
		expect(ctx, admin, []string{"ws", "root"}, `Current workspace is "root".`)
		out := kubectl(ctx, admin, "ws", "tree")
		Expect(out).To(HavePrefix(".\n└── root\n"), "kubectl ws tree:\n%s", out)
		// The organization, somewhere among root's children, with the team
		// as its only child.
		Expect(out).To(MatchRegexp(`(?m)^    [├└]── `+regexp.QuoteMeta(org)+`\n    [│ ]   └── team1$`), "kubectl ws tree:\n%s", out)
	})

	It("refuses an organization inside a team", func(ctx SpecContext) {
		expect(ctx, admin, []string{"ws", "root:" + org + ":team1"}, `Current workspace is "root:`+org+`:team1".`)
		out, err := admin.Kubectl(ctx, "ws", "create", "nested-org", "--type", "root:organization")
		Expect(err).To(HaveOccurred(), "kubectl ws create nested-org --type root:organization in a team:\n%s", out)
		// The refusal comes from the server and names both types.
		Expect(out).To(And(ContainSubstring("forbidden"), ContainSubstring("root:organization"), ContainSubstring("root:team")),
			"kubectl ws create nested-org --type root:organization in a team")
		out, err = admin.Kubectl(ctx, "get", "workspace", "nested-org")
		Expect(err).To(HaveOccurred(), "the refused workspace exists:\n%s", out)
		Expect(out).To(ContainSubstring("NotFound"))
	})

	It("gives a user who is not an admin a home workspace", func(ctx SpecContext) {
		if ts.UserKubeconfig == "" {
			Skip("this installation has no non-admin user; set TESSERA_E2E_USER_TOKEN")
		}
		user, err := ts.UserWS("user")
		Expect(err).NotTo(HaveOccurred())

		By("entering the home workspace, created on first use")
		out := kubectl(ctx, user, "ws")
		name := strings.TrimSpace(kubectl(ctx, user, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"))
		Expect(name).NotTo(BeEmpty())
		if ts.Process != nil {
			Expect(name).To(Equal("e2e-user"), "the user of the token the framework gave the shard")
		}
		home := `[^"]+`
		if workspaceNameRE.MatchString(name) {
			home = regexp.QuoteMeta(name)
		}
		Expect(out).To(MatchRegexp(`^Current workspace is "root:users(:[a-z][a-z0-9]*)+:`+home+`"\.\n$`), "kubectl ws as %s", name)
		current := strings.TrimSpace(out)
		expect(ctx, user, []string{"ws", "."}, current)

		By("creating a configmap at home")
		cm := env.Name("e2e-home")
		Eventually(func(g Gomega) {
			out, err := user.Kubectl(ctx, "create", "configmap", cm, "--from-literal=a=b")
			if err != nil && strings.Contains(out, "AlreadyExists") {
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		Expect(kubectl(ctx, user, "get", "configmap", cm, "-o", "jsonpath={.data.a}")).To(Equal("b"))
		kubectl(ctx, user, "delete", "configmap", cm)

		By("finding the same home again")
		expect(ctx, user, []string{"ws", "~"}, current)
	})

	It("deletes the organization with the team in it", func(ctx SpecContext) {
		expect(ctx, admin, []string{"ws", "root"}, `Current workspace is "root".`)
		expect(ctx, admin, []string{"delete", "workspace", org, "--wait=false"}, `workspace.tenancy.kcp.io "`+org+`" deleted`)
		Eventually(func(g Gomega) {
			out, err := admin.Kubectl(ctx, "get", "workspace", org)
			g.Expect(err).To(HaveOccurred(), "workspace %s still exists:\n%s", org, out)
			g.Expect(out).To(ContainSubstring("NotFound"))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		out, err := admin.Kubectl(ctx, "ws", org)
		Expect(err).To(HaveOccurred(), "kubectl ws %s after deleting it:\n%s", org, out)
		Expect(out).To(ContainSubstring("not found"))
	})
})
