//! The byte encoding of [`Message`]s (the member layer puts it in one frame of a member
//! message). Little-endian; strings and lists are length-prefixed; decoding checks every
//! length against what is left, so a corrupt message is an error, never a panic.

use crate::membership::{MemberEntry, Message, RecoveryOutcome};
use crate::partition_table::{MemberId, PartitionTable, MAX_REPLICAS};

const HEARTBEAT: u8 = 1;
const JOIN_REQUEST: u8 = 2;
const MEMBERS: u8 = 3;
const TABLE: u8 = 4;
const READY: u8 = 5;
const LEAVE: u8 = 6;
const PROMOTE: u8 = 7;
const MERGE_CHECK: u8 = 8;
const MERGE_TO: u8 = 9;
const RESTORED: u8 = 10;
const RECOVERY: u8 = 11;

/// Longest member list or partition count a message may carry.
const MAX_ITEMS: usize = 1 << 16;

pub fn encode(message: &Message, out: &mut Vec<u8>) {
    match message {
        Message::Heartbeat { master, members_version } => {
            out.push(HEARTBEAT);
            match master {
                Some(master) => {
                    out.push(1);
                    put_member(out, master);
                }
                None => out.push(0),
            }
            out.extend_from_slice(&members_version.to_le_bytes());
        }
        Message::JoinRequest { member } => {
            out.push(JOIN_REQUEST);
            put_member(out, member);
        }
        Message::Members { version, members, cluster } => {
            out.push(MEMBERS);
            out.extend_from_slice(&version.to_le_bytes());
            out.extend_from_slice(&cluster.0.to_le_bytes());
            out.extend_from_slice(&(members.len() as u32).to_le_bytes());
            for member in members {
                put_member(out, member);
            }
        }
        Message::Table(table) => {
            out.push(TABLE);
            put_table(out, table);
        }
        Message::Restored { table } => put_restored(out, table.as_ref()),
        Message::Recovery { outcome, reason } => put_recovery(out, *outcome, reason),
        Message::Ready { version } => {
            out.push(READY);
            out.extend_from_slice(&version.to_le_bytes());
        }
        Message::MergeCheck { reply, members, cluster } => {
            out.push(MERGE_CHECK);
            out.push(u8::from(*reply));
            out.extend_from_slice(&cluster.0.to_le_bytes());
            out.extend_from_slice(&(members.len() as u32).to_le_bytes());
            for member in members {
                put_member(out, member);
            }
        }
        Message::MergeTo { master } => {
            out.push(MERGE_TO);
            put_member(out, master);
        }
        Message::Leave { member } => {
            out.push(LEAVE);
            out.extend_from_slice(&member.0.to_le_bytes());
        }
        Message::Promote { member } => {
            out.push(PROMOTE);
            out.extend_from_slice(&member.0.to_le_bytes());
        }
    }
}

pub fn decode(bytes: &[u8]) -> Result<Message, String> {
    let mut reader = Reader { bytes };
    let message = match reader.u8()? {
        HEARTBEAT => {
            let master = if reader.u8()? == 1 { Some(reader.member()?) } else { None };
            Message::Heartbeat { master, members_version: reader.u64()? }
        }
        JOIN_REQUEST => Message::JoinRequest { member: reader.member()? },
        MEMBERS => {
            let version = reader.u64()?;
            let cluster = MemberId(reader.u128()?);
            let count = reader.count()?;
            let members = (0..count).map(|_| reader.member()).collect::<Result<_, _>>()?;
            Message::Members { version, members, cluster }
        }
        TABLE => Message::Table(reader.table()?),
        RESTORED => {
            let table = match reader.u8()? {
                0 => None,
                1 => Some(reader.table()?),
                other => return Err(format!("table flag {other}")),
            };
            Message::Restored { table }
        }
        RECOVERY => {
            let outcome = match reader.u8()? {
                0 => RecoveryOutcome::Keep,
                1 => RecoveryOutcome::Drop,
                2 => RecoveryOutcome::Failed,
                other => return Err(format!("recovery outcome {other}")),
            };
            Message::Recovery { outcome, reason: reader.long_text()? }
        }
        READY => Message::Ready { version: reader.u64()? },
        LEAVE => Message::Leave { member: MemberId(reader.u128()?) },
        PROMOTE => Message::Promote { member: MemberId(reader.u128()?) },
        MERGE_CHECK => {
            let reply = reader.u8()? != 0;
            let cluster = MemberId(reader.u128()?);
            let count = reader.count()?;
            let members = (0..count).map(|_| reader.member()).collect::<Result<Vec<_>, _>>()?;
            Message::MergeCheck { reply, members, cluster }
        }
        MERGE_TO => Message::MergeTo { master: reader.member()? },
        tag => return Err(format!("unknown cluster message tag {tag}")),
    };
    if !reader.bytes.is_empty() {
        return Err(format!("{} bytes after a cluster message", reader.bytes.len()));
    }
    Ok(message)
}

