//! Agent memory: checkpoints, decisions and lessons, journaled as events
//! bound to the branch and commit, and shown as `sno_protocol::memory`
//! shapes (the journal's own records never go on the wire).

use sno_journal::event::Event;
use sno_journal::memory::{self as jm, MemoryId};
use sno_protocol::memory::{
    Analysis, ApprovedMemory, Binding, Checkpoint, CheckpointCreated, CheckpointRestored,
    ContextAdvice, Decision, DecisionLogged, DecisionsAnswer, Lesson, LessonRule, LessonUpdated,
    LessonsAnswer, Page, Review,
};
use sno_protocol::query::AsOfCommit;
use sno_protocol::ErrorCode;

use crate::engine::Engine;
use crate::error::{nearest, Error, Result};

pub(crate) fn binding(b: &jm::Binding) -> Binding {
    Binding {
        branch: b.branch.clone(),
        commit: b.commit.map(|c| c.to_hex()),
        session: b.session.clone(),
    }
}

pub(crate) fn decision(d: &jm::Decision) -> Decision {
    Decision {
        seq: d.seq.0,
        written_ms: d.written_ms,
        id: d.logged.id.0.clone(),
        bound: binding(&d.logged.bound),
        title: d.logged.title.clone(),
        rationale: d.logged.rationale.clone(),
        files: d.logged.files.clone(),
    }
}

pub(crate) fn checkpoint(c: &jm::Checkpoint) -> Checkpoint {
    Checkpoint {
        seq: c.seq.0,
        written_ms: c.written_ms,
        id: c.created.id.0.clone(),
        bound: binding(&c.created.bound),
        name: c.created.name.clone(),
        summary: c.created.summary.clone(),
        files: c.created.files.clone(),
        tokens_used: c.created.tokens_used,
    }
}

fn review(r: &jm::LessonReviewed) -> Review {
    Review {
        lesson: r.lesson.0.clone(),
        approved: r.approved,
        reviewer: r.reviewer.clone(),
        note: r.note.clone(),
    }
}

/// A lesson's status as answers name it.
pub fn status_name(s: jm::LessonStatus) -> &'static str {
    match s {
        jm::LessonStatus::Proposed => "proposed",
        jm::LessonStatus::Analysed => "analysed",
        jm::LessonStatus::Approved => "approved",
        jm::LessonStatus::Rejected => "rejected",
    }
}

pub(crate) fn lesson(l: &jm::Lesson) -> Lesson {
    Lesson {
        seq: l.seq.0,
        written_ms: l.written_ms,
        id: l.proposed.id.0.clone(),
        bound: binding(&l.proposed.bound),
        reverted: l.proposed.reverted.map(|c| c.to_hex()),
        summary: l.proposed.summary.clone(),
        files: l.proposed.files.clone(),
        status: status_name(l.status).to_string(),
        analyses: l
            .analyses
            .iter()
            .map(|a| Analysis {
                lesson: a.lesson.0.clone(),
                bound: binding(&a.bound),
                analysis: a.analysis.clone(),
                rule: a.rule.clone(),
            })
            .collect(),
        review: l.review.as_ref().map(review),
    }
}

pub(crate) fn lesson_rule(l: &jm::Lesson) -> LessonRule {
    LessonRule {
        id: l.proposed.id.0.clone(),
        rule: l.rule().map(str::to_string),
        summary: l.proposed.summary.clone(),
        files: l.proposed.files.clone(),
        bound: binding(&l.proposed.bound),
        review: l.review.as_ref().map(review),
    }
}

/// The page of `items` (journal order, newest last) that ends `offset`
/// items before the newest, at most `limit` (default 50, at most 200)
/// long, kept in journal order.
pub fn newest_page<T>(
    mut items: Vec<T>,
    limit: Option<usize>,
    offset: Option<usize>,
) -> Result<(Vec<T>, Page)> {
    // A page of nothing is a mistake to say, as `limit` is everywhere.
    let limit = limit.map(crate::error::some).transpose()?;
    let total = items.len();
    let limit = limit.unwrap_or(50).min(200);
    let offset = offset.unwrap_or(0).min(total);
    let end = total - offset;
    let start = end.saturating_sub(limit);
    items.truncate(end);
    items.drain(..start);
    let page = Page {
        total,
        offset,
        returned: end - start,
        next_offset: (start > 0).then_some(total - start),
    };
    Ok((items, page))
}

/// A checkpoint to save.
pub struct NewCheckpoint {
    pub name: String,
    pub summary: String,
    pub files: Vec<String>,
    pub tokens_used: Option<u64>,
}

impl Engine {
    /// Where a memory is made: the indexed branch and commit, and who.
    fn bind(&self, session: &str) -> Result<jm::Binding> {
        let head = self.journal.head()?;
        Ok(jm::Binding {
            branch: head.as_ref().and_then(|h| h.branch.clone()),
            commit: head.map(|h| h.commit),
            session: session.to_string(),
        })
    }

