package main

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/pseudocong/pseudocong/openflow"
)

func TestSwitchCommandUsageErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown profile", []string{"--profile", "no-such-switch", "--listen", "ptcp:0:127.0.0.1"}, "unknown profile"},
		{"bad fail mode", []string{"--fail-mode", "open", "--listen", "ptcp:0:127.0.0.1"}, "fail mode"},
		{"no connection", []string{}, "--controller and/or --listen"},
		{"passive controller", []string{"--controller", "ptcp:6653"}, "passive"},
		{"ssl without keys", []string{"--controller", "ssl:127.0.0.1:6653"}, "--private-key"},
		{"bad target", []string{"--listen", "udp:1"}, "unknown scheme"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := newSwitchCommand()
			cmd.SetArgs(c.args)
			cmd.SetContext(context.Background())
			err := cmd.Execute()
			var ue usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want usage error containing %q, got %v", c.want, err)
			}
		})
	}
}

func TestSwitchCommandServesOpenFlow(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := newSwitchCommand()
	cmd.SetArgs([]string{"--listen", "ptcp:" + addr[strings.LastIndex(addr, ":")+1:] + ":127.0.0.1", "--ports", "3", "--dpid", "42", "--log-level", "error"})
	cmd.SetContext(ctx)
	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()

	var nc net.Conn
	for deadline := time.Now().Add(5 * time.Second); ; {
		if nc, err = net.Dial("tcp", addr); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	c := openflow.NewConn(nc, openflow.ConnConfig{})
	rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
	defer rcancel()
	if err := c.Handshake(rctx); err != nil {
		t.Fatal(err)
	}
	rep, err := c.Request(rctx, &openflow.FeaturesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if fr := rep.(*openflow.FeaturesReply); fr.DatapathID != 42 || len(fr.Ports) != 3 {
		t.Fatalf("features %+v", fr)
	}
	c.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("switch command ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("switch command did not stop on cancel")
	}
}
