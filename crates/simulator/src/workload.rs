//! A test definition made runnable: its data set (keys and values, serialized once), the
//! entries the load phase writes and checks, and the choice and execution of each operation.
//!
//! A [`Workload`] is built once per run and shared read-only by every worker task; the only
//! shared mutable parts are atomic counters: YCSB's insert sequence, a queue test's per-queue
//! counts ([`crate::queue`]), a topic test's publish counts ([`crate::topic`]). Each worker
//! owns a [`Worker`]: its random number generator, its copy of the key chooser, and its role
//! (producer or consumer of a queue, publisher on a topic).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use ferrogrid_client::{
    greater_equal_predicate, serialize_bytes, serialize_string, Client, ClientError, Map, Queue, Topic,
};

use crate::definition::{MapTest, MapTestClass, TestDefinition, MAP_TEST_PROBES};
pub use crate::error::OperationError;
use crate::generators::Zipfian;
use crate::generators::{mix64, AcknowledgedCounter, Rng, ScrambledZipfian, SkewedLatest, Uniform};
use crate::queue::{QueueData, QueueRole, QUEUE_TEST_PROBES};
use crate::topic::{TopicData, PUBLISH, TOPIC_TEST_PROBES};
use crate::ycsb::{RequestDistribution, ScanLengthDistribution, YcsbWorkload};

/// YCSB's probe names (its measurement names), in their order in results.
pub const YCSB_PROBES: [&str; 5] = ["READ", "UPDATE", "INSERT", "READ-MODIFY-WRITE", "SCAN"];
const READ: usize = 0;
const UPDATE: usize = 1;
const INSERT: usize = 2;
const READ_MODIFY_WRITE: usize = 3;
const SCAN: usize = 4;
const GET: usize = 0;
const PUT: usize = 1;

/// Distinct YCSB record values kept in memory (records pick one by number).
const YCSB_VALUE_POOL: usize = 1000;
/// Bound on the memory of that pool.
const YCSB_VALUE_POOL_BYTES: u64 = 64 << 20;
/// Draws of the zipfian chooser that may land on not-yet-inserted records before a uniform
/// pick over the existing ones is used instead (YCSB retries without bound).
const MAX_KEY_DRAWS: u32 = 10_000;
/// Java `Integer`'s serializer type id.
const INTEGER_TYPE_ID: i32 = -7;

/// A runnable test.
#[derive(Debug)]
pub struct Workload {
    pub map_name: String,
    /// Probe names; [`Operation::probe`] indexes them.
    pub probes: &'static [&'static str],
    seed: u64,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Map(MapData),
    Ycsb(Box<YcsbData>),
    Queue(QueueData),
    Topic(Arc<TopicData>),
}

/// The distributed objects one client drives: what a worker sends its operations to.
#[derive(Debug, Clone)]
pub enum Proxies {
    Map(Map),
    /// Indexed like the test's queue names.
    Queues(Vec<Queue>),
    /// Indexed like the test's topic names.
    Topics(Vec<Topic>),
}

impl Proxies {
    /// The map of a map or YCSB test.
    pub fn map(&self) -> Option<&Map> {
        match self {
            Proxies::Map(map) => Some(map),
            Proxies::Queues(_) | Proxies::Topics(_) => None,
        }
    }
}

#[derive(Debug)]
struct MapData {
    keys: Vec<Vec<u8>>,
    values: Vec<Vec<u8>>,
    put_probability: f64,
}

#[derive(Debug)]
struct YcsbData {
    workload: YcsbWorkload,
    values: Vec<Vec<u8>>,
    /// Cumulative proportions of read, update, insert, read-modify-write, scan (last one = 1).
    cumulative: [f64; 5],
    chooser: KeyChooser,
    scan_length: ScanLength,
    inserts: AcknowledgedCounter,
}

/// YCSB's `keychooser`, one copy per worker.
#[derive(Debug, Clone)]
enum KeyChooser {
    Uniform(Uniform),
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
}

