//! `recall mcp`: a Model Context Protocol server over stdio (the official
//! `rmcp` SDK) exposing seven read-only tools over the store (DESIGN.md §11,
//! §13 "Agent answers").
//!
//! [`scope`] decides what one call may see, [`tools`], [`read`] and [`deep`] answer
//! each tool over that view within its budget ([`crate::engine::budget`]), [`args`]
//! and [`schema`] define what clients send and see, [`catalog`] reads shards
//! without writing the store, [`frame`] answers malformed JSON-RPC lines
//! before they reach rmcp; this file is the rmcp glue: tool metadata, the
//! 30 s deadline, the store opened on first use, errors as tool results.

pub mod args;
pub mod catalog;
pub mod deep;
pub mod frame;
pub mod read;
pub mod schema;
pub mod scope;
pub mod tools;

use crate::store::{Loaded, Store};
use args::{DeepArgs, EventArgs, EventSearchArgs, ListArgs, SearchArgs, SessionArgs};
use recall_core::model::Source;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ServerCapabilities, ServerConfig};
use rmcp::model::{Implementation, ToolAnnotations};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler};
use scope::{Scope, View};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;
use tools::{Call, Deadline};

/// The MCP server: the store folder and the scope of what it may show.
#[derive(Clone)]
pub struct RecallMcp {
    dir: PathBuf,
    store: Arc<OnceLock<Arc<Store>>>,
    scope: Scope,
    sources: Arc<crate::deep::Roots>,
    tool_router: ToolRouter<RecallMcp>,
}

impl std::fmt::Debug for RecallMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecallMcp")
            .field("scope", &self.scope)
            .finish()
    }
}

/// The agents recall reads, from the one source registry.
pub fn agents() -> String {
    let name = |s: Source| match s {
        Source::Dsh => "dsh (DeepSeek Harness)".to_string(),
        s => s.as_str().to_string(),
    };
    Source::ALL
        .iter()
        .map(|s| name(*s))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The store at `dir`, opened once it holds an index (never created here).
fn open(dir: &std::path::Path, cell: &OnceLock<Arc<Store>>) -> Result<Arc<Store>, String> {
    if let Some(s) = cell.get() {
        return Ok(s.clone());
    }
    let indexed = dir.join(crate::store::catalog::CATALOG).exists()
        || dir.join(crate::store::manifest::MANIFEST).exists();
    if !indexed {
        return Err(
            "no_index: nothing is indexed yet; run `recall index` (or keep `recall serve` running) and call again"
                .into(),
        );
    }
    let s = Store::open(dir).map_err(|e| format!("store_unavailable: {e}"))?;
    Ok(cell.get_or_init(|| Arc::new(s)).clone())
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

/// Title, input schema and output schema (main field, array?) per tool.
fn metadata(name: &str) -> Option<(&'static str, JsonObject, JsonObject)> {
    Some(match name {
        "session_search" => (
            "Search past sessions",
            schema::input::<SearchArgs>(),
            schema::output("sessions", true),
        ),
        "session_list" => (
            "List recent sessions",
            schema::input::<ListArgs>(),
            schema::output("sessions", true),
        ),
        "session_event_search" => (
            "Search inside a session",
            schema::input::<EventSearchArgs>(),
            schema::output("hits", true),
        ),
        "session_event_read" => (
            "Read a record",
            schema::input::<EventArgs>(),
            schema::output("records", true),
        ),
        "session_event_trace" => (
            "Trace a record",
            schema::input::<EventArgs>(),
            schema::output("record", false),
        ),
        "session_deep_search" => (
            "Deep Search the full logs",
            schema::input::<DeepArgs>(),
            schema::output("sessions", true),
        ),
        "session_trace" => (
            "Trace a session's lineage",
            schema::input::<SessionArgs>(),
            schema::output("descendants", true),
        ),
        _ => return None,
    })
}

impl RecallMcp {
    /// A server over the store folder `dir` limited to `scope`.
    pub fn new(dir: PathBuf, scope: Scope) -> RecallMcp {
        let mut tool_router = Self::tool_router();
        let agents = agents();
        for route in tool_router.map.values_mut() {
            let t = &mut route.attr;
            if let Some((title, input, output)) = metadata(&t.name) {
                t.title = Some(title.to_string());
                t.input_schema = Arc::new(input);
                t.output_schema = Some(Arc::new(output));
                let mut a = ToolAnnotations::new();
                a.title = Some(title.to_string());
                a.read_only_hint = Some(true);
                a.destructive_hint = Some(false);
                a.idempotent_hint = Some(true);
                a.open_world_hint = Some(false);
                t.annotations = Some(a);
            }
            if let Some(d) = &t.description {
                t.description = Some(d.replace("{agents}", &agents).into());
            }
        }
        RecallMcp {
            dir,
            store: Arc::default(),
            scope,
            sources: Arc::default(),
            tool_router,
        }
    }

    /// The agents' source folders `session_deep_search` may read (none
    /// unless given: it then scans nothing).
    pub fn with_source_roots(mut self, dirs: impl IntoIterator<Item = PathBuf>) -> RecallMcp {
        self.sources = Arc::new(crate::deep::Roots::new(dirs));
        self
    }

    /// Parses the arguments and runs `f` on a blocking thread with this
    /// call's view and deadline; any error (malformed arguments included)
    /// becomes an `isError` result whose text starts with the error code.
    async fn call<A, F>(&self, args: JsonObject, f: F) -> Result<CallToolResult, ErrorData>
    where
        A: serde::de::DeserializeOwned + Send + 'static,
        F: FnOnce(&Call, &A) -> Result<Value, String> + Send + 'static,
    {
        let dir = self.dir.clone();
        let cell = self.store.clone();
        let scope = self.scope.clone();
        let sources = self.sources.clone();
        let deadline = Deadline::start();
        let job = tokio::task::spawn_blocking(move || {
            let a: A = args::parse(args)?;
            let store = open(&dir, &cell)?;
            let view: View = scope.view(manifest(&store)?, SystemTime::now());
            let call = Call {
                store: &store,
                view: &view,
                deadline,
                clock: tools::host_clock(),
                daemon: crate::http::client::find(&dir),
                sources: &sources,
            };
            f(&call, &a)
        });
        let out = match tokio::time::timeout(tools::DEADLINE, job).await {
            Err(_) => Err("deadline: the call ran out of its 30 s; ask something narrower".into()),
            Ok(Err(e)) => Err(format!("internal: {e}")),
            Ok(Ok(r)) => r,
        };
        Ok(match out {
            Ok(v) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(v.to_string())]);
                r.structured_content = Some(v);
                r
            }
            Err(msg) => CallToolResult::error(vec![ContentBlock::text(msg)]),
        })
    }
}

