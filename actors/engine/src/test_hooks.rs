//! The only way tests reach states users reach by accident (a parser that
//! crashes, a run killed between commits, a draft that panics): variables
//! of the environment, read here once when an engine starts and handed to
//! the actors they concern, never part of the configuration users write.
//! Release builds (what users run) do not read them at all.

/// Faults and delays tests ask for.
#[derive(Clone, Debug, Default)]
pub struct TestHooks {
    /// `SNO_TEST_PANIC_ON=<path>`: a parser worker panics on that file.
    pub panic_on: Option<String>,
    /// `SNO_TEST_COMMIT_DELAY_MS=<n>`: a pause after each journaled commit
    /// (and after a journaled branch move's plan), so a test can kill the
    /// process mid-run.
    pub commit_delay_ms: u64,
    /// `SNO_TEST_AGENT_PANIC=1`: the agent actor panics on a draft.
    pub agent_panic: bool,
    /// `SNO_TEST_PARTS_FROM_STATE=1`: a head's first search parts are made
    /// from its loaded state, not streamed from its views (what tests
    /// compare the streamed parts with).
    pub parts_from_state: bool,
    /// `SNO_TEST_LAZY_COMMITS=1`: a commit is indexed over records read on
    /// demand, as on a repository too large to hold, whatever its size.
    pub lazy_commits: bool,
    /// `SNO_TEST_SEARCH_PANIC=<query>`: a search for exactly that query
    /// panics.
    pub search_panic: Option<String>,
}

impl TestHooks {
    /// The hooks set in this process's environment (none in a release
    /// build).
    #[cfg(not(debug_assertions))]
    pub fn from_env() -> TestHooks {
        TestHooks::default()
    }

    /// The hooks set in this process's environment (none in a release
    /// build).
    #[cfg(debug_assertions)]
    pub fn from_env() -> TestHooks {
        TestHooks {
            panic_on: std::env::var("SNO_TEST_PANIC_ON").ok(),
            commit_delay_ms: std::env::var("SNO_TEST_COMMIT_DELAY_MS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            agent_panic: std::env::var("SNO_TEST_AGENT_PANIC").is_ok_and(|v| v == "1"),
            parts_from_state: std::env::var("SNO_TEST_PARTS_FROM_STATE").is_ok_and(|v| v == "1"),
            lazy_commits: std::env::var("SNO_TEST_LAZY_COMMITS").is_ok_and(|v| v == "1"),
            search_panic: std::env::var("SNO_TEST_SEARCH_PANIC").ok(),
        }
    }
}
