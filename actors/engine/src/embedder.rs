//! The embedder: keeps a model2vec vector for every symbol, made only for
//! symbols whose embedded text is new (vectors are stored in redb by the
//! text's hash), so searches never embed the repository again.

use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use sno_journal::Journal;
use sno_query::search::doc_vectors;
use sno_query::semantic::Embedder as Model;

/// What a refresh did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EmbedSummary {
    /// `None` when the semantic index is on; else why it is off.
    pub off_reason: Option<String>,
    /// Symbols whose meaning is embedded (declarations and impl blocks
    /// are not: [`sno_query::search::is_embedded`]).
    pub symbols: usize,
    pub embedded: usize,
    pub reused: usize,
}

/// Messages of the embedder.
pub enum EmbedderMsg {
    /// Brings the stored vectors up to the indexed state, reporting the
    /// files embedded to the sender if one is given.
    Refresh(
        Option<tokio::sync::mpsc::UnboundedSender<crate::indexer::Progress>>,
        RpcReplyPort<Result<EmbedSummary, String>>,
    ),
    /// Counts the embedded symbols per file ahead of the first refresh of
    /// a long-lived engine (when the views hold at most `max_files`
    /// files), so that refresh reads only the changed files.
    Warm { max_files: u64 },
}

/// Arguments: the journal and the engine's model.
pub struct EmbedderArgs {
    pub journal: Arc<Journal>,
    pub model: Arc<crate::model::ModelCell>,
    /// The repository, whose files' bodies are part of the embedded text.
    pub root: std::path::PathBuf,
    /// Whether secret values are masked before embedding.
    pub mask_secrets: bool,
}

/// The embedder's state.
pub struct EmbedderState {
    journal: Arc<Journal>,
    model: Arc<crate::model::ModelCell>,
    root: std::path::PathBuf,
    mask_secrets: bool,
    counts: Option<Counts>,
}

/// Embedded symbols per file as of a refresh: with them, the next refresh
/// of a long-lived engine reads only the files changed since, not the
/// whole state, to say how many symbols the semantic index covers.
struct Counts {
    /// The journal length the stored vectors were brought up to.
    at: u64,
    per_file: rustc_hash::FxHashMap<String, usize>,
}

/// The embedder actor.
pub struct Embedder;

impl Actor for Embedder {
    type Msg = EmbedderMsg;
    type State = EmbedderState;
    type Arguments = EmbedderArgs;

    async fn pre_start(
        &self,
        _me: ActorRef<EmbedderMsg>,
        a: EmbedderArgs,
    ) -> Result<EmbedderState, ActorProcessingErr> {
        // Loaded on first use, not here: loading may reach the network, and
        // start-up must not hold a runtime thread the parsers need.
        Ok(EmbedderState {
            journal: a.journal,
            model: a.model,
            root: a.root,
            mask_secrets: a.mask_secrets,
            counts: None,
        })
    }

    async fn handle(
        &self,
        _me: ActorRef<EmbedderMsg>,
        msg: EmbedderMsg,
        st: &mut EmbedderState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            EmbedderMsg::Refresh(progress, reply) => {
                let _ = reply.send(refresh(st, progress.as_ref()));
            }
            EmbedderMsg::Warm { max_files } => {
                if st.counts.is_none() {
                    let journal = st.journal.clone();
                    st.counts = crate::background::background(move || warm(&journal, max_files));
                }
            }
        }
        Ok(())
    }
}

/// A file's symbols whose meaning is embedded.
pub(crate) fn embedded_in(rec: &sno_journal::model::FileRecord) -> usize {
    rec.symbols
        .iter()
        .filter(|s| sno_query::search::is_embedded(s.kind))
        .count()
}

/// The per-file counts as of the stored vectors' position, from the
/// views (which that position covers when nothing was indexed since).
fn warm(journal: &Journal, max_files: u64) -> Option<Counts> {
    let upto = journal.vectors_upto().ok()??;
    if journal.len().ok()? != upto.0 {
        return None;
    }
    // The counts the run that stored the vectors kept beside them, when
    // of that position: a daemon's start then reads no record for them
    // (on ~600k lines, reading every record took a core for a second
    // while the first answers were given).
    if let Some(kept) = kept_counts(journal).filter(|c| c.at == upto.0) {
        return Some(kept);
    }
    if journal.files_len().ok()? > max_files {
        return None;
    }
    Some(Counts {
        at: upto.0,
        per_file: counts_of_views(journal).ok()??,
    })
}

