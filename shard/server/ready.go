package server

import (
	"context"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// announceReady logs once the shard answers /readyz with 200.
func (s *Server) announceReady(ctx context.Context, loopback *rest.Config) {
	client, err := rest.HTTPClientFor(loopback)
	if err != nil {
		return
	}
	_ = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, loopback.Host+"/readyz", nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, nil
		}
		klog.FromContext(ctx).Info("Ready", "url", s.ServerURL, "kubeconfig", s.AdminKubeconfigPath())
		return true, nil
	})
}
