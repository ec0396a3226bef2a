//! A streamed query's rounds as data (see `stream.rs`, which runs them): what a member reads
//! of a round ([`Round`]), what the cursor keeps for the next ([`More`]), and the request that
//! carries a later round to the other members ([`SQL_ROUND`]).

use ferrogrid_protocol::message::MessageWriter;
use ferrogrid_protocol::{DecodeError, Message, MessageType};
use ferrogrid_query::Value;
use ferrogrid_sql::plan::SelectPlan;
use std::collections::VecDeque;

/// Members' internal request for a later round of a streamed query: the partitions it reads,
/// then the client's Sql.Execute (never accepted from a client: the operation table has no
/// row for it).
pub(crate) const SQL_ROUND: MessageType = MessageType(0x21_FF01);

/// What one member reads of a round.
#[derive(Debug, Clone)]
pub(crate) struct Round {
    /// Passing rows a member holds before it leaves its other partitions of the round unread.
    pub(crate) budget: usize,
    /// The round's partitions, by id (None: every partition, the first round).
    pub(crate) only: Option<Vec<bool>>,
    /// The members the round runs on: together they hold at most half the statement's bounds.
    pub(crate) members: usize,
}

impl Round {
    /// The first round: every partition.
    pub(crate) fn first(budget: usize, members: usize) -> Round {
        Round { budget: budget.max(1), only: None, members: members.max(1) }
    }

    pub(crate) fn reads(&self, partition: u16) -> bool {
        self.only.as_ref().is_none_or(|only| only.get(partition as usize).copied().unwrap_or(false))
    }

    /// Whether a member that holds `held` of the round reads no more of its partitions: it
    /// holds the budget's rows, or its share of half what the statement may hold (so that a
    /// round stays within the bounds on the coordinator, which a whole scan would go past).
    pub(crate) fn full(&self, held: &ferrogrid_sql::exec::Held) -> bool {
        let bounds = held.bounds();
        let share = 2 * self.members;
        // (never full before it holds a row: every round reads something on every member)
        let (rows, bytes) = (self.budget.min(bounds.rows / share).max(1), (bounds.bytes / share).max(1));
        held.rows() >= rows || held.bytes() >= bytes
    }
}

/// What the coordinator does with a round's rows.
#[derive(Debug)]
pub(crate) enum Resume {
    /// The first round (Sql.Execute's): answer the first page, keep the rest in a new cursor.
    Open { request: Vec<u8> },
    /// A later round: add to the cursor, answer its next page (`first`: the first page, to
    /// Sql.Execute, when the rounds before had no row to answer).
    Fetch { first: bool },
    /// A round read ahead, while the client decodes the last page: add to the cursor, answer
    /// the request that came for a page meanwhile, if one did ([`More::waiting`]).
    Ahead,
}

/// The rest of a streamed query, in its cursor: what the next round needs.
#[derive(Debug)]
pub(crate) struct More {
    /// The client's Sql.Execute (what the other members prepare each round from).
    pub(crate) request: Vec<u8>,
    pub(crate) plan: Box<SelectPlan>,
    /// The partitions no round has read yet, ascending.
    pub(crate) unread: Vec<u16>,
    /// OFFSET rows still to skip, LIMIT rows still to answer.
    pub(crate) skip: usize,
    pub(crate) left: Option<usize>,
    pub(crate) deadline: ferrogrid_sql::exec::Deadline,
    /// A round of the cursor is running.
    pub(crate) busy: bool,
    /// A request for a page that came while a round read ahead: answered with its rows.
    pub(crate) waiting: Option<Waiting>,
    /// A round read ahead failed with no request waiting: the next fetch past the rows held
    /// answers it.
    pub(crate) failure: Option<ferrogrid_sql::SqlError>,
}

/// A request waiting for a round's rows.
#[derive(Debug)]
pub(crate) struct Waiting {
    pub(crate) connection: std::sync::Arc<crate::net::connection::ConnectionShared>,
    pub(crate) correlation_id: i64,
    pub(crate) page_size: usize,
    /// Sql.Execute's first page (else Sql.Fetch's).
    pub(crate) first: bool,
}

impl More {
    /// The rows of a round that the statement answers, OFFSET and LIMIT counted.
    pub(crate) fn window(&mut self, rows: Vec<Vec<Value>>) -> VecDeque<Vec<Value>> {
        let skipped = self.skip.min(rows.len());
        self.skip -= skipped;
        let taken: VecDeque<Vec<Value>> =
            rows.into_iter().skip(skipped).take(self.left.unwrap_or(usize::MAX)).collect();
        if let Some(left) = &mut self.left {
            *left -= taken.len();
        }
        taken
    }

    /// Whether another round may add rows.
    pub(crate) fn goes_on(&self) -> bool {
        !self.unread.is_empty() && self.left != Some(0)
    }

