package webhookconfigurations

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
)

// acceptedAdmissionReviewVersions are the AdmissionReview versions the API
// server can send; a webhook must accept one of them.
var acceptedAdmissionReviewVersions = []string{"v1", "v1beta1"}

// MaxMatchConditions is the most match conditions a webhook may have.
const MaxMatchConditions = 64

var (
	failurePolicies      = []string{string(admissionregistrationv1.Fail), string(admissionregistrationv1.Ignore)}
	matchPolicies        = []string{string(admissionregistrationv1.Equivalent), string(admissionregistrationv1.Exact)}
	noSideEffects        = []string{string(admissionregistrationv1.SideEffectClassNone), string(admissionregistrationv1.SideEffectClassNoneOnDryRun)}
	anySideEffects       = []string{string(admissionregistrationv1.SideEffectClassNone), string(admissionregistrationv1.SideEffectClassNoneOnDryRun), string(admissionregistrationv1.SideEffectClassSome), string(admissionregistrationv1.SideEffectClassUnknown)}
	reinvocationPolicies = []string{string(admissionregistrationv1.IfNeededReinvocationPolicy), string(admissionregistrationv1.NeverReinvocationPolicy)}
	scopes               = []string{string(admissionregistrationv1.AllScopes), string(admissionregistrationv1.ClusterScope), string(admissionregistrationv1.NamespacedScope)}
	operations           = []string{string(admissionregistrationv1.OperationAll), string(admissionregistrationv1.Create), string(admissionregistrationv1.Update), string(admissionregistrationv1.Delete), string(admissionregistrationv1.Connect)}
)

// Validator validates webhook configurations. It compiles match condition
// expressions with a CEL compiler it builds on first use, so servers that
// never see a match condition never pay for CEL environments.
type Validator struct {
	once     sync.Once
	compiler plugincel.Compiler
}

// NewValidator returns a validator of webhook configurations.
func NewValidator() *Validator {
	return &Validator{}
}

func (v *Validator) celCompiler() plugincel.Compiler {
	v.once.Do(func() {
		v.compiler = plugincel.NewCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	})
	return v.compiler
}

// options says which checks apply. Updates relax the checks the stored
// object already fails, so that tightened rules never lock an existing
// configuration.
type options struct {
	requireNoSideEffects                    bool
	requireRecognizedAdmissionReviewVersion bool
	requireUniqueWebhookNames               bool
	allowInvalidLabelValueInSelector        bool
	// storedExpressions are match conditions the stored object already
	// has; they compile in the more permissive stored-expressions
	// environment.
	storedExpressions map[string]bool
	// skipMatchConditions is set by an update that keeps every webhook's
	// match conditions as stored: as in Kubernetes, they are not validated
	// again, so that a configuration whose conditions no longer validate
	// stays writable.
	skipMatchConditions bool
}

func createOptions() options {
	return options{requireNoSideEffects: true, requireRecognizedAdmissionReviewVersion: true, requireUniqueWebhookNames: true}
}

func updateOptions(hooks, old []webhook) options {
	o := options{
		requireNoSideEffects:                    true,
		requireRecognizedAdmissionReviewVersion: true,
		requireUniqueWebhookNames:               true,
		storedExpressions:                       map[string]bool{},
		skipMatchConditions:                     sameMatchConditions(hooks, old),
	}
	names := map[string]bool{}
	for _, w := range old {
		if names[w.Name] {
			o.requireUniqueWebhookNames = false
		}
		names[w.Name] = true
		if w.SideEffects != nil && !slices.Contains(noSideEffects, string(*w.SideEffects)) {
			o.requireNoSideEffects = false
		}
		if !slices.ContainsFunc(w.AdmissionReviewVersions, func(v string) bool { return slices.Contains(acceptedAdmissionReviewVersions, v) }) {
			o.requireRecognizedAdmissionReviewVersion = false
		}
		for _, s := range []*metav1.LabelSelector{w.NamespaceSelector, w.ObjectSelector} {
			if s != nil && metav1validation.LabelSelectorHasInvalidLabelValue(s) {
				o.allowInvalidLabelValueInSelector = true
			}
		}
		for _, mc := range w.MatchConditions {
			o.storedExpressions[mc.Expression] = true
		}
	}
	return o
}

// sameMatchConditions reports whether hooks are as many as old and each
// has the match conditions of the stored webhook at its index.
func sameMatchConditions(hooks, old []webhook) bool {
	if len(hooks) != len(old) {
		return false
	}
	for i := range hooks {
		if !reflect.DeepEqual(hooks[i].MatchConditions, old[i].MatchConditions) {
			return false
		}
	}
	return true
}

// ValidateMutating validates a new mutating webhook configuration.
func (v *Validator) ValidateMutating(cfg *admissionregistrationv1.MutatingWebhookConfiguration) field.ErrorList {
	return v.validate(&cfg.ObjectMeta, mutatingWebhooks(cfg), createOptions())
}