/// `id u128 | address | join version u64 | lite u8 | client address`, addresses as a u16
/// length and UTF-8.
fn put_member(out: &mut Vec<u8>, member: &MemberEntry) {
    out.extend_from_slice(&member.id.0.to_le_bytes());
    put_text(out, &member.address);
    out.extend_from_slice(&member.join_version.to_le_bytes());
    out.push(u8::from(member.lite));
    put_text(out, &member.client_address);
}

/// `version u64 | partition count u32 | per partition MAX_REPLICAS member ids (0: none)`.
fn put_table(out: &mut Vec<u8>, table: &PartitionTable) {
    out.extend_from_slice(&table.version.to_le_bytes());
    out.extend_from_slice(&(table.partition_count() as u32).to_le_bytes());
    for partition in 0..table.partition_count() {
        for replica in table.replicas(partition) {
            out.extend_from_slice(&replica.map_or(0, |member| member.0).to_le_bytes());
        }
    }
}

/// `RESTORED | 0` (no table) or `RESTORED | 1 | table`.
fn put_restored(out: &mut Vec<u8>, table: Option<&PartitionTable>) {
    out.push(RESTORED);
    match table {
        Some(table) => {
            out.push(1);
            put_table(out, table);
        }
        None => out.push(0),
    }
}

/// `RECOVERY | outcome (0 keep, 1 drop, 2 failed) | reason`.
fn put_recovery(out: &mut Vec<u8>, outcome: RecoveryOutcome, reason: &str) {
    out.push(RECOVERY);
    out.push(match outcome {
        RecoveryOutcome::Keep => 0,
        RecoveryOutcome::Drop => 1,
        RecoveryOutcome::Failed => 2,
    });
    put_long_text(out, reason);
}

/// A partition table alone, as [`Message::Table`] carries it (what a member persists).
pub fn encode_table(table: &PartitionTable) -> Vec<u8> {
    let mut out = Vec::new();
    put_table(&mut out, table);
    out
}

/// Reads what [`encode_table`] wrote.
pub fn decode_table(bytes: &[u8]) -> Result<PartitionTable, String> {
    let mut reader = Reader { bytes };
    let table = reader.table()?;
    if !reader.bytes.is_empty() {
        return Err(format!("{} bytes after a partition table", reader.bytes.len()));
    }
    Ok(table)
}

/// A reason: a u32 length and UTF-8, at most `MAX_ITEMS` bytes (longer is cut at a char).
fn put_long_text(out: &mut Vec<u8>, text: &str) {
    let mut end = text.len().min(MAX_ITEMS);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    out.extend_from_slice(&(end as u32).to_le_bytes());
    out.extend_from_slice(&text.as_bytes()[..end]);
}

