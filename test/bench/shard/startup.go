package main

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// startupBench starts fresh shards (an empty data dir and an empty etcd of
// their own, which the bench runs and does not count) and restarts each
// once, and prints how long each took from exec until /readyz answered 200
// (polled every 10 ms), with the memory of the idle shard.
func startupBench(ctx context.Context, binary string, runs int) error {
	if runs < 1 {
		return fmt.Errorf("startup: -startups %d must be positive", runs)
	}
	var fresh, again []time.Duration
	var idleRSS []int64
	for range runs {
		s, err := startShard(ctx, binary)
		if err != nil {
			return err
		}
		fresh = append(fresh, s.readyIn)
		if err := s.restart(); err != nil {
			s.stop()
			return err
		}
		again = append(again, s.readyIn)
		rss, err := s.settledRSS(ctx)
		s.stop()
		if err != nil {
			return err
		}
		idleRSS = append(idleRSS, rss)
	}
	slices.Sort(idleRSS)
	fmt.Printf("Start-up of a shard (%d runs; etcd already running, not counted):\n", runs)
	fmt.Printf("  exec to /readyz 200, empty data dir: p50 %s, min %s, max %s (goal 0.5 s; kcp 26-29 s)\n",
		pct(fresh, 50).Round(time.Millisecond), slices.Min(fresh).Round(time.Millisecond), slices.Max(fresh).Round(time.Millisecond))
	fmt.Printf("  restart with that data:              p50 %s, min %s, max %s\n",
		pct(again, 50).Round(time.Millisecond), slices.Min(again).Round(time.Millisecond), slices.Max(again).Round(time.Millisecond))
	fmt.Printf("  idle RSS after the restart: p50 %s (goal 64 MiB; kcp 517-546 MB)\n\n", mib(idleRSS[len(idleRSS)/2]))
	return nil
}
