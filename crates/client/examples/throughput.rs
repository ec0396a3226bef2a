//! A quick load check: `cargo run --release -p ferrogrid-client --example throughput --
//! [ADDRESS] [SECONDS] [TASKS] [unisocket]`. TASKS tasks each keep one get or set (9:1) in
//! flight on 10,000 String keys for SECONDS, then the operation and error counts and the
//! client's counters are printed (each error also goes to stderr). Only loopback addresses are accepted.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ferrogrid_client::{serialize_string, Client, ClientConfig};
use tokio::time::Instant;

const KEYS: u64 = 10_000;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let address: SocketAddr = args.first().map(String::as_str).unwrap_or("127.0.0.1:5701").parse()?;
    assert!(address.ip().is_loopback(), "only loopback members");
    let seconds: u64 = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(5);
    let tasks: u64 = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(64);
    let smart_routing = args.get(3).map(String::as_str) != Some("unisocket");
    let config = ClientConfig { addresses: vec![address], smart_routing, ..Default::default() };
    let client = Client::connect(config).await?;
    println!("members: {:?}", client.members().iter().map(|m| format!("{}:{}", m.host, m.port)).collect::<Vec<_>>());
    let map = client.map("throughput").await?;
    let value = serialize_string(&"v".repeat(100));
    let (operations, errors) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut workers = tokio::task::JoinSet::new();
    for task in 0..tasks {
        let (map, value, operations, errors) = (map.clone(), value.clone(), operations.clone(), errors.clone());
        workers.spawn(async move {
            let mut index = task;
            while Instant::now() < deadline {
                let key = serialize_string(&format!("key-{}", index % KEYS));
                let result = if index % 10 == 0 { map.set(&key, &value).await } else { map.get(&key).await.map(drop) };
                match result {
                    Ok(()) => operations.fetch_add(1, Ordering::Relaxed),
                    Err(error) => {
                        eprintln!("error: {error}");
                        errors.fetch_add(1, Ordering::Relaxed)
                    }
                };
                index += tasks;
            }
        });
    }
    while let Some(joined) = workers.join_next().await {
        joined?;
    }
    let (total, errors) = (operations.load(Ordering::Relaxed), errors.load(Ordering::Relaxed));
    let rate = total / seconds.max(1);
    println!("{total} operations, {errors} errors in {seconds} s: {rate} ops/s; {:?}", client.stats());
    client.shutdown().await;
    Ok(())
}