    /// Repository paths for files named in memory, under the rule.
    fn confine_all(&self, files: &[String]) -> Result<Vec<String>> {
        files.iter().map(|f| self.confine(f)).collect()
    }

    /// Saves a checkpoint.
    pub async fn create_checkpoint(
        &self,
        session: &str,
        c: NewCheckpoint,
    ) -> Result<CheckpointCreated> {
        crate::error::required("name", &c.name)?;
        let ev = jm::CheckpointCreated {
            id: MemoryId::generate("ckpt"),
            bound: self.bind(session)?,
            name: c.name,
            summary: c.summary,
            files: self.confine_all(&c.files)?,
            tokens_used: c.tokens_used,
        };
        let id = ev.id.clone();
        let seq = self.append_memory(Event::CheckpointCreated(ev)).await?;
        let memory = self.read.memory()?;
        let made = memory
            .checkpoint(&id)
            .ok_or_else(|| Error::internal("a journaled checkpoint is not in memory"))?;
        Ok(CheckpointCreated {
            checkpoint: checkpoint(made),
            seq: seq.0,
        })
    }

    /// A checkpoint, the decisions since, and whether the head moved.
    pub fn restore_checkpoint(&self, id: &str) -> Result<CheckpointRestored> {
        let memory = self.read.memory()?;
        let c = memory
            .checkpoint(&MemoryId(id.to_string()))
            .ok_or_else(|| {
                unknown_memory(
                    id,
                    memory.checkpoints.iter().map(|c| c.created.id.0.clone()),
                )
            })?;
        let head = self.journal.head()?;
        let moved = head
            .as_ref()
            .is_some_and(|h| Some(h.commit) != c.created.bound.commit);
        Ok(CheckpointRestored {
            checkpoint: checkpoint(c),
            decisions_since: memory
                .decisions
                .iter()
                .filter(|d| d.seq > c.seq)
                .map(decision)
                .collect(),
            head: head.map(|h| AsOfCommit {
                commit: h.commit.to_hex(),
                branch: h.branch,
            }),
            head_moved: moved,
        })
    }

    /// Records a decision.
    pub async fn log_decision(
        &self,
        session: &str,
        title: String,
        rationale: String,
        files: &[String],
    ) -> Result<DecisionLogged> {
        crate::error::required("title", &title)?;
        crate::error::required("rationale", &rationale)?;
        let ev = jm::DecisionLogged {
            id: MemoryId::generate("dec"),
            bound: self.bind(session)?,
            title,
            rationale,
            files: self.confine_all(files)?,
        };
        let id = ev.id.clone();
        let seq = self.append_memory(Event::DecisionLogged(ev)).await?;
        let memory = self.read.memory()?;
        let made = memory
            .decisions
            .iter()
            .find(|d| d.logged.id == id)
            .ok_or_else(|| Error::internal("a journaled decision is not in memory"))?;
        Ok(DecisionLogged {
            decision: decision(made),
            seq: seq.0,
        })
    }

    /// Decisions (about `file`), a page at a time, newest last.
    pub fn decisions(
        &self,
        file: Option<&str>,
        limit: Option<usize>,
        offset: Option<usize>,
    ) -> Result<DecisionsAnswer> {
        let memory = self.read.memory()?;
        let file = file.map(|f| self.confine(f)).transpose()?;
        let all: Vec<Decision> = memory
            .decisions
            .iter()
            .filter(|d| file.as_ref().is_none_or(|f| d.logged.files.contains(f)))
            .map(decision)
            .collect();
        let (decisions, page) = newest_page(all, limit, offset)?;
        Ok(DecisionsAnswer { decisions, page })
    }

    /// Approved lessons and decisions (about `file`): what agents follow.
    pub fn approved_memory(
        &self,
        file: Option<&str>,
        limit: Option<usize>,
        offset: Option<usize>,
    ) -> Result<ApprovedMemory> {
        let memory = self.read.memory()?;
        let file = file.map(|f| self.confine(f)).transpose()?;
        let touches = |files: &[String]| file.as_ref().is_none_or(|f| files.contains(f));
        // One page over both lists: lessons first (they are rules).
        #[allow(clippy::large_enum_variant)] // a page of them, briefly
        enum Item {
            Lesson(LessonRule),
            Decision(Decision),
        }
        let all: Vec<Item> = memory
            .lessons
            .iter()
            .filter(|l| l.is_approved() && touches(&l.proposed.files))
            .map(|l| Item::Lesson(lesson_rule(l)))
            .chain(
                memory
                    .decisions
                    .iter()
                    .filter(|d| touches(&d.logged.files))
                    .map(|d| Item::Decision(decision(d))),
            )
            .collect();
        let (shown, page) = newest_page(all, limit, offset)?;
        let (mut lessons, mut decisions) = (Vec::new(), Vec::new());
        for item in shown {
            match item {
                Item::Lesson(l) => lessons.push(l),
                Item::Decision(d) => decisions.push(d),
            }
        }
        Ok(ApprovedMemory {
            lessons,
            decisions,
            page,
        })
    }

