//! `--max-tokens N` and `--fields LEVEL` of `recall search`, `show` and
//! `sessions`: for agents that shell out instead of speaking MCP. Either flag
//! turns the output into the budgeted JSON answer the MCP tools give
//! (`crate::engine::answer`): never more than N tokens (characters / 4),
//! with `truncated` saying what was cut and a `cursor` or `next_offset`
//! saying how to get the rest.

use crate::engine::answer::Shape;
use crate::engine::budget::{Fields, DEFAULT_MAX_TOKENS, MAX_MAX_TOKENS, MIN_MAX_TOKENS};
use clap::Args;
use serde_json::{json, Value};

/// The answer-shaping flags.
#[derive(Debug, Default, Args)]
pub struct AgentArgs {
    /// Print the budgeted JSON answer an agent reads, at most N tokens (characters / 4;
    /// 200–250000). What does not fit is cut (hits per session, then sessions, then text) and
    /// named under "truncated"; "cursor" or "next_offset" continues.
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(MIN_MAX_TOKENS..=MAX_MAX_TOKENS))]
    pub max_tokens: Option<u64>,
    /// Detail of the budgeted JSON answer: minimal (keys, titles, times, one snippet), summary
    /// (the default) or full. Implies the budgeted answer (8000 tokens unless --max-tokens).
    #[arg(long, value_name = "LEVEL", value_parser = ["minimal", "summary", "full"])]
    pub fields: Option<String>,
}

impl AgentArgs {
    /// The answer's shape when either flag was given.
    pub fn shape(&self) -> Option<Shape> {
        if self.max_tokens.is_none() && self.fields.is_none() {
            return None;
        }
        let fields = self
            .fields
            .as_deref()
            .and_then(|f| f.parse::<Fields>().ok())
            .unwrap_or_default();
        Some(Shape {
            max_tokens: Some(self.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
            fields,
        })
    }
}

/// The `index` block of a CLI answer: the revision that answered, when the
/// store last published, and who answered (`daemon`, `store` or `team`).
pub fn index_block(revision: u64, updated_ms: i64, via: &str) -> Value {
    json!({"revision": revision, "updated_ms": updated_ms, "via": via})
}

/// Why an answer is empty, for a CLI run over `sessions` indexed sessions.
pub fn empty_block(sessions: usize) -> Value {
    let hint = if sessions == 0 {
        "the index holds no sessions yet: run `recall index` (or keep `recall serve` running)"
            .to_string()
    } else {
        format!("nothing matched among the {sessions} indexed sessions; widen the filters or the time range")
    };
    json!({"sessions_in_scope": sessions, "hint": hint})
}

/// A budget error (`invalid_param: …`) as the command's error.
pub fn budget_error(msg: String) -> anyhow::Error {
    anyhow::anyhow!(msg)
}
