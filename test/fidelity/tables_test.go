package fidelity

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"
	printerstorage "k8s.io/kubernetes/pkg/printers/storage"
	"k8s.io/utils/ptr"

	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"

	"github.com/tessera-dev/tessera/shard/customresources/kubeprinters"
)

// TestTables compares the tables Tessera prints for the bound Kubernetes
// kinds of a compute service with kube-apiserver's: the same v1 objects,
// as the shard stores them (unstructured, not defaulted), through
// Tessera's convertor and, converted to the internal types, through
// upstream's printers as its registries use them. Column definitions,
// cells (AGE too: every creation time is minutes or more from a unit's
// boundary) and row conditions must be equal.
func TestTables(t *testing.T) {
	upstream := printerstorage.TableConvertor{TableGenerator: printers.NewTableGenerator().With(printersinternal.AddHandlers)}
	// Times are whole seconds, as once serialized (the unstructured objects
	// hold RFC 3339 strings), taken in the first half of a second: a
	// printer that reads the clock a little later than the other then sees
	// no second's boundary pass ("6m ago" against "6m1s ago").
	now := time.Now()
	if frac := now.Sub(now.Truncate(time.Second)); frac > 500*time.Millisecond {
		time.Sleep(time.Second - frac)
		now = time.Now()
	}
	now = now.Truncate(time.Second)
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

	corpora := []struct {
		kind  schema.GroupVersionKind
		cases map[string]runtime.Object
	}{
		{appsv1.SchemeGroupVersion.WithKind("Deployment"), deploymentTables(ago)},
		{corev1.SchemeGroupVersion.WithKind("Pod"), podTables(ago)},
		{corev1.SchemeGroupVersion.WithKind("Service"), serviceTables(ago)},
		{corev1.SchemeGroupVersion.WithKind("Endpoints"), endpointsTables(ago)},
		{networkingv1.SchemeGroupVersion.WithKind("Ingress"), ingressTables(ago)},
	}
	for _, corpus := range corpora {
		tessera := kubeprinters.ForKind(corpus.kind)
		if tessera == nil {
			t.Fatalf("no table for %s", corpus.kind)
		}
		internalGV := schema.GroupVersion{Group: corpus.kind.Group, Version: runtime.APIVersionInternal}
		// Every object alone, then all in one list.
		list := &unstructured.UnstructuredList{}
		list.SetResourceVersion("42")
		var internalItems []runtime.Object
		for name, obj := range corpus.cases {
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
			if err != nil {
				t.Fatal(err)
			}
			u := unstructured.Unstructured{Object: content}
			u.SetGroupVersionKind(corpus.kind)
			internal, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), internalGV)
			if err != nil {
				t.Fatal(err)
			}
			list.Items = append(list.Items, u)
			internalItems = append(internalItems, internal)
			t.Run(corpus.kind.Kind+"/"+name, func(t *testing.T) {
				compareTables(t, upstream, tessera, internal, &u)
			})
		}
		t.Run(corpus.kind.Kind+"List", func(t *testing.T) {
			internalList, err := legacyscheme.Scheme.New(internalGV.WithKind(corpus.kind.Kind + "List"))
			if err != nil {
				t.Fatal(err)
			}
			if err := meta.SetList(internalList, internalItems); err != nil {
				t.Fatal(err)
			}
			listMeta, err := meta.ListAccessor(internalList)
			if err != nil {
				t.Fatal(err)
			}
			listMeta.SetResourceVersion("42")
			compareTables(t, upstream, tessera, internalList, list)
		})
	}
}