/// What one worker task owns.
#[derive(Debug)]
pub struct Worker {
    rng: Rng,
    chooser: Option<KeyChooser>,
    /// A YCSB worker's scan length chooser (YCSB's `scanlength` generator).
    scan_length: Option<ScanLength>,
    role: Role,
}

/// YCSB's `scanlength` generator, one copy per worker.
#[derive(Debug, Clone)]
enum ScanLength {
    Uniform(Uniform),
    Zipfian(Zipfian),
}

/// What a worker of a queue or topic test does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A map or YCSB worker: the operation mix decides.
    Mixed,
    Queue(QueueRole),
    /// Publishes on topic `topic` as publisher `publisher` (its worker index); `next` is the
    /// sequence number of its next message.
    Publisher {
        topic: usize,
        publisher: u32,
        next: u64,
    },
}

/// One operation to send; keys and values borrow from the workload where they can.
#[derive(Debug)]
pub enum Operation<'a> {
    Get {
        probe: usize,
        key: Cow<'a, [u8]>,
    },
    Set {
        probe: usize,
        key: Cow<'a, [u8]>,
        value: &'a [u8],
    },
    ReadModifyWrite {
        key: Vec<u8>,
        value: &'a [u8],
    },
    Insert {
        key: Vec<u8>,
        value: &'a [u8],
        key_number: i64,
    },
    /// The `length` records from `key` on, in key order (YCSB's scan).
    Scan {
        key: Vec<u8>,
        length: usize,
    },
    /// Offer an item on queue number `queue`.
    Offer {
        queue: usize,
        value: &'a [u8],
    },
    /// Poll queue number `queue`.
    Poll {
        queue: usize,
    },
    /// Publish message `sequence` of `publisher` on topic number `topic`.
    Publish {
        topic: usize,
        publisher: u32,
        sequence: u64,
    },
}

impl Operation<'_> {
    pub fn probe(&self) -> usize {
        match self {
            Operation::Get { probe, .. } | Operation::Set { probe, .. } => *probe,
            Operation::ReadModifyWrite { .. } => READ_MODIFY_WRITE,
            Operation::Insert { .. } => INSERT,
            Operation::Scan { .. } => SCAN,
            Operation::Offer { .. } => crate::queue::OFFER,
            Operation::Poll { .. } => crate::queue::POLL,
            Operation::Publish { .. } => PUBLISH,
        }
    }
}

impl Workload {
    /// Builds the data set of `definition`; `seed` fixes every random choice.
    pub fn build(definition: &TestDefinition, seed: u64) -> Workload {
        match definition {
            TestDefinition::Map(test) => Workload {
                map_name: test.map_name.clone(),
                probes: &MAP_TEST_PROBES,
                seed,
                kind: Kind::Map(MapData::build(test, seed)),
            },
            TestDefinition::Ycsb(workload) => Workload {
                map_name: workload.table.clone(),
                probes: &YCSB_PROBES,
                seed,
                kind: Kind::Ycsb(Box::new(YcsbData::build(workload, seed))),
            },
            TestDefinition::Queue(test) => Workload {
                map_name: test.basename.clone(),
                probes: &QUEUE_TEST_PROBES,
                seed,
                kind: Kind::Queue(QueueData::build(test, seed)),
            },
            TestDefinition::Topic(test) => Workload {
                map_name: test.basename.clone(),
                probes: &TOPIC_TEST_PROBES,
                seed,
                kind: Kind::Topic(Arc::new(TopicData::build(test, seed))),
            },
        }
    }

    /// A queue test's queues and counters.
    pub fn queue_data(&self) -> Option<&QueueData> {
        match &self.kind {
            Kind::Queue(data) => Some(data),
            _ => None,
        }
    }

    /// A topic test's topics, clock and counters.
    pub fn topic_data(&self) -> Option<&Arc<TopicData>> {
        match &self.kind {
            Kind::Topic(data) => Some(data),
            _ => None,
        }
    }

