//! The short forms code spells words with. A question says "mutable",
//! "iterator" and "configuration"; code says `mut`, `iter` and `cfg`. A
//! question in words is searched for its words and, at a lower weight, for
//! their short forms, and a short form in a question for its long words.
//!
//! The table holds abbreviations common across languages and code bases
//! (the kind identifier-expansion studies of source code list), not the
//! vocabulary of one project.

/// (long word, short forms). Lowercase; a long word is matched as the query
/// spells it, before stemming.
const TABLE: &[(&str, &[&str])] = &[
    ("address", &["addr"]),
    ("administrator", &["admin"]),
    ("allocate", &["alloc"]),
    ("allocation", &["alloc"]),
    ("allocator", &["alloc"]),
    ("application", &["app"]),
    ("argument", &["arg"]),
    ("arguments", &["args"]),
    ("array", &["arr"]),
    ("asynchronous", &["async"]),
    ("attribute", &["attr"]),
    ("attributes", &["attrs"]),
    ("authentication", &["auth"]),
    ("authorization", &["auth"]),
    ("average", &["avg"]),
    ("background", &["bg"]),
    ("boolean", &["bool"]),
    ("buffer", &["buf"]),
    ("button", &["btn"]),
    ("calculate", &["calc"]),
    ("callback", &["cb"]),
    ("capacity", &["cap"]),
    ("certificate", &["cert"]),
    ("character", &["char"]),
    ("characters", &["chars"]),
    ("column", &["col"]),
    ("columns", &["cols"]),
    ("command", &["cmd"]),
    ("compare", &["cmp"]),
    ("concatenate", &["concat"]),
    ("configuration", &["config", "cfg", "conf"]),
    ("connection", &["conn"]),
    ("context", &["ctx"]),
    ("coordinate", &["coord"]),
    ("coordinates", &["coords"]),
    ("count", &["cnt"]),
    ("current", &["cur", "curr"]),
    ("database", &["db"]),
    ("decrement", &["dec"]),
    ("definition", &["def"]),
    ("delete", &["del"]),
    ("dependencies", &["deps"]),
    ("dependency", &["dep"]),
    ("description", &["desc"]),
    ("descriptor", &["desc"]),
    ("destination", &["dst", "dest"]),
    ("development", &["dev"]),
    ("dictionary", &["dict"]),
    ("directory", &["dir"]),
    ("divide", &["div"]),
    ("division", &["div"]),
    ("document", &["doc"]),
    ("duplicate", &["dup"]),
    ("element", &["elem"]),
    ("environment", &["env"]),
    ("equal", &["eq"]),
    ("error", &["err"]),
    ("escape", &["esc"]),
    ("evaluate", &["eval"]),
    ("execute", &["exec"]),
    ("exponent", &["exp"]),
    ("expression", &["expr"]),
    ("extension", &["ext"]),
    ("foreground", &["fg"]),
    ("format", &["fmt"]),
    ("frequency", &["freq"]),
    ("function", &["func", "fn"]),
    ("generate", &["gen"]),
    ("header", &["hdr"]),
    ("hexadecimal", &["hex"]),
    ("horizontal", &["horiz"]),
    ("identifier", &["ident", "id"]),
    ("image", &["img"]),
    ("increment", &["inc"]),
    ("index", &["idx"]),
    ("infinite", &["inf"]),
    ("infinity", &["inf"]),
    ("information", &["info"]),
    ("initialise", &["init"]),
    ("initialize", &["init"]),
    ("instance", &["inst"]),
    ("integer", &["int"]),
    ("interface", &["iface"]),
    ("iterate", &["iter"]),
    ("iterator", &["iter"]),
    ("language", &["lang"]),
    ("length", &["len"]),
    ("level", &["lvl"]),
    ("library", &["lib"]),
    ("location", &["loc"]),
    ("manager", &["mgr"]),
    ("maximum", &["max"]),
    ("memory", &["mem"]),
    ("message", &["msg"]),
    ("millisecond", &["ms"]),
    ("milliseconds", &["ms"]),
    ("minimum", &["min"]),
    ("miscellaneous", &["misc"]),
    ("multiplication", &["mul"]),
    ("multiply", &["mul"]),
    ("mutable", &["mut"]),
    ("mutably", &["mut"]),
    ("negative", &["neg"]),
    ("number", &["num"]),
    ("object", &["obj"]),
    ("operation", &["op"]),
    ("option", &["opt"]),
    ("options", &["opts"]),
    ("original", &["orig"]),
    ("package", &["pkg"]),
    ("parameter", &["param"]),
    ("parameters", &["params"]),
    ("password", &["pwd", "passwd"]),
    ("percent", &["pct"]),
    ("pointer", &["ptr"]),
    ("position", &["pos"]),
    ("power", &["pow"]),
    ("previous", &["prev"]),
    ("process", &["proc"]),
    ("property", &["prop"]),
    ("random", &["rand", "rng"]),
    ("receive", &["recv"]),
    ("rectangle", &["rect"]),
    ("reference", &["ref"]),
    ("register", &["reg"]),
    ("repository", &["repo"]),
    ("representation", &["repr"]),
    ("request", &["req"]),
    ("response", &["resp", "res"]),
    ("result", &["res"]),
    ("segment", &["seg"]),
    ("separator", &["sep"]),
    ("sequence", &["seq"]),
    ("signal", &["sig"]),
    ("signature", &["sig"]),
    ("socket", &["sock"]),
    ("source", &["src"]),
    ("specification", &["spec"]),
    ("standard", &["std"]),
    ("statement", &["stmt"]),
    ("statistics", &["stats"]),
    ("string", &["str"]),
    ("subtract", &["sub"]),
    ("synchronize", &["sync"]),
    ("synchronous", &["sync"]),
    ("system", &["sys"]),
    ("template", &["tmpl", "tpl"]),
    ("temporary", &["tmp", "temp"]),
    ("text", &["txt"]),
    ("transaction", &["txn", "tx"]),
    ("utilities", &["utils"]),
    ("utility", &["util"]),
    ("value", &["val"]),
    ("values", &["vals"]),
    ("variable", &["var"]),
    ("vertical", &["vert"]),
    ("window", &["win"]),
];

/// The other spellings of `word`: its short forms when it is a long word,
/// its long words when it is a short form. Empty for anything else.
pub fn alternatives(word: &str) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for (long, shorts) in TABLE {
        if *long == word {
            out.extend(shorts.iter().copied());
        } else if shorts.contains(&word) && !out.contains(long) {
            out.push(long);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_words_give_their_short_forms_and_short_forms_their_long_words() {
        assert_eq!(alternatives("mutable"), ["mut"]);
        assert_eq!(alternatives("configuration"), ["config", "cfg", "conf"]);
        let cfg = alternatives("cfg");
        assert_eq!(cfg, ["configuration"]);
        let res = alternatives("res");
        assert!(
            res.contains(&"response") && res.contains(&"result"),
            "{res:?}"
        );
        assert_eq!(alternatives("background"), ["bg"]);
        assert_eq!(alternatives("ms"), ["millisecond", "milliseconds"]);
        assert!(alternatives("parse").is_empty());
    }

    #[test]
    fn the_table_is_sorted_lowercase_and_never_maps_a_word_to_itself() {
        for w in TABLE.windows(2) {
            assert!(w[0].0 < w[1].0, "{} before {}", w[0].0, w[1].0);
        }
        for (long, shorts) in TABLE {
            assert_eq!(*long, long.to_lowercase());
            for s in *shorts {
                assert_ne!(s, long);
                assert_eq!(*s, s.to_lowercase());
            }
        }
    }
}
