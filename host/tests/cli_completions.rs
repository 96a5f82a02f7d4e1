//! `recall completions SHELL` prints a script the shell accepts, naming the
//! commands and flags as clap defines them, and `recall --version` names the
//! index format a store must have.

mod store_support;

use store_support::*;

#[test]
fn completion_scripts_name_every_command() {
    let home = temp_dir("completions");
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef recall"),
        ("fish", "complete -c recall"),
    ] {
        let script = run_ok(&home, &["completions", shell], 0);
        assert!(script.contains(marker), "{shell}: {script}");
        for word in [
            "search",
            "sessions",
            "show",
            "tui",
            "serve",
            "include-superseded",
        ] {
            assert!(script.contains(word), "{shell} completes {word}");
        }
    }
    run_ok(&home, &["completions", "tcsh"], 2);
}

#[test]
fn bash_accepts_the_script() {
    let home = temp_dir("completions-bash");
    let script = run_ok(&home, &["completions", "bash"], 0);
    let file = home.join("recall.bash");
    std::fs::write(&file, script).unwrap();
    let Ok(out) = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("source {} && complete -p recall", file.display()))
        .output()
    else {
        return; // no bash on this machine
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("recall"));
}

#[test]
fn version_names_the_index_format() {
    let home = temp_dir("version");
    let out = run_ok(&home, &["--version"], 0);
    assert!(out.starts_with("recall "), "{out}");
    assert!(out.contains("index format v1"), "{out}");
    assert!(out.contains("parser "), "{out}");
}