    /// The proxies the workers of `client` use (`Client.CreateProxy` for each).
    pub async fn proxies(&self, client: &Client) -> Result<Proxies, ClientError> {
        match &self.kind {
            Kind::Map(_) | Kind::Ycsb(_) => Ok(Proxies::Map(client.map(&self.map_name).await?)),
            Kind::Queue(data) => {
                let mut queues = Vec::with_capacity(data.names.len());
                for name in &data.names {
                    queues.push(client.queue(name).await?);
                }
                Ok(Proxies::Queues(queues))
            }
            Kind::Topic(data) => {
                let mut topics = Vec::with_capacity(data.names.len());
                for name in &data.names {
                    topics.push(client.topic(name).await?);
                }
                Ok(Proxies::Topics(topics))
            }
        }
    }

    /// The state of worker `index` (its generator is seeded from the run seed and `index`).
    pub fn worker(&self, index: u32) -> Worker {
        let rng = Rng::new(mix64(self.seed ^ (u64::from(index) + 1).wrapping_mul(0x9E37_79B9)));
        let (chooser, scan_length) = match &self.kind {
            Kind::Ycsb(data) => (Some(data.chooser.clone()), Some(data.scan_length.clone())),
            Kind::Map(_) | Kind::Queue(_) | Kind::Topic(_) => (None, None),
        };
        let role = match &self.kind {
            Kind::Map(_) | Kind::Ycsb(_) => Role::Mixed,
            Kind::Queue(data) => Role::Queue(data.role(index)),
            Kind::Topic(data) => Role::Publisher { topic: data.topic_of(index), publisher: index, next: 0 },
        };
        Worker { rng, chooser, scan_length, role }
    }

