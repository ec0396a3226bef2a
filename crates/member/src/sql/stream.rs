//! Streamed queries: a SELECT whose rows need no other partition's to be known
//! ([`ferrogrid_sql::exec::streams`]: one source, no ORDER BY, grouping or DISTINCT) is read a
//! round of partitions at a time, as the client fetches, instead of all at once.
//!
//! - Sql.Execute starts the first round over every partition. Each member reads its
//!   partitions until it holds `budget` passing rows (the page size the client asked for) or
//!   its share of half of what the statement may hold (`max-sql-rows-per-query`,
//!   `max-sql-bytes-per-query`), then leaves the rest unread and says which: those
//!   partitions are the next round's.
//! - The coordinator answers the first page and keeps the rest of the round's rows, with the
//!   partitions not read, in the connection's cursor ([`More`]). When less than a page is
//!   left it reads the next round *ahead* (a reactor starts it: `Task::SqlRound`), while the
//!   client decodes the page it got.
//! - Sql.Fetch answers from the rows held while a page's worth remains (or the round ahead
//!   failed: its error). Otherwise it waits for the round ahead ([`More::waiting`], answered
//!   with its rows), or starts the next round and is answered with its first page. A round is
//!   an internal [`SQL_ROUND`](crate::sql::round::SQL_ROUND) request to the other members (the
//!   partitions and the client's Sql.Execute).
//! - A round whose rows OFFSET skipped answers no empty page (an empty page that is not the
//!   last ends the Java client's iteration): the next round answers the same request.
//! - OFFSET and LIMIT are counted by the cursor over the rounds; once LIMIT is met, or no
//!   partition is left unread, no round follows.
//!
//! Invariants: at most one round of a cursor runs at a time (`More::busy`); a cursor holds at
//! most one round's rows (each member's `budget`, or its share of half the bounds, plus the
//! rest of the partition that reached it) beside less than a page of the last; a closed
//! cursor starts no round, and a round running when it closed adds to no cursor; every
//! request is answered once: by its round, by the round it waited for, or with the error of
//! the round that failed.

use crate::engine::request::{OpError, Reply, Statement};
use crate::engine::wide::WideRequest;
use crate::net::connection::ConnectionShared;
use crate::route::dispatch::Core;
use crate::sql::pages::{cursor_room, Respond};
use crate::sql::round::{decode_round, More, Resume, Round, Waiting};
use crate::sql::service::{Cursor, NextRound};
use crate::sql::shares::{Scan, Scanned};
use ferrogrid_protocol::codec::*;
use ferrogrid_protocol::{DecodeError, Message};
use ferrogrid_sql::plan::SelectPlan;
use ferrogrid_sql::{Code, SqlError};
use std::collections::VecDeque;
use std::sync::Arc;

/// A round to start: its plan, what each member reads, the request to the other members, the
/// statement's deadline.
type Started = (Box<SelectPlan>, Round, Vec<u8>, ferrogrid_sql::exec::Deadline);

/// A round the reactor's queue had no room for.
fn too_busy() -> SqlError {
    SqlError::generic("The member is too busy to read the query's next rows (its reactor's queue is full); retry")
}

/// The statement's error as this member's answer.
fn failed(respond: &Respond, error: SqlError) -> Result<Reply<'static>, OpError> {
    Ok(Reply::Statement(Statement::Failed { error, member: respond.member }))
}

