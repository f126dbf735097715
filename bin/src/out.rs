//! Where a command's output goes: the process's stdout and stderr, or, for a
//! command a running server executes on behalf of a CLI (see
//! `serve::forward`), buffers sent back to that CLI.
//!
//! Every command prints through [`outln!`]/[`out!`]/[`errln!`], so the same
//! code serves both.

use std::cell::RefCell;
use std::io::Write;

thread_local! {
    static CAPTURE: RefCell<Option<(Vec<u8>, Vec<u8>)>> = const { RefCell::new(None) };
}

/// Which stream.
#[derive(Clone, Copy)]
pub enum Stream {
    Out,
    Err,
}

/// Writes to the stream, or to this thread's capture buffers when set.
pub fn write(stream: Stream, args: std::fmt::Arguments) {
    let captured = CAPTURE.with(|c| {
        let mut c = c.borrow_mut();
        match c.as_mut() {
            Some((out, err)) => {
                let buf = match stream {
                    Stream::Out => out,
                    Stream::Err => err,
                };
                let _ = buf.write_fmt(args);
                true
            }
            None => false,
        }
    });
    if !captured {
        match stream {
            Stream::Out => {
                let mut o = std::io::stdout().lock();
                // A closed pipe (`sno grep … | head`) is the reader's choice.
                if o.write_fmt(args).is_err() {
                    std::process::exit(0);
                }
            }
            Stream::Err => {
                let _ = std::io::stderr().lock().write_fmt(args);
            }
        }
    }
}

/// Runs `f` with this thread's output captured; returns (stdout, stderr).
pub fn capture<T>(f: impl FnOnce() -> T) -> (T, Vec<u8>, Vec<u8>) {
    CAPTURE.with(|c| *c.borrow_mut() = Some((Vec::new(), Vec::new())));
    let r = f();
    let (out, err) = CAPTURE.with(|c| c.borrow_mut().take()).unwrap_or_default();
    (r, out, err)
}

/// `println!` through [`write`].
macro_rules! outln {
    () => { $crate::out::write($crate::out::Stream::Out, format_args!("\n")) };
    ($($t:tt)*) => { $crate::out::write($crate::out::Stream::Out, format_args!("{}\n", format_args!($($t)*))) };
}
/// `print!` through [`write`].
macro_rules! out {
    ($($t:tt)*) => { $crate::out::write($crate::out::Stream::Out, format_args!($($t)*)) };
}
/// `eprintln!` through [`write`].
macro_rules! errln {
    ($($t:tt)*) => { $crate::out::write($crate::out::Stream::Err, format_args!("{}\n", format_args!($($t)*))) };
}
pub(crate) use {errln, out, outln};
