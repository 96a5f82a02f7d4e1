//! `recall service install | uninstall | status`: runs `recall serve` at
//! login so the index stays current for MCP and the CLI — a systemd user
//! unit on Linux (`~/.config/systemd/user/recall.service`), a launchd agent
//! on macOS (`~/Library/LaunchAgents/dev.recall.serve.plist`). The unit
//! runs this very binary with the home (`--home`) and store
//! (`RECALL_HOME`, source root variables) it was installed with.
//! `--dry-run` prints the unit and changes nothing.

use super::{Found, Globals};
use anyhow::Context as _;
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `recall service` options.
#[derive(Debug, Args)]
pub struct ServiceArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: Action,
}

/// The service actions.
#[derive(Debug, Subcommand)]
pub enum Action {
    /// Write the unit and start it now and at every login.
    Install(DryRun),
    /// Stop the service and remove the unit.
    Uninstall(DryRun),
    /// Whether the unit is installed and running.
    Status,
}

/// `--dry-run`.
#[derive(Debug, Args)]
pub struct DryRun {
    /// Print the unit (install) or what would be removed (uninstall); change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// The variables that choose the store and the source roots: a unit
/// carries the ones set when it was installed.
const CARRIED_VARS: &[&str] = &[
    "RECALL_HOME",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "KIMI_CODE_HOME",
    "KIMI_SHARE_DIR",
    "PI_CODING_AGENT_DIR",
    "INTENDANT_HOME",
    "DSH_HOME",
    "RUST_LOG",
    "RECALL_LOG",
];

/// Which service manager.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Manager {
    /// A systemd user unit.
    Systemd,
    /// A launchd agent.
    Launchd,
}

impl Manager {
    /// This platform's manager.
    pub fn here() -> Manager {
        if cfg!(target_os = "macos") {
            Manager::Launchd
        } else {
            Manager::Systemd
        }
    }
}

/// What the unit runs: the binary, its arguments and its environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// The `recall` binary (absolute).
    pub exe: PathBuf,
    /// Arguments (`--home DIR serve`).
    pub args: Vec<String>,
    /// Variables carried from the installing shell.
    pub env: Vec<(String, String)>,
}

/// The launchd label (and plist name).
pub const LABEL: &str = "dev.recall.serve";
/// The systemd unit name.
pub const UNIT: &str = "recall.service";

impl Spec {
    /// The spec of this process: its binary, `--home` (made absolute) and
    /// the store/root variables set now.
    pub fn current(g: &Globals) -> anyhow::Result<Spec> {
        let exe = std::env::current_exe().context("cannot find the recall binary")?;
        let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
        let mut args = Vec::new();
        if let Some(h) = &g.home {
            let h = std::path::absolute(h).unwrap_or_else(|_| h.clone());
            args.push("--home".to_string());
            args.push(h.display().to_string());
        }
        args.push("serve".to_string());
        let env = CARRIED_VARS
            .iter()
            .filter_map(|k| {
                let v = std::env::var(k).ok().filter(|v| !v.is_empty())?;
                Some((k.to_string(), v))
            })
            .collect();
        Ok(Spec { exe, args, env })
    }

    /// The unit text for `m`.
    pub fn render(&self, m: Manager) -> String {
        match m {
            Manager::Systemd => self.systemd(),
            Manager::Launchd => self.launchd(),
        }
    }

    fn systemd(&self) -> String {
        let mut exec = systemd_quote(&self.exe.display().to_string());
        for a in &self.args {
            exec.push(' ');
            exec.push_str(&systemd_quote(a));
        }
        let mut s = String::from(
            "[Unit]\nDescription=recall: index coding-agent transcripts and serve search\n\
             Documentation=man:recall(1)\n\n[Service]\nType=simple\n",
        );
        s.push_str(&format!("ExecStart={exec}\n"));
        for (k, v) in &self.env {
            s.push_str(&format!(
                "Environment={}\n",
                systemd_quote(&format!("{k}={v}"))
            ));
        }
        s.push_str("Restart=on-failure\nRestartSec=10\n\n[Install]\nWantedBy=default.target\n");
        s
    }

    fn launchd(&self) -> String {
        let mut s = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
             <plist version=\"1.0\">\n<dict>\n",
        );
        s.push_str(&format!("  <key>Label</key>\n  <string>{LABEL}</string>\n"));
        s.push_str("  <key>ProgramArguments</key>\n  <array>\n");
        for a in std::iter::once(self.exe.display().to_string()).chain(self.args.iter().cloned()) {
            s.push_str(&format!("    <string>{}</string>\n", xml_escape(&a)));
        }
        s.push_str("  </array>\n");
        if !self.env.is_empty() {
            s.push_str("  <key>EnvironmentVariables</key>\n  <dict>\n");
            for (k, v) in &self.env {
                s.push_str(&format!(
                    "    <key>{}</key>\n    <string>{}</string>\n",
                    xml_escape(k),
                    xml_escape(v)
                ));
            }
            s.push_str("  </dict>\n");
        }
        s.push_str(
            "  <key>RunAtLoad</key>\n  <true/>\n  <key>KeepAlive</key>\n  <dict>\n    \
             <key>SuccessfulExit</key>\n    <false/>\n  </dict>\n</dict>\n</plist>\n",
        );
        s
    }
}

