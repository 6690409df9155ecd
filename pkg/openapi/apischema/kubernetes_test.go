package apischema

import (
	"testing"
)

// TestKubernetesSchemas: the schemas of the compute service's workload
// APIs build from the upstream types as structural schemas, with the
// fields kubectl and the syncer need.
func TestKubernetesSchemas(t *testing.T) {
	for _, r := range Kubernetes() {
		s, err := Schema(r)
		if err != nil {
			t.Fatalf("%s.%s: %v", r.Names.Plural, r.Group, err)
		}
		props, err := s.Spec.Versions[0].GetSchema()
		if err != nil {
			t.Fatal(err)
		}
		switch r.Names.Plural {
		case "deployments":
			tmpl := props.Properties["spec"].Properties["template"]
			containers := tmpl.Properties["spec"].Properties["containers"]
			if containers.Items == nil || containers.Items.Schema.Properties["image"].Type != "string" {
				t.Errorf("deployments: spec.template.spec.containers[].image: %+v", containers)
			}
			// The pod template's labels must survive pruning: the
			// selector has to match them.
			if m := tmpl.Properties["metadata"]; m.XPreserveUnknownFields == nil || !*m.XPreserveUnknownFields {
				t.Errorf("deployments: spec.template.metadata would be pruned: %+v", m)
			}
			if m := props.Properties["metadata"]; m.XPreserveUnknownFields != nil || len(m.Properties) > 0 {
				t.Errorf("deployments: the root metadata schema says more than {type: object}: %+v", m)
			}
			if sc := s.Spec.Versions[0].Subresources.Scale; sc == nil || sc.SpecReplicasPath != ".spec.replicas" || sc.StatusReplicasPath != ".status.replicas" {
				t.Errorf("deployments: scale subresource %+v, want kubectl scale's replicas paths", sc)
			}
			if props.Properties["status"].Properties["readyReplicas"].Type != "integer" {
				t.Errorf("deployments: status.readyReplicas: %+v", props.Properties["status"].Properties["readyReplicas"])
			}
		case "services":
			ports := props.Properties["spec"].Properties["ports"]
			if ports.XListType == nil || *ports.XListType != "map" || ports.Items.Schema.Properties["protocol"].Default == nil {
				t.Errorf("services: spec.ports: %+v", ports)
			}
		}
	}
}
