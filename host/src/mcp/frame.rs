//! The stdio framing in front of rmcp: every line from stdin is checked
//! before rmcp sees it, and a line rmcp would drop without an answer gets
//! the JSON-RPC error the spec names, so the client is never left waiting
//! and the server keeps serving:
//! - not JSON, or nested deeper than serde_json's limit: `-32700` parse error;
//! - a batch, a non-object, a wrong `jsonrpc`, a non-string `method`:
//!   `-32600` invalid request;
//! - `params` that is not an object: `-32602` invalid params;
//! - a line longer than [`MAX_LINE`]: `-32600`, read past without keeping it.
//!
//! One task owns stdout, so rmcp's answers and these errors never interleave
//! within a line.

use super::RecallMcp;
use rmcp::ServiceExt;
use serde_json::{json, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Longest request line accepted (bytes).
pub const MAX_LINE: usize = 8 << 20;

/// What to do with one line.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Hand it to rmcp.
    Forward,
    /// Answer it with this error line; rmcp never sees it.
    Answer(String),
    /// Drop it (a malformed notification: nothing to answer).
    Drop,
}

fn error(id: Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

/// Judges one complete line (without its newline).
pub fn judge(line: &[u8]) -> Verdict {
    let v: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            let why = if e.to_string().contains("recursion limit") {
                "parse error: nested too deeply"
            } else {
                "parse error: not JSON"
            };
            return Verdict::Answer(error(Value::Null, -32700, why));
        }
    };
    let Value::Object(m) = &v else {
        let why = if v.is_array() {
            "invalid request: batches are not supported"
        } else {
            "invalid request: not a JSON-RPC object"
        };
        return Verdict::Answer(error(Value::Null, -32600, why));
    };
    let id = m.get("id").cloned();
    let reply = |code, why: &str| match &id {
        Some(id) if id.is_string() || id.is_number() => {
            Verdict::Answer(error(id.clone(), code, why))
        }
        Some(_) => Verdict::Answer(error(Value::Null, -32600, "invalid request: bad id")),
        None => Verdict::Drop,
    };
    if m.get("jsonrpc") != Some(&json!("2.0")) {
        return reply(-32600, "invalid request: jsonrpc must be \"2.0\"");
    }
    if let Some(method) = m.get("method") {
        if !method.is_string() {
            return reply(-32600, "invalid request: method must be a string");
        }
        match m.get("params") {
            None | Some(Value::Object(_)) => {}
            Some(_) => return reply(-32602, "invalid params: params must be an object"),
        }
    }
    Verdict::Forward
}

/// Reads one line of at most [`MAX_LINE`] bytes: `Ok(None)` at the end,
/// `Ok(Some(Err(())))` for a line that was too long (consumed, not kept).
async fn next_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
) -> std::io::Result<Option<Result<Vec<u8>, ()>>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Some(Err(())),
                (false, true) => None,
                (false, false) => Some(Ok(line)),
            });
        }
        let (chunk, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long {
            if line.len() + chunk.len() > MAX_LINE {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let n = done.unwrap_or(buf.len());
        r.consume(n);
        if done.is_some() {
            return Ok(Some(if too_long { Err(()) } else { Ok(line) }));
        }
    }
}

/// Copies checked lines from `input` to rmcp, answering the bad ones.
async fn filter<R, W>(input: R, mut to_rmcp: W, out: mpsc::Sender<String>) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut r = BufReader::with_capacity(1 << 16, input);
    while let Some(line) = next_line(&mut r).await? {
        let verdict = match &line {
            Err(()) => Verdict::Answer(error(
                Value::Null,
                -32600,
                &format!("invalid request: longer than {MAX_LINE} bytes"),
            )),
            Ok(l) if l.iter().all(u8::is_ascii_whitespace) => continue,
            Ok(l) => judge(l),
        };
        match verdict {
            Verdict::Forward => {
                if let Ok(l) = line {
                    to_rmcp.write_all(&l).await?;
                    to_rmcp.write_all(b"\n").await?;
                    to_rmcp.flush().await?;
                }
            }
            Verdict::Answer(e) => {
                if out.send(e).await.is_err() {
                    break;
                }
            }
            Verdict::Drop => {}
        }
    }
    to_rmcp.shutdown().await
}

/// Serves `server` over stdin/stdout through the filter.
pub async fn serve(server: RecallMcp) -> anyhow::Result<()> {
    let (to_rmcp, rmcp_in) = tokio::io::duplex(1 << 20);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(1 << 20);
    let (tx, mut rx) = mpsc::channel::<String>(64);
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = rx.recv().await {
            if stdout.write_all(line.as_bytes()).await.is_err()
                || stdout.write_all(b"\n").await.is_err()
                || stdout.flush().await.is_err()
            {
                break;
            }
        }
    });
    let answers = tx.clone();
    let pump = tokio::spawn(async move {
        let mut lines = BufReader::new(from_rmcp).lines();
        while let Ok(Some(l)) = lines.next_line().await {
            if answers.send(l).await.is_err() {
                break;
            }
        }
    });
    let input = tokio::spawn(filter(tokio::io::stdin(), to_rmcp, tx));
    let running = server.serve((rmcp_in, rmcp_out)).await?;
    running.waiting().await?;
    input.abort();
    let _ = pump.await;
    let _ = writer.await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_lines_get_their_error() {
        let code = |l: &str| match judge(l.as_bytes()) {
            Verdict::Answer(s) => {
                serde_json::from_str::<Value>(&s).unwrap()["error"]["code"].clone()
            }
            other => json!(format!("{other:?}")),
        };
        assert_eq!(code("not json"), -32700);
        assert_eq!(
            code(&format!("{}{}", "[".repeat(100_000), "]".repeat(100_000))),
            -32700
        );
        assert_eq!(code("[]"), -32600);
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#),
            -32602
        );
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","method":"x","params":[1]}"#),
            Verdict::Drop
        );
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Verdict::Forward
        );
    }
}
