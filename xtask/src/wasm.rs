//! `cargo xtask wasm [--check]`: the reproducible WebAssembly build of
//! `recall-wasm` (the binding over `recall-core`) and its `pkg/` output,
//! whose files keep the names `recall_core.js`, `recall_core_bg.wasm`, …
//! (wasm-bindgen `--out-name`), so the dashboard and the tests load them
//! unchanged.
//!
//! Reproducibility: the wasm must come out byte-identical from a fresh clone
//! in any directory (CI builds in another folder). rustc embeds source paths
//! in panic locations, so the workspace root, the target directory,
//! `$CARGO_HOME` and `$RUSTUP_HOME` are remapped to fixed names. The profile
//! settings are passed as `CARGO_PROFILE_RELEASE_*` variables so they apply
//! to this build only and the native release build is untouched.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The wasm target.
const TARGET: &str = "wasm32-unknown-unknown";
/// The crate built.
const CRATE: &str = "recall-wasm";
/// The artifact cargo writes.
const ARTIFACT: &str = "recall_wasm.wasm";
/// The stem of every file in `pkg/` (`recall_core.js`, `recall_core_bg.wasm`, …).
const OUT_NAME: &str = "recall_core";

/// Profile overrides for the wasm build: fat LTO over one codegen unit,
/// every crate optimised for size except the query core (see
/// [`PROFILE_CONFIG`]), no debug info (the bytes must not carry build
/// paths).
const PROFILE_ENV: &[(&str, &str)] = &[
    ("CARGO_PROFILE_RELEASE_OPT_LEVEL", "s"),
    ("CARGO_PROFILE_RELEASE_LTO", "fat"),
    ("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1"),
    ("CARGO_PROFILE_RELEASE_DEBUG", "false"),
    ("CARGO_PROFILE_RELEASE_STRIP", "debuginfo"),
    ("CARGO_PROFILE_RELEASE_INCREMENTAL", "false"),
];

/// Per-package profile overrides, passed as `--config`: the query core
/// keeps opt-level 3, so its functions are optimised for speed inside the
/// size-optimised LTO module. Measured (docs/decisions.md, "wasm build
/// levers"): opt-level 3 everywhere is 6 % larger than the last `pkg/` of
/// the one-crate build (which cargo never LTO'd: an rlib+cdylib crate type
/// turns LTO off), opt-level "s" everywhere 15 % slower to search; this is
/// 7 % smaller than that `pkg/` and as fast.
const PROFILE_CONFIG: &[&str] = &["profile.release.package.recall-core.opt-level=3"];

/// Runs the task with its arguments.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut check = false;
    for a in args {
        match a.as_str() {
            "--check" => check = true,
            other => return Err(format!("unknown argument {other:?} (try --check)")),
        }
    }
    let root = workspace_root()?;
    let pinned = locked_version(&root, "wasm-bindgen")?;
    let bindgen = find_bindgen(&pinned)?;
    require_target()?;
    let wasm = build_wasm(&root)?;
    if check {
        let tmp = root.join("target").join("xtask").join("pkg-check");
        recreate_dir(&tmp)?;
        bindgen_into(&bindgen, &wasm, &tmp)?;
        let diffs = compare_dirs(&root.join("pkg"), &tmp)?;
        if !diffs.is_empty() {
            return Err(format!(
                "pkg/ is stale: rebuilt output differs from the committed files:\n  {}\n\
                 rebuilt: {}\n{}\nrun `cargo xtask wasm` and commit pkg/",
                diffs.join("\n  "),
                tmp.display(),
                producers_note(&root.join("pkg"), &tmp),
            ));
        }
        eprintln!(
            "xtask: pkg/ is up to date ({} bytes of wasm)",
            wasm_size(&tmp)
        );
    } else {
        let pkg = root.join("pkg");
        recreate_dir(&pkg)?;
        bindgen_into(&bindgen, &wasm, &pkg)?;
        eprintln!("xtask: wrote pkg/ ({} bytes of wasm)", wasm_size(&pkg));
    }
    Ok(())
}

fn workspace_root() -> Result<PathBuf, String> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let root = manifest
        .parent()
        .ok_or("xtask has no parent directory")?
        .to_path_buf();
    root.canonicalize()
        .map_err(|e| format!("cannot resolve {}: {e}", root.display()))
}

/// The version of `package` resolved in `Cargo.lock`.
fn locked_version(root: &Path, package: &str) -> Result<String, String> {
    let lock = std::fs::read_to_string(root.join("Cargo.lock"))
        .map_err(|e| format!("cannot read Cargo.lock: {e}"))?;
    let wanted = format!("name = \"{package}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == wanted {
            if let Some(v) = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = "))
            {
                return Ok(v.trim_matches('"').to_string());
            }
        }
    }
    Err(format!("{package} is not in Cargo.lock"))
}

/// The wasm-bindgen CLI on PATH or in `$CARGO_HOME/bin`, checked to be
/// exactly `version`.
fn find_bindgen(version: &str) -> Result<PathBuf, String> {
    let mut candidates = vec![PathBuf::from("wasm-bindgen")];
    candidates.push(cargo_home().join("bin").join("wasm-bindgen"));
    let install = format!("cargo install wasm-bindgen-cli --version ={version}");
    for c in candidates {
        let Ok(out) = Command::new(&c).arg("--version").output() else {
            continue;
        };
        let got = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if got == format!("wasm-bindgen {version}") {
            return Ok(c);
        }
        return Err(format!(
            "{} reports {got:?} but the wasm-bindgen crate is {version}; install the pinned CLI: {install}",
            c.display()
        ));
    }
    Err(format!("wasm-bindgen CLI not found; install it: {install}"))
}

fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".cargo"))
}

fn rustup_home() -> PathBuf {
    std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".rustup"))
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// Fails clearly when the wasm32 standard library is not installed.
fn require_target() -> Result<(), String> {
    let out = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if sysroot
        .join("lib/rustlib")
        .join(TARGET)
        .join("lib")
        .is_dir()
    {
        Ok(())
    } else {
        Err(format!(
            "the {TARGET} target is not installed; run: rustup target add {TARGET}"
        ))
    }
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

/// Builds the binding for wasm32 and returns the artifact's path.
fn build_wasm(root: &Path) -> Result<PathBuf, String> {
    let target_dir = target_dir(root);
    let mut flags = vec!["-Ctarget-feature=+simd128".to_string()];
    // Most specific first is irrelevant: rustc picks the last matching
    // prefix, so list the broad ones first.
    for (from, to) in [
        (rustup_home(), "/rustup"),
        (cargo_home(), "/cargo"),
        (root.to_path_buf(), "/recall"),
        (target_dir.clone(), "/recall/target"),
    ] {
        let from = from.canonicalize().unwrap_or(from);
        flags.push(format!("--remap-path-prefix={}={to}", from.display()));
    }
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(root)
        .args([
            "build",
            "--release",
            "--lib",
            "--package",
            CRATE,
            "--target",
            TARGET,
        ])
        .arg("--target-dir")
        .arg(&target_dir)
        .args(PROFILE_CONFIG.iter().flat_map(|c| ["--config", c]))
        .env("CARGO_ENCODED_RUSTFLAGS", flags.join("\x1f"))
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS");
    for (k, v) in PROFILE_ENV {
        cmd.env(k, v);
    }
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run cargo build: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build for {TARGET} failed ({status})"));
    }
    let wasm = target_dir.join(TARGET).join("release").join(ARTIFACT);
    if wasm.is_file() {
        Ok(wasm)
    } else {
        Err(format!("{} was not produced", wasm.display()))
    }
}

fn bindgen_into(bindgen: &Path, wasm: &Path, out: &Path) -> Result<(), String> {
    let status = Command::new(bindgen)
        .args(["--target", "web", "--out-name", OUT_NAME, "--out-dir"])
        .arg(out)
        .arg(wasm)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", bindgen.display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("wasm-bindgen failed ({status})"))
    }
}

/// Empties (or creates) `dir`.
fn recreate_dir(dir: &Path) -> Result<(), String> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

fn file_names(dir: &Path) -> Result<BTreeSet<String>, String> {
    let mut names = BTreeSet::new();
    let rd = std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in rd.flatten() {
        if entry.path().is_file() {
            names.insert(entry.file_name().to_string_lossy().into_owned());
        }
    }
    Ok(names)
}

/// The differences between the committed `pkg/` and a fresh build.
fn compare_dirs(committed: &Path, fresh: &Path) -> Result<Vec<String>, String> {
    let (old, new) = (file_names(committed)?, file_names(fresh)?);
    let mut diffs = Vec::new();
    for name in old.union(&new) {
        match (old.contains(name), new.contains(name)) {
            (true, false) => diffs.push(format!("pkg/{name}: not produced by the build")),
            (false, true) => diffs.push(format!("pkg/{name}: missing")),
            _ => {
                let a = std::fs::read(committed.join(name)).unwrap_or_default();
                let b = std::fs::read(fresh.join(name)).unwrap_or_default();
                if a != b {
                    diffs.push(format!(
                        "pkg/{name}: differs (committed {} bytes, rebuilt {} bytes)",
                        a.len(),
                        b.len()
                    ));
                }
            }
        }
    }
    Ok(diffs)
}

fn wasm_size(dir: &Path) -> u64 {
    std::fs::metadata(dir.join(format!("{OUT_NAME}_bg.wasm"))).map_or(0, |m| m.len())
}

/// Names the compilers recorded in both wasm files, since the bytes depend
/// on the exact rustc version.
fn producers_note(committed: &Path, fresh: &Path) -> String {
    let describe = |dir: &Path| {
        let bytes = std::fs::read(dir.join(format!("{OUT_NAME}_bg.wasm"))).unwrap_or_default();
        rustc_in(&bytes).unwrap_or_else(|| "unknown rustc".to_string())
    };
    format!(
        "committed wasm built by {}; this toolchain is {}",
        describe(committed),
        describe(fresh)
    )
}

/// The `rustc` version string from a wasm `producers` section, if any.
fn rustc_in(wasm: &[u8]) -> Option<String> {
    let find = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).position(|w| w == needle);
    let section = find(wasm, b"processed-by")?;
    let needle = b"rustc";
    let at = section + find(&wasm[section..], needle)?;
    // producers: "rustc", a length byte, then "1.xx.y (hash date)".
    let len = usize::from(*wasm.get(at + needle.len())?);
    let start = at + needle.len() + 1;
    let v = wasm.get(start..start + len)?;
    Some(format!("rustc {}", String::from_utf8_lossy(v)))
}