// compareTables compares the table Tessera prints for obj with the table
// kube-apiserver prints for internal, the same object or list.
func compareTables(t *testing.T, upstream, tessera rest.TableConvertor, internal, obj runtime.Object) {
	t.Helper()
	got, err := tessera.ConvertToTable(t.Context(), obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := upstream.ConvertToTable(t.Context(), internal, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.ColumnDefinitions, got.ColumnDefinitions); diff != "" {
		t.Errorf("columns (-kube +tessera):\n%s", diff)
	}
	if diff := cmp.Diff(want.ListMeta, got.ListMeta); diff != "" {
		t.Errorf("list metadata (-kube +tessera):\n%s", diff)
	}
	if len(got.Rows) != len(want.Rows) {
		t.Fatalf("%d rows, kube %d", len(got.Rows), len(want.Rows))
	}
	for i := range want.Rows {
		if diff := cmp.Diff(want.Rows[i].Cells, got.Rows[i].Cells); diff != "" {
			t.Errorf("cells of row %d (-kube +tessera):\n%s", i, diff)
		}
		if diff := cmp.Diff(want.Rows[i].Conditions, got.Rows[i].Conditions); diff != "" {
			t.Errorf("conditions of row %d (-kube +tessera):\n%s", i, diff)
		}
	}
}

type agoFunc func(time.Duration) metav1.Time

func deploymentTables(ago agoFunc) map[string]runtime.Object {
	deployment := func(edit func(*appsv1.Deployment)) *appsv1.Deployment {
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "kuard", Namespace: "default", CreationTimestamp: ago(3 * time.Hour)},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](3),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "kuard"}},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kuard", Image: "gcr.io/kuar-demo/kuard-amd64:blue"}}}},
			},
		}
		edit(d)
		return d
	}
	return map[string]runtime.Object{
		"new": deployment(func(*appsv1.Deployment) {}),
		"partly ready": deployment(func(d *appsv1.Deployment) {
			d.Status = appsv1.DeploymentStatus{Replicas: 3, ReadyReplicas: 1, UpdatedReplicas: 2, AvailableReplicas: 1}
		}),
		"ready": deployment(func(d *appsv1.Deployment) {
			d.Spec.Replicas = ptr.To[int32](1)
			d.Status = appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}
		}),
		"scaled to zero": deployment(func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](0) }),
		"no replicas":    deployment(func(d *appsv1.Deployment) { d.Spec.Replicas = nil }),
		"no selector":    deployment(func(d *appsv1.Deployment) { d.Spec.Selector = nil }),
		"empty selector": deployment(func(d *appsv1.Deployment) { d.Spec.Selector = &metav1.LabelSelector{} }),
		"selector expressions": deployment(func(d *appsv1.Deployment) {
			d.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{
				{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}},
				{Key: "canary", Operator: metav1.LabelSelectorOpDoesNotExist},
			}
		}),
		"invalid selector": deployment(func(d *appsv1.Deployment) {
			d.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}
		}),
		"containers": deployment(func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "log", Image: "fluentd"}, corev1.Container{Name: "noimage"})
		}),
		"no containers": deployment(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers = nil }),
		"no creation time": deployment(func(d *appsv1.Deployment) {
			d.CreationTimestamp = metav1.Time{}
		}),
		"days old": deployment(func(d *appsv1.Deployment) { d.CreationTimestamp = ago(50 * time.Hour) }),
	}
}

