//! What each document number of a state is, without the state: the file
//! and kind of every symbol document, a hash of its name, the sections of
//! docs and config files, and the graph neighbours of each symbol.
//!
//! Search ranks document numbers (the state's symbols in order, then the
//! sections). Everything ranking needs beyond the lexical index and the
//! vectors is here, so a head whose map is stored ([`DocMap::to_bytes`])
//! is searched without loading its state: only the files of the answer are
//! read, from the views. A map made from a state and one read back from
//! disk are the same value, so both rank alike.

use sno_journal::delta::State;
use sno_journal::model::{EdgeKind, EdgeTarget, SymbolId, SymbolKind};

use crate::chunks::{Chunk, ChunkKind};

/// Document numbers of a state, by file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DocMap {
    /// Files with symbols, in state (path) order.
    paths: Vec<String>,
    /// `first[i]` is file `i`'s first document; one more entry closes the
    /// last file (the symbol count).
    first: Vec<u32>,
    /// Each symbol document's kind.
    kinds: Vec<SymbolKind>,
    /// Whether each symbol document is a C or C++ prototype
    /// ([`sno_journal::model::Symbol::is_declaration`]): one function with
    /// its definition, which search answers with.
    prototypes: Vec<bool>,
    /// Each symbol document's [`name_hash`].
    names: Vec<u32>,
    /// Each symbol document's id: what edges name.
    ids: Vec<u64>,
    /// Sections of docs and config files (their text left out), numbered
    /// after the symbols, in path order.
    sections: Vec<Chunk>,
    /// Each symbol document's resolved edges out (calls, bases,
    /// containment) in its file's edge order: what a new head's map is
    /// advanced from.
    out: Csr,
    /// Both directions of `out`: what the structural signal walks.
    neighbours: Csr,
    /// Each prototype's one definition, found on first use.
    definitions: Definitions,
}

/// [`DocMap::definitions_of`]'s table, made once per map: a pass over every
/// name is a few milliseconds on millions of symbols, too much per query.
/// Made from the map's other fields, so it is no part of its value.
#[derive(Clone, Debug, Default)]
struct Definitions(std::sync::OnceLock<rustc_hash::FxHashMap<u32, u32>>);

impl PartialEq for Definitions {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// The hash a name is found by: its last `.`-segment, lowercased, so that
/// every spelling [`crate::search`]'s name match accepts (exact or in
/// another case, qualified or not) has the hash of the symbol's name.
pub fn name_hash(name: &str) -> u32 {
    let key = sno_journal::store::name_key(name);
    let lower;
    let key = if key.chars().any(char::is_uppercase) {
        lower = key.to_lowercase();
        lower.as_str()
    } else {
        key
    };
    xxhash_rust::xxh3::xxh3_64(key.as_bytes()) as u32
}

impl DocMap {
    /// The map of `state`, with the sections cut from it.
    pub fn of(state: &State, chunks: &[Chunk]) -> DocMap {
        let mut b = DocMapBuilder::default();
        for (path, rec) in state {
            b.add(path, rec);
        }
        b.finish(chunks)
    }

