package bind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/dynamic"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	schedulingv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/scheduling/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/cli/plugin"
	"github.com/tessera-dev/tessera/pkg/cli/workspace"
	"github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// schedulingExport is root's export of Placements, which `bind compute`
// binds in a workspace that does not yet (kcp's workspaces bound it by
// default; Tessera's bind it when they use compute).
const schedulingExport = "root:scheduling.kcp.io"

var placementsGVR = schedulingv1alpha1.SchemeGroupVersion.WithResource("placements")

// computeOptions are the options of "kubectl kcp bind compute".
type computeOptions struct {
	client workspace.ClientFlags
	// apiExports are the compute services' exports to bind,
	// <workspace path>:<name>.
	apiExports []string
	// namespaceSelector and locationSelectors are label selectors in
	// kubectl's syntax.
	namespaceSelector string
	locationSelectors []string
	// name of the Placement; empty means one derived from the selectors
	// and the location workspace, as kcp's plugin names it.
	name     string
	timeout  time.Duration
	interval time.Duration
}

func newComputeCommand(interval time.Duration) *cobra.Command {
	o := &computeOptions{apiExports: []string{"root:compute:kubernetes"}, locationSelectors: []string{""}, timeout: 30 * time.Second, interval: interval}
	cmd := &cobra.Command{
		Use:   "compute <location-workspace>",
		Short: "Bind compute to the current workspace",
		Long: `Bind the compute services' APIExports into the current workspace and create a
Placement that selects a Location of the location workspace, then wait until
the Placement is ready and scheduled to a SyncTarget. The namespaces the
Placement selects are then synced to that SyncTarget.

The current workspace gets an APIBinding to root:scheduling.kcp.io too when it
has none, as Placements are served through it.`,
		Example: `  # Run the workloads of all namespaces on a Location of root:compute.
  kubectl kcp bind compute root:compute

  # Bind another compute service's export, to a Location labelled env=test,
  # for the namespaces labelled purpose=workload.
  kubectl kcp bind compute root:my-locations --apiexports root:my-locations:kubernetes --location-selectors env=test --namespace-selector purpose=workload`,
		Args:          cobra.ExactArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout(), args[0])
		},
	}
	o.client.AddFlags(cmd.Flags())
	cmd.Flags().StringSliceVar(&o.apiExports, "apiexports", o.apiExports, "APIExports to bind to this workspace for workloads, each as <absolute workspace path>:<apiexport name>.")
	cmd.Flags().StringVar(&o.namespaceSelector, "namespace-selector", o.namespaceSelector, "Label selector of the namespaces whose workloads are synced (default: all).")
	cmd.Flags().StringSliceVar(&o.locationSelectors, "location-selectors", o.locationSelectors, "Label selectors of the Locations in the location workspace to choose from (default: all).")
	cmd.Flags().StringVar(&o.name, "name", o.name, "Name of the Placement to create (default: placement-<hash of the selectors and the location workspace>).")
	cmd.Flags().DurationVar(&o.timeout, "timeout", o.timeout, "How long to wait for the APIBindings to be bound and the Placement to be ready.")
	return cmd
}

// placementName is the name kcp's plugin gives a Placement: placement-
// and 8 characters of a hash of what the Placement selects.
func placementName(namespaceSelector string, locationSelectors []string, locationWorkspace string) string {
	return "placement-" + plugin.ShortHash(namespaceSelector+strings.Join(locationSelectors, ",")+locationWorkspace)
}

// bindingName names the APIBinding to an export: the export's name and 8
// characters of a hash of its workspace, so that exports of the same name
// in different workspaces do not collide.
func bindingName(path logicalcluster.Path, export string) string {
	const maxPrefix = validation.DNS1123SubdomainMaxLength - 1 - 8
	if len(export) > maxPrefix {
		export = export[:maxPrefix]
	}
	return export + "-" + plugin.ShortHash("/clusters/"+path.String())
}

// placement builds the Placement the options ask for.
func (o *computeOptions) placement(locationWorkspace string) (*schedulingv1alpha1.Placement, error) {
	ns, err := metav1.ParseToLabelSelector(o.namespaceSelector)
	if err != nil {
		return nil, fmt.Errorf("invalid --namespace-selector %q: %w", o.namespaceSelector, err)
	}
	p := &schedulingv1alpha1.Placement{
		TypeMeta:   metav1.TypeMeta{APIVersion: schedulingv1alpha1.SchemeGroupVersion.String(), Kind: "Placement"},
		ObjectMeta: metav1.ObjectMeta{Name: o.name},
		Spec: schedulingv1alpha1.PlacementSpec{
			LocationWorkspace: locationWorkspace,
			LocationResource: schedulingv1alpha1.GroupVersionResource{
				Group: schedulingv1alpha1.WorkloadGroup, Version: schedulingv1alpha1.WorkloadVersion, Resource: schedulingv1alpha1.SyncTargetsResource,
			},
			NamespaceSelector: ns,
		},
	}
	for _, s := range o.locationSelectors {
		sel, err := metav1.ParseToLabelSelector(s)
		if err != nil {
			return nil, fmt.Errorf("invalid --location-selectors %q: %w", s, err)
		}
		p.Spec.LocationSelectors = append(p.Spec.LocationSelectors, *sel)
	}
	if p.Name == "" {
		p.Name = placementName(o.namespaceSelector, o.locationSelectors, locationWorkspace)
	}
	return p, nil
}