// ValidateMutatingUpdate validates an update of a mutating webhook
// configuration.
func (v *Validator) ValidateMutatingUpdate(cfg, old *admissionregistrationv1.MutatingWebhookConfiguration) field.ErrorList {
	hooks := mutatingWebhooks(cfg)
	allErrs := v.validate(&cfg.ObjectMeta, hooks, updateOptions(hooks, mutatingWebhooks(old)))
	return append(allErrs, apivalidation.ValidateObjectMetaUpdate(&cfg.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
}

// ValidateValidating validates a new validating webhook configuration.
func (v *Validator) ValidateValidating(cfg *admissionregistrationv1.ValidatingWebhookConfiguration) field.ErrorList {
	return v.validate(&cfg.ObjectMeta, validatingWebhooks(cfg), createOptions())
}

// ValidateValidatingUpdate validates an update of a validating webhook
// configuration.
func (v *Validator) ValidateValidatingUpdate(cfg, old *admissionregistrationv1.ValidatingWebhookConfiguration) field.ErrorList {
	hooks := validatingWebhooks(cfg)
	allErrs := v.validate(&cfg.ObjectMeta, hooks, updateOptions(hooks, validatingWebhooks(old)))
	return append(allErrs, apivalidation.ValidateObjectMetaUpdate(&cfg.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
}

func (v *Validator) validate(meta *metav1.ObjectMeta, hooks []webhook, o options) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(meta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	names := map[string]bool{}
	for i := range hooks {
		hookPath := field.NewPath("webhooks").Index(i)
		allErrs = append(allErrs, v.validateWebhook(&hooks[i], o, hookPath)...)
		if name := hooks[i].Name; o.requireUniqueWebhookNames && name != "" {
			if names[name] {
				allErrs = append(allErrs, field.Duplicate(hookPath.Child("name"), name))
			}
			names[name] = true
		}
	}
	return allErrs
}

func (v *Validator) validateWebhook(w *webhook, o options, fldPath *field.Path) field.ErrorList {
	// A webhook name is a fully qualified name of at least three segments,
	// such as "policy.example.com".
	allErrs := validation.IsFullyQualifiedName(fldPath.Child("name"), w.Name)

	for i := range w.Rules {
		allErrs = append(allErrs, validateRule(&w.Rules[i], fldPath.Child("rules").Index(i))...)
	}
	if w.FailurePolicy != nil && !slices.Contains(failurePolicies, string(*w.FailurePolicy)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("failurePolicy"), *w.FailurePolicy, failurePolicies))
	}
	if w.MatchPolicy != nil && !slices.Contains(matchPolicies, string(*w.MatchPolicy)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("matchPolicy"), *w.MatchPolicy, matchPolicies))
	}
	allowedSideEffects := anySideEffects
	if o.requireNoSideEffects {
		allowedSideEffects = noSideEffects
	}
	if w.SideEffects == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("sideEffects"), fmt.Sprintf("must specify one of %v", strings.Join(allowedSideEffects, ", "))))
	} else if !slices.Contains(allowedSideEffects, string(*w.SideEffects)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("sideEffects"), *w.SideEffects, allowedSideEffects))
	}
	if w.TimeoutSeconds != nil && (*w.TimeoutSeconds > 30 || *w.TimeoutSeconds < 1) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("timeoutSeconds"), *w.TimeoutSeconds, "the timeout value must be between 1 and 30 seconds"))
	}
	selectorOptions := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: o.allowInvalidLabelValueInSelector}
	if w.NamespaceSelector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(w.NamespaceSelector, selectorOptions, fldPath.Child("namespaceSelector"))...)
	}
	if w.ObjectSelector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(w.ObjectSelector, selectorOptions, fldPath.Child("objectSelector"))...)
	}
	if w.ReinvocationPolicy != nil && !slices.Contains(reinvocationPolicies, string(*w.ReinvocationPolicy)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("reinvocationPolicy"), *w.ReinvocationPolicy, reinvocationPolicies))
	}

	ccPath := fldPath.Child("clientConfig")
	switch cc := w.ClientConfig; {
	case (cc.URL == nil) == (cc.Service == nil):
		allErrs = append(allErrs, field.Required(ccPath, "exactly one of url or service is required"))
	case cc.URL != nil:
		allErrs = append(allErrs, webhookutil.ValidateWebhookURL(ccPath.Child("url"), *cc.URL, true)...)
	default:
		port := int32(443)
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		allErrs = append(allErrs, webhookutil.ValidateWebhookService(ccPath.Child("service"), cc.Service.Namespace, cc.Service.Name, cc.Service.Path, port)...)
		// A logical cluster has no Services and no endpoints behind them:
		// a reference could never be called, so it is refused rather than
		// stored and ignored.
		allErrs = append(allErrs, field.Forbidden(ccPath.Child("service"), "logical clusters have no Services to call webhooks through; use clientConfig.url"))
	}

	allErrs = append(allErrs, validateAdmissionReviewVersions(w.AdmissionReviewVersions, o.requireRecognizedAdmissionReviewVersion, fldPath.Child("admissionReviewVersions"))...)
	if o.skipMatchConditions {
		return allErrs
	}
	return append(allErrs, v.validateMatchConditions(w.MatchConditions, o, fldPath.Child("matchConditions"))...)
}

func validateAdmissionReviewVersions(versions []string, requireRecognized bool, fldPath *field.Path) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Required(fldPath, fmt.Sprintf("must specify one of %v", strings.Join(acceptedAdmissionReviewVersions, ", ")))}
	}
	var allErrs field.ErrorList
	seen := map[string]bool{}
	recognized := false
	for i, version := range versions {
		if seen[version] {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), version, "duplicate version"))
			continue
		}
		seen[version] = true
		for _, msg := range validation.IsDNS1035Label(version) {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), version, msg))
		}
		recognized = recognized || slices.Contains(acceptedAdmissionReviewVersions, version)
	}
	if requireRecognized && !recognized {
		allErrs = append(allErrs, field.Invalid(fldPath, versions, fmt.Sprintf("must include at least one of %v", strings.Join(acceptedAdmissionReviewVersions, ", "))))
	}
	return allErrs
}
