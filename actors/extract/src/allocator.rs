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

/// Points tree-sitter's allocation functions at mimalloc, and turns
/// transparent huge pages off for the process.
///
/// Call it first thing in `main`, before any parser or tree exists: memory
/// allocated by one allocator must never be freed by the other, so a tree
/// created before the switch would be freed with the wrong function. Calls
/// after the first do nothing.
///
/// Huge pages: mimalloc asks for them on its arenas, and where the kernel
/// grants them every fault zeroes 2 MiB and a page stays resident while any
/// small object on it lives. sno's heap is millions of small parse nodes
/// and records made and freed in waves, the worst case for that: on a first
/// index of 450k lines, peak RSS fell from 256 to 203 MB with them off and
/// the run got faster (less zeroing, no purge-and-refault churn). The parse
/// floor benchmark calls this too, so it measures the same configuration.
pub fn use_mimalloc() {
    INSTALLED.call_once(|| {
        #[cfg(target_os = "linux")]
        if let Err(e) = rustix::thread::disable_transparent_huge_pages(true) {
            // Only memory use and speed depend on it.
            note_huge_pages_left_on(&e);
        }
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

#[cfg(target_os = "linux")]
fn note_huge_pages_left_on(e: &rustix::io::Errno) {
    // Runs before logging is set up; stderr is the only channel.
    if std::env::var_os("SNO_LOG").is_some() {
        eprintln!("sno: could not turn transparent huge pages off: {e}");
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
    fn huge_pages_are_off_after_the_switch() {
        super::use_mimalloc();
        assert_eq!(
            rustix::thread::transparent_huge_pages_are_disabled().ok(),
            Some(true)
        );
    }
}
