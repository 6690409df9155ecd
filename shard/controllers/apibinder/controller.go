// Package apibinder runs the system:apibindings initializer, as kcp's
// apibinder: a logical cluster whose WorkspaceType (or a type it extends)
// lists defaultAPIBindings gets an APIBinding for each of them, named after
// the export (with a short hash of the export's path when two exports
// share a name), and keeps the initializer until every one of them is
// Bound; the workspace becomes Ready only then. A binding that cannot be
// made (the export does not exist) keeps the workspace initializing and
// its condition says why. As kcp's, a default binding accepts every claim
// of its export as the export states it (its defaultSelector, matchAll),
// also when the export appears after the binding was made.
package apibinder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// TypeLookup finds a WorkspaceType.
type TypeLookup func(tenancyv1alpha1.WorkspaceTypeReference) (*tenancyv1alpha1.WorkspaceType, error)

// Config is what the controller needs.
type Config struct {
	Factory *informers.SharedInformerFactory
	KCP     *clusters.KCPClusterClientset
	Types   TypeLookup
	// Exports (this shard's and the cache's) and ResolvePath find a
	// default binding's export, whose claims it accepts; without them it
	// accepts none.
	Exports     *informers.Informer[*apisv1alpha1.APIExport]
	ResolvePath func(logicalcluster.Path) (logicalcluster.Name, bool)
}

// Controller is the apibinder.
type Controller struct {
	*reconciler.Controller
	cfg      Config
	clusters informers.Informer[*corev1alpha1.LogicalCluster]
	bindings informers.Informer[*apisv1alpha1.APIBinding]
	// created holds the bindings this controller created that its
	// informer may not have yet (reconciler.Key to time.Time), so that the
	// next event of the cluster does not create them again.
	created   sync.Map
	creations atomic.Uint64
}

// createdWait is how long a binding created here is taken to exist
// without the informer showing it.
const createdWait = 30 * time.Second

// New wires the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{cfg: cfg, clusters: cfg.Factory.LogicalClusters(), bindings: cfg.Factory.APIBindings()}
	c.Controller = reconciler.New("apibinder", reconciler.Func(c.reconcile), reconciler.Options{Workers: 10})
	waiting := func(obj any) []reconciler.Key {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		lc, ok := obj.(*corev1alpha1.LogicalCluster)
		if !ok || !corev1alpha1.HasInitializer(lc.Status.Initializers, corev1alpha1.APIBindingsInitializer) {
			return nil
		}
		return []reconciler.Key{{Cluster: logicalcluster.From(lc)}}
	}
	if err := c.Watch(c.clusters.Informer(), reconciler.EnqueueMappedHandler(c.Controller, waiting)); err != nil {
		return nil, err
	}
	byCluster := func(obj any) []reconciler.Key {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		b, ok := obj.(*apisv1alpha1.APIBinding)
		if !ok {
			return nil
		}
		return []reconciler.Key{{Cluster: logicalcluster.From(b)}}
	}
	if err := c.Watch(c.bindings.Informer(), reconciler.EnqueueMappedHandler(c.Controller, byCluster)); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	lc, err := c.clusters.Lister().Cluster(key.Cluster).Get(corev1alpha1.LogicalClusterName)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	if lc.DeletionTimestamp != nil || !corev1alpha1.HasInitializer(lc.Status.Initializers, corev1alpha1.APIBindingsInitializer) {
		return reconciler.Result{}, nil
	}
	refs, err := c.defaultBindings(lc)
	if err != nil {
		return reconciler.Result{}, err
	}
	client, err := c.cfg.KCP.For(key.Cluster)
	if err != nil {
		return reconciler.Result{}, err
	}
	bound := true
	var requeue time.Duration
	for name, ref := range bindingNames(refs) {
		b, err := c.bindings.Lister().Cluster(key.Cluster).Get(name)
		created := reconciler.Key{Cluster: key.Cluster, Name: name}
		if err == nil {
			c.created.Delete(created)
		}
		if apierrors.IsNotFound(err) {
			if at, ok := c.created.Load(created); ok && time.Since(at.(time.Time)) < createdWait {
				bound = false
				requeue = createdWait // in case it was deleted meanwhile
				continue
			}
			_, err = client.APIBindings().Create(ctx, &apisv1alpha1.APIBinding{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: apisv1alpha1.APIBindingSpec{
					Reference: apisv1alpha1.BindingReference{
						Export: &apisv1alpha1.ExportBindingReference{Path: ref.Path, Name: ref.Export},
					},
					PermissionClaims: c.acceptedClaims(key.Cluster, ref),
				},
			}, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return reconciler.Result{}, fmt.Errorf("creating the default APIBinding %s: %w", name, err)
			}
			c.remember(created)
			bound = false
			continue
		}
		if err != nil {
			return reconciler.Result{}, err
		}
		if len(b.Spec.PermissionClaims) == 0 {
			// Made while its export was not known yet: it answers the
			// export's claims once it is.
			if claims := c.acceptedClaims(key.Cluster, ref); len(claims) > 0 {
				b = b.DeepCopy()
				b.Spec.PermissionClaims = claims
				if _, err := client.APIBindings().Update(ctx, b, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
					return reconciler.Result{}, fmt.Errorf("accepting the claims of the default APIBinding %s: %w", name, err)
				}
				bound = false
				continue
			}
		}
		if b.Status.Phase != apisv1alpha1.APIBindingPhaseBound {
			bound = false
		}
	}
	if !bound {
		return reconciler.Result{RequeueAfter: requeue}, nil // binding events come back here
	}
	lc = lc.DeepCopy()
	lc.Status.Initializers = slices.DeleteFunc(lc.Status.Initializers, func(in corev1alpha1.LogicalClusterInitializer) bool {
		return in == corev1alpha1.APIBindingsInitializer
	})
	if _, err := client.LogicalClusters().UpdateStatus(ctx, lc, metav1.UpdateOptions{}); err != nil {
		return reconciler.Result{}, err
	}
	klog.FromContext(ctx).V(2).Info("Default APIBindings are bound", "bindings", len(refs))
	return reconciler.Result{}, nil
}

