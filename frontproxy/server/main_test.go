package server_test

import (
	"flag"
	"os"
	"testing"

	"k8s.io/klog/v2"
)

// TestMain lets TESSERA_TEST_V raise the log verbosity.
func TestMain(m *testing.M) {
	if v := os.Getenv("TESSERA_TEST_V"); v != "" {
		fs := flag.NewFlagSet("klog", flag.ExitOnError)
		klog.InitFlags(fs)
		_ = fs.Set("v", v)
	}
	os.Exit(m.Run())
}