/// One systemd word, double-quoted: `\` and `"` escaped, `%` (specifiers)
/// and `$` (variable expansion) doubled, so every path reads literally.
fn systemd_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '%' => out.push_str("%%"),
            '$' => out.push_str("$$"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Where the unit file goes (the user's own home, not `--home`).
pub fn unit_path(m: Manager) -> anyhow::Result<PathBuf> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .context("$HOME is not set: cannot place the service unit")?;
    Ok(match m {
        Manager::Systemd => std::env::var_os("XDG_CONFIG_HOME")
            .filter(|d| !d.is_empty())
            .map_or_else(|| home.join(".config"), PathBuf::from)
            .join("systemd/user")
            .join(UNIT),
        Manager::Launchd => home
            .join("Library/LaunchAgents")
            .join(format!("{LABEL}.plist")),
    })
}

/// Runs `recall service`.
pub fn run(g: &Globals, a: ServiceArgs) -> anyhow::Result<Found> {
    let m = Manager::here();
    let path = unit_path(m)?;
    match a.action {
        Action::Install(d) => {
            let unit = Spec::current(g)?.render(m);
            if d.dry_run {
                outln!("{}", unit.trim_end_matches('\n'))?;
                eprintln!("recall: would write {}", path.display());
                return Ok(Found::Yes);
            }
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
            std::fs::write(&path, unit)
                .with_context(|| format!("cannot write {}", path.display()))?;
            outln!("wrote {}", path.display())?;
            start(m, &path)?;
            outln!("recall serve now runs at every login (recall service status)")?;
            Ok(Found::Yes)
        }
        Action::Uninstall(d) => {
            if !path.exists() {
                outln!("not installed ({} does not exist)", path.display())?;
                return Ok(Found::No);
            }
            if d.dry_run {
                outln!("would stop the service and remove {}", path.display())?;
                return Ok(Found::Yes);
            }
            stop(m, &path);
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
            if m == Manager::Systemd {
                let _ = systemctl(&["daemon-reload"]);
            }
            outln!("removed {}", path.display())?;
            Ok(Found::Yes)
        }
        Action::Status => {
            if !path.exists() {
                outln!("not installed (recall service install)")?;
                return Ok(Found::No);
            }
            outln!("installed   {}", path.display())?;
            let state = match m {
                Manager::Systemd => systemctl(&["is-active", UNIT]),
                Manager::Launchd => launchctl(&["print", &format!("{}/{LABEL}", gui_domain())])
                    .map(|s| {
                        s.lines()
                            .find(|l| l.trim_start().starts_with("state ="))
                            .map_or_else(|| "loaded".to_string(), |l| l.trim().to_string())
                    }),
            };
            match state {
                Ok(s) => outln!("state       {}", s.trim())?,
                Err(e) => outln!("state       unknown ({e})")?,
            }
            Ok(Found::Yes)
        }
    }
}

fn start(m: Manager, path: &Path) -> anyhow::Result<()> {
    let r = match m {
        Manager::Systemd => {
            systemctl(&["daemon-reload"]).and_then(|_| systemctl(&["enable", "--now", UNIT]))
        }
        Manager::Launchd => {
            let p = path.display().to_string();
            launchctl(&["bootstrap", &gui_domain(), &p])
        }
    };
    r.map(|_| ()).with_context(|| {
        format!(
            "the unit is written ({}) but could not be started",
            path.display()
        )
    })
}

fn stop(m: Manager, path: &Path) {
    let _ = match m {
        Manager::Systemd => systemctl(&["disable", "--now", UNIT]),
        Manager::Launchd => launchctl(&["bootout", &gui_domain(), &path.display().to_string()]),
    };
}

fn gui_domain() -> String {
    // SAFETY: getuid has no preconditions and cannot fail.
    format!("gui/{}", unsafe { libc::getuid() })
}

fn systemctl(args: &[&str]) -> anyhow::Result<String> {
    let mut all = vec!["--user"];
    all.extend_from_slice(args);
    tool("systemctl", &all)
}

fn launchctl(args: &[&str]) -> anyhow::Result<String> {
    tool("launchctl", args)
}

/// Runs a service-manager command; its stderr becomes the error.
fn tool(name: &str, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new(name)
        .args(args)
        .output()
        .with_context(|| format!("cannot run {name}"))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() || (name == "systemctl" && args.contains(&"is-active")) {
        Ok(text)
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        anyhow::bail!("{name} {}: {}", args.join(" "), err.trim())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        Spec {
            exe: PathBuf::from("/opt/re call/recall"),
            args: vec!["--home".into(), "/home/a%b$c".into(), "serve".into()],
            env: vec![("RECALL_HOME".into(), "/data/\"x\"".into())],
        }
    }

    #[test]
    fn a_systemd_unit_quotes_every_word_literally() {
        let u = spec().render(Manager::Systemd);
        assert!(
            u.contains(
                "ExecStart=\"/opt/re call/recall\" \"--home\" \"/home/a%%b$$c\" \"serve\"\n"
            ),
            "{u}"
        );
        assert!(
            u.contains("Environment=\"RECALL_HOME=/data/\\\"x\\\"\"\n"),
            "{u}"
        );
        assert!(u.contains("WantedBy=default.target"));
    }

    #[test]
    fn a_launchd_agent_lists_its_arguments_escaped() {
        let mut s = spec();
        s.args[1] = "/home/<a&b>".into();
        let p = s.render(Manager::Launchd);
        assert!(p.contains("<string>/home/&lt;a&amp;b&gt;</string>"), "{p}");
        assert!(p.contains("<string>/opt/re call/recall</string>"));
        assert!(p.contains("<key>RunAtLoad</key>\n  <true/>"));
        assert!(p.contains("<key>RECALL_HOME</key>"));
    }
}
