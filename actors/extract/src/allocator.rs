//! Where tree-sitter's C core gets its memory.
//!
//! Parsing is allocation-heavy: with glibc's malloc about a sixth of the
//! CPU time of `sno init` went to malloc/free (profiled with perf), most of
//! it from tree-sitter's subtree and stack nodes. mimalloc's thread-local
//! free lists make those calls cheap. The binary uses mimalloc as Rust's
//! global allocator too; this routes the C side to the same allocator.

// The one place sno itself touches `unsafe`: handing C function pointers
// to tree-sitter.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::sync::Once;

static INSTALLED: Once = Once::new();

/// Points tree-sitter's allocation functions at mimalloc.
///
/// Call it first thing in `main`, before any parser or tree exists: memory
/// allocated by one allocator must never be freed by the other, so a tree
/// created before the switch would be freed with the wrong function. Calls
/// after the first do nothing.
pub fn use_mimalloc() {
    INSTALLED.call_once(|| {
        let allocator = tree_sitter::Allocator {
            malloc: libmimalloc_sys::mi_malloc,
            calloc: mi_calloc,
            realloc: libmimalloc_sys::mi_realloc,
            free: libmimalloc_sys::mi_free,
        };
        // SAFETY: `Once` makes this the first and only switch, and callers
        // are told to make it before tree-sitter allocates anything, so every
        // pointer tree-sitter frees came from the functions installed here.
        unsafe {
            tree_sitter::set_allocator(Some(allocator));
        }
    });
}

// Declared here because the crate exports options only under a feature
// this offline build cannot enable. The index is `mi_option_purge_delay` in
// the `mi_option_t` enum of the bundled mimalloc 3 (mimalloc.h); the test
// below pins it by the option's default.
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

extern "C" {
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    #[cfg(test)]
    fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
}

/// mimalloc's own delay before freed pages go back to the OS, in ms.
const DEFAULT_PURGE_DELAY_MS: std::ffi::c_long = 1000;

/// While it lives, freed pages go back to the OS at once rather than after
/// a second. An index run frees parse trees as fast as it makes them, and
/// with the delay its peak memory grew by about a fifth; a server, which
/// loads its model and indexes in bursts, is faster with the delay (its
/// cold start was 25% slower without it).
pub struct PurgeAtOnce(());

impl PurgeAtOnce {
    /// Starts purging at once, until the value is dropped.
    pub fn start() -> PurgeAtOnce {
        set_purge_delay(0);
        PurgeAtOnce(())
    }
}

impl Drop for PurgeAtOnce {
    fn drop(&mut self) {
        set_purge_delay(DEFAULT_PURGE_DELAY_MS);
    }
}

fn set_purge_delay(ms: std::ffi::c_long) {
    // SAFETY: setting an option is a plain store in mimalloc; both values
    // used here are ones the option documents.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, ms) };
}

/// `calloc` on mimalloc's zeroing allocation (the crate's own `mi_calloc`
/// needs a feature with a dependency this offline build does not have).
unsafe extern "C" fn mi_calloc(nmemb: usize, size: usize) -> *mut c_void {
    match nmemb.checked_mul(size) {
        // SAFETY: plain allocation of `n` bytes; mimalloc handles 0.
        Some(n) => unsafe { libmimalloc_sys::mi_zalloc(n) },
        None => std::ptr::null_mut(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_set_is_the_purge_delay() {
        // SAFETY: reading an option is a plain load.
        let get = || unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) };
        // No other option of mimalloc 3 defaults to 1000: this pins the
        // enum index to `purge_delay`.
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(get(), DEFAULT_PURGE_DELAY_MS);
        }
        let purging = PurgeAtOnce::start();
        assert_eq!(get(), 0);
        drop(purging);
        assert_eq!(get(), DEFAULT_PURGE_DELAY_MS);
    }
}