func podTables(ago agoFunc) map[string]runtime.Object {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(time.Hour)}}
	waiting := func(reason string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
	}
	terminated := func(reason string, exitCode, signal int32) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: exitCode, Signal: signal, FinishedAt: ago(20 * time.Minute)}}
	}
	// crashed is the last state of a container that restarted.
	crashed := func(finished time.Duration) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, FinishedAt: ago(finished)}}
	}
	status := func(name string, state corev1.ContainerState, ready bool) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: state, Ready: ready}
	}
	restarted := func(s corev1.ContainerStatus, count int32, last corev1.ContainerState) corev1.ContainerStatus {
		s.RestartCount, s.LastTerminationState = count, last
		return s
	}
	condition := func(t corev1.PodConditionType, s corev1.ConditionStatus, reason string) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: s, Reason: reason}
	}
	always := ptr.To(corev1.ContainerRestartPolicyAlways)
	pod := func(edit func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "web-7d9c", Namespace: "default", CreationTimestamp: ago(2 * time.Hour)},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}, {Name: "log", Image: "fluentd"}}},
			Status:     corev1.PodStatus{Phase: corev1.PodPending},
		}
		edit(p)
		return p
	}
	runningPod := func(edit func(*corev1.Pod)) *corev1.Pod {
		return pod(func(p *corev1.Pod) {
			p.Spec.NodeName = "node-1"
			p.Status = corev1.PodStatus{
				Phase:  corev1.PodRunning,
				PodIP:  "10.0.0.7",
				PodIPs: []corev1.PodIP{{IP: "10.0.0.7"}, {IP: "fd00::7"}},
				Conditions: []corev1.PodCondition{
					condition(corev1.PodInitialized, corev1.ConditionTrue, ""),
					condition(corev1.PodReady, corev1.ConditionTrue, ""),
				},
				ContainerStatuses: []corev1.ContainerStatus{status("web", running, true), status("log", running, true)},
			}
			edit(p)
		})
	}
	// initPod has two init containers, init-a and init-b, with statuses.
	initPod := func(a, b corev1.ContainerStatus) *corev1.Pod {
		return pod(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init-a", Image: "busybox"}, {Name: "init-b", Image: "busybox"}}
			p.Status.Conditions = []corev1.PodCondition{condition(corev1.PodInitialized, corev1.ConditionFalse, "ContainersNotInitialized")}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{a, b}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{status("web", waiting("PodInitializing"), false), status("log", waiting("PodInitializing"), false)}
		})
	}
	done := status("init-a", terminated("Completed", 0, 0), false)

	return map[string]runtime.Object{
		"pending":          pod(func(*corev1.Pod) {}),
		"no phase":         pod(func(p *corev1.Pod) { p.Status = corev1.PodStatus{} }),
		"no creation time": pod(func(p *corev1.Pod) { p.CreationTimestamp = metav1.Time{} }),
		"nominated":        pod(func(p *corev1.Pod) { p.Status.NominatedNodeName = "node-2" }),
		"unschedulable": pod(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{condition(corev1.PodScheduled, corev1.ConditionFalse, "Unschedulable")}
		}),
		"scheduling gated": pod(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{condition(corev1.PodScheduled, corev1.ConditionFalse, "SchedulingGated")}
		}),
		"container creating": pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{status("web", waiting("ContainerCreating"), false), status("log", waiting(""), false)}
		}),
		"image pull backoff": pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{status("web", waiting("ImagePullBackOff"), false), status("log", running, true)}
		}),
		"running":                runningPod(func(*corev1.Pod) {}),
		"running, IP in podIPs":  runningPod(func(p *corev1.Pod) { p.Status.PodIP = "" }),
		"running, no pod IPs":    runningPod(func(p *corev1.Pod) { p.Status.PodIPs = nil }),
		"running, one not ready": runningPod(func(p *corev1.Pod) { p.Status.ContainerStatuses[1].Ready = false }),
		"readiness gates": runningPod(func(p *corev1.Pod) {
			p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "lb.example.com/ready"}, {ConditionType: "dns.example.com/ready"}, {ConditionType: "missing"}}
			p.Status.Conditions = append(p.Status.Conditions,
				condition("lb.example.com/ready", corev1.ConditionTrue, ""),
				condition("dns.example.com/ready", corev1.ConditionFalse, ""),
				condition("dns.example.com/ready", corev1.ConditionTrue, ""))
		}),
		"crash loop": runningPod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0] = restarted(status("web", waiting("CrashLoopBackOff"), false), 5, crashed(90*time.Second))
		}),
		"restarts, both containers": runningPod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0] = restarted(p.Status.ContainerStatuses[0], 2, crashed(3*time.Hour))
			p.Status.ContainerStatuses[1] = restarted(p.Status.ContainerStatuses[1], 1, crashed(10*time.Minute))
		}),
		"restarts, no last state": runningPod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].RestartCount = 4
		}),
		"oom killed": runningPod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses[1] = restarted(status("log", terminated("OOMKilled", 137, 0), false), 1, crashed(5*time.Minute))
		}),
		"terminated by signal": runningPod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses[1] = status("log", terminated("", 137, 9), false)
		}),
		"terminated with exit code": runningPod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses[1] = status("log", terminated("", 3, 0), false)
		}),
		"completed container, others ready": runningPod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0] = status("web", terminated("Completed", 0, 0), false)
		}),
		"completed container, not ready": runningPod(func(p *corev1.Pod) {
			p.Status.Conditions = p.Status.Conditions[:1]
			p.Status.ContainerStatuses[0] = status("web", terminated("Completed", 0, 0), false)
		}),
		"completed container, another failed": runningPod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				status("web", terminated("Completed", 0, 0), false),
				status("log", terminated("Error", 2, 0), false),
				status("sidecar", terminated("Completed", 0, 0), false),
			}
		}),
		"succeeded": pod(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodSucceeded
			p.Status.ContainerStatuses = []corev1.ContainerStatus{status("web", terminated("Completed", 0, 0), false), status("log", terminated("Completed", 0, 0), false)}
		}),
		"failed": pod(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.ContainerStatuses = []corev1.ContainerStatus{status("web", terminated("Error", 1, 0), false), status("log", terminated("Completed", 0, 0), false)}
		}),
		"evicted": pod(func(p *corev1.Pod) {
			p.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory."}
		}),
		"terminating": runningPod(func(p *corev1.Pod) {
			p.DeletionTimestamp = ptr.To(ago(time.Minute))
		}),
		"terminating, succeeded": pod(func(p *corev1.Pod) {
			p.DeletionTimestamp = ptr.To(ago(time.Minute))
			p.Status.Phase = corev1.PodSucceeded
		}),
		"terminating, node lost": runningPod(func(p *corev1.Pod) {
			p.DeletionTimestamp = ptr.To(ago(time.Minute))
			p.Status.Reason = "NodeLost"
		}),
		"node lost, not deleted": runningPod(func(p *corev1.Pod) { p.Status.Reason = "NodeLost" }),
		"init: first waits":      initPod(status("init-a", waiting("PodInitializing"), false), status("init-b", waiting("PodInitializing"), false)),
		"init: first runs":       initPod(status("init-a", running, false), status("init-b", waiting(""), false)),
		"init: second runs":      initPod(done, status("init-b", running, false)),
		"init: all done":         initPod(done, status("init-b", terminated("Completed", 0, 0), false)),
		"init: crash loop":       initPod(done, restarted(status("init-b", waiting("CrashLoopBackOff"), false), 3, crashed(45*time.Second))),
		"init: error":            initPod(restarted(status("init-a", terminated("Error", 1, 0), false), 1, crashed(time.Hour)), status("init-b", waiting(""), false)),
		"init: exit code":        initPod(status("init-a", terminated("", 2, 0), false), status("init-b", waiting(""), false)),
		"init: signal":           initPod(status("init-a", terminated("", 137, 9), false), status("init-b", waiting(""), false)),
		"init: image pull":       initPod(done, status("init-b", waiting("ErrImagePull"), false)),
		"init: restarts before":  initPod(restarted(done, 2, crashed(30*time.Minute)), status("init-b", running, false)),
		"init: initialized, containers run": pod(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init-a"}}
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{condition(corev1.PodInitialized, corev1.ConditionTrue, ""), condition(corev1.PodReady, corev1.ConditionTrue, "")}
			// The init container's status went back to waiting after
			// the node restarted; the pod stays initialized.
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{restarted(status("init-a", waiting("PodInitializing"), false), 1, crashed(4*time.Hour))}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{restarted(status("web", running, true), 2, crashed(time.Hour)), status("log", running, true)}
		}),
		"sidecar started": pod(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init-a"}, {Name: "proxy", RestartPolicy: always}, {Name: "init-c"}}
			p.Status.Phase = corev1.PodPending
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{
				done,
				restarted(corev1.ContainerStatus{Name: "proxy", State: running, Ready: true, Started: ptr.To(true)}, 2, crashed(6*time.Minute)),
				status("init-c", running, false),
			}
		}),
		"sidecar not started": pod(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: always}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "proxy", State: running, Started: ptr.To(false)}}
		}),
		"sidecar and containers running": runningPod(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init-a"}, {Name: "proxy", RestartPolicy: always}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{
				restarted(done, 1, crashed(5*time.Hour)),
				restarted(corev1.ContainerStatus{Name: "proxy", State: running, Ready: true, Started: ptr.To(true)}, 3, crashed(7*time.Minute)),
			}
			p.Status.ContainerStatuses[0] = restarted(p.Status.ContainerStatuses[0], 1, crashed(2*time.Hour))
		}),
	}
}

