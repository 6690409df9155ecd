package options

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
)

// TestFlags: kcp's syncer flags parse; what is missing or not supported is
// refused with the flag's name.
func TestFlags(t *testing.T) {
	o := NewOptions()
	var fss cliflag.NamedFlagSets
	o.AddFlags(&fss)
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	for _, name := range fss.Order {
		fs.AddFlagSet(fss.FlagSets[name])
	}
	if err := fs.Parse([]string{"--from-kubeconfig=/kcp/kubeconfig", "--sync-target-name=kind", "--sync-target-uid=u",
		"--from-cluster=2x8wo5bj4mvjn3kq", "--qps=30", "--burst=40", "--downstream-namespace-clean-delay=5s"}); err != nil {
		t.Fatal(err)
	}
	c, err := o.Complete()
	if err != nil {
		t.Fatal(err)
	}
	if errs := c.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	if c.QPS != 30 || c.Burst != 40 || c.DownstreamNamespaceCleanDelay.Seconds() != 5 || c.HeartbeatInterval != DefaultHeartbeatInterval {
		t.Errorf("parsed: %+v", *c.Options)
	}

	bad := NewOptions()
	bad.FromCluster = "Not Valid"
	bad.Resources = []string{"routes"}
	c, _ = bad.Complete()
	var msgs []string
	for _, err := range c.Validate() {
		msgs = append(msgs, err.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"--from-kubeconfig", "--sync-target-name", "--sync-target-uid", "--from-cluster", `--resources "routes"`} {
		if !strings.Contains(all, want) {
			t.Errorf("want an error naming %s in:\n%s", want, all)
		}
	}
}
