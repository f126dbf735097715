//! The cl100k_base token counter (tiktoken-rs), with its table cached on disk.
//!
//! Building the counter is the longest load before a server's first answer.
//! About a third of it is decoding tiktoken-rs's embedded text table
//! (base64, 100k lines) into a map. After the first build, sno keeps the
//! table as length-prefixed bytes in rank order, checksummed, and later
//! builds feed that map to `CoreBPE::new` directly. The counter is the
//! crate's own, and a test checks that both routes tokenize alike.
//!
//! The cache is derived data: a missing, stale or damaged file is rebuilt
//! from the crate, and counting never depends on it being there.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rustc_hash::FxHashMap;
use tiktoken_rs::{CoreBPE, ENDOFPROMPT, ENDOFTEXT, FIM_MIDDLE, FIM_PREFIX, FIM_SUFFIX};

/// The pre-tokenizer pattern and special tokens of `cl100k_base()` in
/// tiktoken-rs 0.12.1 (`tiktoken_ext/openai_public.rs`). The tests compare
/// the counter built from them with the crate's own on varied text, so a
/// release that changes them fails a test rather than miscounting.
const PATTERN: &str = "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";
const SPECIALS: [(&str, u32); 5] = [
    (ENDOFTEXT, 100257),
    (FIM_PREFIX, 100258),
    (FIM_MIDDLE, 100259),
    (FIM_SUFFIX, 100260),
    (ENDOFPROMPT, 100276),
];
/// Ordinary tokens: ranks 0..RANKS, every one of them used.
const RANKS: u32 = 100_256;
const FILE: &str = "cl100k_base-v1.bin";
const MAGIC: &[u8; 8] = b"SNOCL100";

static CACHE_DIR: OnceLock<PathBuf> = OnceLock::new();
static COUNTER: OnceLock<CoreBPE> = OnceLock::new();
static TOKEN_LENS: OnceLock<Vec<u8>> = OnceLock::new();

/// Keeps the table in `dir` (a repository's `.sno/cache`). Call it before
/// the first count; later calls, and calls after the counter exists, do
/// nothing.
pub fn cache_table_in(dir: PathBuf) {
    let _ = CACHE_DIR.set(dir);
}

/// The counter, built on first use.
pub fn counter() -> &'static CoreBPE {
    COUNTER.get_or_init(|| {
        let t = std::time::Instant::now();
        let bpe = load(CACHE_DIR.get().map(PathBuf::as_path));
        tracing::debug!(ms = t.elapsed().as_millis() as u64, "token counter built");
        bpe
    })
}

/// The bytes token `rank` stands for, counted: a table read once, as
/// cutting a source at a token count walks its tokens one by one, and
/// decoding each would allocate. (Every cl100k token is under 256 bytes:
/// the table cache relies on it too.) A counter loaded from the cached
/// table has its lengths from there; decoding all 100k tokens one by one
/// was a tenth of a cold `sno search`.
pub fn token_len(rank: u32) -> usize {
    // The counter first: loading it from the cached table sets the
    // lengths, which must not happen inside their own initialisation.
    let bpe = counter();
    let lens = TOKEN_LENS.get_or_init(|| lengths_of(bpe));
    lens.get(rank as usize).map_or(1, |&l| usize::from(l))
}

/// Every ordinary token's length in bytes, in rank order, decoded.
fn lengths_of(bpe: &CoreBPE) -> Vec<u8> {
    (0..RANKS)
        .map(|r| bpe.decode_bytes(&[r]).map_or(1, |b| b.len().min(255) as u8))
        .collect()
}

fn load(dir: Option<&Path>) -> CoreBPE {
    let Some(dir) = dir else {
        return from_crate();
    };
    let file = dir.join(FILE);
    if let Some((encoder, lens)) = read_table(&file) {
        match from_table(encoder) {
            Ok(bpe) => {
                let _ = TOKEN_LENS.set(lens);
                return bpe;
            }
            Err(e) => tracing::warn!(error = %e, "rebuilding the token table cache"),
        }
    }
    let bpe = from_crate();
    if let Err(e) = write_table(&bpe, &file) {
        tracing::debug!(error = %e, file = %file.display(), "could not cache the token table");
    }
    bpe
}

fn from_crate() -> CoreBPE {
    tiktoken_rs::cl100k_base().expect("tiktoken-rs builds its own cl100k_base table")
}

fn from_table(encoder: FxHashMap<Vec<u8>, u32>) -> Result<CoreBPE, String> {
    let specials = SPECIALS.iter().map(|&(s, r)| (s.to_string(), r)).collect();
    CoreBPE::new(encoder, specials, PATTERN).map_err(|e| e.to_string())
}