    /// The next round's request to the other members: its partitions and the client's request
    /// (a later page: [`with_page`] marks the first).
    pub(crate) fn round_request(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut writer = MessageWriter::request(&mut out, SQL_ROUND, 0, -1, 0);
        let partitions: Vec<u8> = self.unread.iter().flat_map(|p| p.to_be_bytes()).collect();
        writer.frame(&partitions).frame(&self.request).frame(&[0]);
        writer.finish();
        out
    }

    pub(crate) fn round(&self, budget: usize, members: usize) -> Round {
        let mut only = vec![false; self.unread.last().map_or(0, |last| *last as usize + 1)];
        for partition in &self.unread {
            only[*partition as usize] = true;
        }
        Round { only: Some(only), ..Round::first(budget, members) }
    }
}

/// An [`SQL_ROUND`] request marked as answering the first page (the response type the members
/// answer with), or not; its last frame is that one byte.
pub(crate) fn with_page(request: &[u8], first: bool) -> Vec<u8> {
    let mut request = request.to_vec();
    if let Some(flag) = request.last_mut() {
        *flag = u8::from(first);
    }
    request
}

/// An [`SQL_ROUND`] request: the round's partitions, the client's Sql.Execute, and whether the
/// round answers the first page.
pub(crate) fn decode_round(message: &Message<'_>) -> Result<(Vec<bool>, Vec<u8>, bool), DecodeError> {
    let mut reader = message.reader();
    let partitions = reader.value_frame("a round's partitions")?;
    if partitions.len() % 2 != 0 {
        return Err(DecodeError::InvalidValue("a round's partitions"));
    }
    let mut only = Vec::new();
    for pair in partitions.chunks_exact(2) {
        let partition = u16::from_be_bytes([pair[0], pair[1]]) as usize;
        if only.len() <= partition {
            only.resize(partition + 1, false);
        }
        only[partition] = true;
    }
    let request = reader.value_frame("a round's statement")?.to_vec();
    let first = reader.value_frame("a round's page")? == [1];
    Ok((only, request, first))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrogrid_protocol::Message;

    #[test]
    fn a_round_request_carries_its_partitions_and_the_statement() {
        let service = crate::sql::service::SqlService::default();
        let ddl = "CREATE MAPPING m TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='varchar')".to_owned();
        crate::sql::service::apply_catalog(&service, &[ddl]);
        let prepared = ferrogrid_sql::prepare("SELECT * FROM m", Vec::new(), &service.catalog.read(), &service);
        let Ok(ferrogrid_sql::Prepared::Select(plan)) = prepared else { panic!("not a SELECT: {prepared:?}") };
        assert!(ferrogrid_sql::exec::streams(&plan));
        let mut more = More {
            request: vec![1, 2, 3],
            plan,
            unread: vec![3, 270],
            skip: 0,
            left: None,
            deadline: ferrogrid_sql::exec::Deadline::default(),
            busy: false,
            waiting: None,
            failure: None,
        };
        let bytes = with_page(&more.round_request(), true);
        let message = Message::parse(&bytes).unwrap();
        assert_eq!(message.message_type(), SQL_ROUND);
        let (only, request, first) = decode_round(&message).unwrap();
        assert_eq!((request, first), (vec![1, 2, 3], true));
        assert!(!decode_round(&Message::parse(&more.round_request()).unwrap()).unwrap().2);
        let read: Vec<usize> = only.iter().enumerate().filter(|(_, r)| **r).map(|(p, _)| p).collect();
        assert_eq!(read, vec![3, 270]);
        let round = more.round(0, 0);
        assert!(round.reads(3) && round.reads(270) && !round.reads(4) && !round.reads(271));
        assert_eq!((round.budget, round.members), (1, 1));
        assert!(Round::first(10, 3).reads(100));
        // a member stops at the budget, or at its share of half the bounds
        let held = ferrogrid_sql::exec::Held::new(ferrogrid_sql::exec::Bounds { rows: 600, bytes: 6000 });
        let round = Round::first(150, 2);
        held.add(149, 10).unwrap();
        assert!(!round.full(&held));
        held.add(1, 0).unwrap();
        assert!(round.full(&held));
        assert!(Round::first(1000, 3).full(&held));
        // bounds smaller than the members' shares: a member still reads until it holds a row
        let tiny = ferrogrid_sql::exec::Held::new(ferrogrid_sql::exec::Bounds { rows: 1, bytes: 1 });
        assert!(!Round::first(10, 3).full(&tiny));
        tiny.add(1, 1).unwrap();
        assert!(Round::first(10, 3).full(&tiny));
        let round = Round::first(1000, 1);
        assert!(!round.full(&held));
        held.add(0, 2990).unwrap();
        assert!(round.full(&held));
        // OFFSET and LIMIT counted over rounds
        (more.skip, more.left) = (3, Some(4));
        let row = |i: i32| vec![Value::Int(i)];
        assert_eq!(more.window((0..2).map(row).collect()).len(), 0);
        assert_eq!(more.window((0..5).map(row).collect()), VecDeque::from(vec![row(1), row(2), row(3), row(4)]));
        assert_eq!(more.left, Some(0));
        assert!(!more.goes_on());
        assert!(more.window((0..5).map(row).collect()).is_empty());
    }
}
