package apiexport

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// RecheckInterval is how often an export whose identity cannot be verified
// is looked at again (its Secret is not watched).
const RecheckInterval = 30 * time.Second

// Controller is the APIExport identity controller.
type Controller struct {
	*reconciler.Controller
	exports informers.Informer[*apisv1alpha1.APIExport]
	kube    *clusters.ClusterClientset
	kcp     *clusters.KCPClusterClientset
	urls    func(*apisv1alpha1.APIExport) []string
}

// New wires the controller to the shard's APIExport informer. urls returns
// the URLs of the apiexport virtual workspace that serve an export, for
// status.virtualWorkspaces (kcp's older way to find them; endpoint slices
// are the current one); nil leaves it empty.
// shards, if set, replaces f's Shards informer (e.g. a union with the
// cache's replicas on a shard that does not host root).
func New(kube *clusters.ClusterClientset, kcp *clusters.KCPClusterClientset, f *informers.SharedInformerFactory, shards *informers.Informer[*corev1alpha1.Shard], urls func(*apisv1alpha1.APIExport) []string) (*Controller, error) {
	c := &Controller{exports: f.APIExports(), kube: kube, kcp: kcp, urls: urls}
	c.Controller = reconciler.New("apiexport-identity", reconciler.Func(c.reconcile), reconciler.Options{Workers: 2})
	if err := c.Watch(c.exports.Informer(), c.EnqueueHandler()); err != nil {
		return nil, err
	}
	if urls != nil {
		// The URLs come from the Shards: look at every export again when
		// one comes, goes or moves.
		all := func(any) {
			list, err := c.exports.Lister().List(labels.Everything())
			if err != nil {
				return
			}
			for _, e := range list {
				c.EnqueueObject(e)
			}
		}
		shardInformer := f.Shards()
		if shards != nil {
			shardInformer = *shards
		}
		if err := c.Watch(shardInformer.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    all,
			UpdateFunc: func(_, n any) { all(n) },
			DeleteFunc: all,
		}); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *Controller) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	export, err := c.exports.Lister().Cluster(key.Cluster).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	if export.DeletionTimestamp != nil {
		return reconciler.Result{}, nil
	}
	client, err := c.kcp.For(key.Cluster)
	if err != nil {
		return reconciler.Result{}, err
	}
	if export.Spec.Identity == nil || export.Spec.Identity.SecretRef == nil {
		// Point the export at its generated Secret first, as kcp does, so
		// the reference is visible and stable before the Secret exists.
		export = export.DeepCopy()
		if export.Spec.Identity == nil {
			export.Spec.Identity = &apisv1alpha1.Identity{}
		}
		export.Spec.Identity.SecretRef = &corev1.SecretReference{Namespace: apisv1alpha1.IdentitySecretNamespace, Name: export.Name}
		_, err := client.APIExports().Update(ctx, export, metav1.UpdateOptions{})
		return reconciler.Result{}, err
	}
	ref := *export.Spec.Identity.SecretRef
	key32, verr := c.identityKey(ctx, key.Cluster, export.Name, ref)
	updated := export.DeepCopy()
	var result reconciler.Result
	switch {
	case verr != nil:
		conditionsv1alpha1.MarkFalse(updated, apisv1alpha1.APIExportIdentityValid, apisv1alpha1.IdentityVerificationFailedReason,
			conditionsv1alpha1.ConditionSeverityError, "%v", verr)
		result.RequeueAfter = RecheckInterval
	default:
		hash := IdentityHash(key32)
		switch updated.Status.IdentityHash {
		case "":
			updated.Status.IdentityHash = hash
			conditionsv1alpha1.MarkTrue(updated, apisv1alpha1.APIExportIdentityValid)
		case hash:
			conditionsv1alpha1.MarkTrue(updated, apisv1alpha1.APIExportIdentityValid)
		default:
			conditionsv1alpha1.MarkFalse(updated, apisv1alpha1.APIExportIdentityValid, apisv1alpha1.IdentityVerificationFailedReason,
				conditionsv1alpha1.ConditionSeverityError, "the key of Secret %s/%s hashes to another identity than status.identityHash %s; an export's identity cannot change",
				ref.Namespace, ref.Name, updated.Status.IdentityHash)
			result.RequeueAfter = RecheckInterval
		}
	}
	if c.urls != nil {
		var vws []apisv1alpha1.VirtualWorkspace
		for _, u := range c.urls(export) {
			vws = append(vws, apisv1alpha1.VirtualWorkspace{URL: u})
		}
		updated.Status.VirtualWorkspaces = vws
		if len(vws) > 0 {
			conditionsv1alpha1.MarkTrue(updated, apisv1alpha1.APIExportVirtualWorkspaceURLsReady)
		} else {
			conditionsv1alpha1.MarkFalse(updated, apisv1alpha1.APIExportVirtualWorkspaceURLsReady, apisv1alpha1.ErrorGeneratingURLsReason,
				conditionsv1alpha1.ConditionSeverityWarning, "no shard serves the apiexport virtual workspace")
		}
	}
	if equality.Semantic.DeepEqual(export.Status, updated.Status) {
		return result, nil
	}
	_, err = client.APIExports().UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	return result, err
}

// identityKey returns the identity key of an export, generating the
// Secret when it is the export's default one and missing.
func (c *Controller) identityKey(ctx context.Context, cluster logicalcluster.Name, exportName string, ref corev1.SecretReference) ([]byte, error) {
	kube, err := c.kube.For(cluster)
	if err != nil {
		return nil, err
	}
	secret, err := kube.CoreV1().Secrets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && ref.Namespace == apisv1alpha1.IdentitySecretNamespace && ref.Name == exportName {
		secret, err = generate(ctx, kube.CoreV1(), ref)
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("the identity Secret %s/%s does not exist", ref.Namespace, ref.Name)
		}
		return nil, fmt.Errorf("reading the identity Secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	key := secret.Data[apisv1alpha1.SecretKeyAPIExportIdentity]
	if len(key) == 0 {
		return nil, fmt.Errorf("the identity Secret %s/%s has no %q", ref.Namespace, ref.Name, apisv1alpha1.SecretKeyAPIExportIdentity)
	}
	return key, nil
}

// coreClient is the part of the core client generate uses.
type coreClient = typedcorev1.CoreV1Interface

// generate creates the namespace of ref if needed and the Secret with a
// random key (256 random bytes, base64).
func generate(ctx context.Context, core coreClient, ref corev1.SecretReference) (*corev1.Secret, error) {
	_, err := core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ref.Namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", ref.Namespace, err)
	}
	key, err := NewIdentityKey()
	if err != nil {
		return nil, err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name},
		Data:       map[string][]byte{apisv1alpha1.SecretKeyAPIExportIdentity: key},
	}
	created, err := core.Secrets(ref.Namespace).Create(ctx, secret, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return core.Secrets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	}
	return created, err
}

// NewIdentityKey returns a new identity key: 256 random bytes, base64.
func NewIdentityKey() ([]byte, error) {
	random := make([]byte, 256)
	if _, err := rand.Read(random); err != nil {
		return nil, err
	}
	return []byte(base64.StdEncoding.EncodeToString(random)), nil
}

// IdentityHash is the identity of an export whose Secret holds key: the hex
// SHA-256 of the key.
func IdentityHash(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:])
}
