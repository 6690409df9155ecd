package framework

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
)

// logLines bounds how much of each process log a failure prints; the whole
// file stays in the work directory.
const logLines = 200

// RunSuite runs the ginkgo suite of one area, or skips it when the
// environment does not ask for e2e (TESSERA_E2E=1 or TESSERA_E2E_KUBECONFIG).
func RunSuite(t *testing.T, description string) {
	if !Enabled() {
		t.Skip("e2e suites run through `make test-e2e` (or with TESSERA_E2E=1 / TESSERA_E2E_KUBECONFIG set)")
	}
	gomega.RegisterFailHandler(ginkgo.Fail)
	suite, reporter := ginkgo.GinkgoConfiguration()
	if suite.Timeout == time.Hour { // ginkgo's default; fail well before go test's -timeout
		suite.Timeout = 20 * time.Minute
	}
	ginkgo.RunSpecs(t, description, suite, reporter)
}

// Setup registers the nodes every e2e suite shares and returns the suite's
// environment, ready from BeforeSuite on:
//   - BeforeSuite creates the work directory;
//   - each spec marks the process logs, and a failed spec gets what every
//     process logged during it (the last lines of each) in its report;
//   - AfterSuite stops every process by PID, physical clusters included,
//     also after a failure or an interrupt (ginkgo runs it on SIGINT and
//     SIGTERM), and fails when one did not stop cleanly;
//   - the timing summary is printed at the end.
//
// Call it once per suite, at package level: var env = framework.Setup("shard").
func Setup(area string) *Env {
	env := &Env{Area: area}
	var started time.Time
	ginkgo.BeforeSuite(func() {
		started = time.Now()
		gomega.Expect(env.init()).To(gomega.Succeed())
	})
	ginkgo.BeforeEach(func() { env.MarkLogs() })
	ginkgo.AfterEach(func() {
		if ginkgo.CurrentSpecReport().Failed() {
			env.DumpLogs(ginkgo.GinkgoWriter, logLines)
		}
	})
	ginkgo.AfterSuite(func(ctx context.Context) {
		if env.group == nil {
			return
		}
		errs := env.Teardown(ctx)
		gomega.Expect(errs).To(gomega.BeEmpty(), "every process stops cleanly when asked")
	}, ginkgo.NodeTimeout(3*time.Minute))
	ginkgo.ReportAfterSuite("e2e timing and cleanup", func(r ginkgo.Report) {
		if env.group == nil {
			return
		}
		if !r.SuiteSucceeded {
			// Failures outside specs (BeforeSuite, AfterSuite) get the logs too.
			for _, s := range r.SpecReports {
				if s.LeafNodeType != types.NodeTypeIt && s.Failed() {
					env.DumpLogs(os.Stdout, logLines)
					break
				}
			}
		}
		env.Finish(os.Stdout, time.Since(started), r.SuiteSucceeded)
	})
	return env
}