    /// The attribute the load phase indexes (sorted) before it writes: `__key` for a YCSB
    /// workload with scans (a scan is a key range in key order).
    pub fn sorted_index(&self) -> Option<&'static str> {
        match &self.kind {
            Kind::Ycsb(data) if data.workload.scan_proportion > 0.0 => Some("__key"),
            _ => None,
        }
    }

    /// Entries the load phase writes (none for queue and topic tests).
    pub fn load_count(&self) -> u64 {
        match &self.kind {
            Kind::Map(data) => data.keys.len() as u64,
            Kind::Ycsb(data) => data.workload.insert_count as u64,
            Kind::Queue(_) | Kind::Topic(_) => 0,
        }
    }

    /// Load entry `index` (< [`Workload::load_count`]): its key and the value it gets.
    pub fn load_entry(&self, index: u64) -> (Cow<'_, [u8]>, &[u8]) {
        match &self.kind {
            Kind::Map(data) => {
                let key = &data.keys[index as usize];
                (Cow::Borrowed(key), &data.values[value_index(self.seed, index, data.values.len())])
            }
            Kind::Ycsb(data) => {
                let number = data.workload.insert_start + index as i64;
                (Cow::Owned(data.key(number)), data.loaded_value(self.seed, number))
            }
            Kind::Queue(_) | Kind::Topic(_) => unreachable!("queue and topic tests load no entries"),
        }
    }

    /// The next operation of `worker`.
    pub fn next_operation<'a>(&'a self, worker: &mut Worker) -> Operation<'a> {
        match (&self.kind, &mut worker.role) {
            (Kind::Queue(data), Role::Queue(QueueRole::Producer { queue })) => {
                return Operation::Offer { queue: *queue, value: data.value(&mut worker.rng) }
            }
            (Kind::Queue(_), Role::Queue(QueueRole::Consumer { queue })) => return Operation::Poll { queue: *queue },
            (Kind::Topic(_), Role::Publisher { topic, publisher, next }) => {
                *next += 1;
                return Operation::Publish { topic: *topic, publisher: *publisher, sequence: *next };
            }
            _ => {}
        }
        match &self.kind {
            Kind::Map(data) => {
                let key = Cow::Borrowed(data.keys[worker.rng.below(data.keys.len() as u64) as usize].as_slice());
                if worker.rng.chance(data.put_probability) {
                    let value = &data.values[worker.rng.below(data.values.len() as u64) as usize];
                    Operation::Set { probe: PUT, key, value }
                } else {
                    Operation::Get { probe: GET, key }
                }
            }
            Kind::Ycsb(data) => data.next_operation(worker),
            Kind::Queue(_) | Kind::Topic(_) => unreachable!("queue and topic workers have their role"),
        }
    }

    /// Before `worker`'s next operation: a producer waits while its queue is at the backlog
    /// bound (until `deadline`). Returns at once for every other worker.
    pub async fn wait_for_room(&self, worker: &Worker, deadline: Instant) {
        if let (Kind::Queue(data), Role::Queue(QueueRole::Producer { queue })) = (&self.kind, worker.role) {
            data.wait_for_room(queue, deadline).await;
        }
    }

    /// Sends `operation` through `proxies`; returns the probe it counts under (a poll that
    /// found the queue empty counts as an empty poll).
    pub async fn execute(&self, proxies: &Proxies, operation: Operation<'_>) -> Result<usize, OperationError> {
        let probe = operation.probe();
        match (operation, proxies) {
            (Operation::Offer { queue, value }, Proxies::Queues(queues)) => {
                self.queue().offer(&queues[queue], queue, value).await.map(|()| probe)
            }
            (Operation::Poll { queue }, Proxies::Queues(queues)) => self.queue().poll(&queues[queue], queue).await,
            (Operation::Publish { topic, publisher, sequence }, Proxies::Topics(topics)) => {
                let Kind::Topic(data) = &self.kind else { unreachable!("only topic workloads publish") };
                data.publish(&topics[topic], topic, publisher, sequence).await.map(|()| probe)
            }
            (operation, Proxies::Map(map)) => self.execute_on_map(map, operation).await.map(|()| probe),
            (operation, proxies) => unreachable!("{operation:?} is not sent to {proxies:?}"),
        }
    }

    fn queue(&self) -> &QueueData {
        self.queue_data().expect("only queue workloads offer and poll")
    }

    async fn execute_on_map(&self, map: &Map, operation: Operation<'_>) -> Result<(), OperationError> {
        match operation {
            Operation::Get { key, .. } => match map.get(&key).await? {
                Some(_) => Ok(()),
                None => Err(OperationError::MissingKey),
            },
            Operation::Set { key, value, .. } => Ok(map.set(&key, value).await?),
            Operation::ReadModifyWrite { key, value } => {
                if map.get(&key).await?.is_none() {
                    return Err(OperationError::MissingKey);
                }
                Ok(map.set(&key, value).await?)
            }
            Operation::Insert { key, value, key_number } => {
                let result = map.set(&key, value).await;
                let Kind::Ycsb(data) = &self.kind else { unreachable!("only YCSB workloads insert") };
                data.inserts.acknowledge(key_number);
                Ok(result?)
            }
            Operation::Scan { key, length } => {
                let page = map.entries_page(&greater_equal_predicate("__key", &key), length).await?;
                match page.first() {
                    Some((first, _)) if *first == key => Ok(()),
                    _ => Err(OperationError::ScanStart { found: page.len() }),
                }
            }
            operation => unreachable!("{operation:?} is not a map operation"),
        }
    }
}

/// The value a loaded entry gets: a fixed function of the seed and the entry number.
fn value_index(seed: u64, index: u64, values: usize) -> usize {
    (mix64(seed.rotate_left(17) ^ index) % values as u64) as usize
}