impl Scan {
    /// The coordinator's answer to a streamed query's round: its rows go to the cursor (a new
    /// one for the first round) and the client's next page comes from it: the first page to
    /// Sql.Execute, or the next to Sql.Fetch. A round whose rows OFFSET skipped, with
    /// partitions left, answers nothing: the next round does (an empty page that is not the
    /// last ends the Java client's iteration).
    pub(crate) fn stream_reply(
        &self,
        resume: &Resume,
        respond: &Respond,
        partial: &mut Scanned,
    ) -> Result<Reply<'static>, OpError> {
        let Some(connection) = &self.connection else { return Ok(Reply::NoAnswer) };
        let key = (connection.id, respond.query_id);
        let (result, unread) = match self.round_rows(partial) {
            Ok(found) => found,
            Err(error) if matches!(resume, Resume::Ahead) => {
                ahead_failed(respond, key, error);
                return Ok(Reply::NoAnswer);
            }
            Err(error) => {
                respond.service.cursors.lock().remove(&key);
                return failed(respond, error);
            }
        };
        let mut cursors = respond.service.cursors.lock();
        let first = match resume {
            Resume::Open { request } => {
                if respond.deadline.is_closed() {
                    return failed(respond, ferrogrid_sql::exec::cancelled());
                }
                if let Err(error) = cursor_room(&cursors, connection.id, respond.max_cursors) {
                    return failed(respond, error);
                }
                cursors.insert(key, self.new_cursor(request, result.columns.clone()));
                true
            }
            Resume::Fetch { first } => *first,
            Resume::Ahead => {
                drop(cursors);
                return Ok(self.ahead_reply(respond, (result.rows, unread)));
            }
        };
        let Some(cursor) = cursors.get_mut(&key) else {
            return failed(respond, SqlError::generic("The query was closed while its rows were read"));
        };
        if let Some(mut more) = cursor.more.take() {
            cursor.rows.extend(more.window(result.rows));
            (more.unread, more.busy) = (unread, false);
            cursor.more = more.goes_on().then_some(more);
        }
        if let (true, Some(more)) = (cursor.rows.is_empty(), cursor.more.as_mut()) {
            more.busy = true;
            drop(cursors);
            return self.next_round(respond, first);
        }
        let (statement, last) = next_page(cursor, respond.page_size, first);
        let ahead = !last && reads_ahead(cursor, respond.page_size);
        if last {
            cursors.remove(&key);
        }
        drop(cursors);
        if ahead {
            self.hand_round(respond, false, true);
        }
        Ok(Reply::Statement(statement))
    }

    /// The cursor of a streamed query's first round, before its rows join it.
    fn new_cursor(&self, request: &[u8], columns: Vec<ferrogrid_sql::plan::ColumnMeta>) -> Cursor {
        let plan = &self.plan;
        let more = More {
            request: request.to_vec(),
            plan: plan.clone(),
            unread: Vec::new(),
            skip: plan.offset,
            left: plan.limit,
            deadline: self.deadline.clone(),
            busy: true,
            waiting: None,
            failure: None,
        };
        Cursor { columns, rows: VecDeque::new(), more: Some(Box::new(more)) }
    }

    /// A round read ahead: its rows join the cursor's; the request that came meanwhile, if
    /// any, is answered (unless the round had no row for it: the next round will), and the
    /// next round is read ahead when less than a page is left.
    fn ahead_reply(
        &self,
        respond: &Respond,
        (rows, unread): (Vec<Vec<ferrogrid_query::Value>>, Vec<u16>),
    ) -> Reply<'static> {
        let Some(connection) = &self.connection else { return Reply::NoAnswer };
        let key = (connection.id, respond.query_id);
        let mut cursors = respond.service.cursors.lock();
        let Some(cursor) = cursors.get_mut(&key) else { return Reply::NoAnswer };
        let mut waiting = None;
        if let Some(mut more) = cursor.more.take() {
            cursor.rows.extend(more.window(rows));
            (more.unread, more.busy, waiting) = (unread, false, more.waiting.take());
            cursor.more = more.goes_on().then_some(more);
        }
        let mut answer = None;
        if let Some(waiting) = waiting {
            match cursor.more.as_mut() {
                Some(more) if cursor.rows.is_empty() => more.waiting = Some(waiting),
                _ => answer = Some((next_page(cursor, waiting.page_size, waiting.first).0, waiting)),
            }
        }
        let page_size = answer.as_ref().map_or(respond.page_size, |(_, waiting)| waiting.page_size);
        let ahead = reads_ahead(cursor, page_size);
        // (read to its end by the waiting request; else the next fetch answers the last page)
        if answer.is_some() && cursor.rows.is_empty() && cursor.more.is_none() {
            cursors.remove(&key);
        }
        drop(cursors);
        if let Some((statement, waiting)) = answer {
            send_page(&waiting, &statement);
        }
        if ahead {
            self.hand_round(respond, false, true);
        }
        Reply::NoAnswer
    }

    /// Hands the next round of a round that had no row to answer to a reactor, which starts it
    /// for the same request; this round answers nothing.
    fn next_round(&self, respond: &Respond, first: bool) -> Result<Reply<'static>, OpError> {
        match self.hand_round(respond, first, false) {
            true => Ok(Reply::NoAnswer),
            false => failed(respond, too_busy()),
        }
    }

    /// Hands a reactor the next round (for this round's request, or `ahead` of the next);
    /// false when its queue has no room (the cursor goes).
    fn hand_round(&self, respond: &Respond, first: bool, ahead: bool) -> bool {
        let (Some(connection), Some(shared)) = (&self.connection, &self.shared) else { return false };
        let next = NextRound {
            connection: connection.clone(),
            correlation_id: self.correlation_id,
            query_id: respond.query_id,
            page_size: respond.page_size,
            first,
            ahead,
        };
        let reactor = &shared.reactors[0];
        match reactor.try_push(crate::shared::Task::SqlRound(Box::new(next))) {
            Ok(()) => {
                reactor.wake();
                true
            }
            Err(_) => {
                // (the cursor goes; a request waiting for its rows gets the failure)
                let cursor = respond.service.cursors.lock().remove(&(connection.id, respond.query_id));
                if let Some(waiting) = cursor.and_then(|cursor| cursor.more?.waiting) {
                    send_page(&waiting, &Statement::Failed { error: too_busy(), member: respond.member });
                }
                false
            }
        }
    }

    /// A round's rows (OFFSET and LIMIT not applied) and the partitions it left unread; the
    /// statement's error, or the distribution's when a partition of the round was neither
    /// read nor left unread (it moved while the round ran).
    fn round_rows(&self, partial: &mut Scanned) -> Result<(ferrogrid_sql::exec::ResultSet, Vec<u16>), SqlError> {
        let round =
            self.round.as_ref().ok_or_else(|| SqlError::generic("internal error: a round without partitions"))?;
        let mut unread: Vec<u16> =
            std::mem::take(&mut partial.unread).into_iter().filter(|p| !partial.parts.contains_key(p)).collect();
        unread.sort_unstable();
        unread.dedup();
        let missing = (0..partial.partition_count)
            .find(|p| round.reads(*p) && !partial.parts.contains_key(p) && unread.binary_search(p).is_err());
        if let Some(missing) = missing {
            return Err(SqlError::new(
                Code::PartitionDistribution,
                format!(
                    "Partition distribution has changed while the query ran (partition {missing} was not read); retry"
                ),
            ));
        }
        let parts = std::mem::take(&mut partial.parts).into_values();
        let respond = self.respond.as_ref().ok_or_else(|| SqlError::generic("internal error: a round unanswered"))?;
        let schemas: &dyn ferrogrid_query::SchemaSource = &*self.schemas;
        match ferrogrid_sql::exec::run_round(&self.plan, parts, schemas, respond.max_rows, &self.deadline) {
            Ok(result) => Ok((result, unread)),
            Err(error) => {
                let job = respond.query_id.local_id_low as u64;
                Err(ferrogrid_sql::exec::runtime_error(&self.plan, error, job))
            }
        }
    }
}

