//! `recall serve` with a token, as a user starts it: from `--token-file`
//! or `RECALL_TOKEN` (no warning), from `--token` (a warning: every local
//! user can read it in the process list); the API then needs the bearer
//! header or the cookie of the one-time login link the server prints.

mod http_support;
mod store_support;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

/// Starts `recall serve --no-demo <extra>` on a free port; returns the
/// child, its address, the login link and everything it said up to it.
fn serve(mut cmd: Command, extra: &[&str]) -> (Child, SocketAddr, String, String) {
    let mut child = cmd
        .args(["serve", "--no-demo", "--bind", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn recall serve");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut said = String::new();
    let mut addr = None;
    let link = loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("recall serve stopped; it said:\n{said}"))
            .expect("stderr");
        said.push_str(&line);
        said.push('\n');
        if let Some(rest) = line.split("serving http://").nth(1) {
            addr = rest.split_whitespace().next().and_then(|a| a.parse().ok());
        }
        if let Some(at) = line
            .find("http://")
            .filter(|_| line.contains("/login?code="))
        {
            break line[at..].trim().to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (child, addr.expect("the address"), link, said)
}

fn path_of(link: &str, addr: SocketAddr) -> String {
    link.split_once(&addr.to_string())
        .map(|(_, p)| p.to_string())
        .unwrap_or_else(|| panic!("{link} is not on {addr}"))
}

fn check_api(addr: SocketAddr, token: &str, link: &str) {
    let get = http_support::get;
    assert_eq!(get(addr, "/api/sessions", &[]).status, 401);
    let bearer = format!("Bearer {token}");
    assert_eq!(
        get(addr, "/api/sessions", &[("Authorization", &bearer)]).status,
        200
    );
    let r = get(addr, &path_of(link, addr), &[]);
    assert_eq!(r.status, 303);
    let cookie = r.header("set-cookie").expect("a cookie").to_string();
    let pair = cookie.split(';').next().unwrap().to_string();
    assert_eq!(get(addr, "/api/sessions", &[("Cookie", &pair)]).status, 200);
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

const WARNING: &str = "visible to every local user";

#[test]
fn a_token_file_or_variable_guards_the_api_without_a_warning() {
    let home = store_support::temp_dir("token-file");
    let file = home.join("token");
    std::fs::write(&file, "file-s3cret\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let (child, addr, link, said) = serve(
        store_support::recall(&home),
        &["--token-file", file.to_str().unwrap()],
    );
    check_api(addr, "file-s3cret", &link);
    stop(child);
    assert!(!said.contains(WARNING), "{said}");
    assert!(!said.contains("readable by other users"), "{said}");

    let mut cmd = store_support::recall(&home);
    cmd.env("RECALL_TOKEN", "env-s3cret");
    let (child, addr, link, said) = serve(cmd, &[]);
    check_api(addr, "env-s3cret", &link);
    stop(child);
    assert!(!said.contains(WARNING), "{said}");
}

#[test]
fn a_token_argument_works_but_warns() {
    let home = store_support::temp_dir("token-arg");
    let (child, addr, link, said) = serve(store_support::recall(&home), &["--token", "arg-s3cret"]);
    check_api(addr, "arg-s3cret", &link);
    stop(child);
    assert!(said.contains(WARNING), "{said}");
    assert!(
        said.contains("--token-file"),
        "the warning names the way out: {said}"
    );
}

#[test]
fn an_empty_or_missing_token_file_is_refused() {
    let home = store_support::temp_dir("token-empty");
    let file = home.join("token");
    std::fs::write(&file, "\n").unwrap();
    for f in [file.clone(), home.join("absent")] {
        let out = store_support::recall(&home)
            .args([
                "serve",
                "--no-demo",
                "--bind",
                "127.0.0.1:0",
                "--token-file",
            ])
            .arg(&f)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{f:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("token file"), "{err}");
    }
}
