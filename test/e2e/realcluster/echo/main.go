// Command echo is the workload of the realcluster e2e suite, built into an
// image there: a server that answers with its host name and, with -data,
// counts how often it started in a file of its volume; and a client mode
// (echo -get URL [-ca FILE]) that fetches a URL and fails unless it answers
// 200.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	addr := flag.String("addr", ":8080", "Address to serve on.")
	data := flag.String("data", "", "Directory whose file starts counts the server's starts (a volume).")
	get := flag.String("get", "", "Fetch this URL, print the answer and exit.")
	ca := flag.String("ca", "", "With -get: trust the CA certificates of this PEM file.")
	flag.Parse()
	if *get != "" {
		if err := fetch(*get, *ca); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	starts := 0
	if *data != "" {
		file := filepath.Join(*data, "starts")
		b, err := os.ReadFile(file)
		if err != nil && !os.IsNotExist(err) {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		starts, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		starts++
		if err := os.WriteFile(file, []byte(strconv.Itoa(starts)), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	host, _ := os.Hostname()
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "host=%s starts=%d\n", host, starts)
	})
	server := &http.Server{Addr: *addr, ReadHeaderTimeout: 5 * time.Second}
	fmt.Fprintln(os.Stderr, server.ListenAndServe())
	os.Exit(1)
}

func fetch(url, ca string) error {
	client := &http.Client{Timeout: 5 * time.Second}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("no certificate in %s", ca)
		}
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	}
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	fmt.Print(string(b))
	return nil
}
