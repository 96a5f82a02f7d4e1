//! Preparing a shard in steps (issue #12): a generation body is parsed one
//! record at a time, folded into its lanes and indexed into its trigram
//! filters a chunk of bytes at a time, so a search checks its deadline
//! between chunks and a catalog keeps the progress for the next query
//! instead of preparing a big shard whole. The result is exactly
//! [`PreparedShard::from_bytes_with_options`]'s (a property test checks it).
//!
//! Only the object form of a shard is read (`{"session": …, "records": […],
//! "marks": […]}`, keys in any order, unknown keys ignored), which is what
//! every writer produces; anything else is an error.

use crate::active::derive_active;
use crate::grams::{GramSet, ShardGrams};
use crate::lane::Lane;
use crate::model::{Mark, MessageRecord, Role, SessionMeta, Shard};
use crate::prepared::PreparedShard;
use serde::de::{DeserializeOwned, Error as _, IgnoredAny};
use std::sync::Arc;

/// Where the parse is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Before the opening `{`.
    Open,
    /// After `{`: a key or `}`.
    FirstKey,
    /// After a member: `,` or `}`.
    AfterMember,
    /// After `"records": [`: a record or `]`.
    FirstRecord,
    /// After a record: `,` or `]`.
    AfterRecord,
    /// After the closing `}`: only whitespace may follow.
    Tail,
    /// Indexing the conversation lane's entries from this one.
    GramsConversation(usize),
    /// Indexing the tool lane's entries from this one.
    GramsTool(usize),
    /// Finished.
    Done,
}

/// A shard being prepared. [`Preparing::run`] does at least one chunk per
/// call and hands the shard out once it is ready.
#[derive(Debug)]
pub struct Preparing {
    bytes: Vec<u8>,
    pos: usize,
    phase: Phase,
    tools: bool,
    known: Option<Arc<ShardGrams>>,
    session: Option<SessionMeta>,
    records: Option<Vec<MessageRecord>>,
    marks: Option<Vec<Mark>>,
    conversation: Lane,
    tool: Lane,
    built: Option<(GramSet, GramSet)>,
    worked: u64,
}

impl Preparing {
    /// Starts preparing `bytes` (a generation body), reusing `grams` when the
    /// caller holds the shard's filters; `tools` as in
    /// [`PreparedShard::with_options`].
    pub fn new(bytes: Vec<u8>, grams: Option<Arc<ShardGrams>>, tools: bool) -> Preparing {
        Preparing {
            bytes,
            pos: 0,
            phase: Phase::Open,
            tools,
            known: grams,
            session: None,
            records: None,
            marks: None,
            conversation: Lane::default(),
            tool: Lane::default(),
            built: None,
            worked: 0,
        }
    }

    /// Bytes of work done so far (body bytes parsed plus folded bytes
    /// indexed into filters): what a chunk measures.
    pub fn worked(&self) -> u64 {
        self.worked
    }

    /// The size of the body being prepared.
    pub fn body_len(&self) -> usize {
        self.bytes.len()
    }

    /// Works in chunks of about `chunk` bytes, asking `expired` after each
    /// one: `Ok(Some(shard))` once ready, `Ok(None)` when `expired` said stop
    /// first (call again to go on), an error when the body is not a shard.
    /// A record is never split, so a chunk may overshoot by one record.
    pub fn run(
        &mut self,
        chunk: usize,
        expired: &dyn Fn() -> bool,
    ) -> Result<Option<PreparedShard>, serde_json::Error> {
        loop {
            let until = self.worked.saturating_add(chunk.max(1) as u64);
            while self.worked < until && self.phase != Phase::Done {
                self.step(until - self.worked)?;
            }
            if self.phase == Phase::Done {
                return self.take().map(Some);
            }
            if expired() {
                return Ok(None);
            }
        }
    }