impl Core {
    /// Sql.Fetch: the next page of a cursor, from the rows it holds, or from the next round of
    /// its query when fewer than a page remain and partitions are left unread.
    pub(crate) fn sql_fetch(
        &mut self,
        connection: &Arc<ConnectionShared>,
        message: &Message<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        let request = SqlFetch::decode(message)?;
        let correlation_id = message.correlation_id();
        let page_size = request.cursor_buffer_size.max(1) as usize;
        let key = (connection.id, request.query_id);
        let member = self.shared.view.member_uuid;
        let service = self.shared.sql.clone();
        let mut cursors = service.cursors.lock();
        let Some(cursor) = cursors.get_mut(&key) else {
            drop(cursors);
            let error =
                SqlError::generic("Query cursor not found (closed, read to its end, or never opened on this member)");
            return fetch_failed(out, correlation_id, member, &error);
        };
        if let Some(error) = cursor.more.as_mut().filter(|_| cursor.rows.is_empty()).and_then(|m| m.failure.take()) {
            cursors.remove(&key);
            drop(cursors);
            return fetch_failed(out, correlation_id, member, &error);
        }
        let broken = cursor.more.as_ref().is_some_and(|more| more.failure.is_some());
        if let (true, false, Some(more)) = (cursor.rows.len() < page_size, broken, cursor.more.as_mut()) {
            if more.busy {
                // (a round reads ahead: this fetch is answered with its rows)
                if more.waiting.is_some() {
                    drop(cursors);
                    let error = SqlError::generic("The query's previous fetch is still running");
                    return fetch_failed(out, correlation_id, member, &error);
                }
                let first = false;
                more.waiting = Some(Waiting { connection: connection.clone(), correlation_id, page_size, first });
                return Ok(());
            }
            more.busy = true;
            let started = self.started(more, page_size);
            drop(cursors);
            let respond = self.sql_respond(request.query_id, page_size, started.3.clone());
            self.sql_round(connection, (correlation_id, out), started, respond, Resume::Fetch { first: false });
            return Ok(());
        }
        let (statement, last) = next_page(cursor, page_size, false);
        let ahead = (!last && reads_ahead(cursor, page_size))
            .then(|| cursor.more.as_deref().map(|more| self.started(more, page_size)))
            .flatten();
        if last {
            cursors.remove(&key);
        }
        drop(cursors);
        crate::sql::pages::write_statement(out, answer_type(false), correlation_id, &statement);
        if let Some(started) = ahead {
            let respond = self.sql_respond(request.query_id, page_size, started.3.clone());
            self.sql_round(connection, (0, &mut Vec::new()), started, respond, Resume::Ahead);
        }
        Ok(())
    }

