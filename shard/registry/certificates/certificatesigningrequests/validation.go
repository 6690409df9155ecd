package certificatesigningrequests

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// LegacyUnknownSignerName is the signer of requests created through
// certificates.k8s.io/v1beta1 without one; v1 does not accept it for new
// requests.
const LegacyUnknownSignerName = "kubernetes.io/legacy-unknown"

// MinExpirationSeconds is the shortest certificate lifetime a request may
// ask for.
const MinExpirationSeconds = 600

var validUsages = map[certificatesv1.KeyUsage]bool{
	certificatesv1.UsageSigning: true, certificatesv1.UsageDigitalSignature: true, certificatesv1.UsageContentCommitment: true,
	certificatesv1.UsageKeyEncipherment: true, certificatesv1.UsageKeyAgreement: true, certificatesv1.UsageDataEncipherment: true,
	certificatesv1.UsageCertSign: true, certificatesv1.UsageCRLSign: true, certificatesv1.UsageEncipherOnly: true,
	certificatesv1.UsageDecipherOnly: true, certificatesv1.UsageAny: true, certificatesv1.UsageServerAuth: true,
	certificatesv1.UsageClientAuth: true, certificatesv1.UsageCodeSigning: true, certificatesv1.UsageEmailProtection: true,
	certificatesv1.UsageSMIME: true, certificatesv1.UsageIPsecEndSystem: true, certificatesv1.UsageIPsecTunnel: true,
	certificatesv1.UsageIPsecUser: true, certificatesv1.UsageTimestamping: true, certificatesv1.UsageOCSPSigning: true,
	certificatesv1.UsageMicrosoftSGC: true, certificatesv1.UsageNetscapeSGC: true,
}

// options says which checks an operation applies. The allow* relaxations
// let an update keep what an object stored earlier already has, so that
// tightened rules never make an existing object unchangeable.
type options struct {
	allowSettingCertificate        bool
	allowSettingApprovalConditions bool

	allowLegacySignerName        bool
	allowUnknownUsages           bool
	allowDuplicateUsages         bool
	allowEmptyConditionType      bool
	allowDuplicateConditionTypes bool
	allowBothApprovedAndDenied   bool
	allowArbitraryCertificate    bool
}

// updateOptions relaxes the checks that old already fails.
func updateOptions(csr, old *certificatesv1.CertificateSigningRequest) options {
	o := options{allowLegacySignerName: old.Spec.SignerName == LegacyUnknownSignerName}
	seenUsages := map[certificatesv1.KeyUsage]bool{}
	for _, u := range old.Spec.Usages {
		o.allowUnknownUsages = o.allowUnknownUsages || !validUsages[u]
		o.allowDuplicateUsages = o.allowDuplicateUsages || seenUsages[u]
		seenUsages[u] = true
	}
	seenTypes := map[certificatesv1.RequestConditionType]bool{}
	for _, c := range old.Status.Conditions {
		o.allowEmptyConditionType = o.allowEmptyConditionType || c.Type == ""
		o.allowDuplicateConditionTypes = o.allowDuplicateConditionTypes || seenTypes[c.Type]
		seenTypes[c.Type] = true
	}
	o.allowBothApprovedAndDenied = seenTypes[certificatesv1.CertificateApproved] && seenTypes[certificatesv1.CertificateDenied]
	o.allowArbitraryCertificate = len(old.Status.Certificate) > 0 &&
		bytes.Equal(csr.Status.Certificate, old.Status.Certificate) &&
		validateCertificate(old.Status.Certificate) != nil
	return o
}

// ValidateCreate validates a new certificate signing request.
func ValidateCreate(csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
	return validate(csr, options{})
}

// ValidateUpdate validates an update of the request itself: the
// certificate and the Approved and Denied conditions do not change.
func ValidateUpdate(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	return validateUpdate(csr, old, updateOptions(csr, old))
}

// ValidateStatusUpdate validates an update of the status subresource: it
// may set the certificate once.
func ValidateStatusUpdate(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	o := updateOptions(csr, old)
	o.allowSettingCertificate = true
	return validateUpdate(csr, old, o)
}