    /// The map of the state this one's becomes when the files `touched`
    /// change: `changed` holds their records there (a touched file it
    /// lacks is gone), `sections` their sections. Equal to
    /// [`DocMap::of`] the new state, without reading the others.
    pub fn advanced(
        &self,
        changed: &State,
        touched: &std::collections::BTreeSet<String>,
        sections: &[Chunk],
    ) -> DocMap {
        enum From<'r> {
            Old(usize),
            New(&'r sno_journal::model::FileRecord),
        }
        let mut files: Vec<(&str, From)> = self
            .paths
            .iter()
            .enumerate()
            .filter(|(_, p)| !touched.contains(*p))
            .map(|(i, p)| (p.as_str(), From::Old(i)))
            .chain(
                changed
                    .iter()
                    .filter(|(p, r)| touched.contains(*p) && !r.symbols.is_empty())
                    .map(|(p, r)| (p.as_str(), From::New(r))),
            )
            .collect();
        files.sort_by(|a, b| a.0.cmp(b.0));
        let mut map = DocMap::default();
        let mut old_to_new = vec![u32::MAX; self.kinds.len()];
        for (path, from) in &files {
            match from {
                From::Old(i) => {
                    let (lo, hi) = (self.first[*i] as usize, self.first[i + 1] as usize);
                    let at = map.kinds.len();
                    map.paths.push(path.to_string());
                    map.first.push(at as u32);
                    map.kinds.extend_from_slice(&self.kinds[lo..hi]);
                    map.prototypes.extend_from_slice(&self.prototypes[lo..hi]);
                    map.names.extend_from_slice(&self.names[lo..hi]);
                    map.ids.extend_from_slice(&self.ids[lo..hi]);
                    for (k, d) in (lo..hi).enumerate() {
                        old_to_new[d] = (at + k) as u32;
                    }
                }
                From::New(rec) => map.push_file(path, rec),
            }
        }
        map.first.push(map.kinds.len() as u32);
        let by_id = map.by_id();
        let mut lists: Vec<Vec<u32>> = Vec::with_capacity(map.kinds.len());
        for (i, (_, from)) in files.iter().enumerate() {
            match from {
                From::Old(j) => {
                    for d in self.first[*j] as usize..self.first[j + 1] as usize {
                        lists.push(
                            self.out
                                .of_doc(d)
                                .filter_map(|t| match old_to_new[t] {
                                    u32::MAX => by_id.get(&SymbolId(self.ids[t])).copied(),
                                    n => Some(n),
                                })
                                .collect(),
                        );
                    }
                }
                From::New(rec) => lists.extend(out_of(rec, map.first[i] as usize, &by_id)),
            }
        }
        map.set_out(lists);
        let mut kept: Vec<Chunk> = self
            .sections
            .iter()
            .filter(|c| !touched.contains(&c.path))
            .cloned()
            .chain(sections.iter().map(without_text))
            .collect();
        kept.sort_by(|a, b| a.path.cmp(&b.path));
        map.sections = kept;
        map
    }

    fn push_file(&mut self, path: &str, rec: &sno_journal::model::FileRecord) {
        self.paths.push(path.to_string());
        self.first.push(self.kinds.len() as u32);
        for s in &rec.symbols {
            self.kinds.push(s.kind);
            self.prototypes.push(s.is_declaration());
            self.names.push(name_hash(&s.name));
            self.ids.push(s.id.0);
        }
    }

    fn by_id(&self) -> rustc_hash::FxHashMap<SymbolId, u32> {
        let mut by_id =
            rustc_hash::FxHashMap::with_capacity_and_hasher(self.ids.len(), Default::default());
        for (i, id) in self.ids.iter().enumerate() {
            by_id.entry(SymbolId(*id)).or_insert(i as u32);
        }
        by_id
    }

    fn set_out(&mut self, lists: Vec<Vec<u32>>) {
        self.set_out_csr(Csr::from_lists(&lists));
    }

    fn set_out_csr(&mut self, out: Csr) {
        // Both directions, in document order: a document's own edges, then
        // those of the documents before and after it that name it, as
        // each source comes.
        let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(out.targets.len() * 2);
        for a in 0..self.kinds.len() {
            for b in out.of_doc(a) {
                pairs.push((a as u32, b as u32));
                pairs.push((b as u32, a as u32));
            }
        }
        self.neighbours = Csr::from_pairs(self.kinds.len(), pairs);
        self.out = out;
    }

    /// Symbol documents.
    pub fn symbols(&self) -> usize {
        self.kinds.len()
    }

    /// All documents: symbols, then sections.
    pub fn len(&self) -> usize {
        self.kinds.len() + self.sections.len()
    }

    /// Whether there is no document.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Files with symbols.
    pub fn files(&self) -> usize {
        self.paths.len()
    }