// run binds the exports, creates the Placement and waits for both.
func (o *computeOptions) run(ctx context.Context, out io.Writer, locationWorkspace string) error {
	if !logicalcluster.IsValidPath(locationWorkspace) {
		return fmt.Errorf("the location workspace %q is not a workspace path", locationWorkspace)
	}
	placement, err := o.placement(locationWorkspace)
	if err != nil {
		return err
	}
	exports := []plugin.ExportRef{}
	for _, e := range append([]string{schedulingExport}, o.apiExports...) {
		ref, err := plugin.ParseExportRef(e)
		if err != nil {
			return err
		}
		if ref.Path.Empty() {
			return fmt.Errorf("--apiexports %q: the APIExport's workspace path is required", e)
		}
		exports = append(exports, ref)
	}

	clients, err := plugin.Connect(&o.client)
	if err != nil {
		return err
	}
	kcpClient, dyn := clients.KCP, clients.Dynamic

	bindings, err := o.ensureBindings(ctx, out, kcpClient, exports)
	if err != nil {
		return err
	}
	for _, b := range bindings {
		get := func(ctx context.Context) (*apisv1alpha1.APIBinding, error) {
			return kcpClient.APIBindings().Get(ctx, b.Name, metav1.GetOptions{})
		}
		if err := waitForBound(ctx, o.timeout, o.interval, b, get); err != nil {
			return fmt.Errorf("APIBinding %s to %s:%s: %w", b.Name, b.Spec.Reference.Export.Path, b.Spec.Reference.Export.Name, err)
		}
	}

	if err := o.createPlacement(ctx, dyn, placement); err != nil {
		return err
	}
	if err := o.waitPlacement(ctx, dyn, placement.Name); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "Placement %q is ready.\n", placement.Name)
	return err
}

// ensureBindings returns the workspace's bindings to exports, creating
// those that are missing. A binding counts when it names the export by the
// same path.
func (o *computeOptions) ensureBindings(ctx context.Context, out io.Writer, c *kcp.Clientset, exports []plugin.ExportRef) ([]*apisv1alpha1.APIBinding, error) {
	list, err := c.APIBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the APIBindings of the current workspace: %w", err)
	}
	var bindings []*apisv1alpha1.APIBinding
	for _, ref := range exports {
		var found *apisv1alpha1.APIBinding
		for i := range list.Items {
			e := list.Items[i].Spec.Reference.Export
			if e != nil && e.Path == ref.Path.String() && e.Name == ref.Name {
				found = &list.Items[i]
				break
			}
		}
		if found != nil {
			bindings = append(bindings, found)
			continue
		}
		b := &apisv1alpha1.APIBinding{
			ObjectMeta: metav1.ObjectMeta{Name: bindingName(ref.Path, ref.Name)},
			Spec: apisv1alpha1.APIBindingSpec{Reference: apisv1alpha1.BindingReference{
				Export: &apisv1alpha1.ExportBindingReference{Path: ref.Path.String(), Name: ref.Name},
			}},
		}
		if ref.Path.String()+":"+ref.Name == schedulingExport {
			b.Name = ref.Name
		} else {
			// This command makes the Placement: no default one.
			b.Annotations = map[string]string{workloadv1alpha1.AnnotationSkipDefaultObjectCreation: "true"}
		}
		created, err := c.APIBindings().Create(ctx, b, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			created, err = c.APIBindings().Get(ctx, b.Name, metav1.GetOptions{})
		}
		if err != nil {
			return nil, fmt.Errorf("binding APIExport %s:%s: %w", ref.Path, ref.Name, err)
		}
		if _, err := fmt.Fprintf(out, "Binding APIExport %q.\n", ref.Path.String()+":"+ref.Name); err != nil {
			return nil, err
		}
		bindings = append(bindings, created)
	}
	return bindings, nil
}

// createPlacement creates p, retrying while Placements are not served yet
// (a binding to scheduling.kcp.io just made); an existing one is kept.
func (o *computeOptions) createPlacement(ctx context.Context, dyn dynamic.Interface, p *schedulingv1alpha1.Placement) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(o.timeout)
	for {
		_, err := dyn.Resource(placementsGVR).Create(ctx, &unstructured.Unstructured{Object: m}, metav1.CreateOptions{})
		switch {
		case err == nil, apierrors.IsAlreadyExists(err):
			return nil
		case apierrors.IsNotFound(err) && time.Now().Before(deadline):
		default:
			return fmt.Errorf("creating Placement %s: %w", p.Name, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(o.interval):
		}
	}
}

// waitPlacement waits until the Placement is Ready and Scheduled, and
// says why not when the timeout passes.
func (o *computeOptions) waitPlacement(ctx context.Context, dyn dynamic.Interface, name string) error {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	message := "not read yet"
	for {
		u, err := dyn.Resource(placementsGVR).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			var p schedulingv1alpha1.Placement
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p); err != nil {
				return err
			}
			var ready bool
			if ready, message = placementReady(&p); ready {
				return nil
			}
		} else if ctx.Err() == nil && !plugin.IsRetryable(err) {
			return fmt.Errorf("reading Placement %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return ctx.Err()
			}
			return fmt.Errorf("placement %q not ready within %s: %s", name, o.timeout, message)
		case <-time.After(o.interval):
		}
	}
}

// placementReady tells whether p is Scheduled and Ready, and why not.
func placementReady(p *schedulingv1alpha1.Placement) (bool, string) {
	if !conditionsv1alpha1.IsTrue(p, schedulingv1alpha1.PlacementScheduled) {
		if msg := conditionsv1alpha1.GetMessage(p, schedulingv1alpha1.PlacementScheduled); msg != "" {
			return false, "placement is not scheduled: " + msg
		}
		return false, "placement is not scheduled"
	}
	if !conditionsv1alpha1.IsTrue(p, schedulingv1alpha1.PlacementReady) {
		if msg := conditionsv1alpha1.GetMessage(p, schedulingv1alpha1.PlacementReady); msg != "" {
			return false, "placement is not ready: " + msg
		}
		return false, "placement is not ready"
	}
	return true, ""
}
