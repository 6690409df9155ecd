package published

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	servicesv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/services/v1alpha1"
)

// RelatedResources are the resources of the kinds related objects may
// have, which the Service's APIExport claims in its consumers' workspaces.
var RelatedResources = map[string]schema.GroupVersionResource{
	"Secret":    {Version: "v1", Resource: "secrets"},
	"ConfigMap": {Version: "v1", Resource: "configmaps"},
}

// Locate evaluates a locator against an object: the string at its dotted
// path, rewritten by its regex. An empty pattern makes the replacement a
// constant. It fails if the path holds no string; an empty result means
// the related object is not named yet.
func Locate(obj map[string]any, l servicesv1alpha1.ResourceLocator) (string, error) {
	value, found, err := unstructured.NestedString(obj, strings.Split(l.Path, ".")...)
	if err != nil {
		return "", fmt.Errorf("%s: %w", l.Path, err)
	}
	if !found {
		return "", nil
	}
	if l.Regex == nil {
		return value, nil
	}
	if l.Regex.Pattern == "" {
		return l.Regex.Replacement, nil
	}
	re, err := regexp.Compile(l.Regex.Pattern)
	if err != nil {
		return "", fmt.Errorf("%s: %w", l.Path, err)
	}
	return re.ReplaceAllString(value, l.Regex.Replacement), nil
}

// RelatedName returns the namespace and name of a related object of obj
// on obj's side: the reference evaluated against obj, the namespace being
// obj's unless the reference locates one.
func RelatedName(obj *unstructured.Unstructured, ref servicesv1alpha1.RelatedResourceReference) (namespace, name string, err error) {
	name, err = Locate(obj.Object, ref.Name)
	if err != nil {
		return "", "", err
	}
	namespace = obj.GetNamespace()
	if ref.Namespace != nil {
		if namespace, err = Locate(obj.Object, *ref.Namespace); err != nil {
			return "", "", err
		}
	}
	return namespace, name, nil
}
