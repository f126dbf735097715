//! The budget is the whole answer: every `search` answer, markdown or JSON,
//! symbols or files, is within `max_tokens` cl100k_base tokens, header and
//! metadata included, and uses most of it when more candidates exist.

mod support;

use serde_json::json;
use support::*;

/// A repository with enough code that every budget leaves things out.
fn corpus() -> Repo {
    let repo = Repo::new();
    seed_polyglot(&repo);
    for m in 0..8 {
        let mut src = format!("\"\"\"Module {m}: handlers for orders and invoices.\"\"\"\n\n");
        for f in 0..12 {
            let body_lines = 2 + (f * 7 + m * 3) % 25;
            src.push_str(&format!(
                "def handle_order_{m}_{f}(order, invoice, config):\n    \"\"\"Settle order {f} against its invoice and load the config.\"\"\"\n"
            ));
            for l in 0..body_lines {
                src.push_str(&format!(
                    "    total_{l} = order.amount * {l} + invoice.tax(config.rate) - {f}\n"
                ));
            }
            src.push_str("    return total_0\n\n");
        }
        repo.write(&format!("billing/orders_{m}.py"), src);
    }
    repo.commit("corpus");
    repo.sno_json(&["init", "--json"]);
    repo
}

fn tokens(text: &str) -> usize {
    tiktoken_rs::cl100k_base()
        .unwrap()
        .encode_ordinary(text)
        .len()
}

/// Tokens of the code a markdown answer quotes: its fences' lines, less
/// those naming a file's later pieces.
fn code_tokens(answer: &str) -> usize {
    let mut code = String::new();
    let mut fence: Option<String> = None;
    for line in answer.lines() {
        let ticks = line.len() - line.trim_start_matches('`').len();
        match &fence {
            None if ticks >= 3 => fence = Some("`".repeat(ticks)),
            Some(f) if line.trim_end() == f.as_str() => fence = None,
            Some(_) if !line.starts_with("⋮ ") => {
                code.push_str(line);
                code.push('\n');
            }
            _ => {}
        }
    }
    tokens(&code)
}

#[test]
fn every_answer_fits_its_budget_and_uses_it() {
    let repo = corpus();
    // A model of its own, so the header is the same on every machine (with
    // no model it says why the semantic signal is off, which takes the
    // room of a line of code at 300 tokens).
    let model = tempfile::tempdir().unwrap();
    tiny_model(model.path());
    let model_dir = model.path().to_str().unwrap();
    let mut server = Server::init_with(&repo, "2025-06-18", &[("SNO_MODEL", model_dir)]).0;
    // A pasted commit message can be longer than the budget itself.
    let long = "Settle the order against its invoice and load the config first. ".repeat(300);
    let queries = [
        long.as_str(),
        "settle the order against the invoice",
        "load config file",
        "handle_order_3_4",
        "Config.load",
        "where is the tax rate applied to invoices",
        "read text",
    ];
    let budgets = [300, 500, 800, 1200, 2000, 4000, 8000];
    let mut answers = 0;
    let mut filled = Vec::new();
    let mut coded = Vec::new();
    for q in queries {
        for max in budgets {
            for format in ["markdown", "json"] {
                for group in ["symbols", "files"] {
                    let r = server.call(
                        "search",
                        json!({"query": q, "max_tokens": max, "limit": 50, "format": format, "group": group}),
                    );
                    let answer = text(&r);
                    let used = tokens(&answer);
                    assert!(
                        used <= max,
                        "{q:?} at {max} ({format}, {group}): {used} tokens\n{answer}"
                    );
                    answers += 1;
                    if format == "json" {
                        let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
                        // The header states the count, and it is right.
                        assert_eq!(
                            v["header"]["completeness"]["tokens"].as_u64().unwrap() as usize,
                            used,
                            "{answer}"
                        );
                    } else {
                        // The header states the count, and it is right.
                        let stated = answer
                            .split(&format!("/{max} tokens"))
                            .next()
                            .and_then(|s| s.rsplit(' ').next())
                            .and_then(|n| n.parse::<usize>().ok());
                        assert_eq!(stated, Some(used), "{answer}");
                        // Something left out (`k of n items`) or cut
                        // (`n items, k cut`).
                        let head = answer.lines().next().unwrap_or_default();
                        if group == "symbols"
                            && (head.contains(" items · ") || head.contains(" cut · "))
                        {
                            filled.push(used as f64 / max as f64);
                            coded.push((code_tokens(&answer) as f64 / max as f64, max, q));
                        }
                    }
                }
            }
        }
    }
    assert_eq!(answers, queries.len() * budgets.len() * 4);
    // Whenever candidates were left out, the budget was mostly used.
    assert!(!filled.is_empty());
    let low: Vec<&f64> = filled.iter().filter(|f| **f < 0.8).collect();
    assert!(
        low.len() * 10 <= filled.len(),
        "answers using under 80% of the budget while leaving items out: {low:?} of {}",
        filled.len()
    );
    // A markdown answer that left items out is at least 80% code from
    // 1,000 tokens (the header, titles, fences and the list of names left
    // out take the rest), and mostly so from 500: past their share of the
    // budget, the room goes to the code around the items quoted rather
    // than to more titles. At 300 a header, a title and a fence take 45
    // to 55, so only a cut that fills its room to the token (into its
    // last line) leaves 80% to code, and not always.
    for (from, to, share) in [(1000, usize::MAX, 1.0), (500, 999, 0.6), (300, 499, 0.4)] {
        let at: Vec<_> = coded
            .iter()
            .filter(|c| (from..=to).contains(&c.1))
            .collect();
        assert!(!at.is_empty());
        let thin: Vec<_> = at.iter().filter(|c| c.0 < 0.8).collect();
        eprintln!(
            "{from}..{to}: {} of {} under 80% code",
            thin.len(),
            at.len()
        );
        assert!(
            (at.len() - thin.len()) as f64 >= share * at.len() as f64,
            "answers under 80% code: {thin:?} of {}",
            at.len()
        );
    }
    server.finish();
}

