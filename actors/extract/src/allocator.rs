//! Where tree-sitter's C core gets its memory.
//!
//! Parsing is allocation-heavy: with glibc's malloc about a sixth of the
//! CPU time of `sno init` went to malloc/free (profiled with perf), most of
//! it from tree-sitter's subtree and stack nodes. mimalloc's thread-local
//! free lists make those calls cheap. The binary uses mimalloc as Rust's
//! global allocator too; this routes the C side to the same allocator.
//!
//! A tree that is only walked once and dropped need not be freed node by
//! node: inside a [`Scratch`] scope tree-sitter allocates from a heap of
//! its own, which is destroyed whole when the scope ends.

// The one place sno itself touches `unsafe`: handing C function pointers
// to tree-sitter.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::Once;

static INSTALLED: Once = Once::new();

/// mimalloc's first-class heaps (v3, the version `libmimalloc-sys` builds
/// by default), declared here because the crate exposes them only with a
/// feature that pulls in another dependency.
#[repr(C)]
struct MiHeap {
    _private: [u8; 0],
}
#[repr(C)]
struct MiTheap {
    _private: [u8; 0],
}
extern "C" {
    fn mi_heap_new() -> *mut MiHeap;
    fn mi_heap_destroy(heap: *mut MiHeap);
    fn mi_heap_theap(heap: *mut MiHeap) -> *mut MiTheap;
    fn mi_theap_malloc(theap: *mut MiTheap, size: usize) -> *mut c_void;
    fn mi_theap_zalloc(theap: *mut MiTheap, size: usize) -> *mut c_void;
    fn mi_theap_realloc(theap: *mut MiTheap, p: *mut c_void, size: usize) -> *mut c_void;
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
}

/// `mi_option_purge_delay` in mimalloc v3's `mi_option_t`.
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// `mi_option_destroy_on_exit` in mimalloc v3's `mi_option_t`: above 1,
/// mimalloc's exit handler returns at once.
const MI_OPTION_DESTROY_ON_EXIT: std::ffi::c_int = 22;

/// The purge delay of a server between its answers: an answer's freed
/// pages are there for the next answer's allocations.
///
/// mimalloc purges freed pages after its delay, but only when the thread
/// that freed them next calls into it: a server's threads idle between
/// requests, so with mimalloc's second what an answer freed stayed
/// resident (on 600k lines a daemon held 318-329 MB after 330 searches,
/// 271-293 MB purging at once). Purging at once had its own cost: every
/// answer's pages were given back and faulted in again by the next, a
/// third of a daemon's CPU in the kernel on questions of 128 words. With
/// 10 ms, `scale.py` on 600k lines: warm `search` p50 3.1 ms (p95 9.4)
/// against 3.5 (14.0), the daemon at 125 MB after 1,000 queries against
/// 122. Index runs purge at once ([`PurgeAtOnce`]).
const SERVING_PURGE_DELAY_MS: i64 = 10;

/// A long-lived server's setting: memory freed by an answer goes back to
/// the OS within [`SERVING_PURGE_DELAY_MS`] (sooner while a guard asks).
pub fn purge_soon_after_answers() {
    if INSTALLED.is_completed() {
        let mut p = PURGING.lock().unwrap_or_else(|e| e.into_inner());
        p.base = Some(SERVING_PURGE_DELAY_MS);
        p.apply();
    }
}

/// The process's purge delay: its base setting, shortened to the
/// shortest any live guard ([`PurgeSoon`], [`PurgeAtOnce`]) asks for.
/// Guards may overlap (an index run beside a new head's search parts) and
/// end in any order: the delay is always the base's or a live guard's.
struct Purging {
    /// The delay with no guard alive; `None` until first needed.
    base: Option<i64>,
    /// Each live guard's delay.
    held: Vec<i64>,
}

static PURGING: std::sync::Mutex<Purging> = std::sync::Mutex::new(Purging {
    base: None,
    held: Vec::new(),
});

impl Purging {
    fn apply(&self) {
        if let Some(base) = self.base {
            let delay = self.held.iter().copied().fold(base, i64::min);
            // SAFETY: setting a mimalloc option is a plain call; the option
            // number is v3's, the version this crate builds.
            unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, delay as _) }
        }
    }
}

/// One live guard's delay in [`PURGING`].
struct Held(i64);

impl Held {
    fn start(delay: i64) -> Held {
        let mut p = PURGING.lock().unwrap_or_else(|e| e.into_inner());
        if p.base.is_none() {
            p.base = purge_delay_ms();
        }
        p.held.push(delay);
        p.apply();
        Held(delay)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut p = PURGING.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = p.held.iter().position(|&d| d == self.0) {
            p.held.swap_remove(k);
        }
        p.apply();
    }
}