#[tool_router]
impl RecallMcp {
    /// Search past coding-agent conversations of this project.
    #[tool(
        description = "Search past coding-agent sessions of this project ({agents}). Every word must occur in one message; \"quoted phrases\" keep their spaces; `timeout OR deadline`, (groups), -word excludes, w:word matches whole words. Returns one page of sessions (limit, default 20; newest first or sort=relevance) with hit snippets, and a cursor for the next page. Each hit's `read` object is the argument of session_event_read for it. The answer fits max_tokens (default 8000): what is cut is named in `truncated`."
    )]
    async fn session_search(
        &self,
        Parameters(a): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(a, tools::session_search).await
    }

    /// Search inside one session.
    #[tool(
        description = "Search inside one session (key <source>:<id> or a session id). Returns one page of matching records in order (limit, default 20) with record index, role, time, state and a snippet, and a cursor for the next page."
    )]
    async fn session_event_search(
        &self,
        Parameters(a): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(a, read::session_event_search).await
    }

    /// Read a window of records around one record.
    #[tool(
        description = "Read one record of a session, by index or locator, with up to 50 records before and after it (default 5; neighbours cut to 240 characters). The record's text comes as a window: `offset`, `chars`, the full `length`, and `next_offset` to read on; `around` centres the window on a hit."
    )]
    async fn session_event_read(
        &self,
        Parameters(a): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(a, read::session_event_read).await
    }

    /// Lineage of a session.
    #[tool(
        description = "The lineage of a session: its ancestors (root first) and the tree of its descendants (subagents, forks, resumes, branches). Sessions outside this project appear as {outside_scope: true}."
    )]
    async fn session_trace(
        &self,
        Parameters(a): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(a, read::session_trace).await
    }

    /// What replaced a superseded record.
    #[tool(
        description = "For one record of a session (by index or locator): whether a rollback, rewind, undo or branch superseded it, which mark did, and the current records that now stand in its place; the record's text as a window (offset, chars, length)."
    )]
    async fn session_event_trace(
        &self,
        Parameters(a): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(a, read::session_event_trace).await
    }

    /// Deep Search: the source files themselves.
    #[tool(
        description = "Deep Search: scan the source files of this project's sessions themselves — every line and record kind, including what session_search does not index (long tool output, reasoning, other record kinds) — for a regular expression (or a literal with fixed_strings; ignore_case). Narrow it with session, kind (user, assistant, reasoning, tool), since/until, cwd and sources. Returns matching lines grouped per session (limit, default 20), each with its kind, the matched field's text around the match and, for an indexed record, the locator session_event_read takes; `stopped` says whether it ended at the limit or the 30 s deadline. The answer fits max_tokens (default 8000)."
    )]
    async fn session_deep_search(
        &self,
        Parameters(a): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(a, deep::session_deep_search).await
    }

    /// Recent sessions.
    #[tool(
        description = "Recent sessions of this project ({agents}), newest first, one page at a time (limit, default 20; cursor for the next page), optionally filtered by time (since/until: epoch ms, RFC 3339, 7d, 24h, 2w, today, yesterday), cwd prefix, sources and models."
    )]
    async fn session_list(
        &self,
        Parameters(a): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call(a, tools::session_list).await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RecallMcp {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::default();
        info.capabilities = ServerCapabilities::builder().enable_tools().build();
        info.server_info = Implementation::new("recall", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(format!(
            "Read-only search over this project's past coding-agent sessions ({}). Answers are bounded by max_tokens (default 8000) and paged by cursor; every answer says which index revision answered.",
            agents()
        ));
        info
    }
}

/// Serves MCP on stdin/stdout until the client closes it.
pub async fn serve_stdio(server: RecallMcp) -> anyhow::Result<()> {
    frame::serve(server).await
}