/// Embedded symbols per file of the current views, read a batch of files
/// at a time: only the counts are held, never the state (on 8.4M lines
/// the whole state took the daemon from 0.9 to 2.1 GB after each commit).
/// `None` if the head moved while they were read.
fn counts_of_views(
    journal: &Journal,
) -> Result<Option<rustc_hash::FxHashMap<String, usize>>, sno_journal::JournalError> {
    let Some(head) = journal.head()? else {
        return Ok(Some(Default::default()));
    };
    let mut per_file = rustc_hash::FxHashMap::default();
    let read = journal.files_in_batches(head.seq, COUNT_BATCH, |batch| {
        count_into(&mut per_file, &batch);
        true
    })?;
    Ok(read.then_some(per_file))
}

/// Adds the embedded symbols of each file of `batch` to `per_file`.
fn count_into(
    per_file: &mut rustc_hash::FxHashMap<String, usize>,
    batch: &sno_journal::delta::State,
) {
    per_file.extend(batch.iter().map(|(p, r)| (p.clone(), embedded_in(r))));
}

/// The counts a run kept in the journal beside its vectors ([`counts_to_keep`]).
fn kept_counts(journal: &Journal) -> Option<Counts> {
    let (at, counts) = journal.embedded_counts().ok()??;
    Some(Counts {
        at: at.0,
        per_file: counts.into_iter().collect(),
    })
}

/// The counts as the journal keeps them beside the vectors: on 8.4M
/// lines, counting from the views took 1.5-2 s of every CLI run that
/// indexed a commit, and of a daemon's first.
pub(crate) fn counts_to_keep(
    per_file: &rustc_hash::FxHashMap<String, usize>,
) -> Vec<(&str, usize)> {
    per_file.iter().map(|(p, n)| (p.as_str(), *n)).collect()
}

/// Files whose records are decoded together when counting.
const COUNT_BATCH: usize = 512;

fn refresh(
    st: &mut EmbedderState,
    progress: Option<&tokio::sync::mpsc::UnboundedSender<crate::indexer::Progress>>,
) -> Result<EmbedSummary, String> {
    // No model is not a failure: sno works in lexical + structural mode.
    let model = match st.model.get() {
        Ok(m) => m,
        Err(reason) => {
            return Ok(EmbedSummary {
                off_reason: Some(reason),
                ..EmbedSummary::default()
            })
        }
    };
    let model: &Model = &model;
    let journal = st.journal.clone();
    let err = |e: sno_journal::JournalError| e.to_string();
    let len = journal.len().map_err(err)?;
    let same_model =
        journal.vectors_model().map_err(err)?.as_deref() == Some(model.source.as_str());
    // With the same model and every symbol covered up to some point of the
    // journal, only the files changed since can hold new text: reading the
    // stored vectors of every symbol was most of a small run's time.
    let upto = journal.vectors_upto().map_err(err)?;
    let changed = match upto {
        Some(upto) if same_model && upto.0 <= len => Some(
            journal
                .events(upto, None)
                .map_err(err)?
                .iter()
                .flat_map(|(_, env)| env.event.deltas().iter().map(|d| d.path.clone()))
                .collect::<std::collections::BTreeSet<String>>(),
        ),
        _ => None,
    };
    // The records to embed from: the changed files' when the counts of the
    // others are at hand (this engine's, else those a run before kept in
    // the journal, as of the same point), else the whole state.
    let counted = st
        .counts
        .take()
        .or_else(|| kept_counts(&journal))
        .filter(|c| changed.is_some() && upto.map(|u| u.0) == Some(c.at))
        .map(|c| c.per_file);
    // Without them (a repository too large to count ahead), they are
    // counted from the views as they are now: the changed files' counts
    // are made again below all the same.
    let counted = match (&changed, counted) {
        (Some(_), None) => counts_of_views(&journal).map_err(err)?,
        (_, counted) => counted,
    };
    let git = sno_index::git::GitRepo::open(&st.root).map_err(|e| e.to_string())?;
    let stored = |hashes: &[u64]| {
        if same_model {
            journal.vectors(hashes).unwrap_or_default()
        } else {
            Vec::new()
        }
    };
    let (records, mut per_file) = match (&changed, counted) {
        (Some(changed), Some(counted)) => {
            let mut per_file = counted;
            let mut records = sno_journal::delta::State::new();
            for path in changed {
                match journal.file(path).map_err(err)? {
                    Some(rec) => {
                        records.insert(path.clone(), rec);
                    }
                    None => {
                        per_file.remove(path);
                    }
                }
            }
            (records, per_file)
        }
        _ => {
            // Every file's symbols, a batch of files at a time: on millions
            // of lines the whole state and every text at once took GBs.
            // The new vectors are kept in their stored form (a quarter of
            // their f32 bytes) and written in one transaction.
            let head = journal.head().map_err(err)?;
            let mut per_file = rustc_hash::FxHashMap::default();
            let (read, rows) = match head {
                Some(head) => {
                    let files = journal.files_len().map_err(err)? as usize;
                    let report = progress.map(|p| (p, files));
                    let (read, rows) =
                        embed_batches(&git, st.mask_secrets, model, &stored, report, |each| {
                            journal.files_in_batches(head.seq, EMBED_BATCH, |batch| {
                                count_into(&mut per_file, &batch);
                                each(batch)
                            })
                        });
                    (read.map_err(err)?, rows)
                }
                None => (true, Default::default()),
            };
            // The head moved while they were read: the state decides.
            if read {
                let embedded = rows.len();
                journal
                    .put_vector_rows(
                        &model.source,
                        &rows,
                        Some(sno_journal::model::Seq(len)),
                        Some(&counts_to_keep(&per_file)),
                    )
                    .map_err(err)?;
                let symbols = per_file.values().sum();
                st.counts = Some(Counts { at: len, per_file });
                return Ok(EmbedSummary {
                    off_reason: None,
                    symbols,
                    embedded,
                    reused: symbols.saturating_sub(embedded),
                });
            }
            (journal.load_state().map_err(err)?, Default::default())
        }
    };
    for (path, rec) in &records {
        per_file.insert(path.clone(), embedded_in(rec));
    }
    let embeddable = per_file.values().sum();
    let records: Vec<_> = records
        .into_iter()
        .filter(|(path, _)| changed.as_ref().is_none_or(|c| c.contains(path)))
        .collect();
    let report = progress.map(|p| (p, records.len()));
    let ((), new) = embed_batches(&git, st.mask_secrets, model, &stored, report, |each| {
        let mut batch = sno_journal::delta::State::new();
        for (path, rec) in records {
            batch.insert(path, rec);
            if batch.len() == FILES_PER_TASK && !each(std::mem::take(&mut batch)) {
                return;
            }
        }
        if !batch.is_empty() {
            each(batch);
        }
    });
    journal
        .put_vector_rows(
            &model.source,
            &new,
            Some(sno_journal::model::Seq(len)),
            Some(&counts_to_keep(&per_file)),
        )
        .map_err(err)?;
    st.counts = Some(Counts { at: len, per_file });
    Ok(EmbedSummary {
        off_reason: None,
        symbols: embeddable,
        embedded: new.len(),
        reused: embeddable.saturating_sub(new.len()),
    })
}