impl MapData {
    fn build(test: &MapTest, seed: u64) -> MapData {
        let mut rng = Rng::new(seed);
        let (key_count, value_count) = (test.key_count as usize, test.value_count as usize);
        let (keys, values) = match test.class {
            MapTestClass::StringStringMap => {
                let width = test.key_length as usize;
                let keys = (0..key_count).map(|index| serialize_string(&format!("{index:0>width$}"))).collect();
                let values = (0..value_count)
                    .map(|_| serialize_string(&random_text(&mut rng, test.value_length as usize)))
                    .collect();
                (keys, values)
            }
            MapTestClass::IntByteMap => {
                let keys = (0..key_count).map(|index| serialize_integer(index as i32)).collect();
                let values = (0..value_count)
                    .map(|_| serialize_bytes(&random_bytes(&mut rng, test.value_length as usize)))
                    .collect();
                (keys, values)
            }
        };
        MapData { keys, values, put_probability: test.put_probability }
    }
}

impl YcsbData {
    fn build(workload: &YcsbWorkload, seed: u64) -> YcsbData {
        let mut rng = Rng::new(seed);
        let record_bytes = workload.record_bytes();
        let pool = (YCSB_VALUE_POOL as u64).min((YCSB_VALUE_POOL_BYTES / record_bytes).max(1)) as usize;
        let values = (0..pool).map(|_| serialize_bytes(&random_text(&mut rng, record_bytes as usize).into_bytes()));
        let proportions = [
            workload.read_proportion,
            workload.update_proportion,
            workload.insert_proportion,
            workload.read_modify_write_proportion,
            workload.scan_proportion,
        ];
        let total: f64 = proportions.iter().sum();
        let mut cumulative = [0.0; 5];
        let mut sum = 0.0;
        for (slot, proportion) in cumulative.iter_mut().zip(proportions) {
            sum += proportion / total;
            *slot = sum;
        }
        cumulative[4] = 1.0;
        let inserts = AcknowledgedCounter::new(workload.record_count);
        let first = workload.insert_start;
        let chooser = match workload.request_distribution {
            RequestDistribution::Uniform => KeyChooser::Uniform(Uniform::new(first, first + workload.insert_count - 1)),
            RequestDistribution::Zipfian => {
                KeyChooser::Zipfian(ScrambledZipfian::new(first, workload.zipfian_max_key()))
            }
            RequestDistribution::Latest => KeyChooser::Latest(SkewedLatest::new(inserts.last_value())),
        };
        let (min, max) = (i64::from(workload.min_scan_length), i64::from(workload.max_scan_length));
        let scan_length = match workload.scan_length_distribution {
            ScanLengthDistribution::Uniform => ScanLength::Uniform(Uniform::new(min, max)),
            ScanLengthDistribution::Zipfian => ScanLength::Zipfian(Zipfian::new(min, max)),
        };
        YcsbData { workload: workload.clone(), values: values.collect(), cumulative, chooser, scan_length, inserts }
    }

    fn key(&self, number: i64) -> Vec<u8> {
        serialize_string(&self.workload.key_name(number))
    }

    fn loaded_value(&self, seed: u64, number: i64) -> &[u8] {
        &self.values[value_index(seed, number as u64, self.values.len())]
    }

    fn random_value(&self, rng: &mut Rng) -> &[u8] {
        &self.values[rng.below(self.values.len() as u64) as usize]
    }