    /// The file of a symbol document, and the symbol's place in it.
    pub fn symbol(&self, doc: usize) -> Option<(&str, usize)> {
        if doc >= self.kinds.len() {
            return None;
        }
        let i = self.first.partition_point(|f| *f as usize <= doc) - 1;
        Some((&self.paths[i], doc - self.first[i] as usize))
    }

    /// A section document.
    pub fn section(&self, doc: usize) -> Option<&Chunk> {
        self.sections.get(doc.checked_sub(self.kinds.len())?)
    }

    /// The path of any document.
    pub fn path(&self, doc: usize) -> &str {
        match self.symbol(doc) {
            Some((path, _)) => path,
            None => self.section(doc).map_or("", |c| c.path.as_str()),
        }
    }

    /// A symbol document's [`name_hash`] (`None` for a section).
    pub fn name_hash_of(&self, doc: usize) -> Option<u32> {
        self.names.get(doc).copied()
    }

    /// A symbol document's kind (`None` for a section).
    pub fn kind(&self, doc: usize) -> Option<SymbolKind> {
        self.kinds.get(doc).copied()
    }

    /// Whether a document is a C or C++ prototype.
    pub fn is_prototype(&self, doc: usize) -> bool {
        self.prototypes.get(doc).copied().unwrap_or(false)
    }

    /// For each prototype among `docs`, the one definition of the function
    /// it declares: a document of the same name hash and kind that is no
    /// prototype, where there is exactly one. The map holds no owners, so
    /// `A::run`'s prototype may take `B::run` for its definition when that
    /// is the only `run`: it moves a rank, where resolution
    /// (`sno_index::resolve`) would draw a false edge and checks owners.
    pub fn definitions_of(&self, docs: &[usize]) -> Vec<(usize, usize)> {
        if !docs.iter().any(|d| self.is_prototype(*d)) {
            return Vec::new();
        }
        let table = self.definitions.0.get_or_init(|| self.find_definitions());
        docs.iter()
            .filter_map(|d| Some((*d, *table.get(&u32::try_from(*d).ok()?)? as usize)))
            .collect()
    }

    /// Every prototype's one definition, in one pass over the names.
    fn find_definitions(&self) -> rustc_hash::FxHashMap<u32, u32> {
        let protos: Vec<usize> = (0..self.kinds.len())
            .filter(|d| self.prototypes[*d])
            .collect();
        let wanted: rustc_hash::FxHashSet<(u32, SymbolKind)> = protos
            .iter()
            .map(|d| (self.names[*d], self.kinds[*d]))
            .collect();
        // (name, kind) -> the definition, or `None` once a second is seen.
        let mut defs: rustc_hash::FxHashMap<(u32, SymbolKind), Option<usize>> = Default::default();
        for (d, h) in self.names.iter().enumerate() {
            let key = (*h, self.kinds[d]);
            if !self.prototypes[d] && wanted.contains(&key) {
                defs.entry(key).and_modify(|e| *e = None).or_insert(Some(d));
            }
        }
        protos
            .into_iter()
            .filter_map(|p| {
                let def = (*defs.get(&(self.names[p], self.kinds[p]))?)?;
                Some((p as u32, def as u32))
            })
            .collect()
    }

    /// Whether some file with symbols or sections has a path starting
    /// with `prefix`: a search scoped to it can find anything.
    pub fn holds_under(&self, prefix: &str) -> bool {
        let i = self.paths.partition_point(|p| p.as_str() < prefix);
        let j = self.sections.partition_point(|c| c.path.as_str() < prefix);
        self.paths.get(i).is_some_and(|p| p.starts_with(prefix))
            || self
                .sections
                .get(j)
                .is_some_and(|c| c.path.starts_with(prefix))
    }

    /// The directories of the files with symbols or sections (each with a
    /// trailing `/`), and those files: what a scope can name.
    pub fn scopes(&self) -> std::collections::BTreeSet<String> {
        let mut out = std::collections::BTreeSet::new();
        let files = self
            .paths
            .iter()
            .chain(self.sections.iter().map(|c| &c.path));
        for p in files {
            out.insert(p.clone());
            let mut at = 0;
            while let Some(k) = p[at..].find('/') {
                at += k + 1;
                out.insert(p[..at].to_string());
            }
        }
        out
    }

