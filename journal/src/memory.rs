//! Agent memory: checkpoints, decisions and lessons.
//!
//! Each is a journal event bound to the branch and commit it was made on, so
//! it survives restarts, branch swaps and rollbacks like any other fact. The
//! current view of memory is a fold over those events ([`Memory::fold`]);
//! nothing here is edited in place: an analysis or a review is a new event
//! that names the lesson it is about.

use serde::{Deserialize, Serialize};

use crate::event::Event;
use crate::model::{CommitId, Seq};

/// Size limits of what agents and people write into memory events, in
/// bytes. Memory travels with every answer an agent gets about the files it
/// touches, so one oversized event would slow and flood them all: larger
/// values are refused before anything is written, and events journaled
/// before these limits existed are shown cut to them.
pub mod limits {
    /// A checkpoint's name, a decision's title, a lesson's rule, a review's
    /// note, a file path.
    pub const SHORT: usize = 4 * 1024;
    /// A checkpoint's summary, a decision's rationale.
    pub const TEXT: usize = 16 * 1024;
    /// A lesson's analysis.
    pub const ANALYSIS: usize = 64 * 1024;
    /// Files one event may name.
    pub const FILES: usize = 200;
}

/// A field of a memory event over its limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Oversized {
    /// The field, as the tools name it: `title`, `rationale`, `files`, ...
    pub field: &'static str,
    /// Its size (bytes, or entries for `files`).
    pub size: usize,
    pub limit: usize,
}

/// The first field of a memory event over its limit, if any.
pub fn oversized(ev: &Event) -> Option<Oversized> {
    use limits::*;
    let check = |field: &'static str, text: &str, limit: usize| {
        (text.len() > limit).then_some(Oversized {
            field,
            size: text.len(),
            limit,
        })
    };
    let files = |files: &[String]| {
        if files.len() > FILES {
            return Some(Oversized {
                field: "files",
                size: files.len(),
                limit: FILES,
            });
        }
        files.iter().find_map(|f| check("files", f, SHORT))
    };
    match ev {
        Event::CheckpointCreated(c) => check("name", &c.name, SHORT)
            .or_else(|| check("summary", &c.summary, TEXT))
            .or_else(|| files(&c.files)),
        Event::DecisionLogged(d) => check("title", &d.title, SHORT)
            .or_else(|| check("rationale", &d.rationale, TEXT))
            .or_else(|| files(&d.files)),
        Event::LessonAnalysisSubmitted(a) => {
            check("analysis", &a.analysis, ANALYSIS).or_else(|| check("rule", &a.rule, SHORT))
        }
        Event::LessonReviewed(r) => {
            check("note", &r.note, SHORT).or_else(|| check("reviewer", &r.reviewer, SHORT))
        }
        Event::LessonProposed(l) => check("summary", &l.summary, SHORT).or_else(|| files(&l.files)),
        _ => None,
    }
}

/// `text` cut to at most `limit` bytes on a character boundary, saying how
/// much was left out.
pub fn cut(text: &str, limit: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= limit {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    std::borrow::Cow::Owned(format!(
        "{}… [{} more bytes not shown]",
        &text[..end],
        text.len() - end
    ))
}

/// An event as shown: every field cut to its limit (for events journaled
/// before the limits, or by another tool).
fn shown(ev: &Event) -> Event {
    use limits::*;
    let c = |t: &str, l: usize| cut(t, l).into_owned();
    let files = |f: &[String]| {
        f.iter()
            .take(FILES)
            .map(|p| c(p, SHORT))
            .collect::<Vec<_>>()
    };
    match ev {
        Event::CheckpointCreated(x) => Event::CheckpointCreated(CheckpointCreated {
            name: c(&x.name, SHORT),
            summary: c(&x.summary, TEXT),
            files: files(&x.files),
            ..x.clone()
        }),
        Event::DecisionLogged(x) => Event::DecisionLogged(DecisionLogged {
            title: c(&x.title, SHORT),
            rationale: c(&x.rationale, TEXT),
            files: files(&x.files),
            ..x.clone()
        }),
        Event::LessonAnalysisSubmitted(x) => {
            Event::LessonAnalysisSubmitted(LessonAnalysisSubmitted {
                analysis: c(&x.analysis, ANALYSIS),
                rule: c(&x.rule, SHORT),
                ..x.clone()
            })
        }
        Event::LessonReviewed(x) => Event::LessonReviewed(LessonReviewed {
            note: c(&x.note, SHORT),
            reviewer: c(&x.reviewer, SHORT),
            ..x.clone()
        }),
        Event::LessonProposed(x) => Event::LessonProposed(LessonProposed {
            summary: c(&x.summary, SHORT),
            files: files(&x.files),
            ..x.clone()
        }),
        other => other.clone(),
    }
}

/// The id of a checkpoint, decision or lesson: a kind prefix and a ULID
/// (`ckpt_01J…`, `dec_01J…`), or for lessons drawn from a revert, the
/// revert commit (`lsn_<12 hex>`), so re-indexing finds the same lesson.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Debug)]
pub struct MemoryId(pub String);

impl MemoryId {
    /// A fresh id of a kind (`ckpt`, `dec`).
    pub fn generate(kind: &str) -> MemoryId {
        MemoryId(format!(
            "{kind}_{}",
            ulid::Ulid::generate().to_string().to_lowercase()
        ))
    }

    /// The lesson id drawn from a revert commit.
    pub fn for_revert(revert: &CommitId) -> MemoryId {
        MemoryId(format!("lsn_{}", &revert.to_hex()[..12]))
    }
}

impl std::fmt::Display for MemoryId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a memory was made: branch, commit and the session that made it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug, Default)]
pub struct Binding {
    /// The branch the index followed, `None` when detached.
    pub branch: Option<String>,
    /// The indexed commit at the time.
    pub commit: Option<CommitId>,
    /// The MCP session (a ULID) or `cli`.
    pub session: String,
}

