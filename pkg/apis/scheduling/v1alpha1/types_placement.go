package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

// Placement chooses one Location for the namespaces of its workspace that
// its namespace selector selects. It is Pending until a Location is
// selected, then Unbound, and Bound once a namespace uses it (the namespace
// annotation scheduling.kcp.io/placement). A user writes it; a default one
// is created when a workspace binds a compute service.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Placement struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the selection rule.
	//
	// +optional
	Spec PlacementSpec `json:"spec,omitempty"`

	// status holds the selected Location.
	//
	// +optional
	Status PlacementStatus `json:"status,omitempty"`
}

// PlacementSpec is the selection rule of a Placement.
type PlacementSpec struct {
	// locationSelectors select a Location by its labels; any of them may
	// match.
	//
	// +optional
	// +listType=atomic
	LocationSelectors []metav1.LabelSelector `json:"locationSelectors,omitempty"`

	// locationResource is the resource of the instances of the Locations to
	// select from.
	//
	// +required
	LocationResource GroupVersionResource `json:"locationResource"`

	// namespaceSelector selects the namespaces of the Placement; without
	// it, none.
	//
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// locationWorkspace is the path of the workspace of the Locations; it
	// defaults to the workspace of the compute service's APIExport.
	//
	// +optional
	// +k8s:validation:pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(:[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
	LocationWorkspace string `json:"locationWorkspace,omitempty"`
}

// PlacementStatus is the observed state of a Placement.
type PlacementStatus struct {
	// phase is Pending, Unbound or Bound.
	//
	// +optional
	// +default="Pending"
	Phase PlacementPhase `json:"phase,omitempty"`

	// selectedLocation is the Location the Placement selected.
	//
	// +optional
	SelectedLocation *LocationReference `json:"selectedLocation,omitempty"`

	// conditions are the current observations of the Placement's state.
	//
	// +optional
	Conditions conditionsv1alpha1.Conditions `json:"conditions,omitempty"`
}

// LocationReference names a Location in a workspace.
type LocationReference struct {
	// path is the path of the Location's workspace, e.g. root:compute.
	//
	// +required
	// +k8s:validation:pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(:[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
	Path string `json:"path"`

	// locationName is the name of the Location.
	//
	// +required
	// +k8s:validation:minLength=1
	LocationName string `json:"locationName"`
}

// PlacementPhase is the phase of a Placement.
//
// +enum
type PlacementPhase string

const (
	// PlacementPending: no Location is selected yet.
	PlacementPending PlacementPhase = "Pending"
	// PlacementUnbound: a Location is selected, no namespace uses it.
	PlacementUnbound PlacementPhase = "Unbound"
	// PlacementBound: a Location is selected and a namespace uses it.
	PlacementBound PlacementPhase = "Bound"
)

// Conditions of a Placement and their reasons.
const (
	// PlacementReady is True when the selected Location exists and
	// matches the spec.
	PlacementReady conditionsv1alpha1.ConditionType = "Ready"
	// LocationNotFoundReason: no Location could be found.
	LocationNotFoundReason = "LocationNotFound"
	// LocationInvalidReason: the selected Location no longer fits.
	LocationInvalidReason = "LocationInvalid"
	// LocationNotMatchReason: no Location matches the selectors.
	LocationNotMatchReason = "LocationNoMatch"

	// PlacementScheduled is True when a scheduling decision is made.
	PlacementScheduled conditionsv1alpha1.ConditionType = "Scheduled"
	// ScheduleLocationNotFound: no Location is available.
	ScheduleLocationNotFound = "ScheduleLocationNotFound"
	// ScheduleNoValidTargetReason: no valid SyncTarget could be chosen.
	ScheduleNoValidTargetReason = "NoValidTarget"
)

// GetConditions returns the Placement's conditions.
func (in *Placement) GetConditions() conditionsv1alpha1.Conditions { return in.Status.Conditions }

// SetConditions replaces the Placement's conditions.
func (in *Placement) SetConditions(c conditionsv1alpha1.Conditions) { in.Status.Conditions = c }

// PlacementList is a list of Placements.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type PlacementList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Placement `json:"items"`
}
