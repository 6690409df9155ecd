package apiexports

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
)

// The patterns of kcp's CRDs of APIExport and APIBinding for the fields of
// a permission claim. Errors quote them, as the API server quotes the
// pattern of a CRD's schema.
var (
	claimResourceRE = regexp.MustCompile(`^[a-z][-a-z0-9]*[a-z0-9]$`)
	claimGroupRE    = regexp.MustCompile(`^(|[a-z0-9]([-a-z0-9]*[a-z0-9](\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?)$`)
	selectorNameRE  = regexp.MustCompile(`^([a-z0-9][-a-z0-9_.]*)?[a-z0-9]$`)
)

// identityHashRE is an identity hash: the hex SHA-256 of an identity.
var identityHashRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// maxSelectorNameLength is the longest name a resource selector may name,
// that of a DNS subdomain.
const maxSelectorNameLength = 253

// ValidatePermissionClaims validates the permission claims of an export
// (or the claims a binding answers), on p: each claim is valid, and no two
// claim the same group and resource, the keys of the list.
func ValidatePermissionClaims(claims []apisv1alpha1.PermissionClaim, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[apisv1alpha1.GroupResource]()
	for i, c := range claims {
		errs = append(errs, ValidatePermissionClaim(c, p.Index(i))...)
		if seen.Has(c.GroupResource) {
			errs = append(errs, field.Duplicate(p.Index(i), map[string]interface{}{"group": c.Group, "resource": c.Resource}))
		}
		seen.Insert(c.GroupResource)
	}
	return errs
}

// ValidatePermissionClaim validates one claim, on p: a resource and group
// of kcp's patterns, an identity hash (when set) of 64 lower-case hex
// digits, exactly one of all and resourceSelector, and selectors that each
// name a name or a namespace. The messages of the two last rules are those
// of the CEL rules of kcp's CRDs.
func ValidatePermissionClaim(c apisv1alpha1.PermissionClaim, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case c.Resource == "":
		errs = append(errs, field.Required(p.Child("resource"), ""))
	case !claimResourceRE.MatchString(c.Resource):
		errs = append(errs, shouldMatch(p.Child("resource"), c.Resource, claimResourceRE))
	}
	if !claimGroupRE.MatchString(c.Group) {
		errs = append(errs, shouldMatch(p.Child("group"), c.Group, claimGroupRE))
	}
	if c.IdentityHash != "" {
		errs = append(errs, ValidateIdentityHash(c.IdentityHash, p.Child("identityHash"))...)
	}
	if c.All == (len(c.ResourceSelector) > 0) {
		errs = append(errs, field.Invalid(p, "object", `either "all" or "resourceSelector" must be set`))
	}
	for j, s := range c.ResourceSelector {
		sp := p.Child("resourceSelector").Index(j)
		if s.Name == "" && s.Namespace == "" {
			errs = append(errs, field.Invalid(sp, "object", "at least one field must be set"))
		}
		switch {
		case s.Name == "":
		case len(s.Name) > maxSelectorNameLength:
			errs = append(errs, field.TooLong(sp.Child("name"), "", maxSelectorNameLength))
		case !selectorNameRE.MatchString(s.Name):
			errs = append(errs, shouldMatch(sp.Child("name"), s.Name, selectorNameRE))
		}
	}
	return errs
}

// ValidateIdentityHash validates an identity hash, on p: the hex SHA-256 of
// an identity, 64 lower-case hex digits.
func ValidateIdentityHash(hash string, p *field.Path) field.ErrorList {
	if !identityHashRE.MatchString(hash) {
		return field.ErrorList{field.Invalid(p, hash, "must be 64 lower-case hex digits, the SHA-256 of an APIExport's identity")}
	}
	return nil
}

// shouldMatch is the error of a value that does not match the pattern re.
func shouldMatch(p *field.Path, value string, re *regexp.Regexp) *field.Error {
	return field.Invalid(p, value, fmt.Sprintf("should match '%s'", re))
}

// builtInClaimable are the resources kcp lets an export claim without an
// identity hash, besides those of apis.kcp.io: the built-in APIs its
// APIExport virtual workspace serves to claims
// (kcp pkg/virtual/apiexport/schemas/builtin).
var builtInClaimable = sets.New(
	schema.GroupResource{Resource: "namespaces"},
	schema.GroupResource{Resource: "configmaps"},
	schema.GroupResource{Resource: "events"},
	schema.GroupResource{Resource: "resourcequotas"},
	schema.GroupResource{Resource: "secrets"},
	schema.GroupResource{Resource: "serviceaccounts"},
	schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"},
	schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"},
	schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "roles"},
	schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"},
	schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"},
	schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"},
	schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"},
	schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"},
	schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicies"},
	schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicybindings"},
	schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"},
	schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"},
	schema.GroupResource{Group: "events.k8s.io", Resource: "events"},
	schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"},
	schema.GroupResource{Group: "core.kcp.io", Resource: "logicalclusters"},
	schema.GroupResource{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"},
	schema.GroupResource{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"},
	schema.GroupResource{Group: "authentication.k8s.io", Resource: "tokenreviews"},
)

// needsIdentityHash tells whether an export's claim of gr must name the
// identity of the export that serves it: every resource but the built-in
// ones above and those of apis.kcp.io, as kcp's APIExport admission says.
// A claim of pods needs one too: kcp's virtual workspace does not serve
// them to claims.
func needsIdentityHash(gr apisv1alpha1.GroupResource) bool {
	return gr.Group != apisv1alpha1.GroupName && !builtInClaimable.Has(schema.GroupResource{Group: gr.Group, Resource: gr.Resource})
}
