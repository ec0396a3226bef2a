package main

import (
	"context"
	"fmt"

	"time"

	"github.com/hazelcast/hazelcast-go-client"
	"github.com/hazelcast/hazelcast-go-client/types"
)

// overTLS connects with TLS (trusting CA.pem, presenting CERT/KEY when given), puts and gets a
// value on a fresh map.
func overTLS(ctx context.Context, args []string) error {
	if len(args) != 3 && len(args) != 5 {
		return fmt.Errorf("usage: gotest tls HOST:PORT CLUSTER CA.pem [CERT.pem KEY.pem]")
	}
	config := hazelcast.Config{}
	config.Cluster.Name = args[1]
	config.Cluster.Network.SetAddresses(args[0])
	config.Cluster.ConnectionStrategy.Timeout = types.Duration(5 * time.Second)
	config.Logger.Level = "warn"
	ssl := &config.Cluster.Network.SSL
	ssl.Enabled = true
	ssl.ServerName = "localhost"
	if err := ssl.SetCAPath(args[2]); err != nil {
		return err
	}
	if len(args) == 5 {
		if err := ssl.AddClientCertAndKeyPath(args[3], args[4]); err != nil {
			return err
		}
	}
	client, err := hazelcast.StartNewClientWithConfig(ctx, config)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() { _ = client.Shutdown(context.Background()) }()
	m, err := client.GetMap(ctx, "go-tls")
	if err != nil {
		return err
	}
	if _, err := m.Put(ctx, "key", "over tls"); err != nil {
		return err
	}
	value, err := m.Get(ctx, "key")
	if err != nil {
		return err
	}
	if err := checkEq("get", "over tls", value); err != nil {
		return err
	}
	fmt.Println("go tls: ok")
	return nil
}