/// An agent saved where it is, to resume after its context is reset.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub struct CheckpointCreated {
    pub id: MemoryId,
    pub bound: Binding,
    pub name: String,
    /// What the agent was doing, what is done, what is next.
    pub summary: String,
    /// Files the work touches (repository-relative).
    pub files: Vec<String>,
    /// Context tokens in use when it was made, if the agent said.
    pub tokens_used: Option<u64>,
}

/// A design decision and why it was taken.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub struct DecisionLogged {
    pub id: MemoryId,
    pub bound: Binding,
    pub title: String,
    pub rationale: String,
    /// Files the decision is about (repository-relative).
    pub files: Vec<String>,
}

/// A lesson candidate: a commit that reverted another.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub struct LessonProposed {
    pub id: MemoryId,
    /// `commit` is the revert commit.
    pub bound: Binding,
    /// The commit that was reverted, when the message names it.
    pub reverted: Option<CommitId>,
    /// The revert commit's summary line.
    pub summary: String,
    /// Files the revert changed.
    pub files: Vec<String>,
}

/// An agent's analysis of a proposed lesson: what went wrong and the rule
/// to follow. Humans approve or reject the lesson afterwards.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub struct LessonAnalysisSubmitted {
    pub lesson: MemoryId,
    pub bound: Binding,
    pub analysis: String,
    /// The rule agents should follow, one imperative sentence.
    pub rule: String,
}

/// A human's verdict on a lesson.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Debug)]
pub struct LessonReviewed {
    pub lesson: MemoryId,
    pub approved: bool,
    pub reviewer: String,
    pub note: String,
}

/// A checkpoint as memory holds it.
#[derive(Clone, PartialEq, Eq, Serialize, Debug)]
pub struct Checkpoint {
    pub seq: Seq,
    pub written_ms: u64,
    #[serde(flatten)]
    pub created: CheckpointCreated,
}

/// A decision as memory holds it.
#[derive(Clone, PartialEq, Eq, Serialize, Debug)]
pub struct Decision {
    pub seq: Seq,
    pub written_ms: u64,
    #[serde(flatten)]
    pub logged: DecisionLogged,
}

/// Where a lesson is in its review.
#[derive(Clone, Copy, PartialEq, Eq, Serialize, Debug)]
#[serde(rename_all = "snake_case")]
pub enum LessonStatus {
    /// Proposed; no analysis yet.
    Proposed,
    /// Analysed by an agent; waiting for a human.
    Analysed,
    Approved,
    Rejected,
}

/// A lesson with its analyses and review, folded from its events.
#[derive(Clone, PartialEq, Eq, Serialize, Debug)]
pub struct Lesson {
    pub seq: Seq,
    pub written_ms: u64,
    #[serde(flatten)]
    pub proposed: LessonProposed,
    pub status: LessonStatus,
    /// Newest last.
    pub analyses: Vec<LessonAnalysisSubmitted>,
    pub review: Option<LessonReviewed>,
}

impl Lesson {
    /// The rule agents are told: the newest analysis's.
    pub fn rule(&self) -> Option<&str> {
        self.analyses.last().map(|a| a.rule.as_str())
    }

