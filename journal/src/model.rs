//! The facts sno stores: files, symbols, edges and diagnostics.
//!
//! These are plain structs and enums on purpose: they are encoded with bincode 2
//! (through serde), which cannot decode `skip_serializing_if`, untagged enums or
//! dynamic values.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A git object id (SHA-1) of a commit.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct CommitId(pub [u8; 20]);

/// A git object id (SHA-1) of a blob.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct BlobId(pub [u8; 20]);

macro_rules! hex_id {
    ($t:ident) => {
        impl $t {
            /// Parses a full 40-digit hexadecimal id.
            pub fn from_hex(s: &str) -> Option<Self> {
                let bytes = hex::decode(s).ok()?;
                let arr: [u8; 20] = bytes.try_into().ok()?;
                Some(Self(arr))
            }
            /// The full 40-digit hexadecimal form.
            pub fn to_hex(&self) -> String {
                hex::encode(self.0)
            }
            /// The abbreviated (12 digit) form used in human output.
            pub fn short(&self) -> String {
                self.to_hex()[..12].to_string()
            }
        }
        // Hex in JSON (what agents and people read); the 20 raw bytes in
        // bincode, exactly as a derived newtype would store them.
        impl Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                if s.is_human_readable() {
                    s.serialize_str(&self.to_hex())
                } else {
                    s.serialize_newtype_struct(stringify!($t), &self.0)
                }
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                if d.is_human_readable() {
                    let s = String::deserialize(d)?;
                    Self::from_hex(&s).ok_or_else(|| {
                        serde::de::Error::custom(format!("`{s}` is not a 40-digit hex id"))
                    })
                } else {
                    <[u8; 20]>::deserialize(d).map(Self)
                }
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.to_hex())
            }
        }
        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($t), self.short())
            }
        }
    };
}
hex_id!(CommitId);
hex_id!(BlobId);

#[cfg(test)]
mod id_tests {
    use super::*;

    #[test]
    fn ids_are_hex_in_json_and_raw_bytes_in_bincode() {
        let c = CommitId([0xab; 20]);
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            format!("\"{}\"", "ab".repeat(20))
        );
        let back: CommitId = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
        let cfg = bincode::config::standard();
        let bytes = bincode::serde::encode_to_vec(c, cfg).unwrap();
        assert_eq!(bytes, vec![0xab; 20], "the stored layout is unchanged");
        let (d, _): (CommitId, usize) = bincode::serde::decode_from_slice(&bytes, cfg).unwrap();
        assert_eq!(d, c);
    }
}

/// A symbol's stable identity: a hash of its path, qualified name, kind and
/// ordinal among same-named siblings. Stable across commits while those hold, so
/// a delta can name a removed symbol by id alone.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Debug)]
pub struct SymbolId(pub u64);

impl SymbolId {
    /// Derives the id of a symbol from what identifies it.
    pub fn derive(path: &str, qualified_name: &str, kind: SymbolKind, ordinal: u32) -> Self {
        let mut buf = Vec::with_capacity(path.len() + qualified_name.len() + 8);
        buf.extend_from_slice(path.as_bytes());
        buf.push(0);
        buf.extend_from_slice(qualified_name.as_bytes());
        buf.push(0);
        buf.push(kind as u8);
        buf.extend_from_slice(&ordinal.to_le_bytes());
        SymbolId(xxhash_rust::xxh3::xxh3_64(&buf))
    }
}

impl fmt::Display for SymbolId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// A position in the journal: events are numbered from 0, without gaps.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Debug)]
pub struct Seq(pub u64);

impl fmt::Display for Seq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The languages sno extracts structure from. Stored by position: append
/// new languages, never reorder.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Debug)]
pub enum Language {
    Python,
    /// JavaScript including JSX.
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Rust,
    Java,
    C,
    Cpp,
    Ruby,
    CSharp,
    Php,
    Kotlin,
    Swift,
    Scala,
    // The generic tier (see [`Language::is_generic`]).
    /// Bash and POSIX shell.
    Bash,
    Lua,
    Zig,
    Dart,
    Solidity,
    /// HCL, Terraform's language.
    Hcl,
    Sql,
    Julia,
    R,
    /// Objective-C (`.m`).
    ObjectiveC,
    /// Groovy, Gradle's build scripts included.
    Groovy,
    Elixir,
    Erlang,
    Haskell,
    /// OCaml implementations (`.ml`).
    OCaml,
    Elm,
    Gleam,
    Nix,
    /// Pascal and Delphi.
    Pascal,
}