func serviceTables(ago agoFunc) map[string]runtime.Object {
	service := func(t corev1.ServiceType, edit func(*corev1.Service)) *corev1.Service {
		s := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", CreationTimestamp: ago(26 * time.Hour)},
			Spec: corev1.ServiceSpec{
				Type:       t,
				ClusterIP:  "10.96.0.10",
				ClusterIPs: []string{"10.96.0.10"},
				Ports:      []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}},
				Selector:   map[string]string{"app": "web", "tier": "front"},
			},
		}
		edit(s)
		return s
	}
	nodePorts := func(s *corev1.Service) {
		s.Spec.Ports = []corev1.ServicePort{
			{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP},
			{Name: "dns", Port: 53, NodePort: 30053, Protocol: corev1.ProtocolUDP},
			{Name: "sctp", Port: 9000, Protocol: corev1.ProtocolSCTP},
		}
	}
	lbIngress := []corev1.LoadBalancerIngress{
		{IP: "203.0.113.9"}, {Hostname: "web.lb.example.com"}, {IP: "198.51.100.4", Hostname: "ignored.example.com"}, {IP: "203.0.113.9"}, {},
	}
	return map[string]runtime.Object{
		"cluster IP":                           service(corev1.ServiceTypeClusterIP, func(*corev1.Service) {}),
		"cluster IP, no selector":              service(corev1.ServiceTypeClusterIP, func(s *corev1.Service) { s.Spec.Selector = nil }),
		"cluster IP, external IPs":             service(corev1.ServiceTypeClusterIP, func(s *corev1.Service) { s.Spec.ExternalIPs = []string{"192.0.2.1", "192.0.2.2"} }),
		"cluster IP, only clusterIP":           service(corev1.ServiceTypeClusterIP, func(s *corev1.Service) { s.Spec.ClusterIPs = nil }),
		"dual stack":                           service(corev1.ServiceTypeClusterIP, func(s *corev1.Service) { s.Spec.ClusterIPs = []string{"fd00::10", "10.96.0.10"} }),
		"headless":                             service(corev1.ServiceTypeClusterIP, func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"} }),
		"no ports":                             service(corev1.ServiceTypeClusterIP, func(s *corev1.Service) { s.Spec.Ports = nil }),
		"no type":                              service("", func(*corev1.Service) {}),
		"node port":                            service(corev1.ServiceTypeNodePort, nodePorts),
		"node port, external IPs":              service(corev1.ServiceTypeNodePort, func(s *corev1.Service) { nodePorts(s); s.Spec.ExternalIPs = []string{"192.0.2.1"} }),
		"load balancer, pending":               service(corev1.ServiceTypeLoadBalancer, nodePorts),
		"load balancer, pending, external IPs": service(corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) { s.Spec.ExternalIPs = []string{"192.0.2.1"} }),
		"load balancer": service(corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) {
			nodePorts(s)
			s.Status.LoadBalancer.Ingress = lbIngress
		}),
		"load balancer, external IPs": service(corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) {
			s.Status.LoadBalancer.Ingress = lbIngress
			s.Spec.ExternalIPs = []string{"192.0.2.1", "192.0.2.2"}
		}),
		"load balancer, empty ingress": service(corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) {
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{}}
		}),
		"external name": service(corev1.ServiceTypeExternalName, func(s *corev1.Service) {
			s.Spec.ExternalName, s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.Selector = "db.example.com", "", nil, nil
		}),
		"unknown type": service("Mesh", func(*corev1.Service) {}),
	}
}