    /// Whether agents should be told this lesson.
    pub fn is_approved(&self) -> bool {
        self.status == LessonStatus::Approved
    }
}

/// All memory, in journal order.
#[derive(Clone, PartialEq, Eq, Serialize, Debug, Default)]
pub struct Memory {
    pub checkpoints: Vec<Checkpoint>,
    pub decisions: Vec<Decision>,
    pub lessons: Vec<Lesson>,
}

impl Memory {
    /// Folds memory events (others are ignored) in journal order, each as
    /// shown: fields cut to their limits.
    pub fn fold<'a>(events: impl IntoIterator<Item = (Seq, u64, &'a Event)>) -> Memory {
        let mut m = Memory::default();
        for (seq, written_ms, ev) in events {
            if oversized(ev).is_some() {
                m.push(seq, written_ms, &shown(ev));
            } else {
                m.push(seq, written_ms, ev);
            }
        }
        m
    }

    fn push(&mut self, seq: Seq, written_ms: u64, ev: &Event) {
        match ev {
            Event::CheckpointCreated(c) => self.checkpoints.push(Checkpoint {
                seq,
                written_ms,
                created: c.clone(),
            }),
            Event::DecisionLogged(d) => self.decisions.push(Decision {
                seq,
                written_ms,
                logged: d.clone(),
            }),
            Event::LessonProposed(p) => {
                // Re-indexing a history journals the same revert again; the
                // first proposal stands.
                if self.lesson(&p.id).is_none() {
                    self.lessons.push(Lesson {
                        seq,
                        written_ms,
                        proposed: p.clone(),
                        status: LessonStatus::Proposed,
                        analyses: Vec::new(),
                        review: None,
                    })
                }
            }
            Event::LessonAnalysisSubmitted(a) => {
                if let Some(l) = self.lesson_mut(&a.lesson) {
                    l.analyses.push(a.clone());
                    if l.status == LessonStatus::Proposed {
                        l.status = LessonStatus::Analysed;
                    }
                }
            }
            Event::LessonReviewed(r) => {
                if let Some(l) = self.lesson_mut(&r.lesson) {
                    l.status = if r.approved {
                        LessonStatus::Approved
                    } else {
                        LessonStatus::Rejected
                    };
                    l.review = Some(r.clone());
                }
            }
            Event::CommitIndexed(_)
            | Event::BranchMoved(_)
            | Event::RolledBack(_)
            | Event::CommitSkipped(_) => {}
        }
    }

    /// A lesson by id.
    pub fn lesson(&self, id: &MemoryId) -> Option<&Lesson> {
        self.lessons.iter().find(|l| &l.proposed.id == id)
    }

    fn lesson_mut(&mut self, id: &MemoryId) -> Option<&mut Lesson> {
        self.lessons.iter_mut().find(|l| &l.proposed.id == id)
    }

    /// A checkpoint by id.
    pub fn checkpoint(&self, id: &MemoryId) -> Option<&Checkpoint> {
        self.checkpoints.iter().find(|c| &c.created.id == id)
    }

    /// Every id memory knows, for near-miss suggestions.
    pub fn ids(&self) -> Vec<&str> {
        self.checkpoints
            .iter()
            .map(|c| c.created.id.0.as_str())
            .chain(self.decisions.iter().map(|d| d.logged.id.0.as_str()))
            .chain(self.lessons.iter().map(|l| l.proposed.id.0.as_str()))
            .collect()
    }

    /// Files that approved lessons are about (the memory signal of search).
    pub fn approved_lesson_files(&self) -> std::collections::HashSet<String> {
        self.lessons
            .iter()
            .filter(|l| l.is_approved())
            .flat_map(|l| l.proposed.files.iter().cloned())
            .collect()
    }

    /// Decisions and approved lessons that touch `path`.
    pub fn touching<'a>(&'a self, path: &'a str) -> (Vec<&'a Decision>, Vec<&'a Lesson>) {
        let decisions = self
            .decisions
            .iter()
            .filter(|d| d.logged.files.iter().any(|f| f == path))
            .collect();
        let lessons = self
            .lessons
            .iter()
            .filter(|l| l.is_approved() && l.proposed.files.iter().any(|f| f == path))
            .collect();
        (decisions, lessons)
    }
}

