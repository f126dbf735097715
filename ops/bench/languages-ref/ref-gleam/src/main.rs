//! Prints one JSON object per line, {"path", "name", "line", "kind"}, for
//! every function of a Gleam module (`fn`, `pub fn`, and external functions:
//! the compiler's `Definition::Function`), with the line of its name. Types,
//! constants and imports are left out, as they are for every language.
//!
//! Usage: sno-ref-gleam ROOT FILE...
use gleam_core::ast::Definition;
use gleam_core::warning::{NullWarningEmitterIO, WarningEmitter};
use std::rc::Rc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = std::path::Path::new(&args[0]);
    let warnings = WarningEmitter::new(Rc::new(NullWarningEmitterIO));
    for path in &args[1..] {
        let text = match std::fs::read_to_string(root.join(path)) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let parsed = match gleam_core::parse::parse_module(path.into(), &text, &warnings) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{path}: parse error {:?}", e.error);
                continue;
            }
        };
        for def in &parsed.module.definitions {
            if let Definition::Function(f) = &def.definition {
                let Some((span, name)) = &f.name else { continue };
                let line = text[..span.start as usize].matches('\n').count() + 1;
                println!(
                    "{{\"path\": {:?}, \"name\": {:?}, \"line\": {}, \"kind\": \"function\"}}",
                    path, name.as_str(), line
                );
            }
        }
    }
}
