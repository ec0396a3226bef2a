use super::*;

fn spec(batch_size: i32, buffer_size: i32, coalesce: bool) -> Spec {
    Spec::new(("m", "c"), &[], true, (batch_size, buffer_size, 0), (coalesce, true), (1_000, &[]))
}

#[test]
fn events_take_sequences_from_one_and_go_out_by_batch() {
    let spec = spec(2, 4, false);
    let mut events = PartitionEvents::default();
    events.push((EventKind::Added, Some(b"a"), Some(b"1")), &spec, 10);
    assert!(events.due(&spec, 10, false).is_none(), "one of a batch of two");
    events.push((EventKind::Updated, Some(b"a"), Some(b"2")), &spec, 11);
    let sent = events.due(&spec, 11, false).expect("a full batch");
    assert_eq!(sent.iter().map(|event| event.sequence).collect::<Vec<_>>(), [1, 2]);
    events.push((EventKind::Removed, Some(b"a"), None), &spec, 12);
    assert!(events.due(&spec, 12, true).is_some(), "the sweep sends what waited its delay (0)");
    assert!(events.due(&spec, 13, true).is_none(), "sent once");
}

#[test]
fn coalescing_keeps_a_keys_last_unsent_event_under_its_first_sequence() {
    let spec = spec(10, 10, true);
    let mut events = PartitionEvents::default();
    events.push((EventKind::Added, Some(b"k"), Some(b"70")), &spec, 0);
    events.push((EventKind::Updated, Some(b"k"), Some(b"72")), &spec, 0);
    events.push((EventKind::Added, Some(b"j"), Some(b"5")), &spec, 0);
    let sent = events.due(&spec, 0, true).unwrap();
    let seen: Vec<_> = sent.iter().map(|event| (event.sequence, event.kind, event.value.as_deref())).collect();
    assert_eq!(seen, [(1, EventKind::Updated, Some(&b"72"[..])), (2, EventKind::Added, Some(&b"5"[..]))]);
    events.push((EventKind::Removed, Some(b"k"), None), &spec, 0);
    let sent = events.due(&spec, 0, true).unwrap();
    assert_eq!((sent[0].sequence, sent[0].kind), (3, EventKind::Removed), "after its batch: a new event");
}

#[test]
fn the_buffer_keeps_the_last_events_and_set_read_cursor_sends_them_again() {
    let mut caches = QueryCaches::default();
    caches.create("m", Arc::new(spec(1, 2, false)), (10, false, false)).unwrap();
    for value in [b"1", b"2", b"3"] {
        caches.find("m", "c").unwrap().partitions.entry(7).or_default().push(
            (EventKind::Added, Some(b"k"), Some(value)),
            &spec(1, 2, false),
            0,
        );
    }
    assert!(caches.made_publishable("m", "c"));
    assert_eq!(caches.due(0).len(), 1, "held until publishable, then sent together");
    assert!(!caches.set_read_cursor(("m", "c"), 7, 1).unwrap(), "gone past the buffer of 2");
    assert!(!caches.set_read_cursor(("m", "c"), 7, 4).unwrap(), "not taken yet");
    assert!(caches.set_read_cursor(("m", "c"), 7, 2).unwrap());
    let again = caches.due(0);
    assert_eq!(again[0].2.iter().map(|event| event.sequence).collect::<Vec<_>>(), [2, 3]);
    let refused = caches.set_read_cursor(("m", "c"), 7, 0).unwrap_err();
    assert_eq!(refused.message, "sequence is 0 but must be > 0");
    caches.destroy("m", "c");
    assert!(!caches.has("m") && !caches.made_publishable("m", "c"));
    let unpopulated = Spec { populate: false, ..spec(1, 2, false) };
    caches.create("m", Arc::new(unpopulated), (10, false, false)).unwrap();
    let event = Event {
        kind: EventKind::Added,
        partition_id: Some(ferrogrid_protocol::PartitionId(3)),
        key: Some(b"k"),
        value: Some(b"v"),
        old_value: None,
        affected_entries: 1,
        source: ferrogrid_protocol::Uuid::default(),
    };
    let schemas = (Arc::default(), 271);
    // (an empty predicate blob matches nothing: the event concerns no entry of the set)
    assert!(caches.take("m", &event, &schemas, 0).is_empty());
    assert!(caches.find("m", "c").unwrap().publishable, "without initial contents: publishable at once");
}

#[test]
fn publishers_are_bounded() {
    let mut caches = QueryCaches::default();
    caches.create("m", Arc::new(spec(1, 1, false)), (1, false, false)).unwrap();
    caches.create("m", Arc::new(spec(1, 1, false)), (1, false, false)).expect("the same cache again replaces it");
    caches.made_publishable("m", "c");
    caches.create("m", Arc::new(spec(1, 1, false)), (1, true, false)).expect("kept");
    assert!(caches.find("m", "c").unwrap().publishable, "another member's copy keeps the one here");
    let other = Spec { cache: "d".into(), ..spec(1, 1, false) };
    assert!(caches.create("m", Arc::new(other), (1, false, false)).is_err());
    assert_eq!(caches.count(), 1);
}

#[test]
fn a_partition_that_changes_hands_starts_over() {
    let mut caches = QueryCaches::default();
    caches.create("m", Arc::new(spec(1, 4, false)), (10, false, false)).unwrap();
    let publisher = caches.find("m", "c").unwrap();
    publisher.partitions.entry(3).or_default().push((EventKind::Added, Some(b"k"), None), &spec(1, 4, false), 0);
    assert!(caches.partition_moved(3, true, false).is_empty(), "not publishable: the client counts nothing yet");
    caches.find("m", "c").unwrap().partitions.entry(3).or_default().push(
        (EventKind::Added, Some(b"k"), None),
        &spec(1, 4, false),
        0,
    );
    caches.made_publishable("m", "c");
    assert_eq!(caches.partition_moved(5, true, false).len(), 0, "no event of that partition was sent");
    assert_eq!(caches.partition_moved(3, true, false).len(), 1, "gave up a partition it sent events of");
    assert!(caches.find("m", "c").unwrap().partitions.is_empty(), "its events start over");
    assert_eq!(caches.partition_moved(5, false, true).len(), 1, "took over from an owner that died");
    assert_eq!(caches.published().len(), 1);
}

#[test]
fn a_publisher_goes_once_its_listeners_are_gone() {
    let mut caches = QueryCaches::default();
    caches.create("m", Arc::new(spec(1, 1, false)), (10, false, false)).unwrap();
    assert_eq!(caches.drop_unlistened(|_| false), 0, "never listened to here (a joiner before the client came)");
    caches.listened("c");
    assert_eq!(caches.drop_unlistened(|cache| cache == "c"), 0, "still listened to");
    assert_eq!(caches.drop_unlistened(|_| false), 1, "its client's connection closed");
    assert!(!caches.has("m"));
    caches.create("m", Arc::new(spec(1, 1, false)), (10, false, true)).unwrap();
    assert_eq!(caches.drop_unlistened(|_| false), 1, "created after its listener");
}
