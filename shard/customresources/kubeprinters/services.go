package kubeprinters

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// shownAtMost is how many endpoints or hosts a cell lists before it says
// how many more there are.
const shownAtMost = 3

// servicesTable prints services as NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE,
// and with -o wide also SELECTOR.
func servicesTable() printers.TableConvertor[*corev1.Service] {
	spec := corev1.ServiceSpec{}.SwaggerDoc()
	return printers.TableConvertor[*corev1.Service]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			{Name: "Type", Type: "string", Description: spec["type"]},
			{Name: "Cluster-IP", Type: "string", Description: spec["clusterIP"]},
			{Name: "External-IP", Type: "string", Description: spec["externalIPs"]},
			{Name: "Port(s)", Type: "string", Description: spec["ports"]},
			printers.AgeColumn(),
			{Name: "Selector", Type: "string", Priority: 1, Description: spec["selector"]},
		},
		Cells: serviceCells,
	}
}

func serviceCells(svc *corev1.Service) []interface{} {
	clusterIP := "<none>"
	if len(svc.Spec.ClusterIPs) > 0 {
		clusterIP = svc.Spec.ClusterIPs[0]
	}
	ports := make([]string, len(svc.Spec.Ports))
	for i, p := range svc.Spec.Ports {
		ports[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort > 0 {
			ports[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
	}
	return []interface{}{
		svc.Name,
		string(svc.Spec.Type),
		clusterIP,
		externalIP(svc),
		printers.OrNone(strings.Join(ports, ",")),
		printers.Age(svc.CreationTimestamp),
		labels.FormatLabels(svc.Spec.Selector),
	}
}

// externalIP is the EXTERNAL-IP of a service: its external IPs, for a load
// balancer after the load balancer's addresses ("<pending>" while it has
// none), or the external name.
func externalIP(svc *corev1.Service) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) == 0 {
			return "<none>"
		}
		return strings.Join(svc.Spec.ExternalIPs, ",")
	case corev1.ServiceTypeLoadBalancer:
		var addresses []string
		for _, in := range svc.Status.LoadBalancer.Ingress {
			addresses = appendAddress(addresses, in.IP, in.Hostname)
		}
		all := append(sortedUnique(addresses), svc.Spec.ExternalIPs...)
		if len(all) == 0 {
			return "<pending>"
		}
		return strings.Join(all, ",")
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

// endpointsTable prints endpoints as NAME ENDPOINTS AGE, ENDPOINTS listing the
// first addresses with their ports.
func endpointsTable() printers.TableConvertor[*corev1.Endpoints] {
	return printers.TableConvertor[*corev1.Endpoints]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			{Name: "Endpoints", Type: "string", Description: corev1.Endpoints{}.SwaggerDoc()["subsets"]},
			printers.AgeColumn(),
		},
		Cells: func(ep *corev1.Endpoints) []interface{} {
			return []interface{}{ep.Name, endpointsCell(ep), printers.Age(ep.CreationTimestamp)}
		},
	}
}

// endpointsCell lists the first addresses of ep, host:port for each port
// of a subset (just the IP in a subset without ports), and how many more
// there are.
func endpointsCell(ep *corev1.Endpoints) string {
	if len(ep.Subsets) == 0 {
		return "<none>"
	}
	var shown []string
	count := 0
	add := func(address string) {
		count++
		if len(shown) < shownAtMost {
			shown = append(shown, address)
		}
	}
	for _, subset := range ep.Subsets {
		for _, a := range subset.Addresses {
			if len(subset.Ports) == 0 {
				add(a.IP)
			}
		}
		for _, p := range subset.Ports {
			for _, a := range subset.Addresses {
				add(net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	return withMore(shown, count-len(shown))
}

// ingressesTable prints ingresses as NAME CLASS HOSTS ADDRESS PORTS AGE.
func ingressesTable() printers.TableConvertor[*networkingv1.Ingress] {
	return printers.TableConvertor[*networkingv1.Ingress]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			{Name: "Class", Type: "string", Description: "The name of the IngressClass resource that should be used for additional configuration"},
			{Name: "Hosts", Type: "string", Description: "Hosts that incoming requests are matched against before the ingress rule"},
			{Name: "Address", Type: "string", Description: "Address is a list containing ingress points for the load-balancer"},
			{Name: "Ports", Type: "string", Description: "Ports of TLS configurations that open"},
			printers.AgeColumn(),
		},
		Cells: ingressCells,
	}
}

func ingressCells(ing *networkingv1.Ingress) []interface{} {
	class := "<none>"
	if ing.Spec.IngressClassName != nil {
		class = *ing.Spec.IngressClassName
	}
	var addresses []string
	for _, in := range ing.Status.LoadBalancer.Ingress {
		addresses = appendAddress(addresses, in.IP, in.Hostname)
	}
	ports := "80"
	if len(ing.Spec.TLS) > 0 {
		ports = "80, 443"
	}
	return []interface{}{
		ing.Name,
		class,
		ingressHosts(ing.Spec.Rules),
		strings.Join(sortedUnique(addresses), ","),
		ports,
		printers.Age(ing.CreationTimestamp),
	}
}

// ingressHosts lists the first hosts the rules name, and how many rules
// more there are after them, or "*" when they name none.
func ingressHosts(rules []networkingv1.IngressRule) string {
	var hosts []string
	more := 0
	for _, rule := range rules {
		if len(hosts) == shownAtMost {
			more = len(rules) - shownAtMost
			break
		}
		if rule.Host != "" {
			hosts = append(hosts, rule.Host)
		}
	}
	if len(hosts) == 0 {
		return "*"
	}
	return withMore(hosts, more)
}

// withMore joins shown with commas and says how many more were not shown.
func withMore(shown []string, more int) string {
	s := strings.Join(shown, ",")
	if more > 0 {
		return fmt.Sprintf("%s + %d more...", s, more)
	}
	return s
}

// appendAddress appends the address of a load balancer's ingress point,
// its IP or else its host name, to addresses when it has one.
func appendAddress(addresses []string, ip, hostname string) []string {
	switch {
	case ip != "":
		return append(addresses, ip)
	case hostname != "":
		return append(addresses, hostname)
	}
	return addresses
}

// sortedUnique sorts s and drops its duplicates.
func sortedUnique(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}
