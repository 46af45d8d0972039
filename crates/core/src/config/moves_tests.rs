use crate::config::tests::{errors, load_files, load_str};
use crate::model::Address;

/// The test provider's table and the load balancers `declared`, then `moves`.
fn config(declared: &[&str], moves: &[(&str, &str)]) -> String {
    let mut text = String::from("[provider.test]\nendpoint = \"https://api.example.com\"\n");
    for name in declared {
        text.push_str(&format!("[load-balancer.{name}]\nprovider = \"test\"\n"));
    }
    for (from, to) in moves {
        text.push_str(&format!("[[moved]]\nfrom = \"{from}\"\nto = \"{to}\"\n"));
    }
    text
}

/// The line of the `n`th (0-based) move's `[[moved]]` in `config(declared, …)`.
fn line_of_move(declared: usize, n: usize) -> usize {
    2 + 2 * declared + 3 * n + 1
}

fn address(text: &str) -> Address {
    text.parse().unwrap()
}

fn moved(text: &str) -> Vec<(String, String, usize)> {
    let config = load_str(text).unwrap();
    (config.moves.iter())
        .map(|m| (m.from.to_string(), m.to.to_string(), m.location.line))
        .collect()
}

#[test]
fn a_move_is_read_with_where_it_is_written() {
    let text = config(&["b"], &[("load-balancer.a", "load-balancer.b")]);
    let config = load_str(&text).unwrap();
    assert_eq!(config.moves.len(), 1);
    let the_move = &config.moves[0];
    assert_eq!(the_move.from, address("load-balancer.a"));
    assert_eq!(the_move.to, address("load-balancer.b"));
    assert_eq!(the_move.location.to_string(), "a.toml:5:1");
}

#[test]
fn a_chain_is_ordered_from_its_first_move_the_chains_as_their_first_moves_are_written() {
    let text = config(
        &["c", "y"],
        &[
            ("load-balancer.b", "load-balancer.c"),
            ("load-balancer.x", "load-balancer.y"),
            ("load-balancer.a", "load-balancer.b"),
        ],
    );
    assert_eq!(
        moved(&text),
        [
            ("load-balancer.x".into(), "load-balancer.y".into(), 10),
            ("load-balancer.a".into(), "load-balancer.b".into(), 13),
            ("load-balancer.b".into(), "load-balancer.c".into(), 7),
        ]
    );
}

#[test]
fn moves_in_several_files_are_read_together() {
    let one = config(&["c"], &[("load-balancer.b", "load-balancer.c")]);
    let two = "[[moved]]\nfrom = \"load-balancer.a\"\nto = \"load-balancer.b\"\n";
    let config = load_files(&[("a.toml", &one), ("b.toml", two)]).unwrap();
    let order: Vec<String> = (config.moves.iter())
        .map(|m| format!("{} {}", m.from, m.location))
        .collect();
    assert_eq!(
        order,
        ["load-balancer.a b.toml:1:1", "load-balancer.b a.toml:5:1"]
    );
}

#[test]
fn an_address_that_is_not_one_is_reported_at_its_value() {
    let text = config(&["b"], &[("load-balancers.a", "load-balancer.")]);
    let line = line_of_move(1, 0);
    assert_eq!(
        errors(&text),
        [
            format!("a.toml:{}:8: `load-balancers.a` is not a resource address: expected KIND.NAME with KIND one of cluster, load-balancer, nodes", line + 1),
            format!("a.toml:{}:6: `load-balancer.` is not a resource address: expected KIND.NAME with KIND one of cluster, load-balancer, nodes", line + 2),
        ]
    );
}

#[test]
fn a_move_onto_itself_or_to_another_kind_is_refused_at_its_to() {
    let text = config(
        &["a"],
        &[
            ("load-balancer.a", "load-balancer.a"),
            ("load-balancer.x", "cluster.a"),
        ],
    );
    assert_eq!(
        errors(&text),
        [
            "a.toml:7:6: load-balancer.a is moved to itself",
            "a.toml:10:6: load-balancer.x cannot move to cluster.a: a move keeps the resource's kind",
        ]
    );
}

#[test]
fn two_moves_onto_one_address_are_refused_at_the_second() {
    let text = config(
        &["c"],
        &[
            ("load-balancer.a", "load-balancer.c"),
            ("load-balancer.b", "load-balancer.c"),
        ],
    );
    let error = load_str(&text).unwrap_err();
    assert_eq!(
        error.lines(),
        ["a.toml:10:6: two moves end at load-balancer.c"]
    );
    let note = &error.problems()[0].notes()[0];
    assert_eq!(note.line(), "a.toml:7:6: first moved here");
}

