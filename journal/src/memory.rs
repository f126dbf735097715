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
    /// Folds memory events (others are ignored) in journal order.
    pub fn fold<'a>(events: impl IntoIterator<Item = (Seq, u64, &'a Event)>) -> Memory {
        let mut m = Memory::default();
        for (seq, written_ms, ev) in events {
            m.push(seq, written_ms, ev);
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
            Event::CommitIndexed(_) | Event::BranchMoved(_) | Event::RolledBack(_) => {}
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