    /// What the next round of `more` needs: its plan, what each member reads, the request to
    /// the other members, the deadline.
    fn started(&self, more: &More, page_size: usize) -> Started {
        let members = self.owner.replication.state.members.len();
        (more.plan.clone(), more.round(page_size, members), more.round_request(), more.deadline.clone())
    }

    /// A streamed query's next round (`Task::SqlRound`), for a request, or ahead of one.
    pub(crate) fn sql_next_round(&mut self, next: NextRound) {
        let NextRound { connection, correlation_id, query_id, page_size, first, ahead } = next;
        let mut out = Vec::new();
        let cursors = self.shared.sql.cursors.lock();
        match cursors.get(&(connection.id, query_id)).and_then(|cursor| cursor.more.as_deref()) {
            Some(more) => {
                let started = self.started(more, page_size);
                drop(cursors);
                let respond = self.sql_respond(query_id, page_size, started.3.clone());
                let resume = if ahead { Resume::Ahead } else { Resume::Fetch { first } };
                self.sql_round(&connection, (correlation_id, &mut out), started, respond, resume);
            }
            None if ahead => {}
            None => {
                drop(cursors);
                let (member, error) = (self.shared.view.member_uuid, SqlError::generic("The query was closed"));
                let statement = Statement::Failed { error, member };
                crate::sql::pages::write_statement(&mut out, answer_type(first), correlation_id, &statement);
            }
        }
        if !out.is_empty() {
            connection.send(&out);
        }
    }

    /// Starts a later round of a streamed query: a fan-out over the partitions left unread,
    /// answered as Sql.Fetch (as Sql.Execute when it answers the first page; not at all when
    /// it reads ahead, whose rows go to the cursor).
    fn sql_round(
        &mut self,
        connection: &Arc<ConnectionShared>,
        (correlation_id, out): (i64, &mut Vec<u8>),
        (plan, round, request, deadline): Started,
        respond: Respond,
        resume: Resume,
    ) {
        let name: Box<str> = plan.sources.first().map_or(String::new(), |s| s.mapping.map.clone()).into();
        let mut scan = Scan::new(plan, deadline, &self.shared);
        (scan.respond, scan.connection, scan.correlation_id) =
            (Some(respond), Some(connection.clone()), correlation_id);
        // (the members answer a later round as Sql.Fetch; a round that answers the first
        // page merges their answers as Sql.Execute's)
        let (answered, first) = match resume {
            Resume::Ahead => (None, false),
            Resume::Fetch { first } => (Some(connection), first),
            Resume::Open { .. } => (Some(connection), true),
        };
        (scan.round, scan.resume, scan.shared) = (Some(round), Some(resume), Some(self.shared.clone()));
        let response_type = answer_type(first);
        let operation = WideRequest::new(scan);
        let request = crate::sql::round::with_page(&request, first);
        self.fan_out_with(answered, correlation_id, response_type, name, operation, out, Some(&request));
    }