    fn next_operation<'a>(&'a self, worker: &mut Worker) -> Operation<'a> {
        let draw = worker.rng.next_f64();
        let kind = self.cumulative.iter().position(|&bound| draw < bound).unwrap_or(SCAN);
        if kind == INSERT {
            let key_number = self.inserts.next_value();
            let value = self.random_value(&mut worker.rng);
            return Operation::Insert { key: self.key(key_number), value, key_number };
        }
        let key = self.key(self.next_key_number(worker));
        match kind {
            READ => Operation::Get { probe: READ, key: Cow::Owned(key) },
            UPDATE => Operation::Set { probe: UPDATE, key: Cow::Owned(key), value: self.random_value(&mut worker.rng) },
            SCAN => {
                let rng = &mut worker.rng;
                let length = match worker.scan_length.as_mut().expect("YCSB workers have a scan length chooser") {
                    ScanLength::Uniform(uniform) => uniform.next(rng),
                    ScanLength::Zipfian(zipfian) => zipfian.next(rng),
                };
                Operation::Scan { key, length: length as usize }
            }
            _ => Operation::ReadModifyWrite { key, value: self.random_value(&mut worker.rng) },
        }
    }

    /// YCSB's `CoreWorkload.nextKeynum`: draw until the number is one already inserted.
    fn next_key_number(&self, worker: &mut Worker) -> i64 {
        let rng = &mut worker.rng;
        let chooser = worker.chooser.as_mut().expect("YCSB workers have a key chooser");
        let last = self.inserts.last_value();
        for _ in 0..MAX_KEY_DRAWS {
            let number = match chooser {
                KeyChooser::Latest(latest) => return latest.next(last, rng),
                KeyChooser::Uniform(uniform) => uniform.next(rng),
                KeyChooser::Zipfian(zipfian) => zipfian.next(rng),
            };
            if number <= last {
                return number;
            }
        }
        let first = self.workload.insert_start;
        first + rng.below((last - first + 1).max(1) as u64) as i64
    }
}

/// A Java `Integer` Data blob: no partition hash, type −7, the value big-endian.
pub fn serialize_integer(value: i32) -> Vec<u8> {
    let mut blob = Vec::with_capacity(12);
    blob.extend_from_slice(&0i32.to_be_bytes());
    blob.extend_from_slice(&INTEGER_TYPE_ID.to_be_bytes());
    blob.extend_from_slice(&value.to_be_bytes());
    blob
}

/// `length` random lowercase letters.
fn random_text(rng: &mut Rng, length: usize) -> String {
    (0..length).map(|_| char::from(b'a' + rng.below(26) as u8)).collect()
}

