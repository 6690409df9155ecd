package apiexports

import (
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// ReferenceImmutable is the message that refuses a change of the export an
// APIBinding or APIExportEndpointSlice names, that of kcp's CEL rule.
const ReferenceImmutable = "APIExport reference must not be changed"

// ValidateReference validates a reference to an export, on p: a name that
// can be an export's, a DNS subdomain, and a path, when set, that is a
// logical cluster path or name.
func ValidateReference(ref apisv1alpha1.ExportBindingReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else if msgs := utilvalidation.IsDNS1123Subdomain(ref.Name); len(msgs) > 0 {
		errs = append(errs, field.Invalid(p.Child("name"), ref.Name, strings.Join(msgs, ", ")))
	}
	if ref.Path != "" && !logicalcluster.IsValidPath(ref.Path) {
		errs = append(errs, field.Invalid(p.Child("path"), ref.Path, logicalcluster.ValidationMessage))
	}
	return errs
}
