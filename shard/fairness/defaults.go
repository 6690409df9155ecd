package fairness

import (
	"context"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// TenantsLevel is the priority level every tenant request shares, one
// flow per logical cluster and user.
const TenantsLevel = "tenants"

// Tenants is the priority level of tenants: most of the shard's
// concurrency, queued fairly (shuffle sharding of 128 queues, hands of 6).
var Tenants = &flowcontrolv1.PriorityLevelConfiguration{
	ObjectMeta: metav1.ObjectMeta{Name: TenantsLevel},
	Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited,
		Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr.To[int32](100),
			LendablePercent:          ptr.To[int32](0),
			LimitResponse: flowcontrolv1.LimitResponse{
				Type:    flowcontrolv1.LimitResponseTypeQueue,
				Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 128, HandSize: 6, QueueLengthLimit: 50},
			},
		},
	},
}

// TenantListsLevel is the priority level of tenants' lists and watches:
// a small share of the shard, so that however many lists tenants send, the
// shard keeps seats and CPU for everything else.
const TenantListsLevel = "tenant-lists"

// TenantLists is the priority level of tenants' lists and watches. A list
// costs one seat per 100 objects of its cluster, up to 10.
var TenantLists = &flowcontrolv1.PriorityLevelConfiguration{
	ObjectMeta: metav1.ObjectMeta{Name: TenantListsLevel},
	Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited,
		Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr.To[int32](10),
			LendablePercent:          ptr.To[int32](0),
			BorrowingLimitPercent:    ptr.To[int32](0),
			LimitResponse: flowcontrolv1.LimitResponse{
				Type:    flowcontrolv1.LimitResponseTypeQueue,
				Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 128, HandSize: 6, QueueLengthLimit: 50},
			},
		},
	},
}

// TenantListsSchema sends tenants' lists and watches to the tenant-lists
// level, one flow per <cluster>|<user>.
var TenantListsSchema = &flowcontrolv1.FlowSchema{
	ObjectMeta: metav1.ObjectMeta{Name: TenantListsLevel},
	Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: TenantListsLevel},
		MatchingPrecedence:         8000,
		DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
			Subjects: []flowcontrolv1.Subject{
				{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: user.AllAuthenticated}},
				{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: user.AllUnauthenticated}},
			},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
				Verbs: []string{"list", "watch"}, APIGroups: []string{flowcontrolv1.APIGroupAll},
				Resources: []string{flowcontrolv1.ResourceAll}, ClusterScope: true, Namespaces: []string{flowcontrolv1.NamespaceEvery},
			}},
		}},
	},
}

// TenantsSchema sends every authenticated and unauthenticated request
// that no schema of higher precedence takes to the tenants level, one flow
// per <cluster>|<user>.
var TenantsSchema = &flowcontrolv1.FlowSchema{
	ObjectMeta: metav1.ObjectMeta{Name: TenantsLevel},
	Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: TenantsLevel},
		MatchingPrecedence:         9000,
		DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
			Subjects: []flowcontrolv1.Subject{
				{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: user.AllAuthenticated}},
				{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: user.AllUnauthenticated}},
			},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
				Verbs: []string{flowcontrolv1.VerbAll}, APIGroups: []string{flowcontrolv1.APIGroupAll},
				Resources: []string{flowcontrolv1.ResourceAll}, ClusterScope: true, Namespaces: []string{flowcontrolv1.NamespaceEvery},
			}},
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{
				Verbs: []string{flowcontrolv1.VerbAll}, NonResourceURLs: []string{flowcontrolv1.NonResourceAll},
			}},
		}},
	},
}

// defaults are the shard's configuration: upstream's mandatory objects
// (exempt and catch-all, kept as upstream has them), its probes schema,
// and the tenants and tenant-lists levels and schemas (created if missing,
// then left to the shard admins).
func defaults() (mandatoryLevels, levels []*flowcontrolv1.PriorityLevelConfiguration, mandatorySchemas, schemas []*flowcontrolv1.FlowSchema) {
	return bootstrap.MandatoryPriorityLevelConfigurations, []*flowcontrolv1.PriorityLevelConfiguration{Tenants, TenantLists},
		bootstrap.MandatoryFlowSchemas, []*flowcontrolv1.FlowSchema{bootstrap.SuggestedFlowSchemaProbes, TenantListsSchema, TenantsSchema}
}

// ensureDefaults writes the default configuration, retrying until it is
// written or ctx is done.
func ensureDefaults(ctx context.Context, client kubernetes.Interface) {
	logger := klog.FromContext(ctx)
	mandatoryLevels, levels, mandatorySchemas, schemas := defaults()
	_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		pls := client.FlowcontrolV1().PriorityLevelConfigurations()
		fss := client.FlowcontrolV1().FlowSchemas()
		for _, pl := range append(mandatoryLevels, levels...) {
			mandatory := containsLevel(mandatoryLevels, pl)
			existing, err := pls.Get(ctx, pl.Name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				_, err = pls.Create(ctx, pl.DeepCopy(), metav1.CreateOptions{})
			case err == nil && mandatory && !apiequality.Semantic.DeepEqual(existing.Spec, pl.Spec):
				updated := existing.DeepCopy()
				updated.Spec = pl.Spec
				_, err = pls.Update(ctx, updated, metav1.UpdateOptions{})
			}
			if err != nil && !apierrors.IsAlreadyExists(err) {
				logger.V(2).Info("Writing the default priority levels", "err", err)
				return false, nil
			}
		}
		for _, fs := range append(mandatorySchemas, schemas...) {
			mandatory := containsSchema(mandatorySchemas, fs)
			existing, err := fss.Get(ctx, fs.Name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				_, err = fss.Create(ctx, fs.DeepCopy(), metav1.CreateOptions{})
			case err == nil && mandatory && !apiequality.Semantic.DeepEqual(existing.Spec, fs.Spec):
				updated := existing.DeepCopy()
				updated.Spec = fs.Spec
				_, err = fss.Update(ctx, updated, metav1.UpdateOptions{})
			}
			if err != nil && !apierrors.IsAlreadyExists(err) {
				logger.V(2).Info("Writing the default flow schemas", "err", err)
				return false, nil
			}
		}
		return true, nil
	})
}

func containsLevel(list []*flowcontrolv1.PriorityLevelConfiguration, pl *flowcontrolv1.PriorityLevelConfiguration) bool {
	for _, l := range list {
		if l == pl {
			return true
		}
	}
	return false
}

func containsSchema(list []*flowcontrolv1.FlowSchema, fs *flowcontrolv1.FlowSchema) bool {
	for _, s := range list {
		if s == fs {
			return true
		}
	}
	return false
}
