package limitranges

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tessera-dev/tessera/shard/registry/core/resourcename"
)

var standardLimitTypes = map[corev1.LimitType]bool{
	corev1.LimitTypePod:                   true,
	corev1.LimitTypeContainer:             true,
	corev1.LimitTypePersistentVolumeClaim: true,
}

// Validate validates a limit range: known or qualified limit types, each at
// most once; valid resource names and non-negative quantities; and, per
// resource, min <= defaultRequest <= default <= max and a ratio of at least
// one that max/min can honour.
func Validate(lr *corev1.LimitRange) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&lr.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	limitsPath := field.NewPath("spec", "limits")
	seenTypes := map[corev1.LimitType]bool{}
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		idxPath := limitsPath.Index(i)
		allErrs = append(allErrs, validateType(item.Type, idxPath.Child("type"))...)
		if seenTypes[item.Type] {
			allErrs = append(allErrs, field.Duplicate(idxPath.Child("type"), item.Type))
		}
		seenTypes[item.Type] = true
		allErrs = append(allErrs, validateItem(item, idxPath)...)
	}
	return allErrs
}

// ValidateUpdate validates an update of a limit range.
func ValidateUpdate(lr, old *corev1.LimitRange) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&lr.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, Validate(lr)...)
}

func validateType(t corev1.LimitType, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(t)) {
		allErrs = append(allErrs, field.Invalid(fldPath, t, msg))
	}
	if len(allErrs) == 0 && !strings.Contains(string(t), "/") && !standardLimitTypes[t] {
		allErrs = append(allErrs, field.Invalid(fldPath, t, "must be a standard limit type or fully qualified"))
	}
	return allErrs
}

func validateItem(item *corev1.LimitRangeItem, idxPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	validateList := func(list corev1.ResourceList, fldPath *field.Path) {
		for name := range list {
			namePath := fldPath.Key(string(name))
			if item.Type == corev1.LimitTypePod || item.Type == corev1.LimitTypeContainer {
				allErrs = append(allErrs, resourcename.ValidateContainer(name, namePath)...)
			} else {
				allErrs = append(allErrs, resourcename.Validate(name, namePath)...)
			}
		}
	}
	validateList(item.Max, idxPath.Child("max"))
	validateList(item.Min, idxPath.Child("min"))
	if item.Type == corev1.LimitTypePod {
		if len(item.Default) > 0 {
			allErrs = append(allErrs, field.Forbidden(idxPath.Child("default"), "may not be specified when `type` is 'Pod'"))
		}
		if len(item.DefaultRequest) > 0 {
			allErrs = append(allErrs, field.Forbidden(idxPath.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
		}
	} else {
		validateList(item.Default, idxPath.Child("default"))
		validateList(item.DefaultRequest, idxPath.Child("defaultRequest"))
	}
	validateList(item.MaxLimitRequestRatio, idxPath.Child("maxLimitRequestRatio"))

	if item.Type == corev1.LimitTypePersistentVolumeClaim {
		_, hasMin := item.Min[corev1.ResourceStorage]
		_, hasMax := item.Max[corev1.ResourceStorage]
		if !hasMin && !hasMax {
			allErrs = append(allErrs, field.Required(idxPath.Child("limits"), "either minimum or maximum storage value is required, but neither was provided"))
		}
	}

	names := map[corev1.ResourceName]bool{}
	for _, list := range []corev1.ResourceList{item.Max, item.Min, item.Default, item.DefaultRequest, item.MaxLimitRequestRatio} {
		for name := range list {
			names[name] = true
		}
	}
	if item.Type == corev1.LimitTypePod {
		// Defaults are forbidden above; do not compare them.
		item = &corev1.LimitRangeItem{Type: item.Type, Max: item.Max, Min: item.Min, MaxLimitRequestRatio: item.MaxLimitRequestRatio}
	}
	for name := range names {
		allErrs = append(allErrs, validateBounds(item, name, idxPath)...)
	}
	return allErrs
}

// validateBounds checks the ordering of the min, max, default and
// defaultRequest of one resource, and its maxLimitRequestRatio.
func validateBounds(item *corev1.LimitRangeItem, name corev1.ResourceName, idxPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	min, hasMin := item.Min[name]
	max, hasMax := item.Max[name]
	def, hasDefault := item.Default[name]
	defRequest, hasDefaultRequest := item.DefaultRequest[name]
	ratio, hasRatio := item.MaxLimitRequestRatio[name]
	key := string(name)

	greater := func(path *field.Path, value resource.Quantity, what string, a resource.Quantity, b string, bq resource.Quantity) {
		if a.Cmp(bq) > 0 {
			allErrs = append(allErrs, field.Invalid(path.Key(key), value, fmt.Sprintf("%s value %s is greater than %s value %s", what, a.String(), b, bq.String())))
		}
	}
	if hasMin && hasMax {
		greater(idxPath.Child("min"), min, "min", min, "max", max)
	}
	if hasDefaultRequest && hasMin {
		greater(idxPath.Child("defaultRequest"), defRequest, "min", min, "default request", defRequest)
	}
	if hasDefaultRequest && hasMax {
		greater(idxPath.Child("defaultRequest"), defRequest, "default request", defRequest, "max", max)
	}
	if hasDefaultRequest && hasDefault {
		greater(idxPath.Child("defaultRequest"), defRequest, "default request", defRequest, "default limit", def)
	}
	if hasDefault && hasMin {
		greater(idxPath.Child("default"), min, "min", min, "default", def)
	}
	if hasDefault && hasMax {
		greater(idxPath.Child("default"), def, "default", def, "max", max)
	}
	if hasRatio {
		ratioPath := idxPath.Child("maxLimitRequestRatio").Key(key)
		if ratio.Cmp(*resource.NewQuantity(1, resource.DecimalSI)) < 0 {
			allErrs = append(allErrs, field.Invalid(ratioPath, ratio, fmt.Sprintf("ratio %s is less than 1", ratio.String())))
		}
		if hasMin && hasMax && min.Sign() > 0 {
			// Compare in milli-units when the values allow it, to keep
			// fractional ratios and quantities exact.
			ratioValue, minValue, maxValue := float64(ratio.Value()), min.Value(), max.Value()
			if ratio.Value() < resource.MaxMilliValue && minValue < resource.MaxMilliValue && maxValue < resource.MaxMilliValue {
				ratioValue, minValue, maxValue = float64(ratio.MilliValue())/1000, min.MilliValue(), max.MilliValue()
			}
			if limit := float64(maxValue) / float64(minValue); ratioValue > limit {
				allErrs = append(allErrs, field.Invalid(ratioPath, ratio, fmt.Sprintf("ratio %s is greater than max/min = %f", ratio.String(), limit)))
			}
		}
	}
	// Resources that cannot be overcommitted (huge pages, extended
	// resources) need equal default limits and requests.
	if !resourcename.IsOvercommitAllowed(name) && hasDefault && hasDefaultRequest && def.Cmp(defRequest) != 0 {
		allErrs = append(allErrs, field.Invalid(idxPath.Child("defaultRequest").Key(key), defRequest,
			fmt.Sprintf("default value %s must equal to defaultRequest value %s in %s", def.String(), defRequest.String(), name)))
	}
	return allErrs
}
