package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
)

// servePprof serves Go's profiles (net/http/pprof) on addr, a loopback
// port of its own (loopback Hosts only, as the stack), so the stack's side
// of a load can be profiled:
//
//	PRICKLE_PPROF=127.0.0.1:6061 make local
//	go tool pprof -top 'http://127.0.0.1:6061/debug/pprof/profile?seconds=30'
func servePprof(addr string, log *slog.Logger) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("PRICKLE_PPROF=%s: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("PRICKLE_PPROF=%s: not a loopback address (profiles show the stack's internals)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("PRICKLE_PPROF: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go func() {
		if err := http.Serve(ln, loopbackHost(port, mux)); err != nil {
			log.Error("pprof server", "error", err.Error())
		}
	}()
	fmt.Printf("pprof      http://%s/debug/pprof/\n", addr)
	return nil
}
