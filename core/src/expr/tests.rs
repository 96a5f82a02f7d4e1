use super::*;

fn leaf(t: &str) -> Node {
    Node::Leaf(Leaf {
        text: t.into(),
        word: false,
    })
}

fn word(t: &str) -> Node {
    Node::Leaf(Leaf {
        text: t.into(),
        word: true,
    })
}

fn not(t: &str) -> Node {
    Node::Not(Leaf {
        text: t.into(),
        word: false,
    })
}

fn node(q: &str) -> Node {
    parse(q).expect("parses").node.expect("a node")
}

fn err(q: &str) -> (usize, String) {
    let e = parse(q).expect_err("an error");
    (e.at, e.message)
}

#[test]
fn juxtaposition_is_and_and_or_binds_looser() {
    assert_eq!(
        node("timeout OR deadline retry"),
        Node::Or(vec![
            leaf("timeout"),
            Node::And(vec![leaf("deadline"), leaf("retry")])
        ])
    );
    assert_eq!(
        node("(timeout | deadline) retry"),
        Node::And(vec![
            Node::Or(vec![leaf("timeout"), leaf("deadline")]),
            leaf("retry")
        ])
    );
    assert_eq!(node("a a"), leaf("a"));
    assert_eq!(node("a OR b OR a"), Node::Or(vec![leaf("a"), leaf("b")]));
    assert_eq!(node("((a))"), leaf("a"));
}

#[test]
fn terms_fold_phrases_quote_and_or_is_only_an_operator_alone() {
    assert_eq!(node("Straße"), leaf("strasse"));
    assert_eq!(node("\"a  b\" c"), Node::And(vec![leaf("a  b"), leaf("c")]));
    assert_eq!(node("or"), leaf("or"));
    assert_eq!(node("a||b"), leaf("a||b"));
    assert_eq!(node("\"unclosed phrase"), leaf("unclosed phrase"));
}

#[test]
fn parentheses_group_only_at_token_edges() {
    assert_eq!(node("f(x)"), leaf("f(x)"));
    assert_eq!(node("foo)"), leaf("foo)"));
    assert_eq!(
        node("(call f(x))"),
        Node::And(vec![leaf("call"), leaf("f(x)")])
    );
    assert_eq!(
        node("(\"a b\" | c)"),
        Node::Or(vec![leaf("a b"), leaf("c")])
    );
}

#[test]
fn exclusions_and_whole_words() {
    assert_eq!(
        node("flaky -retry"),
        Node::And(vec![leaf("flaky"), not("retry")])
    );
    assert_eq!(node("a -\"b c\""), Node::And(vec![leaf("a"), not("b c")]));
    assert_eq!(node("w:cause"), word("cause"));
    assert_eq!(node("=Cause"), word("cause"));
    assert_eq!(node("-"), leaf("-"));
    assert!(!node("w:cause").is_plain());
    assert!(node("a b").is_plain());
}

#[test]
fn filters_are_collected_and_unknown_keys_are_text() {
    let p = parse("role:user fix since:7d cwd:\"~/my code\" -is:subagent").expect("parses");
    assert_eq!(p.node, Some(leaf("fix")));
    let got: Vec<(FilterKey, &str, bool)> = p
        .filters
        .iter()
        .map(|f| (f.key, f.value.as_str(), f.negated))
        .collect();
    assert_eq!(
        got,
        [
            (FilterKey::Role, "user", false),
            (FilterKey::Since, "7d", false),
            (FilterKey::Cwd, "~/my code", false),
            (FilterKey::Is, "subagent", true),
        ]
    );
    assert_eq!(node("http://x"), leaf("http://x"));
    assert_eq!(node("role:"), leaf("role:"));
    assert_eq!(parse("role:user").expect("parses").node, None);
}

#[test]
fn errors_point_at_what_is_wrong() {
    assert_eq!(err("a (b c").0, 2);
    assert_eq!(err("a OR").0, 2);
    assert_eq!(err("OR a").0, 0);
    assert_eq!(err("a OR OR b").0, 5);
    assert_eq!(err("x ()").0, 2);
    assert_eq!(err("-a -b").0, 0);
    assert!(err("-a -b").1.contains("only exclusions"));
    assert_eq!(err("a -(b c)").0, 2);
    assert_eq!(err("(a role:user)").0, 3);
    assert_eq!(err("a -role:user").0, 2);
    let many: Vec<String> = (0..17).map(|i| format!("t{i}")).collect();
    let e = parse(&many.join(" | ")).expect_err("too many");
    assert_eq!(e.kind, ExprErrorKind::TooManyTerms);
}

#[test]
fn the_normal_form_is_stable_and_reparses_to_itself() {
    for q in ["timeout OR deadline retry", "(a | b) -c w:d \"e f\""] {
        let n = node(q);
        let shown = n.to_string();
        assert_eq!(node(&shown), n, "{q} → {shown}");
    }
    assert_eq!(
        node("(a | b) -c w:d").to_string(),
        "(\"a\" | \"b\") -\"c\" w:\"d\""
    );
}

#[test]
fn required_terms_are_the_top_level_conjunction() {
    assert_eq!(node("a b -c").required(), ["a", "b"]);
    assert_eq!(node("(a | b) c").required(), ["c"]);
    assert!(node("a | b").required().is_empty());
    assert_eq!(node("w:a").required(), ["a"]);
    assert!(node("(a | b) c").has_or());
    assert!(!node("a -b w:c").has_or());
}