#[test]
fn the_cli_json_answer_is_within_its_budget_as_printed() {
    // What `--json` prints is what the budget counts: a pretty-printed
    // answer took a third more tokens than the header said.
    let repo = corpus();
    for max in [300, 1000, 4000] {
        for extra in [&[][..], &["--files"][..]] {
            let mut args = vec![
                "search",
                "settle the order against the invoice",
                "--json",
                "--lexical-only",
            ];
            let max_s = max.to_string();
            args.extend(["--max-tokens", &max_s]);
            args.extend(extra);
            let out = stdout(&repo.sno(&args));
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            let used = tokens(&out);
            assert!(used <= max, "{max} {extra:?}: {used} tokens\n{out}");
            assert_eq!(
                v["header"]["completeness"]["tokens"].as_u64().unwrap() as usize,
                tokens(out.trim_end()),
                "{out}"
            );
            if max == 300 {
                // The bound is tested where it bites.
                assert_ne!(v["header"]["completeness"]["status"], "full", "{out}");
            }
        }
    }
}

#[test]
fn the_repository_map_is_within_its_budget_in_either_form() {
    // `repo_map` takes `max_tokens` too: the whole answer keeps it, over
    // MCP and from the CLI, as text and as JSON.
    let repo = corpus();
    let mut server = Server::init(&repo, "2025-06-18").0;
    let mut cut = 0;
    for max in [60, 150, 300, 800, 2000] {
        for format in ["markdown", "json"] {
            let r = server.call(
                "repo_map",
                json!({"max_tokens": max, "files": 50, "per_file": 8, "format": format}),
            );
            let answer = text(&r);
            let used = tokens(&answer);
            assert!(used <= max, "{max} {format}: {used} tokens\n{answer}");
            if format == "json" {
                let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
                assert_eq!(v["tokens"].as_u64().unwrap() as usize, used, "{answer}");
                assert!(v.get("map").is_none(), "the text is not repeated: {answer}");
                if v["omitted_files"].as_u64().unwrap() > 0 {
                    cut += 1;
                }
            } else {
                assert!(answer.starts_with("# repository map as of "), "{answer}");
            }
            let max_s = max.to_string();
            let mut args = vec!["map", "--max-tokens", &max_s, "--files", "50"];
            args.extend(["--per-file", "8"]);
            if format == "json" {
                args.push("--json");
            }
            let printed = stdout(&repo.sno(&args));
            assert!(
                tokens(&printed) <= max,
                "sno {args:?}: {} tokens\n{printed}",
                tokens(&printed)
            );
        }
    }
    // The small budgets left files out: the bound was tested where it bites.
    assert!(cut >= 2, "{cut}");
    server.finish();
}