func endpointsTables(ago agoFunc) map[string]runtime.Object {
	endpoints := func(subsets ...corev1.EndpointSubset) *corev1.Endpoints {
		return &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", CreationTimestamp: ago(10 * time.Minute)}, Subsets: subsets}
	}
	addresses := func(n int, format string) []corev1.EndpointAddress {
		var out []corev1.EndpointAddress
		for i := range n {
			out = append(out, corev1.EndpointAddress{IP: fmt.Sprintf(format, i+1)})
		}
		return out
	}
	ports := func(numbers ...int32) []corev1.EndpointPort {
		var out []corev1.EndpointPort
		for _, n := range numbers {
			out = append(out, corev1.EndpointPort{Name: fmt.Sprint("p", n), Port: n, Protocol: corev1.ProtocolTCP})
		}
		return out
	}
	return map[string]runtime.Object{
		"no subsets":             endpoints(),
		"one address":            endpoints(corev1.EndpointSubset{Addresses: addresses(1, "10.0.0.%d"), Ports: ports(8080)}),
		"three addresses":        endpoints(corev1.EndpointSubset{Addresses: addresses(3, "10.0.0.%d"), Ports: ports(8080)}),
		"many addresses":         endpoints(corev1.EndpointSubset{Addresses: addresses(12, "10.0.0.%d"), Ports: ports(8080)}),
		"two ports":              endpoints(corev1.EndpointSubset{Addresses: addresses(2, "10.0.0.%d"), Ports: ports(80, 443)}),
		"headless":               endpoints(corev1.EndpointSubset{Addresses: addresses(2, "10.0.0.%d")}),
		"headless, many":         endpoints(corev1.EndpointSubset{Addresses: addresses(5, "10.0.0.%d")}),
		"IPv6":                   endpoints(corev1.EndpointSubset{Addresses: addresses(2, "fd00::%d"), Ports: ports(8080)}),
		"ports, no addresses":    endpoints(corev1.EndpointSubset{NotReadyAddresses: addresses(2, "10.0.0.%d"), Ports: ports(8080)}),
		"several subsets":        endpoints(corev1.EndpointSubset{Addresses: addresses(1, "10.0.1.%d"), Ports: ports(80)}, corev1.EndpointSubset{Addresses: addresses(1, "10.0.2.%d")}, corev1.EndpointSubset{Addresses: addresses(3, "10.0.3.%d"), Ports: ports(81, 82)}),
		"several subsets, fewer": endpoints(corev1.EndpointSubset{Addresses: addresses(1, "10.0.1.%d"), Ports: ports(80)}, corev1.EndpointSubset{Addresses: addresses(2, "10.0.2.%d")}),
	}
}

