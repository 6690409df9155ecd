package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// HomePrefix is where home workspaces live.
var HomePrefix = logicalcluster.NewPath("root:users")

// HomeWorkspaceName is the name that stands for the caller's home: the
// workspace ~ in any workspace, and the path ~.
const HomeWorkspaceName = "~"

// homeReadyTimeout bounds how long a request waits for a home workspace
// that is being created.
const homeReadyTimeout = 30 * time.Second

// homeWorkspacePathRE matches a GET of the virtual Workspace ~.
var homeWorkspacePathRE = regexp.MustCompile(`^/clusters/[^/]+/apis/tenancy\.kcp\.io/v1alpha1/workspaces/~$`)

// HomePath returns the path of the home workspace of userName:
// prefix:<bucket>(:<bucket>)*:<name>. The buckets are derived from a hash of
// the user name, levels buckets of size characters each (a letter, then
// letters or digits), so that no bucket holds too many children.
func HomePath(prefix logicalcluster.Path, userName string, levels, size int) logicalcluster.Path {
	sum := sha256.Sum256([]byte(userName))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	const alnum = letters + "0123456789"
	p := prefix
	for l := 0; l < levels; l++ {
		b := make([]byte, size)
		for i := range b {
			v := sum[(l*size+i)%len(sum)]
			if i == 0 {
				b[i] = letters[int(v)%len(letters)]
			} else {
				b[i] = alnum[int(v)%len(alnum)]
			}
		}
		p = p.Join(string(b))
	}
	return p.Join(HomeName(userName))
}

var workspaceNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// HomeName turns a user name into a workspace name: itself when it is one,
// otherwise a cleaned-up form with a hash suffix, so different users never
// share a home.
func HomeName(userName string) string {
	if len(userName) <= 63 && workspaceNameRE.MatchString(userName) {
		return userName
	}
	var b strings.Builder
	for _, r := range strings.ToLower(userName) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	clean := strings.Trim(b.String(), "-")
	if len(clean) > 45 {
		clean = strings.Trim(clean[:45], "-")
	}
	sum := sha256.Sum256([]byte(userName))
	if clean == "" {
		return "u-" + hex.EncodeToString(sum[:])[:12]
	}
	return clean + "-" + hex.EncodeToString(sum[:])[:12]
}

// withHome serves the home workspace: GET .../workspaces/~ in any
// workspace returns the caller's home Workspace, and /clusters/~ (or
// /clusters/~:child) addresses it. The home is created on first use, for
// members of the home creator groups. These requests are authenticated
// here, before the cluster filter, because the path depends on the user.
func (s *Server) withHome(handler http.Handler) http.Handler {
	o := s.Options
	if !o.EnableHomeWorkspaces {
		return handler
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p := req.URL.Path
		isPath := p == "/clusters/~" || strings.HasPrefix(p, "/clusters/~/") || strings.HasPrefix(p, "/clusters/~:")
		isObject := homeWorkspacePathRE.MatchString(p) && (req.Method == http.MethodGet || req.Method == http.MethodHead)
		if !isPath && !isObject {
			handler.ServeHTTP(w, req)
			return
		}
		fail := func(err error) {
			responsewriters.ErrorNegotiated(err, s.Codecs, schema.GroupVersion{Version: "v1"}, w, req)
		}
		for h := range req.Header {
			if strings.HasPrefix(strings.ToLower(h), "impersonate-") {
				fail(apierrors.NewBadRequest("the home workspace ~ cannot be used with impersonation: use its full path"))
				return
			}
		}
		// Authenticators may strip credentials from the request they see:
		// give them a copy, the chain authenticates the request again.
		resp, ok, err := s.Generic.Authentication.Authenticator.AuthenticateRequest(req.Clone(req.Context()))
		if err != nil || !ok {
			fail(apierrors.NewUnauthorized("Unauthorized"))
			return
		}
		u := resp.User
		if !slices.ContainsFunc(u.GetGroups(), func(g string) bool { return slices.Contains(o.HomeCreatorGroups, g) }) {
			fail(apierrors.NewForbidden(tenancyv1alpha1.Resource("workspaces"), HomeWorkspaceName,
				fmt.Errorf("user %q has no home workspace: home workspaces are for members of %v", u.GetName(), o.HomeCreatorGroups)))
			return
		}
		ctx, cancel := context.WithTimeout(req.Context(), homeReadyTimeout)
		defer cancel()
		home, err := s.ensureHome(ctx, u)
		if err != nil {
			if ctx.Err() != nil {
				w.Header().Set("Retry-After", "1")
				fail(apierrors.NewTooManyRequests(fmt.Sprintf("the home workspace of %q is being created, try again", u.GetName()), 1))
				return
			}
			fail(err)
			return
		}
		if isObject {
			home = home.DeepCopy()
			home.APIVersion, home.Kind = tenancyv1alpha1.SchemeGroupVersion.String(), "Workspace"
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(home)
			return
		}
		path := HomePath(HomePrefix, u.GetName(), o.HomeWorkspacesBucketLevels, o.HomeWorkspacesBucketSize).String()
		r := req.Clone(req.Context())
		r.URL.Path = "/clusters/" + path + strings.TrimPrefix(p, "/clusters/~")
		r.URL.RawPath = ""
		r.RequestURI = r.URL.RequestURI()
		handler.ServeHTTP(w, r)
	})
}