impl Language {
    /// All languages, in a stable order.
    pub const ALL: [Language; 34] = [
        Language::Python,
        Language::JavaScript,
        Language::TypeScript,
        Language::Tsx,
        Language::Go,
        Language::Rust,
        Language::Java,
        Language::C,
        Language::Cpp,
        Language::Ruby,
        Language::CSharp,
        Language::Php,
        Language::Kotlin,
        Language::Swift,
        Language::Scala,
        Language::Bash,
        Language::Lua,
        Language::Zig,
        Language::Dart,
        Language::Solidity,
        Language::Hcl,
        Language::Sql,
        Language::Julia,
        Language::R,
        Language::ObjectiveC,
        Language::Groovy,
        Language::Elixir,
        Language::Erlang,
        Language::Haskell,
        Language::OCaml,
        Language::Elm,
        Language::Gleam,
        Language::Nix,
        Language::Pascal,
    ];

    /// The language of a path, judged by its extension.
    pub fn from_path(path: &str) -> Option<Language> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
        Some(match ext.as_str() {
            "py" | "pyi" => Language::Python,
            "js" | "jsx" | "mjs" | "cjs" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            "rs" => Language::Rust,
            "java" => Language::Java,
            "c" => Language::C,
            // `.h` is shared by C and C++; the C++ grammar parses C headers too.
            "h" | "hh" | "hpp" | "hxx" | "cc" | "cpp" | "cxx" | "c++" | "ipp" | "inl" => {
                Language::Cpp
            }
            "rb" | "rake" | "gemspec" => Language::Ruby,
            "cs" => Language::CSharp,
            "php" | "phtml" => Language::Php,
            "kt" | "kts" => Language::Kotlin,
            "swift" => Language::Swift,
            "scala" | "sc" => Language::Scala,
            "sh" | "bash" => Language::Bash,
            "lua" => Language::Lua,
            "zig" => Language::Zig,
            "dart" => Language::Dart,
            "sol" => Language::Solidity,
            "tf" | "hcl" | "tfvars" => Language::Hcl,
            "sql" => Language::Sql,
            "jl" => Language::Julia,
            "r" => Language::R,
            "m" => Language::ObjectiveC,
            "groovy" | "gradle" => Language::Groovy,
            "ex" | "exs" => Language::Elixir,
            "erl" | "hrl" => Language::Erlang,
            "hs" => Language::Haskell,
            "ml" => Language::OCaml,
            "elm" => Language::Elm,
            "gleam" => Language::Gleam,
            "nix" => Language::Nix,
            "pas" | "dpr" | "lpr" => Language::Pascal,
            _ => return None,
        })
    }

    /// Whether the language is of the generic tier: its definitions and
    /// calls come from a tree-sitter tags query, without imports,
    /// inheritance or receivers beyond what the query captures. The deep
    /// tier (the first fifteen) has an extractor of its own.
    pub fn is_generic(self) -> bool {
        self as usize > Language::Scala as usize
    }

    /// A short lowercase name, as shown to users.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Go => "go",
            Language::Rust => "rust",
            Language::Java => "java",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::Ruby => "ruby",
            Language::CSharp => "csharp",
            Language::Php => "php",
            Language::Kotlin => "kotlin",
            Language::Swift => "swift",
            Language::Scala => "scala",
            Language::Bash => "bash",
            Language::Lua => "lua",
            Language::Zig => "zig",
            Language::Dart => "dart",
            Language::Solidity => "solidity",
            Language::Hcl => "hcl",
            Language::Sql => "sql",
            Language::Julia => "julia",
            Language::R => "r",
            Language::ObjectiveC => "objc",
            Language::Groovy => "groovy",
            Language::Elixir => "elixir",
            Language::Erlang => "erlang",
            Language::Haskell => "haskell",
            Language::OCaml => "ocaml",
            Language::Elm => "elm",
            Language::Gleam => "gleam",
            Language::Nix => "nix",
            Language::Pascal => "pascal",
        }
    }
}