    /// How many symbols the map holds for `path` (0 for a file it lacks).
    pub fn symbols_in(&self, path: &str) -> usize {
        match self.paths.binary_search_by(|p| p.as_str().cmp(path)) {
            Ok(i) => (self.first[i + 1] - self.first[i]) as usize,
            Err(_) => 0,
        }
    }

    /// The document of symbol `k` of `path`.
    pub fn symbol_doc(&self, path: &str, k: usize) -> Option<usize> {
        let i = self.paths.binary_search_by(|p| p.as_str().cmp(path)).ok()?;
        let (lo, hi) = (self.first[i] as usize, self.first[i + 1] as usize);
        (lo + k < hi).then_some(lo + k)
    }

    /// The document of section `k` of `path`.
    pub fn section_doc(&self, path: &str, k: usize) -> Option<usize> {
        let i = self
            .sections
            .partition_point(|c| c.path.as_str() < path)
            .checked_add(k)?;
        (self.sections.get(i)?.path == path).then_some(self.kinds.len() + i)
    }

    /// Symbol documents whose name has `name`'s [`name_hash`]: every
    /// document a name match can accept, and a few that share the hash.
    pub fn named(&self, name: &str) -> Vec<usize> {
        let h = name_hash(&name.replace("::", "."));
        self.names
            .iter()
            .enumerate()
            .filter(|(_, n)| **n == h)
            .map(|(d, _)| d)
            .collect()
    }

    /// Graph neighbours of a symbol document: callers, callees, bases,
    /// subtypes and containers, resolved edges only.
    pub fn neighbours(&self, doc: usize) -> impl Iterator<Item = usize> + '_ {
        self.neighbours.of_doc(doc)
    }

