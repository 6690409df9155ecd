package kubeprinters

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// nodeLostReason is the status reason of a pod whose node stopped
// responding; such a pod, once deleted, shows "Unknown".
const nodeLostReason = "NodeLost"

// podsTable prints pods as NAME READY STATUS RESTARTS AGE, and with -o wide also
// IP NODE NOMINATED NODE READINESS GATES. STATUS is the reason a user
// would look for: the first init container that did not finish, else the
// last container that waits or terminated, else the phase. Rows of pods
// that succeeded or failed carry the condition Completed.
func podsTable() printers.TableConvertor[*corev1.Pod] {
	spec, status := corev1.PodSpec{}.SwaggerDoc(), corev1.PodStatus{}.SwaggerDoc()
	return printers.TableConvertor[*corev1.Pod]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic."},
			{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod."},
			{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
			printers.AgeColumn(),
			{Name: "IP", Type: "string", Priority: 1, Description: status["podIP"]},
			{Name: "Node", Type: "string", Priority: 1, Description: spec["nodeName"]},
			{Name: "Nominated Node", Type: "string", Priority: 1, Description: status["nominatedNodeName"]},
			{Name: "Readiness Gates", Type: "string", Priority: 1, Description: spec["readinessGates"]},
		},
		Cells:      podCells,
		Conditions: podConditions,
	}
}

func podCells(pod *corev1.Pod) []interface{} {
	s := summarizePod(pod)
	restarts := strconv.Itoa(s.restarts.count)
	if s.restarts.count != 0 && !s.restarts.last.IsZero() {
		restarts = fmt.Sprintf("%d (%s ago)", s.restarts.count, printers.Age(s.restarts.last))
	}
	ip := ""
	if len(pod.Status.PodIPs) > 0 {
		ip = pod.Status.PodIPs[0].IP
	}
	return []interface{}{
		pod.Name,
		fmt.Sprintf("%d/%d", s.ready, s.containers),
		s.reason,
		restarts,
		printers.Age(pod.CreationTimestamp),
		printers.OrNone(ip),
		printers.OrNone(pod.Spec.NodeName),
		printers.OrNone(pod.Status.NominatedNodeName),
		readinessGates(pod),
	}
}

func podConditions(pod *corev1.Pod) []metav1.TableRowCondition {
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
	case corev1.PodFailed:
		return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodFailed), Message: "The pod failed."}}
	}
	return nil
}

// restarts counts the restarts of containers and remembers when the last
// one that restarted last finished.
type restarts struct {
	count int
	last  metav1.Time
}

func (r *restarts) add(c corev1.ContainerStatus) {
	r.count += int(c.RestartCount)
	if t := c.LastTerminationState.Terminated; t != nil && r.last.Before(&t.FinishedAt) {
		r.last = t.FinishedAt
	}
}

// podSummary is what the READY, STATUS and RESTARTS cells of a pod show.
type podSummary struct {
	ready, containers int
	reason            string
	restarts          restarts
}

func summarizePod(pod *corev1.Pod) podSummary {
	s := podSummary{containers: len(pod.Spec.Containers), reason: string(pod.Status.Phase)}
	if pod.Status.Reason != "" {
		s.reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			s.reason = corev1.PodReasonSchedulingGated
		}
	}

	// Sidecars (init containers that always restart) count as containers.
	sidecars := map[string]bool{}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
			s.containers++
		}
	}

	// The init containers run in order: the first one that has not
	// finished (and is not a started sidecar) tells the status.
	var initRestarts, sidecarRestarts restarts
	initializing := false
	for i, c := range pod.Status.InitContainerStatuses {
		initRestarts.add(c)
		if sidecars[c.Name] {
			sidecarRestarts.add(c)
		}
		if c.State.Terminated != nil && c.State.Terminated.ExitCode == 0 {
			continue
		}
		if sidecars[c.Name] && c.Started != nil && *c.Started {
			if c.Ready {
				s.ready++
			}
			continue
		}
		initializing = true
		switch {
		case c.State.Terminated != nil:
			s.reason = "Init:" + terminatedReason(c.State.Terminated)
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			s.reason = "Init:" + c.State.Waiting.Reason
		default:
			s.reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		break
	}
	s.restarts = initRestarts

	if !initializing || conditionTrue(pod, corev1.PodInitialized) {
		s.restarts = sidecarRestarts
		running := false
		failure := ""
		// The last container that waits or terminated tells the status.
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			c := pod.Status.ContainerStatuses[i]
			s.restarts.add(c)
			switch {
			case c.State.Waiting != nil && c.State.Waiting.Reason != "":
				s.reason = c.State.Waiting.Reason
			case c.State.Terminated != nil:
				s.reason = terminatedReason(c.State.Terminated)
				if c.State.Terminated.ExitCode != 0 {
					failure = s.reason
				}
			case c.Ready && c.State.Running != nil:
				running = true
				s.ready++
			}
		}
		// A pod whose last container completed while others run is not
		// Completed.
		if s.reason == "Completed" {
			switch {
			case running && hasReadyCondition(pod):
				s.reason = "Running"
			case failure != "":
				s.reason = failure
			case running:
				s.reason = "NotReady"
			}
		}
	}

	if pod.DeletionTimestamp != nil {
		switch {
		case pod.Status.Reason == nodeLostReason:
			s.reason = "Unknown"
		case pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed:
			s.reason = "Terminating"
		}
	}
	return s
}

// terminatedReason names how a container terminated: its reason, else
// the signal that killed it, else its exit code.
func terminatedReason(t *corev1.ContainerStateTerminated) string {
	switch {
	case t.Reason != "":
		return t.Reason
	case t.Signal != 0:
		return fmt.Sprintf("Signal:%d", t.Signal)
	default:
		return fmt.Sprintf("ExitCode:%d", t.ExitCode)
	}
}

// conditionTrue tells whether the first condition of type t of pod is
// true.
func conditionTrue(pod *corev1.Pod, t corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// hasReadyCondition tells whether any Ready condition of pod is true.
func hasReadyCondition(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// readinessGates shows how many of the pod's readiness gates have a true
// condition, as "true/gates", or "<none>".
func readinessGates(pod *corev1.Pod) string {
	if len(pod.Spec.ReadinessGates) == 0 {
		return "<none>"
	}
	passed := 0
	for _, gate := range pod.Spec.ReadinessGates {
		if conditionTrue(pod, gate.ConditionType) {
			passed++
		}
	}
	return fmt.Sprintf("%d/%d", passed, len(pod.Spec.ReadinessGates))
}
