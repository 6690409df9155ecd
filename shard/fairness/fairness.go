// Package fairness shares a shard fairly between its tenants with
// k8s.io/apiserver's API Priority and Fairness.
//
// APF is configured for the whole shard by the FlowSchemas and
// PriorityLevelConfigurations of the system:admin logical cluster, read by
// one upstream controller over one informer per resource. The shard
// creates a default configuration there at start (Defaults): shard admins
// and the shard's own controllers (system:masters) and health probes are
// exempt; everyone else shares the priority level "tenants", with one flow
// per logical cluster and user.
//
// Upstream distinguishes flows by user name (ByUser) or namespace, neither
// of which knows logical clusters. So the shard hands APF a request digest
// whose user is named <cluster>|<user> for requests to a logical cluster:
// the same user in two clusters is two flows, and a noisy cluster queues
// behind its own flows, not everyone's. FlowSchema subjects of kind User
// and ServiceAccount therefore match <cluster>|<name>; groups match as
// they are. Exempt users (system:masters) keep their names.
package fairness

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/server/mux"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	fq "k8s.io/apiserver/pkg/util/flowcontrol/fairqueuing"
	fcrequest "k8s.io/apiserver/pkg/util/flowcontrol/request"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/shardadmin"
	"github.com/tessera-dev/tessera/shard/registry/flowcontrol"
)

// Separator joins a logical cluster and a user name in the names APF sees.
const Separator = "|"

// Fairness is the shard's APF: the upstream controller behind a digest
// that names users by cluster.
type Fairness struct {
	utilflowcontrol.Interface
	informers kubeinformers.SharedInformerFactory
	client    kubernetes.Interface
	listCount ListCounter
}

// ListCounter returns how many objects of a resource a logical cluster
// holds, if it knows (large counts only: smaller lists cost one seat).
type ListCounter func(cluster logicalcluster.Name, group, resource string) (int64, bool)

// SetListCounter makes list requests cost seats by the objects of their
// own logical cluster. Upstream's estimate reads one count per resource
// for the whole shard, which either overcharges small tenants for a big
// one or, as here where it has no counts, charges every list one seat.
func (f *Fairness) SetListCounter(c ListCounter) { f.listCount = c }

// New returns APF for the shard whose admin loopback config is loopback,
// limiting the shard to serverConcurrencyLimit concurrent requests (seats).
func New(loopback *rest.Config, serverConcurrencyLimit int) (*Fairness, error) {
	cfg, err := clusters.ConfigFor(loopback, flowcontrol.ConfigCluster)
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	rest.AddUserAgent(cfg, "tessera-priority-and-fairness")
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("priority and fairness client: %w", err)
	}
	// One cluster: client-go's informers, keyed namespace/name, are right.
	f := kubeinformers.NewSharedInformerFactory(client, 0)
	return &Fairness{
		Interface: utilflowcontrol.New(f, client.FlowcontrolV1(), serverConcurrencyLimit),
		informers: f,
		client:    client,
	}, nil
}

// Run ensures the default configuration, starts the informers and runs
// the upstream controller until stopCh is closed.
func (f *Fairness) Run(stopCh <-chan struct{}) error {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-stopCh
		cancel()
	}()
	go ensureDefaults(ctx, f.client)
	f.informers.Start(stopCh)
	return f.Interface.Run(stopCh)
}

// Install installs upstream's debugging endpoints.
func (f *Fairness) Install(c *mux.PathRecorderMux) { f.Interface.Install(c) }

// Handle classifies and queues a request with its user named by cluster.
func (f *Fairness) Handle(ctx context.Context, digest utilflowcontrol.RequestDigest,
	noteFn func(fs *flowcontrolv1.FlowSchema, pl *flowcontrolv1.PriorityLevelConfiguration, flowDistinguisher string),
	workEstimator func() fcrequest.WorkEstimate, queueNoteFn fq.QueueNoteFn, execFn func()) {
	if f.listCount != nil {
		workEstimator = f.listEstimator(ctx, digest, workEstimator)
	}
	f.Interface.Handle(ctx, ClusterDigest(ctx, digest), noteFn, workEstimator, queueNoteFn, execFn)
}