    /// Lessons (only those waiting for review with `pending`).
    pub fn lessons(
        &self,
        pending: bool,
        limit: Option<usize>,
        offset: Option<usize>,
    ) -> Result<LessonsAnswer> {
        let memory = self.read.memory()?;
        let all: Vec<Lesson> = memory
            .lessons
            .iter()
            .filter(|l| {
                !pending
                    || !matches!(
                        l.status,
                        jm::LessonStatus::Approved | jm::LessonStatus::Rejected
                    )
            })
            .map(lesson)
            .collect();
        let (lessons, page) = newest_page(all, limit, offset)?;
        Ok(LessonsAnswer { lessons, page })
    }

    /// An agent's analysis of a lesson.
    pub async fn submit_lesson_analysis(
        &self,
        session: &str,
        lesson_id: &str,
        analysis: String,
        rule: String,
    ) -> Result<LessonUpdated> {
        let ev = jm::LessonAnalysisSubmitted {
            lesson: MemoryId(lesson_id.to_string()),
            bound: self.bind(session)?,
            analysis,
            rule,
        };
        let seq = self
            .append_memory(Event::LessonAnalysisSubmitted(ev))
            .await?;
        let memory = self.read.memory()?;
        Ok(LessonUpdated {
            lesson: memory.lesson(&MemoryId(lesson_id.to_string())).map(lesson),
            seq: seq.0,
        })
    }

    /// A human's verdict on a lesson (`sno lessons approve|reject`).
    pub async fn review_lesson(
        &self,
        id: &str,
        approved: bool,
        reviewer: &str,
        note: &str,
    ) -> Result<LessonUpdated> {
        let memory = self.read.memory()?;
        let lid = MemoryId(id.to_string());
        let found = memory.lesson(&lid).ok_or_else(|| {
            unknown_memory(id, memory.lessons.iter().map(|l| l.proposed.id.0.clone()))
        })?;
        if approved && found.rule().is_none() {
            return Err(ErrorCode::LessonUnanalysed
                .with(format!(
                    "lesson `{id}` has no analysis yet, so there is no rule to approve"
                ))
                .into());
        }
        // The same verdict again says nothing new; journaling it would
        // replace the first review's note with an empty one.
        if let Some(prev) = found
            .review
            .as_ref()
            .filter(|r| r.approved == approved && (note.is_empty() || note == r.note))
        {
            let verdict = if approved { "approved" } else { "rejected" };
            let other = if approved { "reject" } else { "approve" };
            return Err(ErrorCode::LessonReviewed
                .with(format!(
                    "lesson `{id}` is already {verdict} (by {}); nothing was journaled",
                    prev.reviewer
                ))
                .hinted(format!(
                    "To change the verdict, `sno lessons {other} {id}`; to add a note to this one, pass --note."
                ))
                .into());
        }
        let seq = self
            .append_memory(Event::LessonReviewed(jm::LessonReviewed {
                lesson: lid.clone(),
                approved,
                reviewer: reviewer.to_string(),
                note: note.to_string(),
            }))
            .await?;
        let memory = self.read.memory()?;
        Ok(LessonUpdated {
            lesson: memory.lesson(&lid).map(lesson),
            seq: seq.0,
        })
    }

    /// Advice for an agent whose context window is filling up.
    pub fn context_advice(&self, tokens_used: u64, capacity: u64) -> Result<ContextAdvice> {
        if capacity == 0 {
            return Err(ErrorCode::BadArgs
                .with("`capacity` must be greater than 0")
                .hinted("Pass your context window size in tokens as `capacity`.")
                .into());
        }
        let threshold = self.config.serve.low_context_threshold.unwrap_or(0.8);
        let used = tokens_used as f64 / capacity as f64;
        let recommend = used >= threshold;
        Ok(ContextAdvice {
            used_share: crate::lookup::round3(used),
            threshold,
            recommend_checkpoint: recommend,
            advice: if recommend {
                "Call create_checkpoint now with a summary of what is done and what is next; after compaction, call restore_checkpoint with its id."
            } else {
                "Plenty of context left; no action needed."
            }
            .to_string(),
        })
    }
}

/// The error for a memory id nobody made, with the nearest ids.
pub fn unknown_memory(id: &str, known: impl IntoIterator<Item = String>) -> Error {
    ErrorCode::UnknownMemory
        .with(format!("no checkpoint, decision or lesson `{id}`"))
        .suggesting(nearest(id, known, 3))
        .into()
}