    /// One chunk of about `chunk` bytes of work: [`Preparing::run`] that
    /// stops after its first chunk.
    pub fn chunk(&mut self, chunk: usize) -> Result<Option<PreparedShard>, serde_json::Error> {
        self.run(chunk, &|| true)
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// Skips whitespace and consumes one byte, which must be one of `want`.
    fn expect(&mut self, want: &[u8]) -> Result<u8, serde_json::Error> {
        self.skip_ws();
        match self.bytes.get(self.pos) {
            Some(b) if want.contains(b) => {
                self.pos += 1;
                Ok(*b)
            }
            Some(b) => Err(serde_json::Error::custom(format!(
                "unexpected byte {:?} at {} in a shard",
                char::from(*b),
                self.pos
            ))),
            None => Err(serde_json::Error::custom("a shard ends early")),
        }
    }

    /// Parses one JSON value at the current position.
    fn value<T: DeserializeOwned>(&mut self) -> Result<T, serde_json::Error> {
        self.skip_ws();
        let start = self.pos;
        let mut it = serde_json::Deserializer::from_slice(&self.bytes[start..]).into_iter::<T>();
        let v = match it.next() {
            Some(v) => v?,
            None => return Err(serde_json::Error::custom("a shard ends early")),
        };
        self.pos = start + it.byte_offset();
        self.worked += (self.pos - start) as u64;
        Ok(v)
    }

    /// One step: a token, a member, a record, or about `room` bytes of
    /// filter indexing.
    fn step(&mut self, room: u64) -> Result<(), serde_json::Error> {
        match self.phase {
            Phase::Open => {
                self.expect(b"{")?;
                self.phase = Phase::FirstKey;
            }
            Phase::FirstKey | Phase::AfterMember => {
                self.skip_ws();
                if self.bytes.get(self.pos) == Some(&b'}') {
                    self.pos += 1;
                    self.phase = Phase::Tail;
                    return Ok(());
                }
                if self.phase == Phase::AfterMember {
                    self.expect(b",")?;
                    self.skip_ws();
                }
                if self.bytes.get(self.pos) != Some(&b'"') {
                    return Err(serde_json::Error::custom("a shard key is not a string"));
                }
                let key: String = self.value()?;
                self.expect(b":")?;
                self.member(&key)?;
            }
            Phase::FirstRecord | Phase::AfterRecord => {
                self.skip_ws();
                if self.bytes.get(self.pos) == Some(&b']') {
                    self.pos += 1;
                    self.phase = Phase::AfterMember;
                    return Ok(());
                }
                if self.phase == Phase::AfterRecord {
                    self.expect(b",")?;
                }
                let r: MessageRecord = self.value()?;
                self.push(r);
                self.phase = Phase::AfterRecord;
            }
            Phase::Tail => {
                self.skip_ws();
                if self.pos != self.bytes.len() {
                    return Err(serde_json::Error::custom(
                        "trailing characters after a shard",
                    ));
                }
                if self.session.is_none() {
                    return Err(serde_json::Error::custom("missing field `session`"));
                }
                if self.records.is_none() {
                    return Err(serde_json::Error::custom("missing field `records`"));
                }
                self.bytes = Vec::new();
                self.phase = match self.known {
                    Some(_) => Phase::Done,
                    None => {
                        self.built = Some((
                            GramSet::sized_for(&self.conversation),
                            GramSet::sized_for(&self.tool),
                        ));
                        Phase::GramsConversation(0)
                    }
                };
            }
            Phase::GramsConversation(i) | Phase::GramsTool(i) => {
                let tool = matches!(self.phase, Phase::GramsTool(_));
                let lane = if tool { &self.tool } else { &self.conversation };
                let Some((c, t)) = self.built.as_mut() else {
                    self.phase = Phase::Done;
                    return Ok(());
                };
                let set = if tool { t } else { c };
                // About `room` bytes of folded text (at least one entry).
                let mut end = i;
                let mut bytes = 0usize;
                while end < lane.len() && (bytes as u64) < room {
                    bytes += lane.text(end).len() + 1;
                    end += 1;
                }
                set.add_entries(lane, i..end);
                self.worked += bytes.max(1) as u64;
                self.phase = match (end < lane.len(), tool) {
                    (true, false) => Phase::GramsConversation(end),
                    (true, true) => Phase::GramsTool(end),
                    (false, false) => Phase::GramsTool(0),
                    (false, true) => Phase::Done,
                };
            }
            Phase::Done => {}
        }
        Ok(())
    }

    fn member(&mut self, key: &str) -> Result<(), serde_json::Error> {
        let duplicate = |k: &str| serde_json::Error::custom(format!("duplicate field `{k}`"));
        match key {
            "records" => {
                if self.records.is_some() {
                    return Err(duplicate(key));
                }
                self.expect(b"[")?;
                self.records = Some(Vec::new());
                self.phase = Phase::FirstRecord;
                return Ok(());
            }
            "session" => {
                if self.session.is_some() {
                    return Err(duplicate(key));
                }
                self.session = Some(self.value()?);
            }
            "marks" => {
                if self.marks.is_some() {
                    return Err(duplicate(key));
                }
                self.marks = Some(self.value()?);
            }
            _ => {
                let _: IgnoredAny = self.value()?;
            }
        }
        self.phase = Phase::AfterMember;
        Ok(())
    }

    /// Adds a parsed record to its lane, as [`PreparedShard::with_options`]
    /// does.
    fn push(&mut self, mut r: MessageRecord) {
        let records = self.records.get_or_insert_with(Vec::new);
        let i = records.len();
        let need_tool_lane = self.tools || self.known.is_none();
        match r.role {
            Role::Tool if need_tool_lane => self.tool.push(i, &r.text),
            Role::Tool => {}
            _ => self.conversation.push(i, &r.text),
        }
        if !self.tools && r.role == Role::Tool {
            r.text = String::new();
        }
        records.push(r);
    }

    /// The finished shard (called once, in phase `Done`).
    fn take(&mut self) -> Result<PreparedShard, serde_json::Error> {
        let records = self.records.take().unwrap_or_default();
        let marks = self.marks.take().unwrap_or_default();
        let active = derive_active(&records, &marks);
        let max_ts_ms = records.iter().map(|r| r.ts_ms).max();
        let grams = match (self.known.take(), self.built.take()) {
            (Some(g), _) => g,
            (None, Some((conversation, tool))) => Arc::new(ShardGrams { conversation, tool }),
            (None, None) => Arc::new(ShardGrams {
                conversation: GramSet::build(&self.conversation),
                tool: GramSet::build(&self.tool),
            }),
        };
        let conversation = std::mem::take(&mut self.conversation);
        let mut tool = std::mem::take(&mut self.tool);
        if !self.tools {
            tool = Lane::default();
        }
        let session = self
            .session
            .take()
            .ok_or_else(|| serde_json::Error::custom("missing field `session`"))?;
        Ok(PreparedShard {
            shard: Shard {
                session,
                records,
                marks,
            },
            active,
            conversation,
            tool,
            max_ts_ms,
            grams,
            has_tools: self.tools,
        })
    }
}