// ValidateApprovalUpdate validates an update of the approval subresource:
// it may add Approved or Denied conditions.
func ValidateApprovalUpdate(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	o := updateOptions(csr, old)
	o.allowSettingApprovalConditions = true
	return validateUpdate(csr, old, o)
}

func validate(csr *certificatesv1.CertificateSigningRequest, o options) field.ErrorList {
	// Any name usable in a URL is fine for a request.
	allErrs := apivalidation.ValidateObjectMeta(&csr.ObjectMeta, false, func(string, bool) []string { return nil }, field.NewPath("metadata"))
	specPath := field.NewPath("spec")

	if err := validateRequest(csr.Spec.Request); err != nil {
		allErrs = append(allErrs, field.Invalid(specPath.Child("request"), "<request data>", err.Error()))
	}
	allErrs = append(allErrs, validateUsages(csr.Spec.Usages, specPath.Child("usages"), o)...)
	if !o.allowLegacySignerName && csr.Spec.SignerName == LegacyUnknownSignerName {
		allErrs = append(allErrs, field.Invalid(specPath.Child("signerName"), csr.Spec.SignerName, "the legacy signerName is not allowed via this API version"))
	} else {
		allErrs = append(allErrs, ValidateSignerName(specPath.Child("signerName"), csr.Spec.SignerName)...)
	}
	if csr.Spec.ExpirationSeconds != nil && *csr.Spec.ExpirationSeconds < MinExpirationSeconds {
		allErrs = append(allErrs, field.Invalid(specPath.Child("expirationSeconds"), *csr.Spec.ExpirationSeconds, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	allErrs = append(allErrs, validateConditions(csr, field.NewPath("status", "conditions"), o)...)
	if !o.allowArbitraryCertificate {
		if err := validateCertificate(csr.Status.Certificate); err != nil {
			allErrs = append(allErrs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", err.Error()))
		}
	}
	return allErrs
}

func validateUpdate(csr, old *certificatesv1.CertificateSigningRequest, o options) field.ErrorList {
	allErrs := validate(csr, o)
	allErrs = append(allErrs, apivalidation.ValidateObjectMetaUpdate(&csr.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)

	conditionsPath := field.NewPath("status", "conditions")
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		if len(findConditions(csr, t)) < len(findConditions(old, t)) {
			allErrs = append(allErrs, field.Forbidden(conditionsPath, fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	if !o.allowSettingApprovalConditions {
		for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
			oldConditions, newConditions := findConditions(old, t), findConditions(csr, t)
			switch {
			case len(newConditions) < len(oldConditions):
				// Reported above.
			case len(newConditions) > len(oldConditions):
				allErrs = append(allErrs, field.Forbidden(conditionsPath, fmt.Sprintf("updates may not add a condition of type %q", t)))
			case !equality.Semantic.DeepEqual(oldConditions, newConditions):
				allErrs = append(allErrs, field.Forbidden(conditionsPath, fmt.Sprintf("updates may not modify a condition of type %q", t)))
			}
		}
	}
	if !bytes.Equal(csr.Status.Certificate, old.Status.Certificate) {
		certPath := field.NewPath("status", "certificate")
		if !o.allowSettingCertificate {
			allErrs = append(allErrs, field.Forbidden(certPath, "updates may not set certificate content"))
		} else if len(old.Status.Certificate) > 0 {
			allErrs = append(allErrs, field.Forbidden(certPath, "updates may not modify existing certificate content"))
		}
	}
	return allErrs
}

func findConditions(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
	var found []certificatesv1.CertificateSigningRequestCondition
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			found = append(found, c)
		}
	}
	return found
}

// validateRequest checks that request is one PEM-encoded CERTIFICATE
// REQUEST with a valid signature.
func validateRequest(request []byte) error {
	block, _ := pem.Decode(request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return err
	}
	return csr.CheckSignature()
}

func validateUsages(usages []certificatesv1.KeyUsage, fldPath *field.Path, o options) field.ErrorList {
	var allErrs field.ErrorList
	if len(usages) == 0 {
		allErrs = append(allErrs, field.Required(fldPath, ""))
	}
	seen := map[certificatesv1.KeyUsage]bool{}
	for i, usage := range usages {
		if !o.allowUnknownUsages && !validUsages[usage] {
			allErrs = append(allErrs, field.NotSupported(fldPath.Index(i), usage, slices.Sorted(maps.Keys(validUsages))))
		}
		if !o.allowDuplicateUsages && seen[usage] {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), usage))
		}
		seen[usage] = true
	}
	return allErrs
}

// validateConditions checks condition types and statuses: Approved and
// Denied are True only and exclude each other, and each type appears once.
func validateConditions(csr *certificatesv1.CertificateSigningRequest, fldPath *field.Path, o options) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[certificatesv1.RequestConditionType]bool{}
	hasApproved, hasDenied := false, false
	for i, c := range csr.Status.Conditions {
		idxPath := fldPath.Index(i)
		if !o.allowEmptyConditionType && c.Type == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("type"), ""))
		}
		allowed := []string{string(corev1.ConditionFalse), string(corev1.ConditionTrue), string(corev1.ConditionUnknown)}
		if c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied {
			allowed = []string{string(corev1.ConditionTrue)}
		}
		if c.Status == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("status"), ""))
		} else if !slices.Contains(allowed, string(c.Status)) {
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("status"), c.Status, allowed))
		}
		if !o.allowBothApprovedAndDenied {
			switch c.Type {
			case certificatesv1.CertificateApproved:
				hasApproved = true
				if hasDenied {
					allErrs = append(allErrs, field.Invalid(idxPath.Child("type"), c.Type, "Approved and Denied conditions are mutually exclusive"))
				}
			case certificatesv1.CertificateDenied:
				hasDenied = true
				if hasApproved {
					allErrs = append(allErrs, field.Invalid(idxPath.Child("type"), c.Type, "Approved and Denied conditions are mutually exclusive"))
				}
			}
		}
		if !o.allowDuplicateConditionTypes {
			if seen[c.Type] {
				allErrs = append(allErrs, field.Duplicate(idxPath.Child("type"), c.Type))
			}
			seen[c.Type] = true
		}
	}
	return allErrs
}

