//! Prints one JSON object per line, {"path", "name", "line", "kind"}, for
//! every binding whose value is a function (`f = x: ...;`, also in `let`,
//! also parenthesised), named by the last attribute of its path
//! (`lib.f = x: ...` is `f`), with the line of that name.
//!
//! Usage: sno-ref-nix ROOT FILE...
use rnix::{SyntaxKind::*, SyntaxNode};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = std::path::Path::new(&args[0]);
    for path in &args[1..] {
        let text = match std::fs::read_to_string(root.join(path)) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let parse = rnix::Root::parse(&text);
        if !parse.errors().is_empty() {
            eprintln!("{path}: {} parse errors", parse.errors().len());
        }
        let tree: SyntaxNode = parse.syntax();
        for node in tree.descendants().filter(|n| n.kind() == NODE_ATTRPATH_VALUE) {
            let mut children = node.children();
            let (Some(attrpath), Some(mut value)) = (children.next(), children.next()) else { continue };
            while value.kind() == NODE_PAREN {
                match value.children().next() {
                    Some(inner) => value = inner,
                    None => break,
                }
            }
            if attrpath.kind() != NODE_ATTRPATH || value.kind() != NODE_LAMBDA {
                continue;
            }
            let Some(last) = attrpath.children().last() else { continue };
            if last.kind() != NODE_IDENT {
                continue;
            }
            let offset = usize::from(last.text_range().start());
            let line = text[..offset].matches('\n').count() + 1;
            let name = last.text().to_string();
            println!(
                "{{\"path\": {:?}, \"name\": {:?}, \"line\": {}, \"kind\": \"function\"}}",
                path, name, line
            );
        }
    }
}
