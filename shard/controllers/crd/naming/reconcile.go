package naming

import (
	"context"
	"fmt"
	"strings"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	"github.com/tessera-dev/tessera/shard/controllers/crd/internal/crdstatus"
)

// namer reconciles the accepted names of CRDs. Its dependencies are plain
// functions so that it can be tested without an API server.
type namer struct {
	// getCRD returns a CRD of a logical cluster from the informer cache, or
	// a NotFound error.
	getCRD func(cluster logicalcluster.Name, name string) (*apiextensionsv1.CustomResourceDefinition, error)
	// listCRDs returns the CRDs of a logical cluster from the informer cache.
	listCRDs func(cluster logicalcluster.Name) ([]*apiextensionsv1.CustomResourceDefinition, error)
	// patchStatus writes the status of a CRD.
	patchStatus crdstatus.Patcher
	// enqueue asks for a reconcile of a CRD.
	enqueue func(reconciler.Key)
	// builtin returns the names the built-in APIs of a group use; nil
	// means none.
	builtin BuiltinNames

	locks  groupLocks
	recent *recentWrites
}

// reconcile accepts the names of the CRD behind key, or reports why it
// cannot.
func (n *namer) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	logger := klog.FromContext(ctx)
	group := groupOf(key.Name)
	unlock := n.locks.lock(groupKey{cluster: key.Cluster, group: group})
	defer unlock()

	cached, err := n.getCRD(key.Cluster, key.Name)
	if apierrors.IsNotFound(err) {
		// The CRD is gone and has freed its names: the other CRDs of its
		// group may take them now.
		return reconciler.Result{}, n.requeueGroup(key.Cluster, group, key.Name)
	}
	if err != nil {
		return reconciler.Result{}, fmt.Errorf("getting CustomResourceDefinition: %w", err)
	}
	crd := n.recent.newer(key.Cluster, cached)

	if equality.Semantic.DeepEqual(crd.Spec.Names, crd.Status.AcceptedNames) &&
		apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.NamesAccepted) {
		return reconciler.Result{}, nil
	}

	all, err := n.listCRDs(key.Cluster)
	if err != nil {
		return reconciler.Result{}, fmt.Errorf("listing CustomResourceDefinitions: %w", err)
	}
	inGroup := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(all))
	for _, other := range all {
		if other.Spec.Group != crd.Spec.Group {
			continue
		}
		if other.Name == crd.Name {
			other = crd
		}
		inGroup = append(inGroup, n.recent.newer(key.Cluster, other))
	}

	var builtinResources, builtinKinds []string
	if n.builtin != nil {
		builtinResources, builtinKinds = n.builtin(crd.Spec.Group)
	}
	names, namesAccepted, established := calculateNamesAndConditions(crd, namesInUse(inGroup, builtinResources, builtinKinds))
	if equality.Semantic.DeepEqual(crd.Status.AcceptedNames, names) &&
		apiextensionshelpers.IsCRDConditionEquivalent(&namesAccepted, apiextensionshelpers.FindCRDCondition(crd, apiextensionsv1.NamesAccepted)) {
		return reconciler.Result{}, nil
	}

	updated := crd.DeepCopy()
	updated.Status.AcceptedNames = names
	apiextensionshelpers.SetCRDCondition(updated, namesAccepted)
	apiextensionshelpers.SetCRDCondition(updated, established)
	written, err := n.patchStatus(ctx, key.Cluster, crd, updated)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		// Deleted or changed meanwhile; its event brings the CRD back.
		logger.V(4).Info("CustomResourceDefinition changed while accepting its names, waiting for its next event", "err", err)
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	n.recent.add(key.Cluster, written)
	logger.V(2).Info("Updated accepted names", "namesAccepted", namesAccepted.Status, "reason", namesAccepted.Reason, "message", namesAccepted.Message)

	// Names may have been released: the other CRDs of the group get
	// another look.
	return reconciler.Result{}, n.requeueGroup(key.Cluster, group, key.Name)
}

// requeueGroup enqueues the CRDs of group in cluster other than name.
func (n *namer) requeueGroup(cluster logicalcluster.Name, group, name string) error {
	if group == "" {
		return nil
	}
	all, err := n.listCRDs(cluster)
	if err != nil {
		return fmt.Errorf("listing CustomResourceDefinitions: %w", err)
	}
	for _, crd := range all {
		if crd.Spec.Group == group && crd.Name != name {
			n.enqueue(reconciler.Key{Cluster: cluster, Name: crd.Name})
		}
	}
	return nil
}

// groupOf returns the group of a CRD from its name, <plural>.<group>, which
// validation enforces.
func groupOf(name string) string {
	_, group, _ := strings.Cut(name, ".")
	return group
}
