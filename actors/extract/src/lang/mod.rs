//! One module per grammar family; each turns a syntax tree into [`FileFacts`]
//! through the shared walker.

use sno_journal::model::Language;
use tree_sitter::Tree;

use crate::facts::FileFacts;

mod c_cpp;
mod csharp;
mod generic;
mod go;
mod java;
mod javascript;
mod kotlin;
mod php;
mod python;
mod ruby;
mod rust;
mod scala;
mod swift;

#[cfg(test)]
pub(crate) mod test_support;

/// Extracts the facts of an already parsed file.
pub(crate) fn extract_tree(lang: Language, tree: &Tree, src: &[u8]) -> FileFacts {
    match lang {
        Language::Python => python::extract(tree, src),
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            javascript::extract(lang, tree, src)
        }
        Language::Go => go::extract(tree, src),
        Language::Rust => rust::extract(tree, src),
        Language::Java => java::extract(tree, src),
        Language::C | Language::Cpp => c_cpp::extract(lang, tree, src),
        Language::Ruby => ruby::extract(tree, src),
        Language::CSharp => csharp::extract(tree, src),
        Language::Php => php::extract(tree, src),
        Language::Kotlin => kotlin::extract(tree, src),
        Language::Swift => swift::extract(tree, src),
        Language::Scala => scala::extract(tree, src),
        generic => generic::extract(generic, tree, src),
    }
}

/// The grammar of a generic-tier language.
pub(crate) fn generic_grammar(lang: Language) -> Option<tree_sitter::Language> {
    generic::spec(lang).map(|s| (s.grammar)())
}