// ensureHome returns the Ready home Workspace of u, creating it and its
// parents (root:users of type homeroot, buckets of type homebucket) as
// needed.
func (s *Server) ensureHome(ctx context.Context, u user.Info) (*tenancyv1alpha1.Workspace, error) {
	o := s.Options
	home := HomePath(HomePrefix, u.GetName(), o.HomeWorkspacesBucketLevels, o.HomeWorkspacesBucketSize)
	// The segments below root, with the type of each.
	segs := strings.Split(home.String(), ":")[1:]
	// Root lives on the root shard; each Workspace names the shard of
	// its logical cluster.
	parent, parentShard := logicalcluster.Root, "root"
	var ws *tenancyv1alpha1.Workspace
	for i, seg := range segs {
		typ := tenancyv1alpha1.HomeBucketWorkspaceTypeName
		switch {
		case i == 0:
			typ = tenancyv1alpha1.HomeRootWorkspaceTypeName
		case i == len(segs)-1:
			typ = tenancyv1alpha1.HomeWorkspaceTypeName
		}
		var err error
		if st, err := s.clusterState(parent); err == nil && st.Exists {
			ws, err = s.ensureWorkspace(ctx, parent, seg, typ, i == len(segs)-1, u)
		} else {
			ws, err = s.ensureRemoteWorkspace(ctx, parentShard, parent, seg, typ, i == len(segs)-1, u)
		}
		if err != nil {
			return nil, err
		}
		parent, parentShard = logicalcluster.Name(ws.Spec.Cluster), ws.Annotations[tenancyv1alpha1.WorkspaceShardAnnotationKey]
	}
	return ws, nil
}

// ensureWorkspace creates the Workspace name of type typ in parent unless
// it exists, and waits until it is Ready. The home itself is owned by u.
func (s *Server) ensureWorkspace(ctx context.Context, parent logicalcluster.Name, name string, typ tenancyv1alpha1.WorkspaceTypeName, owned bool, u user.Info) (*tenancyv1alpha1.Workspace, error) {
	lister := s.Informers.Workspaces().Lister().Cluster(parent)
	ws, err := lister.Get(name)
	if err == nil && ws.Status.Phase == corev1alpha1.LogicalClusterPhaseReady {
		return ws, nil
	}
	client, cerr := s.kcpClients.For(parent)
	if cerr != nil {
		return nil, cerr
	}
	if apierrors.IsNotFound(err) {
		if err := createHomeWorkspace(ctx, client, parent, name, typ, owned, u); err != nil {
			return nil, err
		}
	}
	// Wait for Ready: the local informer sees the phase as soon as the
	// workspace controller mirrors it.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if ws, err := lister.Get(name); err == nil && ws.Status.Phase == corev1alpha1.LogicalClusterPhaseReady {
			return ws, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// createHomeWorkspace creates the Workspace name of type typ in parent,
// owned by u if owned; one that exists already is fine.
func createHomeWorkspace(ctx context.Context, client *kcpclient.Clientset, parent logicalcluster.Name, name string, typ tenancyv1alpha1.WorkspaceTypeName, owned bool, u user.Info) error {
	ws := &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: tenancyv1alpha1.WorkspaceSpec{Type: &tenancyv1alpha1.WorkspaceTypeReference{
			Name: typ, Path: logicalcluster.Root.String(),
		}},
	}
	if owned {
		owner, err := json.Marshal(authenticationv1.UserInfo{Username: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: extraOf(u)})
		if err != nil {
			return err
		}
		ws.Annotations = map[string]string{tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey: string(owner)}
	}
	_, err := client.Workspaces().Create(ctx, ws, metav1.CreateOptions{})
	switch {
	case err == nil:
		klog.FromContext(ctx).V(2).Info("Created home workspace", "parent", parent, "name", name, "type", typ, "user", u.GetName())
	case apierrors.IsAlreadyExists(err):
	default:
		return fmt.Errorf("creating workspace %s in %s for the home of %q: %w", name, parent, u.GetName(), err)
	}
	return nil
}

// ensureRemoteWorkspace is ensureWorkspace for a parent on another shard:
// read, created and waited for over HTTPS, polling with backoff.
func (s *Server) ensureRemoteWorkspace(ctx context.Context, shard string, parent logicalcluster.Name, name string, typ tenancyv1alpha1.WorkspaceTypeName, owned bool, u user.Info) (*tenancyv1alpha1.Workspace, error) {
	client, err := s.kcpFor(shard, parent)
	if err != nil {
		return nil, err
	}
	delay := 20 * time.Millisecond
	created := false
	for {
		ws, err := client.Workspaces().Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil && ws.Status.Phase == corev1alpha1.LogicalClusterPhaseReady:
			return ws, nil
		case isNotFoundStatus(err) && !created:
			if err := createHomeWorkspace(ctx, client, parent, name, typ, owned, u); err != nil {
				return nil, err
			}
			created = true
			continue
		case err != nil && !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading workspace %s in %s on shard %s: %w", name, parent, shard, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Second)
	}
}

func extraOf(u user.Info) map[string]authenticationv1.ExtraValue {
	if len(u.GetExtra()) == 0 {
		return nil
	}
	out := make(map[string]authenticationv1.ExtraValue, len(u.GetExtra()))
	for k, v := range u.GetExtra() {
		out[k] = v
	}
	return out
}
