//! Secret values in what agents and reviewers write (decisions,
//! checkpoints, lesson analyses and reviews, tool arguments, search
//! queries) are masked before sno keeps them, by the rules that mask source
//! text: the journal and the audit are append-only, so a credential pasted
//! into either would be served by every later answer and could never be
//! taken out.

use sno_journal::event::Event;

/// Masks `text`'s secret values in place (left as it is when it has none).
pub(crate) fn mask(text: &mut String) {
    let (masked, n) = sno_redact::redact(text);
    if n > 0 {
        *text = masked;
    }
}

/// A tool call's JSON arguments with the secret values of each string
/// masked (in the JSON text a quoted value's quotes are escaped, which
/// hides an assignment's shape); text that is not JSON is masked as text.
pub(crate) fn masked_args(args: &str) -> String {
    fn walk(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::String(s) => mask(s),
            serde_json::Value::Array(a) => a.iter_mut().for_each(walk),
            serde_json::Value::Object(o) => o.values_mut().for_each(walk),
            _ => {}
        }
    }
    match serde_json::from_str::<serde_json::Value>(args) {
        Ok(mut v) => {
            walk(&mut v);
            v.to_string()
        }
        Err(_) => {
            let mut text = args.to_string();
            mask(&mut text);
            text
        }
    }
}

/// Masks the free text of a memory event in place.
pub(crate) fn mask_memory(ev: &mut Event) {
    match ev {
        Event::CheckpointCreated(c) => {
            mask(&mut c.name);
            mask(&mut c.summary);
        }
        Event::DecisionLogged(d) => {
            mask(&mut d.title);
            mask(&mut d.rationale);
        }
        Event::LessonAnalysisSubmitted(a) => {
            mask(&mut a.analysis);
            mask(&mut a.rule);
        }
        Event::LessonReviewed(r) => mask(&mut r.note),
        _ => {}
    }
}