/// While any is alive, memory freed in this process goes back to the OS at
/// once. A server's index runs hold one (a commit's resolution and its new
/// head's search parts free in waves, and a daemon's peak over a commit is
/// bounded), however many run at a time.
pub struct PurgeAtOnce(#[allow(dead_code)] Held);

impl PurgeAtOnce {
    /// Purges at once until dropped (nothing when mimalloc is not the
    /// allocator).
    pub fn start() -> PurgeAtOnce {
        PurgeAtOnce(Held::start(0))
    }
}

/// mimalloc's purge delay in milliseconds, when it is the allocator.
pub fn purge_delay_ms() -> Option<i64> {
    // SAFETY: reading a mimalloc option is a plain call; the option number
    // is v3's, the version this crate builds.
    INSTALLED
        .is_completed()
        .then(|| unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) } as i64)
}

/// The purge delay, in milliseconds, while a first index is written.
const WRITING_PURGE_DELAY_MS: i64 = 10;

/// While alive, memory freed in this process goes back to the OS within
/// [`WRITING_PURGE_DELAY_MS`] instead of mimalloc v3's second (or sooner,
/// if the process's delay is shorter already).
///
/// A first index's write turns every file's record into view rows and an
/// encoded event, freeing the record as it goes, hundreds of MB a second
/// across three threads: freed pages held for a second were the peak of
/// `sno init`. On 8.3M lines the peak was 1,521-1,530 MB with the second's
/// delay, 1,393-1,482 MB with 10 ms over the whole init and 1,341 MB with
/// none (but 18 s more of system time: each purge is a syscall).
pub struct PurgeSoon(#[allow(dead_code)] Held);

impl PurgeSoon {
    /// Shortens the purge delay until the guard is dropped (nothing when
    /// mimalloc is not the allocator).
    pub fn start() -> PurgeSoon {
        PurgeSoon(Held::start(WRITING_PURGE_DELAY_MS))
    }
}

thread_local! {
    /// The heap tree-sitter allocates from on this thread while a
    /// [`Scratch`] scope is open; null otherwise.
    static SCRATCH: Cell<*mut MiTheap> = const { Cell::new(std::ptr::null_mut()) };
}

/// Points tree-sitter's allocation functions at mimalloc, and tells
/// mimalloc to leave the memory to the OS at exit.
///
/// Call it first thing in `main`, before any parser or tree exists: memory
/// allocated by one allocator must never be freed by the other, so a tree
/// created before the switch would be freed with the wrong function. Calls
/// after the first do nothing.
pub fn use_mimalloc() {
    INSTALLED.call_once(|| {
        let allocator = tree_sitter::Allocator {
            malloc: ts_malloc,
            calloc: ts_calloc,
            realloc: ts_realloc,
            free: libmimalloc_sys::mi_free,
        };
        // SAFETY: `Once` makes this the first and only switch, and callers
        // are told to make it before tree-sitter allocates anything, so every
        // pointer tree-sitter frees came from the functions installed here.
        unsafe {
            tree_sitter::set_allocator(Some(allocator));
        }
        // A statically linked mimalloc collects the main thread's heap and
        // purges its arenas when the process exits, through madvise: 3.9% of a
        // one-question `sno search`'s main-thread samples (perf, 600k
        // lines) spent giving back memory that the exit gives back anyway.
        // SAFETY: setting an option is a plain call; the option number is
        // v3's, the version this crate builds.
        unsafe { mi_option_set(MI_OPTION_DESTROY_ON_EXIT, 2) };
    });
}

/// From now on, the process gets no new transparent huge pages (the
/// setting is the process's, and its children's). Where the kernel does not
/// allow it, nothing changes but memory use and speed.
///
/// mimalloc asks for huge pages on its arenas; where the kernel grants them
/// every fault zeroes 2 MiB, and a page stays resident while any small
/// object on it lives. Indexing makes and frees millions of small parse
/// nodes and records in waves, the worst case for that: on a first index of
/// 450k lines, peak RSS fell from 256 to 203 MB with them off, and the run
/// got faster. Queries were once measured the other way (a cold start 25%
/// slower without huge pages), but a fault on a huge page waits for the
/// kernel to compact memory when free memory is fragmented (the page cache
/// of a machine that has been indexing): a cold `sno search` on 8.3M lines
/// then took 0.46-0.67 s with them and 0.24-0.28 s without, and on 600k
/// lines 38-65 ms with them and 51-81 ms without, a daemon holding 118
/// MB instead of 148-155. So every sno process turns them off at its
/// start (indexing runs used to, for their length only). The parse floor
/// benchmark does too, to measure the same configuration.
pub fn transparent_huge_pages_off() {
    #[cfg(target_os = "linux")]
    if let Err(e) = rustix::thread::disable_transparent_huge_pages(true) {
        tracing::debug!(error = %e, "transparent huge pages stay on");
    }
}

/// Memory for one tree that is dropped all at once.
///
/// While the value lives, tree-sitter on this thread allocates from a heap
/// of its own; dropping the value destroys that heap with everything in it.
/// Whatever tree-sitter made in the scope (parsers, trees, cursors) must
/// therefore be used only in the scope. A tree is then forgotten
/// (`std::mem::forget`) rather than dropped: freeing a tree node by node was
/// about 5% of parsing. A parser must be dropped: its grammar's external
/// scanner keeps state from the C library's malloc, which only deleting the
/// parser frees.
pub struct Scratch {
    heap: *mut MiHeap,
    outer: *mut MiTheap,
}

impl Scratch {
    /// Opens a scope, or `None` where tree-sitter is not on mimalloc (then
    /// nothing may be forgotten: it would leak).
    pub fn start() -> Option<Scratch> {
        if !INSTALLED.is_completed() {
            return None;
        }
        // SAFETY: plain calls into mimalloc; a null heap is checked.
        let heap = unsafe { mi_heap_new() };
        if heap.is_null() {
            return None;
        }
        // SAFETY: `heap` is a live heap; its theap is this thread's part of it.
        let theap = unsafe { mi_heap_theap(heap) };
        if theap.is_null() {
            // SAFETY: nothing was allocated from it.
            unsafe { mi_heap_destroy(heap) };
            return None;
        }
        let outer = SCRATCH.with(|s| s.replace(theap));
        Some(Scratch { heap, outer })
    }
}

/// While it lives, tree-sitter on this thread allocates from the default
/// heap again, even inside a [`Scratch`] scope: for objects that outlive the
/// scope, such as the thread's cached parsers.
pub struct Suspended {
    outer: *mut MiTheap,
}

impl Scratch {
    /// Suspends any scope open on this thread until the guard is dropped.
    pub fn suspend() -> Suspended {
        Suspended {
            outer: SCRATCH.with(|s| s.replace(std::ptr::null_mut())),
        }
    }
}

impl Drop for Suspended {
    fn drop(&mut self) {
        SCRATCH.with(|s| s.set(self.outer));
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        SCRATCH.with(|s| s.set(self.outer));
        // SAFETY: the heap was made by `start` on this thread (the value is
        // not Send), and what tree-sitter allocated from it was used only in
        // the scope, so nothing refers to it any more.
        unsafe { mi_heap_destroy(self.heap) };
    }
}

/// The heap tree-sitter allocates from on this thread, if a scope is open.
fn scratch() -> *mut MiTheap {
    SCRATCH.with(|s| s.get())
}

unsafe extern "C" fn ts_malloc(size: usize) -> *mut c_void {
    let theap = scratch();
    // SAFETY: plain allocation; mimalloc frees either kind with `mi_free`.
    unsafe {
        if theap.is_null() {
            libmimalloc_sys::mi_malloc(size)
        } else {
            mi_theap_malloc(theap, size)
        }
    }
}

/// `calloc` on mimalloc's zeroing allocation (the crate's own `mi_calloc`
/// needs a feature with a dependency).
unsafe extern "C" fn ts_calloc(nmemb: usize, size: usize) -> *mut c_void {
    let Some(n) = nmemb.checked_mul(size) else {
        return std::ptr::null_mut();
    };
    let theap = scratch();
    // SAFETY: plain allocation of `n` bytes; mimalloc handles 0.
    unsafe {
        if theap.is_null() {
            libmimalloc_sys::mi_zalloc(n)
        } else {
            mi_theap_zalloc(theap, n)
        }
    }
}

unsafe extern "C" fn ts_realloc(p: *mut c_void, size: usize) -> *mut c_void {
    let theap = scratch();
    // SAFETY: `p` came from these functions (tree-sitter's contract).
    unsafe {
        if theap.is_null() {
            libmimalloc_sys::mi_realloc(p, size)
        } else {
            mi_theap_realloc(theap, p, size)
        }
    }
}

#[cfg(test)]
mod tests {
    #[cfg(target_os = "linux")]
    #[test]
    fn huge_pages_are_off_once_turned_off() {
        let off = || rustix::thread::transparent_huge_pages_are_disabled().ok();
        if off().is_none() {
            // prctl is not available here (a sandbox): the call changes
            // nothing, which is all it promises then.
            return;
        }
        super::transparent_huge_pages_off();
        assert_eq!(off(), Some(true));
    }
}