#[test]
fn files_answers_rank_the_files_that_hold_the_answer() {
    let repo = corpus();
    let v = repo.sno_json(&[
        "search",
        "load config file",
        "--files",
        "--json",
        "--lexical-only",
    ]);
    let files: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files[0], "app/config.py", "{v}");
    let distinct: std::collections::HashSet<&&str> = files.iter().collect();
    assert_eq!(distinct.len(), files.len(), "each file once: {files:?}");
    assert!(
        v["files"][0]["symbols"][0]
            .as_str()
            .unwrap()
            .starts_with("Config"),
        "{v}"
    );
    let md = stdout(&repo.sno(&["search", "load config file", "--files", "--lexical-only"]));
    assert!(md.contains("### app/config.py"), "{md}");
}

#[test]
fn no_better_ranked_item_is_left_out_in_silence() {
    // At a high limit, small low-ranked items fill what a big high-ranked
    // one left: whatever ranks above an included item is listed, so the
    // order shown is the ranking's, at any limit and budget.
    let repo = corpus();
    let mut server = Server::init(&repo, "2025-06-18").0;
    let mut checked = 0;
    for q in [
        "settle the order against the invoice",
        "load config file",
        "where is the tax rate applied to invoices",
    ] {
        for max in [300, 500, 800, 1200, 2000] {
            let mut shown_at = |limit: u64| -> Vec<u64> {
                let r = server.call(
                    "search",
                    json!({"query": q, "max_tokens": max, "limit": limit, "format": "json"}),
                );
                let v: serde_json::Value = serde_json::from_str(&text(&r)).unwrap();
                let included: Vec<u64> = v["items"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|i| i["rank"].as_u64().unwrap())
                    .collect();
                let mut shown = included.clone();
                // The list is left out of the answer when empty.
                shown.extend(
                    v["omitted"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|o| o["rank"].as_u64().unwrap()),
                );
                shown.sort();
                let highest = included.iter().max().copied().unwrap_or(0);
                for r in 1..highest {
                    assert!(
                        shown.contains(&r),
                        "{q:?} at {max}, limit {limit}: rank {r} missing from {shown:?}"
                    );
                }
                shown
            };
            let at10 = shown_at(10);
            let at50 = shown_at(50);
            // What both show of the first ten ranks agrees.
            let first = |v: &[u64]| v.iter().copied().filter(|r| *r <= 10).collect::<Vec<_>>();
            let (a, b) = (first(&at10), first(&at50));
            let common = a.len().min(b.len());
            assert_eq!(a[..common], b[..common], "{q:?} at {max}");
            checked += 1;
        }
    }
    assert_eq!(checked, 15);
    server.finish();
}

