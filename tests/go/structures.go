package main

import (
	"context"
	"sort"
	"time"

	"github.com/hazelcast/hazelcast-go-client"
)

func queueCalls(ctx context.Context, client *hazelcast.Client, name string) error {
	q, err := client.GetQueue(ctx, name)
	if err != nil {
		return err
	}
	for _, item := range []string{"x", "y", "z"} {
		if _, err := q.Add(ctx, item); err != nil {
			return err
		}
	}
	size, err := q.Size(ctx)
	if err != nil {
		return err
	}
	first, err := q.Poll(ctx)
	if err != nil {
		return err
	}
	contains, err := q.Contains(ctx, "z")
	if err != nil {
		return err
	}
	return firstError(checkEq("size", 3, size), checkEq("poll", "x", first), checkEq("contains", true, contains))
}

func listAndSet(ctx context.Context, client *hazelcast.Client, prefix string) error {
	l, err := client.GetList(ctx, prefix+"list")
	if err != nil {
		return err
	}
	s, err := client.GetSet(ctx, prefix+"set")
	if err != nil {
		return err
	}
	for _, item := range []string{"a", "b", "a"} {
		if _, err := l.Add(ctx, item); err != nil {
			return err
		}
		if _, err := s.Add(ctx, item); err != nil {
			return err
		}
	}
	second, err := l.Get(ctx, 1)
	if err != nil {
		return err
	}
	listSize, err := l.Size(ctx)
	if err != nil {
		return err
	}
	setSize, err := s.Size(ctx)
	if err != nil {
		return err
	}
	removed, err := s.Remove(ctx, "a")
	if err != nil {
		return err
	}
	return firstError(
		checkEq("list get", "b", second), checkEq("list size", 3, listSize),
		checkEq("set size", 2, setSize), checkEq("set remove", true, removed),
	)
}

func multiAndReplicated(ctx context.Context, client *hazelcast.Client, prefix string) error {
	mm, err := client.GetMultiMap(ctx, prefix+"multimap")
	if err != nil {
		return err
	}
	for _, value := range []string{"v1", "v2", "v1"} {
		if _, err := mm.Put(ctx, "k", value); err != nil {
			return err
		}
	}
	values, err := mm.Get(ctx, "k")
	if err != nil {
		return err
	}
	got := make([]string, 0, len(values))
	for _, value := range values {
		got = append(got, value.(string))
	}
	sort.Strings(got)
	count, err := mm.ValueCount(ctx, "k")
	if err != nil {
		return err
	}
	rm, err := client.GetReplicatedMap(ctx, prefix+"replicated")
	if err != nil {
		return err
	}
	if _, err := rm.Put(ctx, "r", int32(5)); err != nil {
		return err
	}
	value, err := rm.Get(ctx, "r")
	if err != nil {
		return err
	}
	return firstError(
		checkEq("multimap values (a set)", []string{"v1", "v2"}, got), checkEq("value count", 2, count),
		checkEq("replicated get", int32(5), value),
	)
}

func topicAndRingbuffer(ctx context.Context, client *hazelcast.Client, prefix string) error {
	topic, err := client.GetTopic(ctx, prefix+"topic")
	if err != nil {
		return err
	}
	received := make(chan interface{}, 4)
	if _, err := topic.AddMessageListener(ctx, func(event *hazelcast.MessagePublished) { received <- event.Value }); err != nil {
		return err
	}
	if err := topic.Publish(ctx, "hello"); err != nil {
		return err
	}
	var message interface{}
	select {
	case message = <-received:
	case <-time.After(10 * time.Second):
	}
	rb, err := client.GetRingbuffer(ctx, prefix+"ringbuffer")
	if err != nil {
		return err
	}
	sequence, err := rb.Add(ctx, "first", hazelcast.OverflowPolicyOverwrite)
	if err != nil {
		return err
	}
	item, err := rb.ReadOne(ctx, sequence)
	if err != nil {
		return err
	}
	return firstError(checkEq("topic message", "hello", message), checkEq("ringbuffer sequence", int64(0), sequence), checkEq("ringbuffer item", "first", item))
}

func counterAndIds(ctx context.Context, client *hazelcast.Client, prefix string) error {
	counter, err := client.GetPNCounter(ctx, prefix+"counter")
	if err != nil {
		return err
	}
	if _, err := counter.AddAndGet(ctx, 5); err != nil {
		return err
	}
	total, err := counter.AddAndGet(ctx, -2)
	if err != nil {
		return err
	}
	ids, err := client.GetFlakeIDGenerator(ctx, prefix+"ids")
	if err != nil {
		return err
	}
	first, err := ids.NewID(ctx)
	if err != nil {
		return err
	}
	second, err := ids.NewID(ctx)
	if err != nil {
		return err
	}
	return firstError(checkEq("counter", int64(3), total), checkEq("ids increase", true, second > first))
}