// Seats of a list, as upstream's estimator counts them from the objects
// it reads: one per objectsPerSeat objects, at most maxListSeats.
const (
	objectsPerSeat = 100
	maxListSeats   = 10
	// readCostPerObject is roughly what serving one object of a list
	// costs the shard in CPU (encoding and garbage collection; a list of
	// 5,000 ConfigMaps takes ~50 ms of a core). A list or watch set-up of
	// more than objectsPerSeat objects keeps its seats that much longer
	// after it is done, so that a tenant's heavy reads use at most about
	// half of the CPU its level's seats stand for: APF bounds concurrency,
	// and one heavy list at a time is a whole core on a small machine.
	readCostPerObject = 10 * time.Microsecond
)

// listEstimator charges a list in one logical cluster by that cluster's
// objects of the resource.
func (f *Fairness) listEstimator(ctx context.Context, digest utilflowcontrol.RequestDigest, upstream func() fcrequest.WorkEstimate) func() fcrequest.WorkEstimate {
	ri := digest.RequestInfo
	c, ok := logicalcluster.ClusterFrom(ctx)
	if ri == nil || !ri.IsResourceRequest || ri.Name != "" || !ok || c.Wildcard {
		return upstream
	}
	switch ri.Verb {
	case "list":
	case "watch":
		// A watch that starts with the current objects (no
		// resourceVersion, "0", or sendInitialEvents) costs what a list
		// does while it is set up; others keep upstream's estimate.
		if !initialEvents(ctx) {
			return upstream
		}
	default:
		return upstream
	}
	return func() fcrequest.WorkEstimate {
		w := upstream()
		n, ok := f.listCount(c.Name, ri.APIGroup, ri.Resource)
		if !ok {
			return w
		}
		seats := uint64((n + objectsPerSeat - 1) / objectsPerSeat)
		w.InitialSeats = min(max(seats, w.InitialSeats, 1), maxListSeats)
		if n > objectsPerSeat {
			w.FinalSeats = w.InitialSeats
			w.AdditionalLatency = max(w.AdditionalLatency, time.Duration(n)*readCostPerObject)
		}
		return w
	}
}

// ClusterDigest returns digest with its user named <cluster>|<user> for a
// request to one logical cluster by someone not in system:masters.
func ClusterDigest(ctx context.Context, digest utilflowcontrol.RequestDigest) utilflowcontrol.RequestDigest {
	c, ok := logicalcluster.ClusterFrom(ctx)
	if !ok || c.Wildcard || c.Name.Empty() || digest.User == nil || shardadmin.Is(digest.User) {
		return digest
	}
	digest.User = clusterUser{Info: digest.User, name: string(c.Name) + Separator + digest.User.GetName()}
	return digest
}

// clusterUser is a user named by cluster for APF.
type clusterUser struct {
	user.Info
	name string
}

func (u clusterUser) GetName() string { return u.name }

// initialEventsKey holds, in a watch request's context, whether the watch
// starts with the current objects.
type initialEventsKey struct{}

// WithWatchShape records in the context of a watch request whether it
// starts with the current objects, for the work estimate of Handle, which
// sees the request's context but not its query. Install it outside the
// generic handler chain.
func WithWatchShape(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.RawQuery, "watch") || strings.Contains(r.URL.Path, "/watch/") {
			q := r.URL.Query()
			rv := q.Get("resourceVersion")
			initial := rv == "" || rv == "0" || q.Get("sendInitialEvents") == "true"
			r = r.WithContext(context.WithValue(r.Context(), initialEventsKey{}, initial))
		}
		next.ServeHTTP(w, r)
	})
}

// initialEvents tells whether the watch request of ctx starts with the
// current objects; true when unknown.
func initialEvents(ctx context.Context) bool {
	v, ok := ctx.Value(initialEventsKey{}).(bool)
	return !ok || v
}