/// Past the framing share, a whole item its file's end stops shows the
/// lines before it, and a lower-ranked definition there is shown whole
/// in them: counted as shown, quoted once, never under a title of its
/// own.
#[test]
fn a_lower_ranked_definition_before_a_quote_is_shown_there_once() {
    let repo = Repo::new();
    let helper: String = (0..12)
        .map(|i| format!("    fields.append(text.split(':')[{i}])\n"))
        .collect();
    repo.write(
        "billing/invoice.py",
        format!(
            "def parse_invoice_fields(text):\n    fields = []\n{helper}    return fields\n\n\n\
             def settle_invoice_total(order):\n    total = 0\n    for line in order:\n        total += line\n    return total\n"
        ),
    );
    let report: String = (0..60)
        .map(|i| format!("    rows.append(invoice_row_{i}(order))\n"))
        .collect();
    repo.write(
        "billing/report.py",
        format!("def invoice_total_report(order):\n    rows = []\n{report}    return rows\n"),
    );
    repo.commit("seed");
    repo.sno_json(&["init", "--json"]);
    let ask = |extra: &[&str]| {
        let mut args = vec![
            "search",
            "settle invoice total",
            "--lexical-only",
            "--max-tokens",
            "300",
        ];
        args.extend_from_slice(extra);
        let o = repo.sno(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let ranked = repo.sno_json(&[
        "search",
        "settle invoice total",
        "--lexical-only",
        "--json",
        "--max-tokens",
        "8000",
    ]);
    let names: Vec<&str> = ranked["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["qualified_name"].as_str().unwrap())
        .collect();
    assert_eq!(names[0], "settle_invoice_total", "{ranked}");
    let helper_rank = names.iter().position(|n| *n == "parse_invoice_fields");
    assert!(helper_rank.is_some_and(|r| r >= 1), "{ranked}");
    let md = ask(&[]);
    // The quote starts at the file's first line and holds the helper.
    assert!(
        md.contains("`settle_invoice_total` billing/invoice.py:18\n"),
        "{md}"
    );
    assert!(
        md.contains("⋮ line 1\ndef parse_invoice_fields(text):"),
        "{md}"
    );
    assert_eq!(md.matches("def parse_invoice_fields").count(), 1, "{md}");
    assert!(!md.contains("`parse_invoice_fields`"), "{md}");
    // Counted as shown: both definitions of the quoted file.
    let head = md.lines().next().unwrap();
    // (`k of n items`, or `n item(s), k cut` when nothing was left out.)
    let shown: usize = head
        .split(" · ")
        .filter(|p| p.contains(" item"))
        .find_map(|p| p.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("{md}"));
    let titles = md
        .lines()
        .filter(|l| l.starts_with('`') && !l.starts_with("```"))
        .count();
    assert!(shown > titles, "{md}");
}

/// The quotes of one file never share a line: the lines before the best
/// item (widened backwards) and those after a lower-ranked item above it
/// (widened forwards) used to quote the lines between them twice.
#[test]
fn no_line_of_a_file_is_quoted_twice() {
    let repo = Repo::new();
    let constants: String = (0..12)
        .map(|i| format!("UNRELATED_CONSTANT_{i} = {i} * 7 + 3\n"))
        .collect();
    let file = format!(
        "def settle_invoice_total(order):\n    total = 0\n    for line in order:\n        total += line\n    return total\n\n\n\
         {constants}\n\ndef settle_invoice_tax(order):\n    tax = 0\n    for line in order:\n        tax += line * 0.2\n    return tax\n"
    );
    repo.write("inv.py", &file);
    let rows: String = (0..60)
        .map(|i| format!("    rows.append(invoice_row_{i}(order))\n"))
        .collect();
    repo.write(
        "report.py",
        format!("def invoice_report(order):\n    rows = []\n{rows}    return rows\n"),
    );
    repo.commit("seed");
    repo.sno_json(&["init", "--json"]);
    let mut widened = 0;
    for budget in (200..=1000).step_by(50) {
        let o = repo.sno(&[
            "search",
            "settle invoice tax",
            "--lexical-only",
            "--max-tokens",
            &budget.to_string(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let md = stdout(&o);
        assert!(md.contains("`settle_invoice_tax` inv.py:"), "{md}");
        for line in file.lines().filter(|l| !l.trim().is_empty()) {
            let in_file = file.lines().filter(|l| *l == line).count();
            let quoted = md.lines().filter(|l| *l == line).count();
            assert!(
                quoted <= in_file,
                "{line:?} quoted {quoted} times at {budget}:\n{md}"
            );
        }
        widened += usize::from(md.contains("UNRELATED_CONSTANT_5 = "));
    }
    // The lines between the two were quoted at some budgets at all.
    assert!(widened > 0);
}

/// The head of the ranking is in every answer that can show a few of its
/// lines: at the smallest budgets its share of the room (kept for the
/// items after it) may be too small for it, but with nothing placed the
/// whole room is its (an answer of no item kept the room for nobody).
#[test]
fn the_best_item_is_shown_at_the_smallest_budget() {
    let repo = Repo::new();
    let mut src = String::from("def parse_reply_buffer(reader, buf):\n");
    for l in 0..14 {
        src.push_str(&format!(
            "    chunk_{l} = reader.read_reply(buf, offset={l}, strict=True)\n"
        ));
    }
    src.push_str("    return chunk_0\n");
    for f in 0..6 {
        src.push_str(&format!(
            "\n\ndef reply_helper_{f}(buf):\n    return parse_reply_buffer(None, buf)\n"
        ));
    }
    repo.write("net/reply.py", src);
    repo.commit("a reply parser");
    repo.sno_json(&["init", "--json"]);
    for max in ["150", "170"] {
        let out = repo.sno(&["search", "parse reply buffer", "--max-tokens", max]);
        let md = stdout(&out);
        assert!(tokens(&md) <= max.parse().unwrap(), "{md}");
        assert!(
            md.contains("def parse_reply_buffer(reader, buf):"),
            "{max}: {md}"
        );
        assert!(md.contains(" · 1 of "), "{max}: {md}");
    }
    let v = repo.sno_json(&[
        "search",
        "parse reply buffer",
        "--max-tokens",
        "300",
        "--json",
    ]);
    assert_eq!(v["items"][0]["qualified_name"], "parse_reply_buffer", "{v}");
}
