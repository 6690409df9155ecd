package apischema

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	schedulingv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
)

// Label keys and values of a Location's availableSelectorLabels, as kcp
// validates them.
const (
	labelKeyPattern   = `^([a-z0-9]([-a-z0-9]*[a-z0-9](\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?/)?([a-zA-Z0-9][-a-zA-Z0-9_.]{0,61})?[a-zA-Z0-9]$`
	labelValuePattern = `^(|([a-z0-9]([-a-z0-9]*[a-z0-9](\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?/)?([a-zA-Z0-9][-a-zA-Z0-9_.]{0,61})?[a-zA-Z0-9])$`
)

// Compute are the resources of kcp's transparent multi-cluster APIs,
// published by root in the APIExports workload.kcp.io (SyncTargets) and
// scheduling.kcp.io (Locations and Placements), with kcp's names and
// printer columns.
func Compute() []Resource {
	age := apiextensionsv1.CustomResourceColumnDefinition{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}
	kcp := []string{"kcp"}
	return []Resource{
		{
			Model:   workloadv1alpha1.SyncTarget{}.OpenAPIModelName(),
			Group:   workloadv1alpha1.SchemeGroupVersion.Group,
			Version: workloadv1alpha1.SchemeGroupVersion.Version,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "synctargets", Singular: "synctarget", Kind: "SyncTarget", ListKind: "SyncTargetList",
				Categories: kcp,
			},
			Scope:  apiextensionsv1.ClusterScoped,
			Status: true,
			PrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
				{Name: "Location", Type: "string", JSONPath: ".metadata.name", Priority: 1},
				{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`, Priority: 2},
				{Name: "Synced API resources", Type: "string", JSONPath: ".status.syncedResources", Priority: 3},
				{Name: "Key", Type: "string", JSONPath: `.metadata.labels['internal\.workload\.kcp\.io/key']`, Priority: 4},
				age,
			},
			Adjust: adjustSyncTarget,
		},
		{
			Model:   schedulingv1alpha1.Location{}.OpenAPIModelName(),
			Group:   schedulingv1alpha1.SchemeGroupVersion.Group,
			Version: schedulingv1alpha1.SchemeGroupVersion.Version,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "locations", Singular: "location", Kind: "Location", ListKind: "LocationList",
				Categories: kcp,
			},
			Scope:  apiextensionsv1.ClusterScoped,
			Status: true,
			PrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
				{Name: "Resource", Type: "string", JSONPath: ".spec.resource.resource", Description: "Type of the workspace"},
				{Name: "Available", Type: "string", JSONPath: ".status.availableInstances", Description: "Available instances in this location"},
				{Name: "Instances", Type: "string", JSONPath: ".status.instances", Description: "Instances in this location"},
				{Name: "Labels", Type: "string", JSONPath: `.metadata.annotations['scheduling\.kcp\.io/labels']`, Description: "The common labels of this location"},
				age,
			},
			Adjust: adjustLocation,
		},
		{
			Model:   schedulingv1alpha1.Placement{}.OpenAPIModelName(),
			Group:   schedulingv1alpha1.SchemeGroupVersion.Group,
			Version: schedulingv1alpha1.SchemeGroupVersion.Version,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "placements", Singular: "placement", Kind: "Placement", ListKind: "PlacementList",
				Categories: kcp,
			},
			Scope:          apiextensionsv1.ClusterScoped,
			Status:         true,
			PrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{age},
		},
	}
}

// adjustSyncTarget refuses spec.cells: kcp's API has the field, but
// neither kcp nor Tessera schedules by cells, and a stored field that does
// nothing would mislead.
func adjustSyncTarget(s *apiextensionsv1.JSONSchemaProps) error {
	return editProperty(s, []string{"spec"}, func(spec *apiextensionsv1.JSONSchemaProps) error {
		spec.XValidations = append(spec.XValidations, apiextensionsv1.ValidationRule{
			Rule:      "!has(self.cells) || size(self.cells) == 0",
			Message:   "cells are not supported: Tessera does not schedule by cells; group SyncTargets with Locations (their labels and instanceSelector) instead",
			FieldPath: ".cells",
		})
		return nil
	})
}

// adjustLocation validates the keys and values of availableSelectorLabels
// as label keys and values: openapi-gen keeps no validation of a named
// string type, and none of list items.
func adjustLocation(s *apiextensionsv1.JSONSchemaProps) error {
	return editProperty(s, []string{"spec", "availableSelectorLabels"}, func(labels *apiextensionsv1.JSONSchemaProps) error {
		if labels.Items == nil || labels.Items.Schema == nil {
			return fmt.Errorf("spec.availableSelectorLabels has no item schema")
		}
		item := labels.Items.Schema
		if err := editProperty(item, []string{"key"}, func(key *apiextensionsv1.JSONSchemaProps) error {
			key.Pattern, key.MaxLength = labelKeyPattern, ptrTo[int64](255)
			return nil
		}); err != nil {
			return err
		}
		return editProperty(item, []string{"values"}, func(values *apiextensionsv1.JSONSchemaProps) error {
			if values.Items == nil || values.Items.Schema == nil {
				return fmt.Errorf("spec.availableSelectorLabels[].values has no item schema")
			}
			values.Items.Schema.Pattern, values.Items.Schema.MaxLength = labelValuePattern, ptrTo[int64](63)
			return nil
		})
	})
}

// editProperty calls edit with the schema of the property at path below s
// and stores what it changed (Properties holds values, not pointers).
func editProperty(s *apiextensionsv1.JSONSchemaProps, path []string, edit func(*apiextensionsv1.JSONSchemaProps) error) error {
	if len(path) == 0 {
		return edit(s)
	}
	p, ok := s.Properties[path[0]]
	if !ok {
		return fmt.Errorf("no property %q", path[0])
	}
	if err := editProperty(&p, path[1:], edit); err != nil {
		return fmt.Errorf("%s: %w", path[0], err)
	}
	s.Properties[path[0]] = p
	return nil
}
