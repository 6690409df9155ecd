// Package builtin lists the built-in Kubernetes APIs every logical cluster
// serves (kcp's set: namespaces, configmaps, secrets, events, RBAC, leases,
// certificate signing requests, webhook configurations, ...), registers
// their types in a scheme, and builds their REST storage on any
// generic.RESTOptionsGetter.
//
// The types are the k8s.io/api types. Each is registered both as its
// external version and as the internal version of its group, so the API
// server's conversions between them are plain copies; only events.k8s.io
// events, served from the same storage as core events, really convert.
package builtin

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AddToScheme registers every built-in type in s: as its external version
// and as the internal version of its group, with its defaulting functions,
// its field selector labels, the conversions between events.k8s.io and core
// events, the list/watch/options kinds of each group version, and the
// version priority of each group. It keeps no state of its own, so several
// schemes (several servers in one process) can each be set up with it.
func AddToScheme(s *runtime.Scheme) error {
	groups := map[string][]schema.GroupVersion{}
	var order []string
	for _, gv := range GroupVersions() {
		metav1.AddToGroupVersion(s, gv)
		if _, seen := groups[gv.Group]; !seen {
			order = append(order, gv.Group)
		}
		groups[gv.Group] = append(groups[gv.Group], gv)
	}

	for _, add := range schemeAdders() {
		if err := add.fn(s); err != nil {
			return fmt.Errorf("registering %s: %w", add.what, err)
		}
	}

	for _, group := range order {
		if err := s.SetVersionPriority(groups[group]...); err != nil {
			return fmt.Errorf("setting version priority of group %q: %w", group, err)
		}
	}
	return nil
}