    /// Another member's later round of a streamed query ([`SQL_ROUND`](crate::sql::round::SQL_ROUND)): this member's share.
    pub(crate) fn sql_member_round(
        &mut self,
        link: &Arc<ConnectionShared>,
        correlation_id: i64,
        inner: &Message<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        let (only, request, first) = decode_round(inner)?;
        let execute = Message::parse(&request)?;
        self.sql_member_share(link, correlation_id, &execute, Some((only, first)), out)
    }
}

/// Whether the cursor should read its next round now: less than a page is left, partitions
/// are, and no round runs (the cursor is marked as running one).
fn reads_ahead(cursor: &mut Cursor, page_size: usize) -> bool {
    match cursor.more.as_mut() {
        Some(more) if !more.busy && more.failure.is_none() && cursor.rows.len() < page_size => {
            more.busy = true;
            true
        }
        _ => false,
    }
}

/// A round read ahead failed: the request waiting for it gets the failure (and the cursor
/// goes), or else the cursor keeps it for the fetch past its rows.
fn ahead_failed(
    respond: &Respond,
    key: (crate::net::connection::ConnectionId, ferrogrid_protocol::sql::SqlQueryId),
    error: SqlError,
) {
    let mut cursors = respond.service.cursors.lock();
    let Some(more) = cursors.get_mut(&key).and_then(|cursor| cursor.more.as_mut()) else { return };
    match more.waiting.take() {
        Some(waiting) => {
            cursors.remove(&key);
            drop(cursors);
            send_page(&waiting, &Statement::Failed { error, member: respond.member });
        }
        None => (more.failure, more.busy) = (Some(error), false),
    }
}

/// A page for a request that waited for a round: sent on its connection.
fn send_page(waiting: &Waiting, statement: &Statement) {
    let mut out = Vec::new();
    crate::sql::pages::write_statement(&mut out, answer_type(waiting.first), waiting.correlation_id, statement);
    waiting.connection.send(&out);
}

/// Sql.Fetch's answer that the statement failed.
fn fetch_failed(
    out: &mut Vec<u8>,
    correlation_id: i64,
    member: ferrogrid_protocol::Uuid,
    error: &SqlError,
) -> Result<(), DecodeError> {
    let statement = Statement::Failed { error: error.clone(), member };
    crate::sql::pages::write_statement(out, answer_type(false), correlation_id, &statement);
    Ok(())
}

/// The response a round's page answers: Sql.Execute's for the first page, else Sql.Fetch's.
fn answer_type(first: bool) -> ferrogrid_protocol::MessageType {
    if first {
        SqlExecute::TYPE.response()
    } else {
        SqlFetch::TYPE.response()
    }
}

/// The cursor's next page of up to `page_size` rows, as the first page or a later one, and
/// whether it is the last.
fn next_page(cursor: &mut Cursor, page_size: usize, first: bool) -> (Statement, bool) {
    let (rows, last) = cursor.take(page_size);
    let columns = cursor.columns.clone();
    let statement = match first {
        true => Statement::Rows { columns, rows, last },
        false => Statement::Page { columns, rows, last },
    };
    (statement, last)
}

impl Scan {
    /// Whether this member's share of a streamed query's round skips a partition: it is not
    /// the round's, or the member holds its share of the round already (then it is left
    /// unread, to the next round).
    pub(crate) fn round_skips(&self, partition: u16, unread: &mut Vec<u16>) -> bool {
        let Some(round) = &self.round else { return false };
        if !round.reads(partition) {
            return true;
        }
        if round.full(&self.held) {
            unread.push(partition);
            return true;
        }
        false
    }
}
