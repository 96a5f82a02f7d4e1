//! A shard made ready for search: its records' folded texts packed into two
//! lanes (conversation and tool rows), each one contiguous buffer so a term
//! is found with a single `memmem` pass, plus derived activity flags.

use crate::active::derive_active;
use crate::grams::{GramSet, ShardGrams};
use crate::lane::Lane;
use crate::model::{Role, Shard};
use std::sync::Arc;

/// A shard with folded lanes and activity flags.
#[derive(Clone, Debug)]
pub struct PreparedShard {
    /// The shard as stored.
    pub shard: Shard,
    /// `active[i]` for record `i` (derived from the marks).
    pub active: Vec<bool>,
    /// user + assistant records.
    pub conversation: Lane,
    /// tool rows.
    pub tool: Lane,
    /// Newest `ts_ms` of any record.
    pub max_ts_ms: Option<i64>,
    /// Trigram filters of the lanes.
    pub grams: Arc<ShardGrams>,
    /// Whether the tool lane (and tool rows' text) was kept.
    pub has_tools: bool,
}

impl PreparedShard {
    /// Prepares a parsed shard.
    pub fn new(shard: Shard) -> PreparedShard {
        PreparedShard::with_grams(shard, None)
    }

    /// Prepares a parsed shard, reusing its trigram filters when the caller
    /// already holds them (they are a pure function of the shard).
    pub fn with_grams(shard: Shard, grams: Option<Arc<ShardGrams>>) -> PreparedShard {
        PreparedShard::with_options(shard, grams, true)
    }

    /// Prepares a parsed shard. With `tools: false` the tool lane is not
    /// kept and tool rows lose their text (they stay in `records` so indices
    /// and marks hold): a conversation-scope search needs neither, and tool
    /// rows are most of a transcript's bytes. Filters always cover both lanes.
    pub fn with_options(
        mut shard: Shard,
        grams: Option<Arc<ShardGrams>>,
        tools: bool,
    ) -> PreparedShard {
        let active = derive_active(&shard.records, &shard.marks);
        let mut conversation = Lane::default();
        let mut tool = Lane::default();
        let need_tool_lane = tools || grams.is_none();
        for (i, r) in shard.records.iter().enumerate() {
            match r.role {
                Role::Tool if need_tool_lane => tool.push(i, &r.text),
                Role::Tool => {}
                _ => conversation.push(i, &r.text),
            }
        }
        let max_ts_ms = shard.records.iter().map(|r| r.ts_ms).max();
        let grams = grams.unwrap_or_else(|| {
            Arc::new(ShardGrams {
                conversation: GramSet::build(&conversation),
                tool: GramSet::build(&tool),
            })
        });
        if !tools {
            tool = Lane::default();
            for r in shard.records.iter_mut().filter(|r| r.role == Role::Tool) {
                r.text = String::new();
            }
        }
        PreparedShard {
            shard,
            active,
            conversation,
            tool,
            max_ts_ms,
            grams,
            has_tools: tools,
        }
    }

    /// Parses and prepares a generation file body.
    pub fn from_bytes(bytes: &[u8]) -> Result<PreparedShard, serde_json::Error> {
        PreparedShard::from_bytes_with_grams(bytes, None)
    }

    /// [`PreparedShard::from_bytes`], reusing filters the caller holds.
    pub fn from_bytes_with_grams(
        bytes: &[u8],
        grams: Option<Arc<ShardGrams>>,
    ) -> Result<PreparedShard, serde_json::Error> {
        PreparedShard::from_bytes_with_options(bytes, grams, true)
    }

    /// [`PreparedShard::with_options`] from a generation file body.
    pub fn from_bytes_with_options(
        bytes: &[u8],
        grams: Option<Arc<ShardGrams>>,
        tools: bool,
    ) -> Result<PreparedShard, serde_json::Error> {
        let shard: Shard = serde_json::from_slice(bytes)?;
        Ok(PreparedShard::with_options(shard, grams, tools))
    }

    /// Approximate heap footprint, for byte-bounded caches.
    pub fn heap_bytes(&self) -> usize {
        let records: usize = self
            .shard
            .records
            .iter()
            .map(|r| r.text.capacity() + std::mem::size_of_val(r) + 64)
            .sum();
        records
            + self.active.len()
            + self.conversation.heap_bytes()
            + self.tool.heap_bytes()
            + self.grams.heap_bytes()
    }
}
