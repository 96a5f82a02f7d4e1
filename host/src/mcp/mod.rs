//! `recall mcp`: a Model Context Protocol server over stdio (the official
//! `rmcp` SDK) exposing six read-only tools over the store (DESIGN.md §11).
//!
//! [`scope`] decides what one call may see, [`tools`] answers each tool over
//! that view, [`catalog`] reads shards without writing the store; this file
//! is the rmcp glue: schemas, the 30 s deadline, errors as tool results.

pub mod catalog;
pub mod scope;
pub mod tools;

use crate::store::{Loaded, Store};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt};
use scope::{Scope, View};
use serde_json::Value;
use std::sync::Arc;
use std::time::SystemTime;
use tools::Deadline;

/// The MCP server: a store and the scope of what it may show.
#[derive(Clone)]
pub struct RecallMcp {
    store: Arc<Store>,
    scope: Scope,
    tool_router: ToolRouter<RecallMcp>,
}

impl std::fmt::Debug for RecallMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecallMcp")
            .field("scope", &self.scope)
            .finish()
    }
}

/// The current manifest, read without any write (a corrupt one is an
/// error here; the indexer repairs it).
fn manifest(store: &Store) -> Result<Arc<recall_core::Manifest>, String> {
    match store.load() {
        Ok(Loaded::Ok(m)) => Ok(m),
        Ok(Loaded::Missing) => Ok(Arc::new(recall_core::Manifest::empty(String::new(), 0))),
        Ok(Loaded::Corrupt) => {
            Err("store_unavailable: the manifest is corrupt; run recall index".into())
        }
        Err(e) => Err(format!("store_unavailable: {e}")),
    }
}

impl RecallMcp {
    /// A server over `store` limited to `scope`.
    pub fn new(store: Arc<Store>, scope: Scope) -> RecallMcp {
        RecallMcp {
            store,
            scope,
            tool_router: Self::tool_router(),
        }
    }

    /// Runs `f` on a blocking thread with this call's view and deadline; a
    /// tool error becomes an `isError` result with its message.
    async fn call<F>(&self, f: F) -> Result<CallToolResult, ErrorData>
    where
        F: FnOnce(&Store, &View, Deadline) -> Result<Value, String> + Send + 'static,
    {
        let store = self.store.clone();
        let scope = self.scope.clone();
        let deadline = Deadline::start();
        let job = tokio::task::spawn_blocking(move || {
            let view = scope.view(manifest(&store)?, SystemTime::now());
            f(&store, &view, deadline)
        });
        let out = match tokio::time::timeout(tools::DEADLINE, job).await {
            Err(_) => Err("deadline: the call ran out of its 30 s; ask something narrower".into()),
            Ok(Err(e)) => Err(format!("internal: {e}")),
            Ok(Ok(r)) => r,
        };
        Ok(match out {
            Ok(v) => CallToolResult::success(vec![ContentBlock::text(v.to_string())]),
            Err(msg) => CallToolResult::error(vec![ContentBlock::text(msg)]),
        })
    }
}

#[tool_router]
impl RecallMcp {
    /// Search past coding-agent conversations of this project.
    #[tool(
        description = "Search past coding-agent sessions of this project. Every word must occur in one message; \"quoted phrases\" keep their spaces. Returns up to 100 sessions (newest first) with up to 3 hit snippets each, the session key, title, cwd and time."
    )]
    async fn session_search(
        &self,
        Parameters(a): Parameters<tools::SearchArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(move |s, v, d| tools::session_search(s, v, &a, d))
            .await
    }

    /// Search inside one session.
    #[tool(
        description = "Search inside one session (key <source>:<id> or a session id). Returns up to 100 matching records in order, with record index, role, time, state (current/superseded) and a snippet."
    )]
    async fn session_event_search(
        &self,
        Parameters(a): Parameters<tools::EventSearchArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(move |s, v, d| tools::session_event_search(s, v, &a, d))
            .await
    }

    /// Read a window of records around one record.
    #[tool(
        description = "Read one record of a session in full, by index or locator, with up to 50 records before and after it (default 5; neighbours are cut to 240 characters)."
    )]
    async fn session_event_read(
        &self,
        Parameters(a): Parameters<tools::EventArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(move |s, v, d| tools::session_event_read(s, v, &a, d))
            .await
    }

    /// Lineage of a session.
    #[tool(
        description = "The lineage of a session: its ancestors (root first) and the tree of its descendants (subagents, forks, resumes, branches). Sessions outside this project appear as {outside_scope: true}."
    )]
    async fn session_trace(
        &self,
        Parameters(a): Parameters<tools::SessionArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(move |_, v, _| tools::session_trace(v, &a)).await
    }

    /// What replaced a superseded record.
    #[tool(
        description = "For one record of a session (by index or locator): whether a rollback, rewind, undo or branch superseded it, which mark did, and the current records that now stand in its place."
    )]
    async fn session_event_trace(
        &self,
        Parameters(a): Parameters<tools::EventArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(move |s, v, d| tools::session_event_trace(s, v, &a, d))
            .await
    }

    /// Recent sessions.
    #[tool(
        description = "Recent sessions of this project, newest first (up to 100), optionally filtered by time (since/until: epoch ms or RFC 3339), cwd prefix and sources."
    )]
    async fn session_list(
        &self,
        Parameters(a): Parameters<tools::ListArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(move |_, v, _| tools::session_list(v, &a)).await
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "recall",
    instructions = "Read-only search over this project's past coding-agent sessions (Claude Code, Codex, Kimi, Pi, Intendant, DeepSeek Harness, Gemini CLI, Copilot CLI, Qwen Code)."
)]
impl ServerHandler for RecallMcp {}

/// Serves MCP on stdin/stdout until the client closes it.
pub async fn serve_stdio(server: RecallMcp) -> anyhow::Result<()> {
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
