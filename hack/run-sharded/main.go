// Command run-sharded starts a sharded installation in the foreground (the
// cache server, root, shard-1 and shard-2 with their virtual workspaces, and
// the front-proxy), prints where it is and stops it on Ctrl-C. `make
// run-sharded` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tessera-dev/tessera/test/e2e/framework/process"
	"github.com/tessera-dev/tessera/test/e2e/framework/sharded"
)

func main() {
	dir := flag.String("dir", ".tessera-sharded", "directory for data, certificates, kubeconfigs and logs")
	bin := flag.String("bin", "bin", "directory of the built binaries")
	port := flag.Int("proxy-port", 0, "front-proxy port (0: a free one)")
	flag.Parse()
	os.Exit(run(*dir, *bin, *port))
}

func run(dir, bin string, port int) int {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	binDir, err := filepath.Abs(bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	group, err := process.NewGroup(filepath.Join(dir, "logs"), "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stop := func() int {
		fmt.Println("Stopping...")
		rc := 0
		for _, err := range group.StopAll(30 * time.Second) {
			fmt.Fprintln(os.Stderr, err)
			rc = 1
		}
		return rc
	}
	fmt.Printf("Starting the sharded installation in %s (logs in %s)...\n", dir, filepath.Join(dir, "logs"))
	in, err := sharded.Start(ctx, sharded.Options{
		Dir: dir, BinDir: binDir, Group: group, ProxyPort: port,
		Tokens: []string{`user-token,user,user-uid,"team"`},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start:", err)
		stop()
		return 1
	}
	fmt.Printf("\nReady. export KUBECONFIG=%s   (front-proxy, contexts root and base, user kcp-admin)\n\n", in.Kubeconfig)
	fmt.Printf("  %-14s %s\n", "front-proxy", in.Proxy.URL)
	fmt.Printf("  %-14s %s   (%s)\n", "cache-server", in.Cache.URL, filepath.Join(in.Dir, "cache.kubeconfig"))
	for _, n := range sharded.ShardNames {
		s := in.Shard(n)
		fmt.Printf("  %-14s %s   virtual workspaces %s   (%s)\n", n, s.URL, s.VW.URL, s.Kubeconfig)
	}
	fmt.Printf("\nA non-admin user: --token user-token. Ctrl-C stops everything.\n")
	for _, c := range in.Components() {
		go func() {
			<-c.Process().Exited()
			if ctx.Err() == nil {
				fmt.Fprintf(os.Stderr, "%s exited: see %s\n", c.Name, c.Process().LogPath)
			}
		}()
	}
	<-ctx.Done()
	return stop()
}