fn random_bytes(rng: &mut Rng, length: usize) -> Vec<u8> {
    (0..length).map(|_| rng.next_u64() as u8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::properties::Properties;

    fn workload(text: &str) -> Workload {
        let definition = TestDefinition::from_properties(&Properties::parse("t", text).unwrap()).unwrap();
        Workload::build(&definition, 1)
    }

    #[test]
    fn string_string_data_set_has_the_requested_shape() {
        let workload = workload("class=StringStringMapTest\nkeyCount=100\nkeyLength=20\nvalueLength=7\nvalueCount=3\n");
        assert_eq!(workload.load_count(), 100);
        let (key, value) = workload.load_entry(42);
        assert_eq!(ferrogrid_client::deserialize_string(&key).unwrap(), "00000000000000000042");
        assert_eq!(ferrogrid_client::deserialize_string(value).unwrap().len(), 7);
        let Kind::Map(data) = &workload.kind else { panic!() };
        assert_eq!(data.values.len(), 3);
    }

    #[test]
    fn int_byte_keys_are_java_integers() {
        let workload = workload("class=IntByteMapTest\nkeyCount=1000\nvalueLength=5\n");
        let (key, value) = workload.load_entry(258);
        assert_eq!(key.as_ref(), &[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xf9, 0, 0, 1, 2][..]);
        assert_eq!(ferrogrid_client::deserialize_bytes(value).unwrap().len(), 5);
    }

    #[test]
    fn put_probability_splits_the_operations() {
        let workload = workload("class=StringStringMapTest\nkeyCount=10\nputProb=0.2\n");
        let mut worker = workload.worker(0);
        let puts = (0..10_000).filter(|_| workload.next_operation(&mut worker).probe() == PUT).count();
        assert!((1_700..2_300).contains(&puts), "{puts}");
    }

    #[test]
    fn ycsb_operations_follow_the_proportions_and_loaded_keys() {
        let workload = workload(
            "workload=site.ycsb.workloads.CoreWorkload\nrecordcount=100\noperationcount=100\n\
             readproportion=0.5\nupdateproportion=0.3\ninsertproportion=0.1\nreadmodifywriteproportion=0.1\n\
             requestdistribution=zipfian\n",
        );
        let mut worker = workload.worker(3);
        let mut per_probe = [0u32; 4];
        let loaded: std::collections::HashSet<Vec<u8>> =
            (0..100).map(|index| workload.load_entry(index).0.into_owned()).collect();
        for _ in 0..10_000 {
            let operation = workload.next_operation(&mut worker);
            per_probe[operation.probe()] += 1;
            match operation {
                Operation::Get { key, .. } | Operation::Set { key, .. } => assert!(loaded.contains(key.as_ref())),
                Operation::ReadModifyWrite { key, .. } => assert!(loaded.contains(&key)),
                Operation::Insert { key, key_number, .. } => {
                    assert!(key_number >= 100 && !loaded.contains(&key));
                }
                other => panic!("a YCSB workload sent {other:?}"),
            }
        }
        let [read, update, insert, rmw] = per_probe;
        assert!((4_700..5_300).contains(&read) && (2_700..3_300).contains(&update), "{per_probe:?}");
        assert!((800..1_200).contains(&insert) && (800..1_200).contains(&rmw), "{per_probe:?}");
    }

    #[test]
    fn queue_workers_offer_or_poll_their_queue() {
        let workload =
            workload("class=QueueTest\nproducerThreadCount=3\nconsumerThreadCount=2\nqueueCount=2\nvalueLength=9\n");
        assert_eq!((workload.load_count(), workload.probes), (0, &QUEUE_TEST_PROBES[..]));
        let kinds: Vec<String> = (0..5)
            .map(|index| format!("{:?}", workload.next_operation(&mut workload.worker(index))))
            .map(|operation| operation.split_whitespace().next().unwrap_or("").to_owned())
            .collect();
        assert_eq!(kinds, ["Offer", "Offer", "Offer", "Poll", "Poll"]);
        let queues: Vec<usize> = (0..5)
            .map(|index| match workload.next_operation(&mut workload.worker(index)) {
                Operation::Offer { queue, value } => {
                    assert_eq!(value.len(), 12 + 9);
                    queue
                }
                Operation::Poll { queue } => queue,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(queues, [0, 1, 0, 0, 1]);
    }

    #[test]
    fn publishers_number_their_messages() {
        let workload = workload("class=TopicTest\nthreadCount=3\ntopicCount=2\n");
        assert_eq!(workload.probes, &TOPIC_TEST_PROBES[..]);
        let mut worker = workload.worker(2);
        let sent: Vec<(usize, u32, u64)> = (0..3)
            .map(|_| match workload.next_operation(&mut worker) {
                Operation::Publish { topic, publisher, sequence } => (topic, publisher, sequence),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(sent, [(0, 2, 1), (0, 2, 2), (0, 2, 3)]);
        let Operation::Publish { topic, .. } = workload.next_operation(&mut workload.worker(1)) else { panic!() };
        assert_eq!(topic, 1);
    }

    #[test]
    fn latest_reads_follow_finished_inserts() {
        let workload = workload(
            "workload=site.ycsb.workloads.CoreWorkload\nrecordcount=1000\nreadproportion=1\nupdateproportion=0\n\
             requestdistribution=latest\ninsertorder=ordered\n",
        );
        let Kind::Ycsb(data) = &workload.kind else { panic!() };
        for _ in 0..500 {
            let number = data.inserts.next_value();
            data.inserts.acknowledge(number);
        }
        let mut worker = workload.worker(0);
        let recent = (0..1_000)
            .filter(|_| {
                let Operation::Get { key, .. } = workload.next_operation(&mut worker) else { panic!() };
                let name = ferrogrid_client::deserialize_string(&key).unwrap();
                name["user".len()..].parse::<i64>().unwrap() >= 1_400
            })
            .count();
        assert!(recent > 600, "{recent} of 1000 reads hit the newest 100 of 1500 records");
    }
}
