//! The cardinality estimator's rows of the operation table, each with its decoder.

use crate::engine::cardinality_estimator::request::{CardinalityEstimatorOp as Op, CardinalityEstimatorRequest};
use crate::engine::request::{Replies, Reply};
use crate::engine::structures::ObjectKind;
use crate::engine::wide::objects::destroy_object;
use crate::engine::wide::WideRequest;
use crate::partition::objects::kind;
use crate::partition::owner::{Call, Execute, PartitionOwner};
use crate::route::row::{row, Operation, A, S, W};
use ferrogrid_protocol::codec::*;
use std::borrow::Cow;

/// In the partition of the estimator's name. An add may create the estimator (up to 16 KiB),
/// so it counts against a tenant's data quota.
pub(crate) static ROWS: &[Operation] = &[
    row!(CardinalityEstimatorAdd, Partition, W.with(A).with(S), |r| estimator(r.name, Op::Add { hash: r.hash })),
    row!(CardinalityEstimatorEstimate, Partition, S, |r| estimator(r.name, Op::Estimate)),
];

/// A request on the estimator `name`.
fn estimator(name: &str, op: Op) -> CardinalityEstimatorRequest<'_> {
    CardinalityEstimatorRequest { name: Cow::Borrowed(name), op }
}

/// An estimator request: an add (answered with nothing), or an estimate (0 for an estimator
/// never added to, which is not created by it). Either may change the state (an estimate merges
/// pending entries), which goes to the backups before the answer.
impl Execute for CardinalityEstimatorRequest<'_> {
    fn execute(&self, owner: &mut PartitionOwner, call: &Call<'_>, out: &mut Vec<u8>) {
        let start = out.len();
        let partition = &mut owner.partitions[call.local];
        let answer = match self.op {
            Op::Add { hash } => {
                partition.store_mut::<kind::CardinalityEstimator>(&self.name, &mut owner.settings).0.add(hash);
                Reply::Empty
            }
            Op::Estimate => {
                let store = partition.existing_store_mut::<kind::CardinalityEstimator>(&self.name);
                Reply::Long(store.map_or(0, |store| store.estimate()))
            }
        };
        call.replies(out).reply(answer);
        owner.replicate(call.partition_id, call, out, start, Vec::new());
    }
}

/// Destroy of an estimator: its state, everywhere.
pub(crate) fn destroy(kind: ObjectKind) -> WideRequest {
    destroy_object(Some(kind), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::connection::ConnectionShared;
    use crate::partition::owner::testing::serving_alone;
    use crate::route::operations::testing::run;
    use ferrogrid_protocol::Message;

    #[test]
    fn rows_decode_their_requests_and_run_them_on_the_owner() {
        let mut owner = serving_alone();
        let (connection, _client) = ConnectionShared::loopback(1);
        let mut send = |encode: &dyn Fn(&mut Vec<u8>) -> usize| {
            let mut request = Vec::new();
            encode(&mut request);
            run(&mut owner, &connection, 1, &request).expect("decodes")
        };
        let estimate = |answer: Vec<u8>| LongResponse::decode(&Message::parse(&answer).unwrap()).unwrap().response;
        let name = "visitors";
        assert_eq!(estimate(send(&|out| CardinalityEstimatorEstimate { name }.encode(out, 9, 0, 0))), 0);
        for hash in [0, 1, -1, i64::MIN, i64::MAX, 0x1234_5678_9ABC_DEF0, 1] {
            let answer = send(&|out| CardinalityEstimatorAdd { hash, name }.encode(out, 9, 0, 0));
            assert!(EmptyResponse::decode(&Message::parse(&answer).unwrap()).is_ok());
        }
        // 0 and i64::MIN share their 25 low bits, as -1 and i64::MAX do; 1 came twice.
        assert_eq!(estimate(send(&|out| CardinalityEstimatorEstimate { name }.encode(out, 9, 0, 0))), 4);
        let other = "never-added";
        assert_eq!(estimate(send(&|out| CardinalityEstimatorEstimate { name: other }.encode(out, 9, 0, 0))), 0);
        let partition = &owner.partitions[0];
        assert!(partition.store::<kind::CardinalityEstimator>(other).is_none(), "an estimate creates nothing");
        assert!(partition.store::<kind::CardinalityEstimator>(name).is_some());
    }
}
