//! Printing: stdout carries answers (and, under `sno serve`, only the
//! protocol), stderr everything else. A closed stdout (`sno grep … | head`)
//! is the reader's choice, not an error.

use std::io::Write;

/// Which stream.
#[derive(Clone, Copy)]
pub enum Stream {
    Out,
    Err,
}

/// Writes to the stream.
pub fn write(stream: Stream, args: std::fmt::Arguments) {
    match stream {
        Stream::Out => {
            let mut o = std::io::stdout().lock();
            if o.write_fmt(args).is_err() {
                std::process::exit(0);
            }
        }
        Stream::Err => {
            let _ = std::io::stderr().lock().write_fmt(args);
        }
    }
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
