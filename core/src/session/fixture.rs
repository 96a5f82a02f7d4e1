//! A small hand-made shard with two marks, shared by the session tests.

use crate::model::{
    AnchorPosition, Locator, Mark, MessageRecord, Role, SessionMeta, Shard, Source,
};
use crate::prepared::PreparedShard;

fn rec(i: usize, role: Role, text: &str, item: Option<&str>, turn: Option<u32>) -> MessageRecord {
    MessageRecord {
        role,
        ts_ms: i as i64 * 1000,
        text: text.to_string(),
        truncated: false,
        locator: Locator::NativeEvent {
            line_no: i as u64 + 1,
            content_hash16: format!("{i:016x}"),
        },
        seq: None,
        turn,
        item_id: item.map(str::to_string),
        subagent: false,
        generation: 0,
    }
}

/// Records 3–4 are superseded by an item-anchor rewind at 5 (replaced by
/// 5–7), record 7 by an undo at 8; record 6 is a subagent record.
pub fn shard() -> PreparedShard {
    let mut records = vec![
        rec(0, Role::User, "Fix the bug in parser", Some("u0"), Some(1)),
        rec(
            1,
            Role::Assistant,
            "I will fix  the\nbug.",
            Some("a1"),
            None,
        ),
        rec(2, Role::Tool, "cargo test --bug", None, None),
        rec(3, Role::User, "Now the CAFÉ menu", Some("u3"), Some(2)),
        rec(4, Role::Assistant, "Straße done", Some("a4"), None),
        rec(5, Role::User, "Instead, fix the é bug", Some("u5"), Some(3)),
        rec(6, Role::Assistant, "subagent says hi", Some("s6"), None),
        rec(7, Role::Assistant, "fixed the bug", Some("a7"), None),
        rec(8, Role::User, "thanks", Some("u8"), Some(4)),
        rec(9, Role::Assistant, "welcome, bug gone", Some("a9"), None),
    ];
    records[6].subagent = true;
    let marks = vec![
        Mark::ItemAnchor {
            at: 5,
            item_id: "u3".into(),
            position: AnchorPosition::Before,
        },
        Mark::RecordIds {
            at: 8,
            ids: vec!["a7".into()],
            reason: "undo".into(),
        },
    ];
    PreparedShard::new(Shard {
        session: SessionMeta {
            source: Source::Codex,
            session_id: "s1".into(),
            title: Some("fixture".into()),
            cwd: Some("/p".into()),
            branch: None,
            created_ms: Some(0),
            updated_ms: Some(9000),
            messages: 9,
            parent: None,
            resume: None,
            paths: vec![],
            models: Vec::new(),
        },
        records,
        marks,
    })
}