/// The vectors the journal holds for some text hashes (`None` for those it
/// does not).
type Stored<'a> = dyn Fn(&[u64]) -> Vec<Option<Vec<f32>>> + Sync + 'a;

/// Files read from the views a batch at a time for a whole embedding:
/// up to the workers' count of batches wait for a worker, and as many are
/// being embedded, so a batch is small. Batches of 512 files took the init
/// of 8.4M lines from 1.4 to 1.7 GB, where a crate's generated bindings
/// put thousands of symbols in each of hundreds of files.
const EMBED_BATCH: usize = 64;

/// Files whose texts are made and embedded together: enough texts for the
/// model's batches, few enough that a worker holds little beside them.
const FILES_PER_TASK: usize = 32;

/// The vectors of every file of the batches `read` gives to the closure it
/// is called with (which says whether to go on), the journal not holding
/// them (`stored`), in their stored form; and what `read` returned. With
/// `report`, the files embedded are sent to its sender, out of its total,
/// as each batch's vectors come back.
///
/// One worker per core embeds a batch while the next is decoded: decoding
/// is the reader's only work, so the cores stay on the embedding. Each
/// batch's vectors come back to the reader, which keeps them in one
/// buffer: workers' buffers joined at the end held every vector twice
/// (1.66 GB at the peak of a first index of 8.4M lines, 1.44 GB before).
fn embed_batches<R>(
    git: &sno_index::git::GitRepo,
    mask_secrets: bool,
    model: &Model,
    stored: &Stored,
    report: Option<(
        &tokio::sync::mpsc::UnboundedSender<crate::indexer::Progress>,
        usize,
    )>,
    read: impl FnOnce(&mut dyn FnMut(sno_journal::delta::State) -> bool) -> R,
) -> (R, sno_journal::int8::VectorRows) {
    use std::sync::mpsc;
    let workers = std::thread::available_parallelism().map_or(1, usize::from);
    let (send, receive) = mpsc::sync_channel::<sno_journal::delta::State>(workers);
    let receive = std::sync::Mutex::new(receive);
    // Each batch's vectors, with how many files it had.
    let (done, embedded) = mpsc::channel::<(usize, sno_journal::int8::VectorRows)>();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let git = git.clone();
                let (receive, done) = (&receive, done.clone());
                scope.spawn(move || loop {
                    // Held while waiting: the others would wait for a batch
                    // all the same.
                    let batch = match receive.lock() {
                        Ok(r) => r.recv(),
                        Err(_) => return,
                    };
                    let Ok(batch) = batch else { return };
                    let files: Vec<_> = batch
                        .iter()
                        .filter(|(_, rec)| !rec.symbols.is_empty())
                        .collect();
                    // A few files' texts at a time: a batch's at once held
                    // hundreds of MB per worker where files have thousands
                    // of symbols.
                    let mut rows = sno_journal::int8::VectorRows::default();
                    for task in files.chunks(FILES_PER_TASK) {
                        embed_files(task, &git, mask_secrets, model, stored, &mut rows);
                    }
                    if done.send((batch.len(), rows)).is_err() {
                        return;
                    }
                })
            })
            .collect();
        let mut rows = sno_journal::int8::VectorRows::default();
        let mut files_done = 0;
        let mut take = |(files, got): (usize, sno_journal::int8::VectorRows)| {
            rows.append(got);
            files_done += files;
            if let Some((sender, total)) = report {
                let _ = sender.send(crate::indexer::Progress::FilesEmbedded {
                    done: files_done,
                    total,
                });
            }
        };
        // A worker gone (it panicked) stops the reading; its panic is
        // raised below.
        let out = read(&mut |batch| {
            embedded.try_iter().for_each(&mut take);
            send.send(batch).is_ok()
        });
        drop(send);
        for worker in handles {
            worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        }
        embedded.try_iter().for_each(&mut take);
        (out, rows)
    })
}