/// The cached table: each token's bytes to its rank, and each rank's
/// length in bytes.
type Table = (FxHashMap<Vec<u8>, u32>, Vec<u8>);

/// The table from the cache file, or `None` when it is missing or does
/// not check out.
fn read_table(file: &Path) -> Option<Table> {
    let bytes = std::fs::read(file).ok()?;
    let payload = bytes.strip_prefix(MAGIC.as_slice())?;
    let (sum, payload) = payload.split_first_chunk::<8>()?;
    if u64::from_le_bytes(*sum) != xxhash_rust::xxh3::xxh3_64(payload) {
        return None;
    }
    let mut map = FxHashMap::default();
    map.reserve(RANKS as usize);
    let mut lens = Vec::with_capacity(RANKS as usize);
    let mut rest = payload;
    for rank in 0..RANKS {
        let (&len, tail) = rest.split_first()?;
        let token = tail.get(..usize::from(len))?;
        map.insert(token.to_vec(), rank);
        lens.push(len);
        rest = &tail[usize::from(len)..];
    }
    rest.is_empty().then_some((map, lens))
}

/// Writes the table of `bpe` (rank order, each token as a length byte and
/// its bytes), atomically: a reader sees the old file or the whole new one.
fn write_table(bpe: &CoreBPE, file: &Path) -> std::io::Result<()> {
    let invalid = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, m.to_string());
    let mut payload = Vec::with_capacity(1 << 20);
    for rank in 0..RANKS {
        let token = bpe
            .decode_bytes(&[rank])
            .map_err(|_| invalid("a rank without a token"))?;
        let len = u8::try_from(token.len()).map_err(|_| invalid("a token over 255 bytes"))?;
        payload.push(len);
        payload.extend_from_slice(&token);
    }
    let mut out = Vec::with_capacity(payload.len() + 16);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, &out)?;
    std::fs::rename(&tmp, file)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text that exercises every branch of the pattern: contractions in
    /// both cases, letters after punctuation, digit runs, symbol runs with
    /// newlines, trailing and inner whitespace, CJK, emoji and code.
    const SAMPLES: &[&str] = &[
        "fn main() {\n    println!(\"hello, world\");\n}\n",
        "It's we'll they've I'D YOU'RE don't   \n\n\t  x",
        "12345678 3.14159 0xDEADbeef 1_000_000",
        "    def __init__(self, *args, **kwargs) -> None:  # comment\r\n",
        "日本語のテキスト and émigré naïve café — “quotes” ‹›",
        "emoji 🦀🚀 mixed😀text   ",
        "<|endoftext|> is ordinary text here",
        "a\n\n\n   \n b    c\t\t\td  ",
        "",
    ];

    #[test]
    fn the_cached_table_tokenizes_like_the_crate() {
        let dir = tempfile::tempdir().unwrap();
        let reference = from_crate();
        // First load: no cache yet, so it is built from the crate and written.
        let first = load(Some(dir.path()));
        assert!(dir.path().join(FILE).exists(), "the table was not cached");
        // Second load comes from the file.
        let (encoder, lens) = read_table(&dir.path().join(FILE)).expect("the cache reads back");
        assert_eq!(encoder.len(), RANKS as usize);
        // The lengths read with the table are the decoded tokens' lengths.
        assert_eq!(lens, lengths_of(&reference));
        let cached = from_table(encoder).unwrap();
        for text in SAMPLES {
            let want = reference.encode_ordinary(text);
            assert_eq!(cached.encode_ordinary(text), want, "{text:?}");
            assert_eq!(first.encode_ordinary(text), want, "{text:?}");
            assert_eq!(
                cached.encode_with_special_tokens(text),
                reference.encode_with_special_tokens(text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn token_lengths_add_up_to_the_text() {
        for text in SAMPLES {
            let tokens = counter().encode_ordinary(text);
            let bytes: usize = tokens.iter().map(|&t| token_len(t)).sum();
            assert_eq!(bytes, text.len(), "{text:?}");
            for t in tokens {
                assert_eq!(token_len(t), counter().decode_bytes(&[t]).unwrap().len());
            }
        }
    }

    #[test]
    fn a_damaged_cache_is_rebuilt_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(FILE);
        load(Some(dir.path()));
        let mut bytes = std::fs::read(&file).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x20; // one token's byte changed: the checksum fails
        std::fs::write(&file, &bytes).unwrap();
        assert!(read_table(&file).is_none());
        let bpe = load(Some(dir.path()));
        assert_eq!(
            bpe.encode_ordinary("hello world"),
            from_crate().encode_ordinary("hello world")
        );
        assert!(read_table(&file).is_some(), "the cache was not rewritten");
        // A truncated file is refused too.
        std::fs::write(&file, &bytes[..1000]).unwrap();
        assert!(read_table(&file).is_none());
    }
}
