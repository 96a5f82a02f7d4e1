//! Claude Code user prose: removing harness blocks embedded in a prompt
//! (`<system-reminder>`, `<ide_*>`) and recognising bodies that are wholly a
//! harness envelope (slash commands, local command output, bash mode, task
//! notifications, memory input, interruption markers) — DESIGN.md §5.

use memchr::memmem;

/// Elements that make a body an envelope when it consists only of them.
const ENVELOPES: [&str; 11] = [
    "command-name",
    "command-message",
    "command-args",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "task-notification",
    "user-memory-input",
];

/// The interruption marker Claude Code writes as a user line.
const INTERRUPTED: &str = "[Request interrupted by user";

/// The line Claude Code appends after a `<task-notification>` element
/// (seen in real 2.1.x transcripts; part of the envelope, not prose).
const TASK_TAIL: &str = "Read the output file to retrieve the result:";

/// The user prose of a prompt body: embedded blocks removed, trimmed; `None`
/// when nothing is left or the body is wholly an envelope.
pub fn user_prose(body: &str) -> Option<String> {
    let stripped = strip_injected(body);
    let text = stripped.trim();
    if text.is_empty() || is_envelope(text) {
        return None;
    }
    Some(text.to_string())
}

/// Removes every closed `<system-reminder>…</system-reminder>` and
/// `<ide_NAME>…</ide_NAME>` block. Unclosed tags are left as they are.
pub fn strip_injected(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("<system-reminder>") && !text.contains("<ide_") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(lt) = memchr::memchr(b'<', rest.as_bytes()) {
        let after = &rest[lt..];
        match injected_block_len(after) {
            Some(len) => {
                out.push_str(&rest[..lt]);
                rest = &after[len..];
            }
            None => {
                out.push_str(&rest[..=lt]);
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// Length of the injected block starting at `s` (which starts with `<`).
fn injected_block_len(s: &str) -> Option<usize> {
    let name = if s.starts_with("<system-reminder>") {
        "system-reminder"
    } else if s.starts_with("<ide_") {
        let end = s[1..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))? + 1;
        if s.as_bytes().get(end) != Some(&b'>') {
            return None;
        }
        &s[1..end]
    } else {
        return None;
    };
    closed_len(s, name)
}

/// Length of `<name>…</name>` at the start of `s`, if closed.
fn closed_len(s: &str, name: &str) -> Option<usize> {
    let close = format!("</{name}>");
    let open_len = name.len() + 2;
    let at = memmem::find(s.as_bytes().get(open_len..)?, close.as_bytes())?;
    Some(open_len + at + close.len())
}

/// Whether `text` (trimmed) is only envelope elements and whitespace, or an
/// interruption marker.
pub fn is_envelope(text: &str) -> bool {
    if text.starts_with(INTERRUPTED) {
        return true;
    }
    let mut rest = text.trim_start();
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let Some((name, len)) = ENVELOPES.iter().find_map(|name| {
            rest.strip_prefix('<')
                .and_then(|r| r.strip_prefix(name))
                .filter(|r| r.starts_with('>'))
                .and_then(|_| closed_len(rest, name))
                .map(|len| (*name, len))
        }) else {
            return false;
        };
        rest = rest[len..].trim_start();
        if name == "task-notification" && rest.starts_with(TASK_TAIL) {
            rest = rest.split_once('\n').map_or("", |(_, r)| r).trim_start();
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_reminders_and_ide_blocks() {
        let t = "<ide_selection>sel\nx</ide_selection>\nFix it <system-reminder>\nr\n</system-reminder>";
        assert_eq!(user_prose(t).as_deref(), Some("Fix it"));
        assert_eq!(
            user_prose("a <ide_x>open").as_deref(),
            Some("a <ide_x>open")
        );
        assert_eq!(user_prose("<system-reminder>only</system-reminder>"), None);
    }

    #[test]
    fn envelopes() {
        assert!(is_envelope(
            "<command-name>/model</command-name>\n  <command-message>model</command-message>\n  <command-args></command-args>"
        ));
        assert!(is_envelope(
            "<bash-stdout>x</bash-stdout><bash-stderr></bash-stderr>"
        ));
        assert!(is_envelope("[Request interrupted by user for tool use]"));
        assert!(is_envelope(
            "<task-notification>\n<status>completed</status>\n</task-notification>\nRead the output file to retrieve the result: /tmp/x.output"
        ));
        assert!(!is_envelope("<task-notification>x</task-notification>\nRead the output file to retrieve the result: /a\nthen fix it"));
        assert!(!is_envelope(
            "<command-name>/x</command-name> and then please fix it"
        ));
        assert!(!is_envelope("<command-name>/x"));
        assert!(!is_envelope("Use <bash-input> tags"));
    }
}