/// Whether a commit message says it reverts another commit (git's own
/// wording: `Revert "…"` and `This reverts commit <sha>.`), and which.
pub fn revert_of(message: &str) -> Option<Option<CommitId>> {
    let summary = message.lines().next().unwrap_or("");
    let marker = "This reverts commit ";
    let named = message.find(marker).and_then(|i| {
        let hex: String = message[i + marker.len()..]
            .chars()
            .take_while(|c| c.is_ascii_hexdigit())
            .collect();
        CommitId::from_hex(&hex)
    });
    if summary.starts_with("Revert \"") || summary.starts_with("Revert '") || named.is_some() {
        Some(named)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bind() -> Binding {
        Binding {
            branch: Some("main".into()),
            commit: None,
            session: "s".into(),
        }
    }

    #[test]
    fn lessons_move_through_analysis_and_review() {
        let id = MemoryId("lsn_abc".into());
        let evs = [
            Event::LessonProposed(LessonProposed {
                id: id.clone(),
                bound: bind(),
                reverted: None,
                summary: "Revert \"x\"".into(),
                files: vec!["a.py".into()],
            }),
            Event::LessonAnalysisSubmitted(LessonAnalysisSubmitted {
                lesson: id.clone(),
                bound: bind(),
                analysis: "it broke".into(),
                rule: "do not".into(),
            }),
        ];
        let m = Memory::fold(evs.iter().enumerate().map(|(i, e)| (Seq(i as u64), 0, e)));
        assert_eq!(m.lesson(&id).unwrap().status, LessonStatus::Analysed);
        assert_eq!(m.lesson(&id).unwrap().rule(), Some("do not"));
        assert!(m.touching("a.py").1.is_empty(), "not approved yet");
        let review = Event::LessonReviewed(LessonReviewed {
            lesson: id.clone(),
            approved: true,
            reviewer: "ann".into(),
            note: String::new(),
        });
        let m = Memory::fold(
            evs.iter()
                .chain([&review])
                .enumerate()
                .map(|(i, e)| (Seq(i as u64), 0, e)),
        );
        assert!(m.lesson(&id).unwrap().is_approved());
        assert_eq!(m.touching("a.py").1.len(), 1);
        assert!(m.touching("b.py").1.is_empty());
    }

    #[test]
    fn reverts_are_recognised_by_gits_wording() {
        let sha = "0123456789abcdef0123456789abcdef01234567";
        let msg = format!("Revert \"Add cache\"\n\nThis reverts commit {sha}.\n");
        assert_eq!(revert_of(&msg), Some(CommitId::from_hex(sha)));
        assert_eq!(revert_of("Revert \"x\""), Some(None));
        assert_eq!(revert_of("Add a revert button"), None);
    }
}

#[cfg(test)]
mod limit_tests {
    use super::*;
    use crate::Journal;

    fn decision(title: String, rationale: String, files: Vec<String>) -> Event {
        Event::DecisionLogged(DecisionLogged {
            id: MemoryId::generate("dec"),
            bound: Binding::default(),
            title,
            rationale,
            files,
        })
    }

    #[test]
    fn oversized_fields_are_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open_or_create(&dir.path().join("sno.redb")).unwrap();
        let ok = "t".repeat(limits::SHORT);
        j.append_memory(decision(ok, "r".into(), vec![])).unwrap();
        let before = j.len().unwrap();
        for (ev, field) in [
            (decision("x".repeat(10 << 20), "r".into(), vec![]), "title"),
            (
                decision("t".into(), "r".repeat(limits::TEXT + 1), vec![]),
                "rationale",
            ),
            (
                decision(
                    "t".into(),
                    "r".into(),
                    vec!["a.py".into(); limits::FILES + 1],
                ),
                "files",
            ),
            (
                Event::LessonAnalysisSubmitted(LessonAnalysisSubmitted {
                    lesson: MemoryId("lsn_x".into()),
                    bound: Binding::default(),
                    analysis: "a".repeat(limits::ANALYSIS + 1),
                    rule: "r".into(),
                }),
                "analysis",
            ),
        ] {
            match j.append_memory(ev) {
                Err(crate::JournalError::TooLarge { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
        assert_eq!(j.len().unwrap(), before, "nothing written");
    }

    #[test]
    fn an_oversized_event_already_journaled_is_shown_cut() {
        let big = decision("x".repeat(100_000), "why".into(), vec![]);
        let m = Memory::fold([(Seq(0), 0, &big)]);
        let title = &m.decisions[0].logged.title;
        assert!(title.len() < limits::SHORT + 64, "{}", title.len());
        assert!(title.ends_with("more bytes not shown]"), "{title}");
        assert_eq!(m.decisions[0].logged.rationale, "why");
        assert_eq!(cut("héllo", 2), "h… [5 more bytes not shown]");
    }
}
