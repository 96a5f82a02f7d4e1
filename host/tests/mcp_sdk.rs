//! `recall mcp` against the official MCP Python SDK: runs
//! tests/mcp-sdk/sdk_test.py with the Python of `RECALL_MCP_PYTHON` (a
//! virtualenv holding the `mcp` package; scripts/test.sh creates it). Without
//! it the test says so and passes, unless `RECALL_REQUIRE_MCP_SDK=1` (the
//! test command sets it), when a missing SDK is a failure.

use std::path::Path;
use std::process::Command;

#[test]
fn the_official_python_sdk_drives_every_tool() {
    let python = match std::env::var("RECALL_MCP_PYTHON") {
        Ok(p) if !p.is_empty() => p,
        _ => {
            assert!(
                std::env::var("RECALL_REQUIRE_MCP_SDK").as_deref() != Ok("1"),
                "RECALL_REQUIRE_MCP_SDK=1 but RECALL_MCP_PYTHON is not set"
            );
            eprintln!("skipped: set RECALL_MCP_PYTHON to a Python with the `mcp` package");
            return;
        }
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let scratch = std::env::temp_dir().join(format!("recall-mcp-sdk-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let status = Command::new(python)
        .arg(root.join("tests/mcp-sdk/sdk_test.py"))
        .arg(&scratch)
        .env("RECALL_BIN", env!("CARGO_BIN_EXE_recall"))
        .status()
        .expect("run the Python SDK test");
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(status.success(), "tests/mcp-sdk/sdk_test.py failed");
}
