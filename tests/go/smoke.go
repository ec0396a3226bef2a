package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/hazelcast/hazelcast-go-client"
	"github.com/hazelcast/hazelcast-go-client/aggregate"
	"github.com/hazelcast/hazelcast-go-client/predicate"
	"github.com/hazelcast/hazelcast-go-client/types"
)

// clusterName is the one tests/python/member.py gives both targets.
const clusterName = "dev"

func smoke(ctx context.Context, address string) error {
	for _, unisocket := range []bool{false, true} {
		client, err := connect(ctx, address, unisocket)
		if err != nil {
			return fmt.Errorf("connect (unisocket %v): %w", unisocket, err)
		}
		prefix := fmt.Sprintf("go-smoke-%v-%d-", unisocket, time.Now().UnixNano())
		err = all(
			step{"map", func() error { return mapCalls(ctx, client, prefix+"map") }},
			step{"map listener and lock", func() error { return mapListenerAndLock(ctx, client, prefix+"events") }},
			step{"queue", func() error { return queueCalls(ctx, client, prefix+"queue") }},
			step{"list and set", func() error { return listAndSet(ctx, client, prefix) }},
			step{"multimap and replicated map", func() error { return multiAndReplicated(ctx, client, prefix) }},
			step{"topic and ringbuffer", func() error { return topicAndRingbuffer(ctx, client, prefix) }},
			step{"counter and flake ids", func() error { return counterAndIds(ctx, client, prefix) }},
		)
		_ = client.Shutdown(context.Background())
		if err != nil {
			return fmt.Errorf("unisocket %v: %w", unisocket, err)
		}
	}
	if checks < 40 {
		return fmt.Errorf("only %d checks ran", checks)
	}
	fmt.Printf("go smoke: ok (%d checks)\n", checks)
	return nil
}

func connect(ctx context.Context, address string, unisocket bool) (*hazelcast.Client, error) {
	config := hazelcast.Config{}
	config.Cluster.Name = clusterName
	config.Cluster.Network.SetAddresses(address)
	config.Cluster.Unisocket = unisocket
	config.Logger.Level = "warn"
	return hazelcast.StartNewClientWithConfig(ctx, config)
}

func mapCalls(ctx context.Context, client *hazelcast.Client, name string) error {
	m, err := client.GetMap(ctx, name)
	if err != nil {
		return err
	}
	for i := int64(0); i < 100; i++ {
		if _, err := m.Put(ctx, fmt.Sprintf("k%d", i), i); err != nil {
			return err
		}
	}
	value, err := m.Get(ctx, "k7")
	if err != nil {
		return err
	}
	size, err := m.Size(ctx)
	if err != nil {
		return err
	}
	entries, err := m.GetEntrySetWithPredicate(ctx, predicate.Between("this", int64(10), int64(19)))
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(entries))
	for _, entry := range entries {
		keys = append(keys, entry.Key.(string))
	}
	sort.Strings(keys)
	sum, err := m.AggregateWithPredicate(ctx, aggregate.LongSum("this"), predicate.Less("this", int64(10)))
	if err != nil {
		return err
	}
	old, err := m.Remove(ctx, "k7")
	if err != nil {
		return err
	}
	missing, err := m.Get(ctx, "k7")
	if err != nil {
		return err
	}
	if err := m.PutAll(ctx, types.NewEntry(int64(1), "one"), types.NewEntry(int64(2), "two")); err != nil {
		return err
	}
	got, err := m.GetAll(ctx, int64(1), int64(2), int64(3))
	if err != nil {
		return err
	}
	return firstError(
		checkEq("get", int64(7), value),
		checkEq("size", 100, size),
		checkEq("between 10 and 19", []string{"k10", "k11", "k12", "k13", "k14", "k15", "k16", "k17", "k18", "k19"}, keys),
		checkEq("sum below 10", int64(45), sum),
		checkEq("remove", int64(7), old),
		checkEq("get after remove", nil, missing),
		checkEq("getAll finds two", 2, len(got)),
	)
}

func mapListenerAndLock(ctx context.Context, client *hazelcast.Client, name string) error {
	m, err := client.GetMap(ctx, name)
	if err != nil {
		return err
	}
	events := make(chan *hazelcast.EntryNotified, 16)
	listener := hazelcast.MapEntryListenerConfig{IncludeValue: true}
	listener.NotifyEntryAdded(true)
	listener.NotifyEntryRemoved(true)
	if _, err := m.AddEntryListener(ctx, listener, func(event *hazelcast.EntryNotified) { events <- event }); err != nil {
		return err
	}
	if _, err := m.Put(ctx, "a", "1"); err != nil {
		return err
	}
	if _, err := m.Remove(ctx, "a"); err != nil {
		return err
	}
	var seen []string
	for len(seen) < 2 {
		select {
		case event := <-events:
			seen = append(seen, fmt.Sprintf("%v:%v", event.EventType, event.Key))
		case <-time.After(10 * time.Second):
			return fmt.Errorf("events after 10 s: %v", seen)
		}
	}
	lockCtx := m.NewLockContext(ctx)
	if err := m.Lock(lockCtx, "b"); err != nil {
		return err
	}
	locked, err := m.IsLocked(ctx, "b")
	if err != nil {
		return err
	}
	if err := m.Unlock(lockCtx, "b"); err != nil {
		return err
	}
	unlocked, err := m.IsLocked(ctx, "b")
	if err != nil {
		return err
	}
	return firstError(
		checkEq("events", []string{fmt.Sprintf("%v:a", hazelcast.EntryAdded), fmt.Sprintf("%v:a", hazelcast.EntryRemoved)}, seen),
		checkEq("locked", true, locked),
		checkEq("unlocked", false, unlocked),
	)
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
