package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"time"
)

// BridgeGateway is the Docker bridge network's gateway address: the host as
// the SAM CLI's containers see it (reachable from them and the host only).
// The default bridge does not always list its gateway: then it is the
// address of the bridge's interface (docker0).
func BridgeGateway(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", "network", "inspect", "bridge", "-f",
		`{{range .IPAM.Config}}{{.Gateway}} {{end}}|{{index .Options "com.docker.network.bridge.name"}}`).Output()
	if err != nil {
		return "", fmt.Errorf("docker network inspect bridge (is dockerd running?): %w", err)
	}
	gateways, ifname, _ := strings.Cut(strings.TrimSpace(string(out)), "|")
	for _, ip := range strings.Fields(gateways) {
		if net.ParseIP(ip).To4() != nil {
			return ip, nil
		}
	}
	if ifname == "" {
		ifname = "docker0"
	}
	iface, err := net.InterfaceByName(ifname)
	if err != nil {
		return "", fmt.Errorf("the docker bridge lists no gateway and has no interface %s: %w", ifname, err)
	}
	addrs, err := iface.Addrs()
	if err != nil {
		return "", fmt.Errorf("addresses of %s: %w", ifname, err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
			return n.IP.String(), nil
		}
	}
	return "", fmt.Errorf("the docker bridge %s has no IPv4 address", ifname)
}

// forward serves target (a loopback host:port) on the bridge gateway, so
// that containers reach a host service that listens on loopback only.
func (s *Stack) forward(gateway, target string) (string, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(gateway, "0"))
	if err != nil {
		return "", fmt.Errorf("listen on the docker bridge: %w", err)
	}
	s.listeners = append(s.listeners, ln)
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer in.Close()
				out, err := net.DialTimeout("tcp", target, 5*time.Second)
				if err != nil {
					return
				}
				defer out.Close()
				go func() { _, _ = io.Copy(out, in) }()
				_, _ = io.Copy(in, out)
			}()
		}
	}()
	return ln.Addr().String(), nil
}