/// What kind of thing a symbol is. The discriminants are part of [`SymbolId`]
/// derivation: append new kinds, never reorder.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Debug)]
#[repr(u8)]
pub enum SymbolKind {
    Module = 0,
    Namespace = 1,
    Class = 2,
    Struct = 3,
    Interface = 4,
    Trait = 5,
    Enum = 6,
    Union = 7,
    Function = 8,
    Method = 9,
    Constructor = 10,
    Field = 11,
    Constant = 12,
    Variable = 13,
    TypeAlias = 14,
    Macro = 15,
    Impl = 16,
    EnumMember = 17,
}

impl SymbolKind {
    /// Every kind, in discriminant order.
    pub const ALL: [SymbolKind; 18] = [
        SymbolKind::Module,
        SymbolKind::Namespace,
        SymbolKind::Class,
        SymbolKind::Struct,
        SymbolKind::Interface,
        SymbolKind::Trait,
        SymbolKind::Enum,
        SymbolKind::Union,
        SymbolKind::Function,
        SymbolKind::Method,
        SymbolKind::Constructor,
        SymbolKind::Field,
        SymbolKind::Constant,
        SymbolKind::Variable,
        SymbolKind::TypeAlias,
        SymbolKind::Macro,
        SymbolKind::Impl,
        SymbolKind::EnumMember,
    ];

    /// The kind of a discriminant (as `kind as u8` gives it).
    pub fn from_repr(b: u8) -> Option<SymbolKind> {
        Self::ALL.get(b as usize).copied()
    }

    /// A short lowercase name, as shown to users.
    pub fn name(self) -> &'static str {
        match self {
            SymbolKind::Module => "module",
            SymbolKind::Namespace => "namespace",
            SymbolKind::Class => "class",
            SymbolKind::Struct => "struct",
            SymbolKind::Interface => "interface",
            SymbolKind::Trait => "trait",
            SymbolKind::Enum => "enum",
            SymbolKind::Union => "union",
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Constructor => "constructor",
            SymbolKind::Field => "field",
            SymbolKind::Constant => "constant",
            SymbolKind::Variable => "variable",
            SymbolKind::TypeAlias => "type_alias",
            SymbolKind::Macro => "macro",
            SymbolKind::Impl => "impl",
            SymbolKind::EnumMember => "enum_member",
        }
    }

    /// Whether calls can land on a symbol of this kind.
    pub fn is_callable(self) -> bool {
        matches!(
            self,
            SymbolKind::Function
                | SymbolKind::Method
                | SymbolKind::Constructor
                | SymbolKind::Macro
                | SymbolKind::Class
                | SymbolKind::Struct
        )
    }

    /// Whether the kind can be inherited from or implemented.
    pub fn is_type(self) -> bool {
        matches!(
            self,
            SymbolKind::Class
                | SymbolKind::Struct
                | SymbolKind::Interface
                | SymbolKind::Trait
                | SymbolKind::Enum
                | SymbolKind::Union
                | SymbolKind::TypeAlias
        )
    }
}

/// A source range. Lines and columns are 1-based (columns count bytes); bytes are
/// 0-based offsets into the file, end exclusive.
#[derive(
    Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Debug, Default,
)]
pub struct Span {
    pub start_line: u32,
    pub start_col: u32,
    pub end_line: u32,
    pub end_col: u32,
    pub start_byte: u32,
    pub end_byte: u32,
}

/// A stored symbol.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Debug)]
pub struct Symbol {
    pub id: SymbolId,
    pub name: String,
    /// The name with its containers, joined by `.`: `Config.load`, `pkg.Server.Run`.
    pub qualified_name: String,
    pub kind: SymbolKind,
    /// The enclosing symbol, if any.
    pub parent: Option<SymbolId>,
    pub span: Span,
    /// The declaration's first line, trimmed (no body).
    pub signature: String,
    /// The doc comment or docstring, with comment markers removed; empty if none.
    pub doc: String,
    /// Hash of the symbol's source text: changes whenever its body changes.
    pub content_hash: u64,
}

impl Symbol {
    /// A function declared here and defined elsewhere: a C or C++
    /// prototype (`int f(int);` in a header, `void m();` in a class body),
    /// or a Python `@overload` stub of a function defined after it. The
    /// extractor keeps a prototype's `;` in its signature, where every
    /// other signature drops it, and puts an overload stub's decorator
    /// before its signature.
    pub fn is_declaration(&self) -> bool {
        matches!(
            self.kind,
            SymbolKind::Function | SymbolKind::Method | SymbolKind::Constructor
        ) && (self.signature.ends_with(';') || is_overload_decorator(&self.signature))
    }

