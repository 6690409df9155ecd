package kubeprinters

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// deploymentsTable prints deployments as NAME READY UP-TO-DATE AVAILABLE AGE,
// READY being ready of desired replicas, and with -o wide also CONTAINERS
// IMAGES SELECTOR.
func deploymentsTable() printers.TableConvertor[*appsv1.Deployment] {
	status := appsv1.DeploymentStatus{}.SwaggerDoc()
	return printers.TableConvertor[*appsv1.Deployment]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
			{Name: "Up-to-date", Type: "string", Description: status["updatedReplicas"]},
			{Name: "Available", Type: "string", Description: status["availableReplicas"]},
			printers.AgeColumn(),
			containersColumn(),
			imagesColumn(),
			{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.DeploymentSpec{}.SwaggerDoc()["selector"]},
		},
		Cells: deploymentCells,
	}
}

func deploymentCells(d *appsv1.Deployment) []interface{} {
	var desired int32
	if d.Spec.Replicas != nil {
		desired = *d.Spec.Replicas
	}
	selector := "<invalid>"
	if s, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil {
		selector = s.String()
	}
	names, images := containerCells(d.Spec.Template.Spec.Containers)
	return []interface{}{
		d.Name,
		fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, desired),
		int64(d.Status.UpdatedReplicas),
		int64(d.Status.AvailableReplicas),
		printers.Age(d.CreationTimestamp),
		names,
		images,
		selector,
	}
}

// containersColumn and imagesColumn are the wide columns of the containers
// of a pod template.
func containersColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."}
}

func imagesColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."}
}

// containerCells returns the names and the images of containers, each
// joined by commas.
func containerCells(containers []corev1.Container) (names, images string) {
	for i, c := range containers {
		if i > 0 {
			names += ","
			images += ","
		}
		names += c.Name
		images += c.Image
	}
	return names, images
}
