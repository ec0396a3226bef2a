// Command gotest drives ferrogrid (or a Hazelcast member) with the official Go client.
//
//	go run . smoke HOST:PORT            the common calls of every structure, smart and unisocket
//	go run . tls HOST:PORT CLUSTER CA.pem [CERT.pem KEY.pem]
//
// Each prints "go smoke: ok" / "go tls: ok" and exits 0; on any failure it prints what failed and
// exits 1, and it gives up after a hard timeout. `scripts/test` runs smoke against both targets;
// tests/python/test_tls.py runs tls against its TLS members (Hazelcast's TLS is Enterprise-only).
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// hardTimeouts: a run that has not ended by then fails. A TLS client refused by the member may
// retry for a while (the refused case ends here).
var hardTimeouts = map[string]time.Duration{"smoke": 90 * time.Second, "tls": 20 * time.Second}

func main() {
	hardTimeout := hardTimeouts["smoke"]
	if len(os.Args) > 1 && hardTimeouts[os.Args[1]] != 0 {
		hardTimeout = hardTimeouts[os.Args[1]]
	}
	timer := time.AfterFunc(hardTimeout, func() {
		fmt.Fprintf(os.Stderr, "go test: FAILED: timed out after %s\n", hardTimeout)
		os.Exit(1)
	})
	defer timer.Stop()
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "go test: FAILED: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: gotest smoke HOST:PORT | gotest tls HOST:PORT CLUSTER CA.pem [CERT.pem KEY.pem]")
	}
	if err := loopbackOnly(args[1]); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), hardTimeouts["smoke"])
	defer cancel()
	switch args[0] {
	case "smoke":
		return smoke(ctx, args[1])
	case "tls":
		return overTLS(ctx, args[1:])
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// loopbackOnly refuses any address outside 127.0.0.0/8: tests never leave the machine.
func loopbackOnly(address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("address %q: %w", address, err)
	}
	if host == "localhost" || strings.HasPrefix(host, "127.") {
		return nil
	}
	return fmt.Errorf("refusing non-loopback address %s", address)
}
