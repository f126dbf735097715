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

/// Writes to the stream. On a terminal, control characters from the
/// repository (a file named with an escape sequence, one in a quoted line)
/// are shown escaped, so indexed text cannot move the cursor, recolour or
/// retitle the user's terminal; a pipe gets the bytes as they are.
pub fn write(stream: Stream, args: std::fmt::Arguments) {
    use std::io::IsTerminal;
    static TTY: std::sync::OnceLock<[bool; 2]> = std::sync::OnceLock::new();
    let tty = TTY.get_or_init(|| {
        [
            std::io::stdout().is_terminal(),
            std::io::stderr().is_terminal(),
        ]
    });
    let safe =
        tty[stream as usize].then(|| sno_protocol::terminal::terminal_safe(&args.to_string()));
    let put = |w: &mut dyn Write| match &safe {
        Some(text) => w.write_all(text.as_bytes()),
        None => w.write_fmt(args),
    };
    match stream {
        Stream::Out if put(&mut std::io::stdout().lock()).is_err() => std::process::exit(0),
        Stream::Out => {}
        Stream::Err => drop(put(&mut std::io::stderr().lock())),
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