/// Addresses are host:port, far below the u16 length (the member's config bounds them).
fn put_text(out: &mut Vec<u8>, text: &str) {
    assert!(text.len() <= usize::from(u16::MAX), "an address of {} bytes", text.len());
    out.extend_from_slice(&(text.len() as u16).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl Reader<'_> {
    fn take(&mut self, count: usize) -> Result<&[u8], String> {
        if self.bytes.len() < count {
            return Err(format!("cluster message truncated: {count} bytes wanted, {} left", self.bytes.len()));
        }
        let (head, rest) = self.bytes.split_at(count);
        self.bytes = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    fn u128(&mut self) -> Result<u128, String> {
        Ok(u128::from_le_bytes(self.take(16)?.try_into().expect("16 bytes")))
    }
    fn count(&mut self) -> Result<usize, String> {
        let count = u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")) as usize;
        if count > MAX_ITEMS {
            return Err(format!("cluster message lists {count} items"));
        }
        Ok(count)
    }
    fn text(&mut self) -> Result<String, String> {
        let length = u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")) as usize;
        Ok(std::str::from_utf8(self.take(length)?).map_err(|_| "address is not UTF-8")?.to_owned())
    }
    fn long_text(&mut self) -> Result<String, String> {
        let length = self.count()?;
        Ok(std::str::from_utf8(self.take(length)?).map_err(|_| "text is not UTF-8")?.to_owned())
    }
    fn table(&mut self) -> Result<PartitionTable, String> {
        let version = self.u64()?;
        let count = self.count()?;
        if count == 0 {
            return Err("a partition table with no partitions".into());
        }
        let mut table = PartitionTable::empty(count);
        table.version = version;
        for partition in 0..count {
            let mut row = [None; MAX_REPLICAS];
            for slot in &mut row {
                let id = self.u128()?;
                *slot = (id != 0).then_some(MemberId(id));
            }
            table.set_replicas(partition, row);
        }
        Ok(table)
    }
    fn member(&mut self) -> Result<MemberEntry, String> {
        let id = MemberId(self.u128()?);
        let address = self.text()?;
        let join_version = self.u64()?;
        let lite = match self.u8()? {
            0 => false,
            1 => true,
            other => return Err(format!("lite flag {other}")),
        };
        Ok(MemberEntry { id, address, join_version, lite, client_address: self.text()? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assign;

    #[test]
    fn every_message_round_trips() {
        let member =
            MemberEntry { join_version: 103, ..MemberEntry::new(MemberId(7 << 64 | 9), "127.0.0.1:5701".into()) };
        let lite = MemberEntry { lite: true, client_address: "10.0.0.1:5702".into(), ..member.clone() };
        let table = assign(&PartitionTable::empty(271), &[MemberId(1), MemberId(2), MemberId(3)], 2);
        let table_again = table.clone();
        assert_eq!(decode_table(&encode_table(&table)).unwrap(), table);
        let messages = [
            Message::Heartbeat { master: Some(member.clone()), members_version: 4 },
            Message::Heartbeat { master: None, members_version: 0 },
            Message::JoinRequest { member: member.clone() },
            Message::Members { version: 3, members: vec![member.clone(), lite], cluster: MemberId(77) },
            Message::Table(table),
            Message::Ready { version: 12 },
            Message::Leave { member: MemberId(5) },
            Message::Promote { member: MemberId(6) },
            Message::MergeCheck { reply: true, members: vec![member.clone()], cluster: MemberId(8) },
            Message::MergeCheck { reply: false, members: vec![], cluster: MemberId(0) },
            Message::MergeTo { master: member.clone() },
            Message::Restored { table: Some(table_again) },
            Message::Restored { table: None },
            Message::Recovery { outcome: RecoveryOutcome::Keep, reason: String::new() },
            Message::Recovery { outcome: RecoveryOutcome::Failed, reason: "2 member(s) did not come back".into() },
        ];
        for message in messages {
            let mut bytes = Vec::new();
            encode(&message, &mut bytes);
            assert_eq!(decode(&bytes).unwrap(), message);
            for cut in 0..bytes.len() {
                assert!(decode(&bytes[..cut]).is_err(), "a truncated {message:?} must not decode");
            }
        }
    }
}