    /// The stored form: little-endian, closed by a marker so a cut file is
    /// never taken for a whole one.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            64 + self.kinds.len() * 25
                + (self.neighbours.targets.len() + self.out.targets.len()) * 4
                + self.paths.len() * 48,
        );
        out.extend_from_slice(MAGIC);
        for n in [self.paths.len(), self.kinds.len(), self.sections.len()] {
            put_u32(&mut out, n as u32);
        }
        for p in &self.paths {
            put_str(&mut out, p);
        }
        for f in &self.first {
            put_u32(&mut out, *f);
        }
        // A prototype's kind byte has its high bit set.
        out.extend(
            self.kinds
                .iter()
                .zip(&self.prototypes)
                .map(|(k, p)| *k as u8 | if *p { 0x80 } else { 0 }),
        );
        for n in &self.names {
            put_u32(&mut out, *n);
        }
        for id in &self.ids {
            out.extend_from_slice(&id.to_le_bytes());
        }
        for c in &self.sections {
            put_str(&mut out, &c.path);
            put_str(&mut out, &c.title);
            out.push(match c.kind {
                ChunkKind::Doc => 0,
                ChunkKind::Config => 1,
            });
            put_u32(&mut out, c.start_line);
            put_u32(&mut out, c.end_line);
            out.extend_from_slice(&(c.start_byte as u64).to_le_bytes());
            out.extend_from_slice(&(c.end_byte as u64).to_le_bytes());
        }
        self.out.put(&mut out);
        self.neighbours.put(&mut out);
        out.extend_from_slice(END);
        out
    }

    /// A map read back from [`DocMap::to_bytes`]; `None` for anything
    /// damaged, cut or inconsistent.
    pub fn from_bytes(bytes: &[u8]) -> Option<DocMap> {
        let mut r = Reader(bytes.strip_suffix(END)?.strip_prefix(MAGIC)?);
        let files = r.u32()? as usize;
        let symbols = r.u32()? as usize;
        let sections = r.u32()? as usize;
        let paths = (0..files)
            .map(|_| r.str())
            .collect::<Option<Vec<String>>>()?;
        let first = r.u32s(files + 1)?;
        let kind_bytes = r.take(symbols)?;
        let kinds = kind_bytes
            .iter()
            .map(|b| SymbolKind::from_repr(*b & 0x7f))
            .collect::<Option<Vec<_>>>()?;
        let prototypes = kind_bytes.iter().map(|b| *b & 0x80 != 0).collect();
        let names = r.u32s(symbols)?;
        let ids = r
            .take(symbols.checked_mul(8)?)?
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect();
        let sections = (0..sections)
            .map(|_| {
                Some(Chunk {
                    path: r.str()?,
                    title: r.str()?,
                    kind: match r.take(1)?[0] {
                        0 => ChunkKind::Doc,
                        1 => ChunkKind::Config,
                        _ => return None,
                    },
                    start_line: r.u32()?,
                    end_line: r.u32()?,
                    start_byte: r.u64()? as usize,
                    end_byte: r.u64()? as usize,
                    text: String::new(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let out = Csr::read(&mut r, symbols)?;
        let neighbours = Csr::read(&mut r, symbols)?;
        let consistent = r.0.is_empty()
            && first.last().is_some_and(|f| *f as usize == symbols)
            && first.windows(2).all(|w| w[0] <= w[1])
            && paths.windows(2).all(|w| w[0] < w[1]);
        consistent.then_some(DocMap {
            paths,
            first,
            kinds,
            prototypes,
            names,
            ids,
            sections,
            out,
            neighbours,
            definitions: Definitions::default(),
        })
    }
}

// A prototype's kind byte has its high bit set. A map stored before
// prototypes were marked has none set, which is right for it: the records
// it was made from mark none either, so it needs no new format.
const MAGIC: &[u8; 8] = b"SNODOC02";
const END: &[u8; 4] = b"END\n";

fn put_u32(out: &mut Vec<u8>, n: u32) {
    out.extend_from_slice(&n.to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len() as u32);
    out.extend_from_slice(s.as_bytes());
}

struct Reader<'b>(&'b [u8]);

impl<'b> Reader<'b> {
    fn take(&mut self, n: usize) -> Option<&'b [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn u32s(&mut self, n: usize) -> Option<Vec<u32>> {
        let bytes = self.take(n.checked_mul(4)?)?;
        Some(
            bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )
    }

    fn str(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }
}

fn without_text(c: &Chunk) -> Chunk {
    Chunk {
        text: String::new(),
        ..c.clone()
    }
}

/// A [`DocMap`] made a file at a time, in path order, without the state:
/// each file's edges are kept as (source document, target id) until every
/// id is numbered.
#[derive(Default)]
pub struct DocMapBuilder {
    map: DocMap,
    /// The first document of each id, as files come: the same as the whole
    /// map's for every id seen so far.
    by_id: rustc_hash::FxHashMap<SymbolId, u32>,
    /// Edges out, in file and edge order, by source document.
    edges: Vec<(u32, SymbolId)>,
}

impl DocMapBuilder {
    /// Adds the next file (in path order).
    pub fn add(&mut self, path: &str, rec: &sno_journal::model::FileRecord) {
        if rec.symbols.is_empty() {
            return;
        }
        let first = self.map.kinds.len();
        self.map.push_file(path, rec);
        for (i, id) in self.map.ids[first..].iter().enumerate() {
            self.by_id
                .entry(SymbolId(*id))
                .or_insert((first + i) as u32);
        }
        let end = self.map.kinds.len();
        for (from, to) in graph_edges(rec) {
            // An edge's source is its own file's symbol; the first document
            // of its id elsewhere would be another's.
            if let Some(&a) = self.by_id.get(&from) {
                if (first..end).contains(&(a as usize)) {
                    self.edges.push((a, to));
                }
            }
        }
    }

    /// The map, with the sections (numbered after the symbols).
    pub fn finish(mut self, chunks: &[Chunk]) -> DocMap {
        let mut map = std::mem::take(&mut self.map);
        map.first.push(map.kinds.len() as u32);
        map.sections = chunks.iter().map(without_text).collect();
        let pairs: Vec<(u32, u32)> = self
            .edges
            .iter()
            .filter_map(|(a, to)| Some((*a, *self.by_id.get(to)?)))
            .collect();
        drop(self);
        let out = Csr::from_pairs(map.kinds.len(), pairs);
        map.set_out_csr(out);
        map
    }
}

/// The edges of `rec` the map walks: calls, bases and containment between
/// symbols, as (source, target) ids in the record's edge order.
fn graph_edges(
    rec: &sno_journal::model::FileRecord,
) -> impl Iterator<Item = (SymbolId, SymbolId)> + '_ {
    rec.edges.iter().filter_map(|e| match (e.from, &e.to) {
        (Some(from), EdgeTarget::Symbol(to))
            if matches!(
                e.kind,
                EdgeKind::Calls | EdgeKind::Inherits | EdgeKind::Contains
            ) =>
        {
            Some((from, *to))
        }
        _ => None,
    })
}

/// The resolved edges out of each symbol of `rec` (whose first document is
/// `first`): calls, bases and containment, in the record's edge order.
fn out_of(
    rec: &sno_journal::model::FileRecord,
    first: usize,
    by_id: &rustc_hash::FxHashMap<SymbolId, u32>,
) -> Vec<Vec<u32>> {
    let mut lists = vec![Vec::new(); rec.symbols.len()];
    for (from, to) in graph_edges(rec) {
        if let (Some(&a), Some(&b)) = (by_id.get(&from), by_id.get(&to)) {
            if let Some(list) = (a as usize)
                .checked_sub(first)
                .and_then(|k| lists.get_mut(k))
            {
                list.push(b);
            }
        }
    }
    lists
}

/// Lists of documents by document, as one adjacency array: on millions of
/// symbols a vector each cost seconds to build and hundreds of megabytes
/// to hold.
#[derive(Clone, Debug, PartialEq)]
struct Csr {
    /// `targets[offsets[d]..offsets[d + 1]]` are document `d`'s.
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

impl Default for Csr {
    fn default() -> Self {
        Csr {
            offsets: vec![0],
            targets: Vec::new(),
        }
    }
}

impl Csr {
    fn from_lists(lists: &[Vec<u32>]) -> Csr {
        let mut offsets = Vec::with_capacity(lists.len() + 1);
        offsets.push(0u32);
        let mut targets = Vec::with_capacity(lists.iter().map(Vec::len).sum());
        for l in lists {
            targets.extend_from_slice(l);
            offsets.push(targets.len() as u32);
        }
        Csr { offsets, targets }
    }

    /// Counting sort by source: each document's targets in pair order.
    fn from_pairs(docs: usize, pairs: Vec<(u32, u32)>) -> Csr {
        let mut offsets = vec![0u32; docs + 1];
        for &(a, _) in &pairs {
            offsets[a as usize + 1] += 1;
        }
        for i in 1..offsets.len() {
            offsets[i] += offsets[i - 1];
        }
        let mut next = offsets.clone();
        let mut targets = vec![0u32; pairs.len()];
        for (a, b) in pairs {
            targets[next[a as usize] as usize] = b;
            next[a as usize] += 1;
        }
        Csr { offsets, targets }
    }

    fn of_doc(&self, doc: usize) -> impl Iterator<Item = usize> + '_ {
        let (lo, hi) = match (self.offsets.get(doc), self.offsets.get(doc + 1)) {
            (Some(&lo), Some(&hi)) => (lo as usize, hi as usize),
            _ => (0, 0),
        };
        self.targets[lo..hi].iter().map(|&t| t as usize)
    }

    fn put(&self, out: &mut Vec<u8>) {
        put_u32(out, self.targets.len() as u32);
        for o in &self.offsets {
            put_u32(out, *o);
        }
        for t in &self.targets {
            put_u32(out, *t);
        }
    }

    fn read(r: &mut Reader, docs: usize) -> Option<Csr> {
        let targets = r.u32()? as usize;
        let offsets = r.u32s(docs + 1)?;
        let targets = r.u32s(targets)?;
        let fits = offsets.first() == Some(&0)
            && offsets.windows(2).all(|w| w[0] <= w[1])
            && offsets.last().is_some_and(|o| *o as usize == targets.len())
            && targets.iter().all(|t| (*t as usize) < docs);
        fits.then_some(Csr { offsets, targets })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sno_journal::model::Edge;
    use sno_journal::test_support::record;

    fn state() -> State {
        let mut a = record("a.py", 1, &["Config", "load"]);
        a.symbols[0].kind = SymbolKind::Class;
        a.symbols[1].kind = SymbolKind::Method;
        a.symbols[1].qualified_name = "Config.load".into();
        let mut b = record("b.py", 2, &["main"]);
        b.edges = vec![Edge {
            kind: EdgeKind::Calls,
            from: Some(b.symbols[0].id),
            to: EdgeTarget::Symbol(a.symbols[1].id),
            name: "load".into(),
            line: 1,
            certainty: Default::default(),
        }];
        State::from([
            ("a.py".to_string(), a),
            ("b.py".to_string(), b),
            ("c.md".to_string(), record("c.md", 3, &[])),
        ])
    }

    fn section(path: &str, title: &str) -> Chunk {
        Chunk {
            path: path.into(),
            title: title.into(),
            kind: ChunkKind::Doc,
            start_line: 1,
            end_line: 3,
            start_byte: 0,
            end_byte: 20,
            text: "some words".into(),
        }
    }

    #[test]
    fn documents_are_numbered_as_the_state_orders_them_then_the_sections() {
        let m = DocMap::of(
            &state(),
            &[section("c.md", "Intro"), section("c.md", "Use")],
        );
        assert_eq!((m.symbols(), m.len(), m.files()), (3, 5, 2));
        assert_eq!(m.symbol(1), Some(("a.py", 1)));
        assert_eq!(m.symbol(2), Some(("b.py", 0)));
        assert_eq!(m.symbol(3), None);
        assert_eq!(m.path(4), "c.md");
        assert_eq!(m.section(4).map(|c| c.title.as_str()), Some("Use"));
        assert_eq!(m.section(4).map(|c| c.text.as_str()), Some(""));
        assert_eq!(m.symbol_doc("b.py", 0), Some(2));
        assert_eq!(m.symbol_doc("b.py", 1), None);
        assert_eq!(m.section_doc("c.md", 1), Some(4));
        assert_eq!(m.section_doc("c.md", 2), None);
        assert_eq!((m.symbols_in("a.py"), m.symbols_in("c.md")), (2, 0));
        assert_eq!(m.kind(1), Some(SymbolKind::Method));
        assert_eq!(m.kind(3), None);
        // A call is a neighbour both ways.
        assert_eq!(m.neighbours(2).collect::<Vec<_>>(), [1]);
        assert_eq!(m.neighbours(1).collect::<Vec<_>>(), [2]);
        assert_eq!(m.neighbours(0).count(), 0);
    }

    #[test]
    fn a_name_finds_its_symbols_in_any_case_and_qualified() {
        let m = DocMap::of(&state(), &[]);
        assert_eq!(m.named("load"), [1]);
        assert_eq!(m.named("Config.load"), [1]);
        assert_eq!(m.named("Config::LOAD"), [1]);
        assert_eq!(m.named("config"), [0]);
        assert!(m.named("missing").is_empty());
    }

    #[test]
    fn a_stored_map_reads_back_equal_and_a_damaged_one_not_at_all() {
        let m = DocMap::of(&state(), &[section("c.md", "Intro")]);
        let bytes = m.to_bytes();
        assert_eq!(DocMap::from_bytes(&bytes), Some(m));
        assert_eq!(DocMap::from_bytes(&bytes[..bytes.len() - 1]), None);
        let mut bad = bytes.clone();
        // A symbol kind no version wrote.
        // Magic, three counts, two paths of four letters, three firsts.
        let kinds_at = 8 + 12 + 2 * (4 + 4) + 3 * 4;
        bad[kinds_at] = 200;
        assert!(DocMap::from_bytes(&bad).is_none());
        assert_eq!(DocMap::from_bytes(b"SNODOC02END\n"), None);
    }

    #[test]
    fn a_prototype_is_kept_and_finds_its_one_definition() {
        // sds.h declares sdsdup and sdsfree; sds.c defines sdsdup, and both
        // sds.c and alt.c define an sdsfree: that one has no one definition.
        let mut h = record("sds.h", 1, &["sdsdup", "sdsfree"]);
        for s in &mut h.symbols {
            s.signature.push(';');
        }
        let c = record("sds.c", 2, &["sdsdup", "sdsfree"]);
        let alt = record("alt.c", 3, &["sdsfree"]);
        let st = State::from([
            ("alt.c".to_string(), alt),
            ("sds.c".to_string(), c),
            ("sds.h".to_string(), h),
        ]);
        let m = DocMap::of(&st, &[]);
        // alt.c 0; sds.c 1, 2; sds.h 3, 4.
        assert_eq!(
            (0..5).map(|d| m.is_prototype(d)).collect::<Vec<_>>(),
            [false, false, false, true, true]
        );
        assert_eq!(m.definitions_of(&[0, 1, 3, 4]), [(3, 1)]);
        assert_eq!(m.definitions_of(&[1, 2]), []);
        assert_eq!(DocMap::from_bytes(&m.to_bytes()), Some(m));
    }

    fn calls(rec: &mut sno_journal::model::FileRecord, from: usize, to: SymbolId) {
        rec.edges.push(Edge {
            kind: EdgeKind::Calls,
            from: Some(rec.symbols[from].id),
            to: EdgeTarget::Symbol(to),
            name: "x".into(),
            line: 1,
            certainty: Default::default(),
        });
    }

    #[test]
    fn a_map_advanced_by_changed_files_equals_the_map_of_the_new_state() {
        let mut before = state();
        let mut d = record("d.py", 4, &["helper"]);
        calls(&mut d, 0, before["b.py"].symbols[0].id);
        before.insert("d.py".into(), d.clone());
        before.insert("e.py".into(), record("e.py", 5, &["gone"]));
        let old_sections = [section("c.md", "Intro"), section("c.md", "Use")];
        let old = DocMap::of(&before, &old_sections);

        // b.py gains a symbol before main (every later number moves), a
        // file is added before the rest and calls into an unchanged one,
        // e.py goes, c.md's sections change.
        let mut after = before.clone();
        let mut b = record("b.py", 6, &["extra", "main"]);
        calls(&mut b, 1, after["a.py"].symbols[1].id);
        after.insert("b.py".into(), b.clone());
        let mut aa = record("aa.py", 7, &["first"]);
        calls(&mut aa, 0, d.symbols[0].id);
        after.insert("aa.py".into(), aa.clone());
        after.remove("e.py");
        let new_sections = [section("c.md", "Only")];
        let touched: std::collections::BTreeSet<String> =
            ["b.py", "aa.py", "e.py", "c.md"].map(String::from).into();
        let changed: State = after
            .iter()
            .filter(|(p, _)| touched.contains(*p))
            .map(|(p, r)| (p.clone(), r.clone()))
            .collect();
        let advanced = old.advanced(&changed, &touched, &new_sections);
        let whole = DocMap::of(&after, &new_sections);
        assert_eq!(advanced, whole);
        // d.py's call into b.py's main, whose number moved, is kept.
        let main = whole.symbol_doc("b.py", 1).unwrap();
        let helper = whole.symbol_doc("d.py", 0).unwrap();
        assert!(whole.neighbours(main).any(|n| n == helper));
        assert_eq!(
            whole.section(whole.symbols()).map(|c| c.title.as_str()),
            Some("Only")
        );
    }
}
