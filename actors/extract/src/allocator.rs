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

/// While it lives, the process gets no new transparent huge pages.
///
/// mimalloc asks for huge pages on its arenas; where the kernel grants them
/// every fault zeroes 2 MiB, and a page stays resident while any small
/// object on it lives. Indexing makes and frees millions of small parse
/// nodes and records in waves, the worst case for that: on a first index of
/// 450k lines, peak RSS fell from 256 to 203 MB with them off, and the run
/// got faster. A server is the opposite case (it builds large long-lived
/// maps once; its cold start was 25% slower without huge pages), so only
/// indexing runs under this. The setting is the process's: a daemon that
/// runs a forwarded `sno init` serves without huge pages until it ends. The
/// parse floor benchmark runs under it too, to measure the same
/// configuration.
pub struct HugePagesOff {
    was_off: bool,
}

impl HugePagesOff {
    /// Turns huge pages off until the value is dropped. Where the kernel
    /// does not allow it, nothing changes but memory use and speed.
    pub fn start() -> HugePagesOff {
        #[cfg(target_os = "linux")]
        {
            let was_off = rustix::thread::transparent_huge_pages_are_disabled().unwrap_or(false);
            if let Err(e) = rustix::thread::disable_transparent_huge_pages(true) {
                tracing::debug!(error = %e, "transparent huge pages stay on");
            }
            HugePagesOff { was_off }
        }
        #[cfg(not(target_os = "linux"))]
        HugePagesOff { was_off: true }
    }
}

impl Drop for HugePagesOff {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if !self.was_off {
            let _ = rustix::thread::disable_transparent_huge_pages(false);
        }
    }
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
    #[cfg(target_os = "linux")]
    #[test]
    fn huge_pages_are_off_while_the_guard_lives() {
        let off = || rustix::thread::transparent_huge_pages_are_disabled().ok();
        let before = off();
        if before.is_none() {
            // prctl is not available here (a sandbox): the guard changes
            // nothing, which is all it promises then.
            return;
        }
        let guard = super::HugePagesOff::start();
        assert_eq!(off(), Some(true));
        drop(guard);
        assert_eq!(off(), before);
    }
}
