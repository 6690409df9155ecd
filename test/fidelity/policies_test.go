package fidelity

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicybinding"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/resolver"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicybinding"
	"k8s.io/kubernetes/pkg/registry/certificates/certificates"
	"k8s.io/utils/ptr"
)

// allowAll is the authorizer upstream's policy strategies ask whether the
// writer may read the params: the shard admin may.
type allowAll struct{}

func (allowAll) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}

var configMapsResolver = resolver.ResourceResolverFunc(func(gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
	if gvk.Group == "" && gvk.Kind == "ConfigMap" {
		return gvk.GroupVersion().WithResource("configmaps"), nil
	}
	return schema.GroupVersionResource{}, fmt.Errorf("no resource for %s", gvk)
})

type noPolicies struct{}

func (noPolicies) GetValidatingAdmissionPolicy(_ context.Context, name string) (*admissionregistration.ValidatingAdmissionPolicy, error) {
	return nil, apierrors.NewNotFound(admissionregistration.Resource("validatingadmissionpolicies"), name)
}

func (noPolicies) GetMutatingAdmissionPolicy(_ context.Context, name string) (*admissionregistration.MutatingAdmissionPolicy, error) {
	return nil, apierrors.NewNotFound(admissionregistration.Resource("mutatingadmissionpolicies"), name)
}

func rules(ops ...admissionregistrationv1.OperationType) *admissionregistrationv1.MatchResources {
	return &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
		RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: ops, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}},
	}}}
}

func vap(edit func(*admissionregistrationv1.ValidatingAdmissionPolicySpec)) *admissionregistrationv1.ValidatingAdmissionPolicy {
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: om("p", ""), Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: rules(admissionregistrationv1.Create),
		Validations:      []admissionregistrationv1.Validation{{Expression: "object.metadata.name != 'x'"}},
	}}
	if edit != nil {
		edit(&p.Spec)
	}
	return p
}

func mapolicy(edit func(*admissionregistrationv1.MutatingAdmissionPolicySpec)) *admissionregistrationv1.MutatingAdmissionPolicy {
	p := &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: om("p", ""), Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
		MatchConstraints:   rules(admissionregistrationv1.Create),
		Mutations:          []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeJSONPatch, JSONPatch: &admissionregistrationv1.JSONPatch{Expression: "[JSONPatch{op: 'add', path: '/metadata/labels', value: {'a': 'b'}}]"}}},
		ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
	}}
	if edit != nil {
		edit(&p.Spec)
	}
	return p
}

