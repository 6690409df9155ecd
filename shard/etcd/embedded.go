// Package etcd runs an embedded etcd server for a shard that has no external
// etcd.
package etcd

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// Options configure the embedded etcd.
type Options struct {
	// Dir holds the data; it survives restarts.
	Dir string
	// ClientPort and PeerPort listen on 127.0.0.1.
	ClientPort int
	PeerPort   int
	// UnsafeNoFsync trades durability for speed (tests and benchmarks).
	UnsafeNoFsync bool
	// LogLevel of etcd's own log: debug, info, warn, error, panic or fatal
	// (default error).
	LogLevel string
}

// Server is a running embedded etcd.
type Server struct {
	etcd *embed.Etcd
	// ClientURL is where clients connect.
	ClientURL string
}

// Start starts etcd and waits until it serves.
func Start(ctx context.Context, o Options) (*Server, error) {
	cfg := embed.NewConfig()
	cfg.Name = "tessera"
	cfg.Dir = filepath.Clean(o.Dir)
	cfg.WalDir = filepath.Join(cfg.Dir, "wal")
	cfg.LogLevel = o.LogLevel
	if cfg.LogLevel == "" {
		cfg.LogLevel = "error"
	}
	cfg.UnsafeNoFsync = o.UnsafeNoFsync
	cfg.QuotaBackendBytes = 8 * 1024 * 1024 * 1024
	// Above the API server's largest request body (3 MiB), so that a body
	// the API accepts never fails in etcd as "request is too large".
	cfg.MaxRequestBytes = 8 * 1024 * 1024
	client := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(o.ClientPort))}
	peer := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(o.PeerPort))}
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting embedded etcd in %s: %w", cfg.Dir, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd failed: %w", err)
	case <-time.After(time.Minute):
		e.Close()
		return nil, fmt.Errorf("embedded etcd did not become ready within a minute")
	case <-ctx.Done():
		e.Close()
		return nil, ctx.Err()
	}
	return &Server{etcd: e, ClientURL: client.String()}, nil
}

// Close stops etcd.
func (s *Server) Close() {
	s.etcd.Close()
}

// FreePort returns a loopback port that is free now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
