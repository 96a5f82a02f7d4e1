//! Resume commands never turn a session id (or Pi's session path) into an
//! option of the agent (issue 24, item 5): for every registry agent, an id
//! that begins with `-` — `codex resume --dangerously-bypass-approvals-and-sandbox`,
//! `codex resume -cmodel_provider=evil`, `claude --resume
//! --dangerously-skip-permissions`, `kimi --session --yolo` — gets no
//! resume command, while an id in the agents' syntax (a UUID) still does.

use recall_core::model::SessionMeta;
use recall_host::extract::{agent_ids, resume_command};

fn meta(id: &str, path: &str) -> SessionMeta {
    serde_json::from_value(serde_json::json!({
        "source": "codex", "session_id": id, "title": null, "cwd": null,
        "branch": null, "created_ms": null, "updated_ms": null, "messages": 1,
        "parent": null, "resume": null, "paths": [path],
    }))
    .expect("meta")
}

const UUID: &str = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const HOSTILE: &[&str] = &[
    "--dangerously-bypass-approvals-and-sandbox",
    "-cmodel_provider=evil",
    "--dangerously-skip-permissions",
    "--yolo",
    "-",
];

#[test]
fn no_agent_builds_a_resume_command_from_an_id_that_begins_with_a_dash() {
    let ids: Vec<&str> = agent_ids().collect();
    for want in [
        "claude",
        "codex",
        "kimi_code",
        "kimi_legacy",
        "pi",
        "intendant",
        "dsh",
    ] {
        assert!(ids.contains(&want), "{want} is in the registry");
    }
    for agent in &ids {
        for id in HOSTILE {
            for sub in [false, true] {
                let got = resume_command(agent, &meta(id, "/home/u/s.jsonl"), sub);
                assert_eq!(got, None, "{agent} resumes id {id:?} as {got:?}");
            }
        }
    }
}

#[test]
fn pi_builds_no_resume_command_from_a_session_path_that_begins_with_a_dash() {
    for path in ["--yolo", "-x/session.jsonl", "relative/session.jsonl"] {
        let got = resume_command("pi", &meta(UUID, path), false);
        assert_eq!(got, None, "pi resumes {path:?} as {got:?}");
    }
}

#[test]
fn an_id_in_the_agents_syntax_still_gets_its_resume_command() {
    let m = meta(UUID, "/home/u/.pi/agent/sessions/s.jsonl");
    for (agent, want) in [
        ("claude", format!("claude --resume {UUID}")),
        ("codex", format!("codex resume {UUID}")),
        ("kimi_code", format!("kimi --session {UUID}")),
        ("kimi_legacy", format!("kimi --session {UUID}")),
        ("intendant", format!("intendant --resume {UUID}")),
        (
            "pi",
            "pi --session /home/u/.pi/agent/sessions/s.jsonl".to_string(),
        ),
    ] {
        assert_eq!(
            resume_command(agent, &m, false).as_deref(),
            Some(&*want),
            "{agent}"
        );
    }
    assert_eq!(resume_command("dsh", &m, false), None, "dsh has no resume");
}