    /// A Python property's setter or deleter (`@x.setter def x(..)`): the
    /// same property as the getter that defines it, not another meaning of
    /// the name. The extractor puts the decorator before its signature.
    pub fn is_accessor(&self) -> bool {
        self.kind == SymbolKind::Method
            && accessor_decorator(&self.signature).is_some_and(|(p, _)| p == self.name)
    }
}

/// The property and accessor (`setter`, `deleter`) a decorator such as
/// `@timeout.setter` names, if it is one.
pub fn accessor_decorator(text: &str) -> Option<(&str, &str)> {
    let d = text.strip_prefix('@')?.split_whitespace().next()?;
    let (property, accessor) = d.rsplit_once('.')?;
    matches!(accessor, "setter" | "deleter").then_some((property, accessor))
}

/// Whether `text` starts with Python's `@overload` decorator, however
/// reached (`@overload`, `@typing.overload`, `@t.overload`).
pub fn is_overload_decorator(text: &str) -> bool {
    text.strip_prefix('@')
        .and_then(|t| t.split_whitespace().next())
        .is_some_and(|d| d.rsplit('.').next() == Some("overload"))
}

/// The relation an edge expresses.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Debug)]
pub enum EdgeKind {
    Contains,
    Imports,
    Calls,
    Inherits,
}

impl EdgeKind {
    /// A short lowercase name, as shown to users.
    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::Contains => "contains",
            EdgeKind::Imports => "imports",
            EdgeKind::Calls => "calls",
            EdgeKind::Inherits => "inherits",
        }
    }
}

/// Where an edge points.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Debug)]
pub enum EdgeTarget {
    /// A symbol of the repository.
    Symbol(SymbolId),
    /// A file of the repository (imports).
    File(String),
    /// A directory/package of the repository (Go packages, Python packages).
    Module(String),
    /// A name the index could not resolve (external library or ambiguous).
    Unresolved(String),
}

/// A directed fact between a file or symbol and what it refers to.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Debug)]
pub struct Edge {
    pub kind: EdgeKind,
    /// The source symbol; `None` means the file itself (top-level code).
    pub from: Option<SymbolId>,
    pub to: EdgeTarget,
    /// The name as written at the site (callee, module path, base class).
    pub name: String,
    /// Line of the site (1-based).
    pub line: u32,
    /// How the target was found. Meaningful for [`EdgeTarget::Symbol`];
    /// files and modules are resolved by the language's import rules
    /// (exact), and unresolved names are guesses by nature.
    pub certainty: Certainty,
}

/// How sure resolution is that an edge's target is the one the code means.
#[derive(
    Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Debug, Default,
)]
pub enum Certainty {
    /// Found by the language's own rules: the enclosing scope, an import,
    /// the receiver's type, the same package.
    #[default]
    Exact,
    /// Found by the name alone: it may be another definition, or one
    /// outside the repository.
    Heuristic(Guess),
}

/// Why an edge is a guess.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Debug)]
pub enum Guess {
    /// The only definition of the name in the repository, though nothing
    /// in scope (an import, the file, the package) names it.
    UniqueName,
    /// A method called on a receiver whose type sno does not know, matched
    /// by the method's name.
    UnknownReceiver,
    /// One of several definitions of the name in the scope that was
    /// searched (overloads, `#[cfg]` or `#ifdef` variants, the same method
    /// of two traits); the first is linked.
    Overloaded,
    /// A bare call of a name that a parameter of the calling function has:
    /// it calls what was passed; a function of the name is linked.
    Shadowed,
}

impl Certainty {
    /// Whether the edge is exact.
    pub fn is_exact(self) -> bool {
        self == Certainty::Exact
    }

    /// Why the edge is a guess, in words, for answers; `None` when exact.
    pub fn reason(self) -> Option<&'static str> {
        match self {
            Certainty::Exact => None,
            Certainty::Heuristic(g) => Some(g.reason()),
        }
    }
}

impl Guess {
    /// In words, for answers.
    pub fn reason(self) -> &'static str {
        match self {
            Guess::UniqueName => "matched by a repository-unique name; nothing in scope names it",
            Guess::UnknownReceiver => "method matched by name on a receiver of unknown type",
            Guess::Overloaded => "one of several definitions of the name in scope",
            Guess::Shadowed => "a parameter of the caller has the name: it calls what was passed",
        }
    }
}