// remember records a binding created here; every few hundred creations
// it forgets those the informer never showed (their cluster went).
func (c *Controller) remember(key reconciler.Key) {
	c.created.Store(key, time.Now())
	if c.creations.Add(1)%256 != 0 {
		return
	}
	c.created.Range(func(k, at any) bool {
		if time.Since(at.(time.Time)) >= createdWait {
			c.created.Delete(k)
		}
		return true
	})
}

// defaultBindings collects the defaultAPIBindings of the cluster's type
// and of every type it extends, without duplicates.
func (c *Controller) defaultBindings(lc *corev1alpha1.LogicalCluster) ([]tenancyv1alpha1.APIExportReference, error) {
	typ := lc.Annotations[corev1alpha1.LogicalClusterTypeAnnotationKey]
	i := strings.LastIndex(typ, ":")
	if i <= 0 {
		return nil, nil
	}
	var out []tenancyv1alpha1.APIExportReference
	seen := map[string]bool{}
	var visit func(ref tenancyv1alpha1.WorkspaceTypeReference) error
	visit = func(ref tenancyv1alpha1.WorkspaceTypeReference) error {
		if seen[ref.String()] {
			return nil
		}
		seen[ref.String()] = true
		wt, err := c.cfg.Types(ref)
		if err != nil {
			return fmt.Errorf("workspace type %s: %w", ref, err)
		}
		for _, b := range wt.Spec.DefaultAPIBindings {
			if b.Path == "" {
				b.Path = ref.Path
			}
			if !slices.Contains(out, b) {
				out = append(out, b)
			}
		}
		for _, ext := range wt.Spec.Extend.With {
			if ext.Path == "" {
				ext.Path = ref.Path
			}
			if err := visit(ext); err != nil {
				return err
			}
		}
		return nil
	}
	err := visit(tenancyv1alpha1.WorkspaceTypeReference{Path: typ[:i], Name: tenancyv1alpha1.WorkspaceTypeName(typ[i+1:])})
	return out, err
}

// bindingNames names the binding of each reference: the export's name, or
// <export>-<hash of the path> for exports of the same name.
func bindingNames(refs []tenancyv1alpha1.APIExportReference) map[string]tenancyv1alpha1.APIExportReference {
	count := map[string]int{}
	for _, r := range refs {
		count[r.Export]++
	}
	out := map[string]tenancyv1alpha1.APIExportReference{}
	for _, r := range refs {
		name := r.Export
		if count[r.Export] > 1 {
			sum := sha256.Sum256([]byte(r.Path))
			name = r.Export + "-" + hex.EncodeToString(sum[:])[:5]
		}
		out[name] = r
	}
	return out
}

// acceptedClaims are the answers of a default binding to its export's
// claims: each accepted as the export states it. A v1alpha1 answer grants
// all verbs, so the export's verbs are what the provider gets; its
// selector is the export's (every object: a claim's defaultSelector can
// only be matchAll). None while the export is not known.
func (c *Controller) acceptedClaims(cluster logicalcluster.Name, ref tenancyv1alpha1.APIExportReference) []apisv1alpha1.AcceptablePermissionClaim {
	if c.cfg.Exports == nil || c.cfg.ResolvePath == nil {
		return nil
	}
	exportCluster := cluster
	if ref.Path != "" {
		var ok bool
		if exportCluster, ok = c.cfg.ResolvePath(logicalcluster.NewPath(ref.Path)); !ok {
			return nil
		}
	}
	export, err := c.cfg.Exports.Lister().Cluster(exportCluster).Get(ref.Export)
	if err != nil {
		return nil
	}
	var out []apisv1alpha1.AcceptablePermissionClaim
	for _, claim := range export.Spec.PermissionClaims {
		out = append(out, apisv1alpha1.AcceptablePermissionClaim{PermissionClaim: *claim.DeepCopy(), State: apisv1alpha1.ClaimAccepted})
	}
	return out
}