func policyKinds() []kind {
	return []kind{
		{
			gvr: admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies"), upstream: validatingadmissionpolicy.NewStrategy(allowAll{}, configMapsResolver),
			valid: func() runtime.Object { return vap(nil) },
			cases: []testCase{
				obj("no validations", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) { s.Validations = nil })),
				obj("audit annotations only", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
					s.Validations = nil
					s.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "k", ValueExpression: "'v'"}}
				})),
				obj("expression does not compile", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
					s.Validations[0].Expression = "object.("
				})),
				obj("expression not boolean", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) { s.Validations[0].Expression = "'x'" })),
				obj("params without paramKind", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
					s.Validations[0].Expression = "params.x == 1"
				})),
				obj("params", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
					s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
					s.Validations[0].Expression = "params.data.x == 'y'"
				})),
				obj("bad paramKind", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
					s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "a/b/c", Kind: ""}
				})),
				obj("message with newline", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) { s.Validations[0].Message = "a\nb" })),
				obj("message expression", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
					s.Validations[0].MessageExpression = "'name ' + object.metadata.name"
				})),
				obj("message expression not string", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
					s.Validations[0].MessageExpression = "1"
				})),
				obj("bad reason", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
					s.Validations[0].Reason = ptr.To(metav1.StatusReason("Teapot"))
				})),
				obj("no matchConstraints", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) { s.MatchConstraints = nil })),
				obj("no resource rules", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) { s.MatchConstraints.ResourceRules = nil })),
				obj("variables", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
					s.Variables = []admissionregistrationv1.Variable{{Name: "n", Expression: "object.metadata.name"}}
					s.Validations[0].Expression = "variables.n != 'x'"
				})),
				obj("bad variable name", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
					s.Variables = []admissionregistrationv1.Variable{{Name: "1n", Expression: "1"}}
				})),
				obj("match conditions", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
					s.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "m", Expression: "true"}, {Name: "m", Expression: "true"}}
				})),
				obj("failure policy Ignore", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
					s.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
				})),
				obj("bad failure policy", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
					s.FailurePolicy = ptr.To(admissionregistrationv1.FailurePolicyType("Maybe"))
				})),
				obj("audit annotation key invalid", vap(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
					s.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "a b", ValueExpression: "'v'"}}
				})),
			},
			updates: []testCase{
				edit("validation changed", func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Spec.Validations[0].Expression = "true" }),
				edit("status written", func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Status.ObservedGeneration = 7 }),
			},
		},
		{
			gvr: admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicybindings"), upstream: validatingadmissionpolicybinding.NewStrategy(allowAll{}, noPolicies{}, configMapsResolver),
			valid: func() runtime.Object {
				return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: om("b", ""), Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
					PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
				}}
			},
			cases: []testCase{
				obj("no actions", &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: om("b", ""), Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p"}}),
				obj("deny and warn", &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: om("b", ""), Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
					PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny, admissionregistrationv1.Warn}}}),
				obj("warn and audit", &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: om("b", ""), Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
					PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn, admissionregistrationv1.Audit}}}),
				obj("no policy name", &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: om("b", ""), Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
					ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}),
				obj("param ref without action", &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: om("b", ""), Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
					PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}, ParamRef: &admissionregistrationv1.ParamRef{Name: "x"}}}),
				obj("param ref", &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: om("b", ""), Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
					PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
					ParamRef: &admissionregistrationv1.ParamRef{Name: "x", Namespace: "default", ParameterNotFoundAction: ptr.To(admissionregistrationv1.AllowAction)}}}),
				obj("param ref with name and selector", &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: om("b", ""), Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
					PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
					ParamRef: &admissionregistrationv1.ParamRef{Name: "x", Selector: &metav1.LabelSelector{}, ParameterNotFoundAction: ptr.To(admissionregistrationv1.AllowAction)}}}),
				obj("match resources", &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: om("b", ""), Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
					PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}, MatchResources: rules(admissionregistrationv1.Update)}}),
			},
		},
		{
			gvr: admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicies"), upstream: mutatingadmissionpolicy.NewStrategy(allowAll{}, configMapsResolver),
			valid: func() runtime.Object { return mapolicy(nil) },
			cases: []testCase{
				obj("no mutations", mapolicy(func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) { s.Mutations = nil })),
				obj("delete operation", mapolicy(func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) {
					s.MatchConstraints = rules(admissionregistrationv1.Delete)
				})),
				obj("apply configuration", mapolicy(func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) {
					s.Mutations = []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration, ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{
						Expression: "Object{metadata: Object.metadata{labels: {'a': 'b'}}}"}}}
				})),
				obj("both patch kinds", mapolicy(func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) {
					s.Mutations[0].ApplyConfiguration = &admissionregistrationv1.ApplyConfiguration{Expression: "Object{}"}
				})),
				obj("no reinvocation policy", mapolicy(func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) { s.ReinvocationPolicy = "" })),
				obj("patch does not compile", mapolicy(func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) {
					s.Mutations[0].JSONPatch.Expression = "["
				})),
				obj("no patch type", mapolicy(func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) { s.Mutations[0].PatchType = "" })),
			},
		},
		{
			gvr: admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicybindings"), upstream: mutatingadmissionpolicybinding.NewStrategy(allowAll{}, noPolicies{}, configMapsResolver),
			valid: func() runtime.Object {
				return &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: om("b", ""), Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "p"}}
			},
			cases: []testCase{
				obj("no policy name", &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: om("b", "")}),
				obj("delete rule", &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: om("b", ""), Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "p", MatchResources: rules(admissionregistrationv1.Delete)}}),
			},
		},
		{
			gvr: certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"), upstream: certificates.Strategy,
			edits:   csrEdits(),
			updates: csrUpdates(),
			valid: func() runtime.Object {
				return &certificatesv1.CertificateSigningRequest{ObjectMeta: om("csr", ""), Spec: certificatesv1.CertificateSigningRequestSpec{
					Request: []byte(testCSR), SignerName: "example.com/signer", Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature},
				}}
			},
			cases: []testCase{
				obj("garbage request", &certificatesv1.CertificateSigningRequest{ObjectMeta: om("csr", ""), Spec: certificatesv1.CertificateSigningRequestSpec{
					Request: []byte("not a csr"), SignerName: "example.com/signer", Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}}}),
				obj("no signer", &certificatesv1.CertificateSigningRequest{ObjectMeta: om("csr", ""), Spec: certificatesv1.CertificateSigningRequestSpec{Request: []byte(testCSR)}}),
				obj("bad usage", &certificatesv1.CertificateSigningRequest{ObjectMeta: om("csr", ""), Spec: certificatesv1.CertificateSigningRequestSpec{
					Request: []byte(testCSR), SignerName: "example.com/signer", Usages: []certificatesv1.KeyUsage{"flying"}}}),
				obj("kubelet serving signer", &certificatesv1.CertificateSigningRequest{ObjectMeta: om("csr", ""), Spec: certificatesv1.CertificateSigningRequestSpec{
					Request: []byte(testCSR), SignerName: certificatesv1.KubeletServingSignerName, Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}}}),
				obj("expiration too short", &certificatesv1.CertificateSigningRequest{ObjectMeta: om("csr", ""), Spec: certificatesv1.CertificateSigningRequestSpec{
					Request: []byte(testCSR), SignerName: "example.com/signer", Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}, ExpirationSeconds: ptr.To[int32](60)}}),
			},
		},
	}
}

// testCSR is a PEM certificate request of a fresh ECDSA key.
var testCSR = func() string {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice", Organization: []string{"devs"}}}, key)
	if err != nil {
		panic(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}()