/// A syntax problem tree-sitter reported. Parsing never fails: the symbols it
/// recovered are kept beside these.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Debug)]
pub struct Diagnostic {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

/// How a file fared in the index.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Debug)]
pub enum FileState {
    /// Parsed without syntax errors.
    Parsed,
    /// Parsed with syntax errors; recovered symbols are kept.
    ParsedWithErrors,
    /// Tracked but not parsed.
    Skipped(SkipReason),
    /// The parser failed on it (for example a worker panicked).
    Failed(String),
}

/// Why a file was not parsed.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Debug)]
pub enum SkipReason {
    /// Contains NUL bytes or is not UTF-8.
    Binary,
    /// Larger than the configured limit.
    TooLarge,
    /// No grammar for its extension.
    UnsupportedLanguage,
}

impl SkipReason {
    /// A short lowercase name, as shown to users.
    pub fn name(self) -> &'static str {
        match self {
            SkipReason::Binary => "binary",
            SkipReason::TooLarge => "too_large",
            SkipReason::UnsupportedLanguage => "unsupported_language",
        }
    }
}

/// Everything stored about one file at the indexed state.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Debug)]
pub struct FileRecord {
    pub path: String,
    pub blob: BlobId,
    pub language: Option<Language>,
    pub size: u64,
    pub lines: u32,
    pub state: FileState,
    pub diagnostics: Vec<Diagnostic>,
    /// How many secret values (keys, tokens, passwords) were masked in the
    /// text stored of this file (signatures, docs).
    pub masked_secrets: u32,
    /// Sorted by span, then id.
    pub symbols: Vec<Symbol>,
    /// Sorted.
    pub edges: Vec<Edge>,
    /// The unresolved references found in the file, kept so edges can be
    /// resolved again when other files change.
    pub refs: FileRefs,
}

/// Unresolved references of one file, as extraction found them.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Debug, Default)]
pub struct FileRefs {
    pub imports: Vec<RawImport>,
    pub calls: Vec<RawCall>,
    pub inherits: Vec<RawInherit>,
}

impl FileRefs {
    /// The names the file's resolution depends on: if a symbol with one of
    /// these names appears or disappears anywhere, the file's edges may
    /// change. The views file each under the referrers table's
    /// [`crate::store::name_used`] key.
    pub fn names_used(&self) -> std::collections::BTreeSet<&str> {
        let mut names = std::collections::BTreeSet::new();
        for c in &self.calls {
            names.insert(c.callee.as_str());
        }
        for i in &self.inherits {
            names.insert(i.base.as_str());
        }
        for i in &self.imports {
            names.extend(i.names.iter().map(String::as_str));
        }
        names
    }
}

/// An import as written (see `sno_extract::Import`).
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Debug)]
pub struct RawImport {
    pub module: String,
    pub names: Vec<String>,
    pub alias: Option<String>,
    pub is_relative: bool,
    pub line: u32,
}

/// A call site as written.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Debug)]
pub struct RawCall {
    pub caller: Option<SymbolId>,
    pub callee: String,
    pub receiver: Option<String>,
    pub line: u32,
}

/// A base type as written.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Debug)]
pub struct RawInherit {
    pub symbol: SymbolId,
    pub base: String,
    pub line: u32,
}

impl FileRecord {
    /// Puts symbols and edges in their canonical order, so that two records with
    /// the same facts compare equal whatever order they were produced in.
    pub fn canonicalize(&mut self) {
        self.symbols.sort_by(|a, b| {
            (a.span.start_byte, a.span.end_byte, a.id).cmp(&(
                b.span.start_byte,
                b.span.end_byte,
                b.id,
            ))
        });
        self.edges.sort();
        self.edges.dedup();
        self.diagnostics.sort();
    }
}

#[cfg(test)]
mod kind_tests {
    use super::SymbolKind;

    #[test]
    fn every_kind_comes_back_from_its_discriminant_and_no_other_byte_is_a_kind() {
        for k in SymbolKind::ALL {
            assert_eq!(SymbolKind::from_repr(k as u8), Some(k));
        }
        assert_eq!(SymbolKind::from_repr(SymbolKind::ALL.len() as u8), None);
    }
}