#[test]
fn two_moves_from_one_address_are_refused_at_the_second() {
    let text = config(
        &["b", "c"],
        &[
            ("load-balancer.a", "load-balancer.b"),
            ("load-balancer.a", "load-balancer.c"),
        ],
    );
    assert_eq!(
        errors(&text),
        ["a.toml:11:8: load-balancer.a is moved twice"]
    );
}

#[test]
fn a_cycle_is_refused_once_at_its_first_move() {
    let text = config(
        &[],
        &[
            ("load-balancer.a", "load-balancer.b"),
            ("load-balancer.b", "load-balancer.a"),
        ],
    );
    let error = load_str(&text).unwrap_err();
    assert_eq!(
        error.lines(),
        ["a.toml:4:8: these moves form a cycle: load-balancer.a → load-balancer.b → load-balancer.a"]
    );
    assert_eq!(
        error.problems()[0].notes()[0].line(),
        "a.toml:7:8: load-balancer.b → load-balancer.a"
    );
}

#[test]
fn a_longer_cycle_is_found_beside_a_chain() {
    let text = config(
        &["y"],
        &[
            ("load-balancer.b", "load-balancer.c"),
            ("load-balancer.x", "load-balancer.y"),
            ("load-balancer.c", "load-balancer.a"),
            ("load-balancer.a", "load-balancer.b"),
        ],
    );
    assert_eq!(
        errors(&text),
        ["a.toml:6:8: these moves form a cycle: load-balancer.b → load-balancer.c → load-balancer.a → load-balancer.b"]
    );
}

#[test]
fn a_from_still_declared_and_a_to_not_declared_are_refused() {
    let text = config(&["a"], &[("load-balancer.a", "load-balancer.b")]);
    assert_eq!(
        errors(&text),
        [
            "a.toml:6:8: the config still declares load-balancer.a",
            "a.toml:7:6: load-balancer.b is not in the config",
        ]
    );
    let error = load_str(&text).unwrap_err();
    assert_eq!(
        error.problems()[1].help_text(),
        Some("declare the resource it moves to: [load-balancer.b]")
    );
}

#[test]
fn a_chain_needs_only_its_last_address_declared() {
    // b is only on the way: neither declared nor needed.
    let chain = [
        ("load-balancer.a", "load-balancer.b"),
        ("load-balancer.b", "load-balancer.c"),
    ];
    assert_eq!(moved(&config(&["c"], &chain)).len(), 2);
    // Declared, b would still be a resource the chain moves away from.
    assert_eq!(
        errors(&config(&["b", "c"], &chain)),
        ["a.toml:11:8: the config still declares load-balancer.b"]
    );
    assert_eq!(
        errors(&config(&[], &chain)),
        ["a.toml:8:6: load-balancer.c is not in the config"]
    );
}

#[test]
fn a_move_entry_with_an_unknown_key_is_refused_and_the_others_still_read() {
    let text = format!(
        "{}[[moved]]\nfrom = \"load-balancer.x\"\ninto = \"load-balancer.y\"\n",
        config(&["b"], &[("load-balancer.a", "load-balancer.a")])
    );
    let lines = errors(&text);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0], "a.toml:7:6: load-balancer.a is moved to itself");
    assert!(lines[1].contains("unknown key `into`"), "{lines:?}");
}

#[test]
fn moves_in_a_large_file_cut_into_pieces_are_all_read() {
    // One move before the first cut, one in a later piece: both read, as the whole file has them.
    let names: Vec<String> = (0..3000).map(|i| format!("lb{i}")).collect();
    let declared: Vec<&str> = names.iter().map(String::as_str).collect();
    let text = format!(
        "[[moved]]\nfrom = \"load-balancer.old0\"\nto = \"load-balancer.lb0\"\n{}",
        config(&declared, &[("load-balancer.old1", "load-balancer.lb2999")])
    );
    assert!(crate::config::pieces::cut(&text, &["load-balancer", "provider"]).len() > 2);
    let moves = moved(&text);
    assert_eq!(moves.len(), 2, "{moves:?}");
    assert_eq!(
        moves[0],
        ("load-balancer.old0".into(), "load-balancer.lb0".into(), 1)
    );
}