/// The vectors of some files' texts the journal does not hold, in one
/// thread. The embedded text holds the head of each body: the files are
/// read.
fn embed_files(
    files: &[(&String, &sno_journal::model::FileRecord)],
    git: &sno_index::git::GitRepo,
    mask_secrets: bool,
    model: &Model,
    stored: &Stored,
    rows: &mut sno_journal::int8::VectorRows,
) {
    let mut texts = Vec::new();
    for (path, rec) in files {
        let text = git
            .blob(rec.blob)
            .ok()
            .map(|b| sno_query::served::Served::new(&b, mask_secrets));
        texts.extend(sno_query::search::file_texts(path, rec, text.as_ref()));
        while texts.len() >= TEXTS_PER_EMBEDDING {
            let rest = texts.split_off(TEXTS_PER_EMBEDDING);
            embed_into(&texts, model, stored, rows);
            texts = rest;
        }
    }
    embed_into(&texts, model, stored, rows);
}

/// Embeds `texts` (or finds their stored vectors) into `rows`, in their
/// stored form.
fn embed_into(
    texts: &[String],
    model: &Model,
    stored: &Stored,
    rows: &mut sno_journal::int8::VectorRows,
) {
    for (h, v) in doc_vectors(texts, model, stored).1 {
        rows.push(h, &v);
    }
}

/// Texts embedded at once: their vectors are held as floats (as made and
/// as returned) until they are stored as codes, so a file of tens of
/// thousands of symbols (a crate's generated bindings) is embedded in
/// parts.
const TEXTS_PER_EMBEDDING: usize = 4096;

#[cfg(test)]
mod tests {
    use super::*;
    use sno_journal::model::Seq;

    #[test]
    fn a_start_takes_the_counts_kept_beside_the_vectors_without_reading_the_views() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_or_create(&dir.path().join("sno.redb")).unwrap();
        let mut rows = sno_journal::int8::VectorRows::default();
        rows.push(1, &[0.5, -1.0]);
        // Counts of files the (empty) views do not hold: only the kept
        // counts can give them.
        j.put_vector_rows("m", &rows, Some(Seq(0)), Some(&[("a.py", 2), ("b.rs", 0)]))
            .unwrap();
        let got = warm(&j, 0).expect("counts");
        assert_eq!(got.at, 0);
        assert_eq!(got.per_file.get("a.py"), Some(&2));
        assert_eq!(got.per_file.len(), 2);
        // Without kept counts the views are read (here: none).
        j.put_vector_rows("m", &rows, Some(Seq(0)), None).unwrap();
        let got = warm(&j, 0).expect("counts");
        assert!(got.per_file.is_empty());
    }
}