func ingressTables(ago agoFunc) map[string]runtime.Object {
	ingress := func(edit func(*networkingv1.Ingress)) *networkingv1.Ingress {
		i := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", CreationTimestamp: ago(4 * 24 * time.Hour)}}
		edit(i)
		return i
	}
	rules := func(hosts ...string) []networkingv1.IngressRule {
		var out []networkingv1.IngressRule
		for _, h := range hosts {
			out = append(out, networkingv1.IngressRule{Host: h})
		}
		return out
	}
	return map[string]runtime.Object{
		"default backend only": ingress(func(i *networkingv1.Ingress) {
			i.Spec.DefaultBackend = &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}
		}),
		"class and hosts": ingress(func(i *networkingv1.Ingress) {
			i.Spec.IngressClassName = ptr.To("nginx")
			i.Spec.Rules = rules("a.example.com", "b.example.com")
		}),
		"rule without host": ingress(func(i *networkingv1.Ingress) { i.Spec.Rules = rules("") }),
		"many hosts": ingress(func(i *networkingv1.Ingress) {
			i.Spec.Rules = rules("a.example.com", "b.example.com", "c.example.com", "d.example.com", "e.example.com")
		}),
		"many rules, some without host": ingress(func(i *networkingv1.Ingress) {
			i.Spec.Rules = rules("", "a.example.com", "", "b.example.com", "c.example.com", "", "d.example.com")
		}),
		"three hosts, then empty": ingress(func(i *networkingv1.Ingress) {
			i.Spec.Rules = rules("a.example.com", "b.example.com", "c.example.com", "")
		}),
		"hosts after empty ones": ingress(func(i *networkingv1.Ingress) { i.Spec.Rules = rules("", "", "", "a.example.com") }),
		"TLS": ingress(func(i *networkingv1.Ingress) {
			i.Spec.Rules = rules("a.example.com")
			i.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"a.example.com"}, SecretName: "tls"}}
		}),
		"addresses": ingress(func(i *networkingv1.Ingress) {
			i.Spec.IngressClassName = ptr.To("")
			i.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{
				{IP: "203.0.113.9"}, {Hostname: "lb.example.com"}, {IP: "198.51.100.4", Hostname: "x.example.com"}, {IP: "203.0.113.9"}, {},
			}
		}),
		"long address": ingress(func(i *networkingv1.Ingress) {
			i.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{Hostname: strings.Repeat("a", 40) + ".elb.amazonaws.com"}}
		}),
	}
}
