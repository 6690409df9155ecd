// Command pause is the sandbox ("pause") container of the e2e suite's real
// clusters, built from Go so that no image has to be pulled: it holds the
// pod's namespaces, reaps the zombies of the processes that share its PID
// namespace, and exits when it is told to stop.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		switch s {
		case syscall.SIGCHLD:
			for {
				var status syscall.WaitStatus
				pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		default:
			os.Exit(0)
		}
	}
}
