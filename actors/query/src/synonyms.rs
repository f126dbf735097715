//! The other words code uses for what a question says. A question says
//! "writes an integer"; the code says `put_int`. It says "removes the
//! entry"; the code says `delete`. Unlike a short form
//! ([`crate::abbreviations`]), a related word is not the same word: it is
//! searched at a lower weight, so a definition that has the question's own
//! words still comes first.
//!
//! The groups are the verb and noun pairs studies of identifier vocabulary
//! find across languages and code bases (words used interchangeably in
//! method names and in the comments that describe them), not the
//! vocabulary of one project. A word may sit in several groups.

/// Groups of words code uses for one another. Lowercase, unstemmed base
/// forms: they are analysed like the question before they are compared.
const GROUPS: &[&[&str]] = &[
    &["add", "insert", "append", "push"],
    &["begin", "start"],
    &["check", "validate", "verify"],
    &["clear", "reset"],
    &["close", "shutdown"],
    &["copy", "clone"],
    &["create", "new", "make"],
    &["decode", "parse", "deserialize", "unmarshal"],
    &["delete", "remove", "drop"],
    &["encode", "serialize", "marshal"],
    &["execute", "run", "invoke"],
    &["find", "search", "lookup"],
    &["get", "read", "fetch"],
    &["handler", "callback", "listener", "hook"],
    &["length", "size", "len"],
    &["merge", "join", "combine"],
    &["put", "write", "store"],
    &["send", "emit", "publish"],
    &["stop", "halt", "terminate"],
];

/// Words that lead to others but not back: a question that says a
/// function "returns" something often names its getter (`get_x`), but a
/// question about getting asks nothing of `return`, which every body says.
const LEADS: &[(&str, &[&str])] = &[("return", &["get"])];

/// The words related to `word` (as the question spells it, lowercase):
/// the other members of its groups and the words it leads to, each once,
/// never `word` itself.
pub fn related(word: &str) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for (from, to) in LEADS {
        if *from == word {
            out.extend(to.iter().copied().filter(|w| *w != word));
        }
    }
    for group in GROUPS {
        if group.contains(&word) {
            for w in group.iter().copied() {
                if w != word && !out.contains(&w) {
                    out.push(w);
                }
            }
        }
    }
    out
}

/// Every word of the groups, each once: what a caller analyses (stems)
/// once to match a question's analysed terms against.
pub fn all_words() -> impl Iterator<Item = &'static str> {
    let mut seen = std::collections::BTreeSet::new();
    GROUPS
        .iter()
        .flat_map(|g| g.iter().copied())
        .chain(
            LEADS
                .iter()
                .flat_map(|(from, to)| std::iter::once(*from).chain(to.iter().copied())),
        )
        .filter(move |w| seen.insert(*w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_gives_the_other_members_of_its_groups() {
        assert_eq!(related("write"), ["put", "store"]);
        let remove = related("remove");
        assert!(
            remove.contains(&"delete") && remove.contains(&"drop"),
            "{remove:?}"
        );
        assert!(!remove.contains(&"remove"));
        assert!(related("parse").contains(&"decode"));
        assert!(related("frobnicate").is_empty());
        // A lead goes one way.
        assert!(related("return").contains(&"get"));
        assert!(!related("get").contains(&"return"));
    }

    #[test]
    fn groups_are_lowercase_and_hold_a_word_once() {
        for g in GROUPS {
            assert!(g.len() >= 2);
            for (i, w) in g.iter().enumerate() {
                assert_eq!(*w, w.to_lowercase());
                assert!(!g[i + 1..].contains(w), "{w} twice in {g:?}");
            }
        }
        assert_eq!(
            all_words().count(),
            all_words().collect::<std::collections::BTreeSet<_>>().len()
        );
    }
}
