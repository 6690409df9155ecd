package bind

import (
	"strings"
	"testing"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func TestComputePlacement(t *testing.T) {
	o := &computeOptions{namespaceSelector: "purpose=workload", locationSelectors: []string{"env=test", ""}}
	p, err := o.placement("root:my-locations")
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.LocationWorkspace != "root:my-locations" || p.Spec.NamespaceSelector.MatchLabels["purpose"] != "workload" ||
		len(p.Spec.LocationSelectors) != 2 || p.Spec.LocationSelectors[0].MatchLabels["env"] != "test" || len(p.Spec.LocationSelectors[1].MatchLabels) != 0 {
		t.Errorf("placement spec: %+v", p.Spec)
	}
	if p.Spec.LocationResource.Resource != "synctargets" || p.Spec.LocationResource.Group != "workload.kcp.io" {
		t.Errorf("location resource: %+v", p.Spec.LocationResource)
	}
	// The name follows what the Placement selects, so a second run finds it.
	if !strings.HasPrefix(p.Name, "placement-") || len(p.Name) != len("placement-")+8 {
		t.Errorf("placement name %q", p.Name)
	}
	again, _ := o.placement("root:my-locations")
	other, _ := o.placement("root:elsewhere")
	if again.Name != p.Name || other.Name == p.Name {
		t.Errorf("placement names: %q %q %q", p.Name, again.Name, other.Name)
	}
	if _, err := (&computeOptions{namespaceSelector: "a in (", locationSelectors: []string{""}}).placement("root"); err == nil {
		t.Error("a bad namespace selector is accepted")
	}
	o.name = "mine"
	if p, _ := o.placement("root"); p.Name != "mine" {
		t.Errorf("--name ignored: %q", p.Name)
	}
}

func TestComputeBindingName(t *testing.T) {
	a := bindingName(logicalcluster.NewPath("root:compute"), "kubernetes")
	b := bindingName(logicalcluster.NewPath("root:other"), "kubernetes")
	if !strings.HasPrefix(a, "kubernetes-") || a == b {
		t.Errorf("binding names %q and %q", a, b)
	}
	long := bindingName(logicalcluster.NewPath("root"), strings.Repeat("x", 300))
	if len(long) > 253 {
		t.Errorf("binding name of %d characters", len(long))
	}
}