// validateCertificate checks that an issued certificate, if any, is a
// sequence of header-less PEM CERTIFICATE blocks that parse.
func validateCertificate(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return errors.New("no PEM block headers are permitted")
		}
		blocks++
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
		data = rest
	}
	if blocks == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}

// ValidateSignerName checks that a signer name has the form
// <domain>/<path>: a domain of at least two DNS labels, and a path of DNS
// subdomains separated by dots, 571 characters at most in all.
func ValidateSignerName(fldPath *field.Path, signerName string) field.ErrorList {
	if signerName == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	segments := strings.Split(signerName, "/")
	if len(segments) != 2 {
		return field.ErrorList{field.Invalid(fldPath, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	var allErrs field.ErrorList
	domain, path := segments[0], segments[1]
	if len(domain) > validation.DNS1123SubdomainMaxLength {
		allErrs = append(allErrs, field.TooLong(fldPath, domain, validation.DNS1123SubdomainMaxLength))
	}
	domainLabels := strings.Split(domain, ".")
	for _, label := range domainLabels {
		if msgs := validation.IsDNS1123Label(label); len(msgs) > 0 {
			for _, msg := range msgs {
				allErrs = append(allErrs, field.Invalid(fldPath, domain, fmt.Sprintf("validating label %q: %s", label, msg)))
			}
			break
		}
	}
	if len(domainLabels) < 2 {
		allErrs = append(allErrs, field.Invalid(fldPath, domain, "should be a domain with at least two segments separated by dots"))
	}
	for _, label := range strings.Split(path, ".") {
		if msgs := validation.IsDNS1123Subdomain(label); len(msgs) > 0 {
			for _, msg := range msgs {
				allErrs = append(allErrs, field.Invalid(fldPath, path, fmt.Sprintf("validating label %q: %s", label, msg)))
			}
			break
		}
	}
	maxLength := validation.DNS1123SubdomainMaxLength + 1 + validation.DNS1123SubdomainMaxLength + validation.DNS1123LabelMaxLength + 1
	if len(signerName) > maxLength {
		allErrs = append(allErrs, field.TooLong(fldPath, signerName, maxLength))
	}
	return allErrs
}
