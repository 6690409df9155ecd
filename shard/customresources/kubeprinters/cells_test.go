package kubeprinters

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestPodCells(t *testing.T) {
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(time.Now().Add(-d)) }
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	crashed := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, FinishedAt: ago(90 * time.Second)}}
	pod := func(edit func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "web", CreationTimestamp: ago(2 * time.Hour)},
			Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "web"}, {Name: "log"}}},
			Status: corev1.PodStatus{
				Phase:             corev1.PodRunning,
				PodIPs:            []corev1.PodIP{{IP: "10.0.0.7"}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "web", State: running, Ready: true}, {Name: "log", State: running, Ready: true}},
			},
		}
		edit(p)
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want []interface{}
		done bool
	}{
		{"running", pod(func(*corev1.Pod) {}), []interface{}{"web", "2/2", "Running", "0", "120m", "10.0.0.7", "node-1", "<none>", "<none>"}, false},
		{"crash loop", pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses[1] = corev1.ContainerStatus{Name: "log", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}, RestartCount: 4, LastTerminationState: crashed}
		}), []interface{}{"web", "1/2", "CrashLoopBackOff", "4 (90s ago)", "120m", "10.0.0.7", "node-1", "<none>", "<none>"}, false},
		{"init container running", pod(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Spec.InitContainers = []corev1.Container{{Name: "a"}, {Name: "b"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{
				{Name: "a", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}},
				{Name: "b", State: running},
			}
		}),
			// Containers count only once the pod is initialized.
			[]interface{}{"web", "0/2", "Init:1/2", "0", "120m", "10.0.0.7", "node-1", "<none>", "<none>"}, false},
		{"sidecar", pod(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "proxy", State: running, Ready: true, Started: ptr.To(true), RestartCount: 1, LastTerminationState: crashed}}
			p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "lb"}}
		}), []interface{}{"web", "3/3", "Running", "1 (90s ago)", "120m", "10.0.0.7", "node-1", "<none>", "0/1"}, false},
		{"terminating", pod(func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(ago(time.Minute)) }),
			[]interface{}{"web", "2/2", "Terminating", "0", "120m", "10.0.0.7", "node-1", "<none>", "<none>"}, false},
		{"succeeded", pod(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodSucceeded
			p.Status.PodIPs = nil
			for i := range p.Status.ContainerStatuses {
				p.Status.ContainerStatuses[i] = corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}}
			}
		}), []interface{}{"web", "0/2", "Completed", "0", "120m", "<none>", "node-1", "<none>", "<none>"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table, err := podsTable().ConvertToTable(t.Context(), tc.pod, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
			if done := len(table.Rows[0].Conditions) == 1 && table.Rows[0].Conditions[0].Type == metav1.RowCompleted; done != tc.done {
				t.Errorf("row conditions %v, want completed %v", table.Rows[0].Conditions, tc.done)
			}
		})
	}
}

func TestTruncatedLists(t *testing.T) {
	var addresses []corev1.EndpointAddress
	for i := range 5 {
		addresses = append(addresses, corev1.EndpointAddress{IP: fmt.Sprintf("10.0.0.%d", i+1)})
	}
	ep := &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{Addresses: addresses, Ports: []corev1.EndpointPort{{Port: 80}}}}}
	if got, want := endpointsCell(ep), "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 2 more..."; got != want {
		t.Errorf("endpoints %q, want %q", got, want)
	}
	var rules []networkingv1.IngressRule
	for _, h := range []string{"", "a", "b", "", "c", "d"} {
		rules = append(rules, networkingv1.IngressRule{Host: h})
	}
	// Upstream counts the rules, not the hosts, it did not show.
	if got, want := ingressHosts(rules), "a,b,c + 3 more..."; got != want {
		t.Errorf("hosts %q, want %q", got, want)
	}
	if got := ingressHosts(rules[:1]); got != "*" {
		t.Errorf("hosts of a rule without host %q, want *", got)
	}
}
