//! Packing ranked items into a token budget (cl100k_base), whole symbols
//! first, and saying exactly what did not fit.

/// Loads the cl100k_base tables now (tens of milliseconds) rather than in
/// the first answer that packs.
pub fn warm() {
    let _ = crate::cl100k::counter();
}

/// Tokens of a text, as cl100k_base counts them.
pub fn count_tokens(text: &str) -> usize {
    crate::cl100k::counter().encode_ordinary(text).len()
}

/// One item offered to the packer, in rank order.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The block to include (heading and source).
    pub text: String,
}

/// How an item ended up in the package.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packed {
    Whole,
    /// Cut to fit: only the first part is included.
    Truncated,
    /// Left out: no room.
    Omitted,
}

/// The result of packing.
#[derive(Clone, Debug)]
pub struct Packing {
    pub body: String,
    pub outcome: Vec<Packed>,
    pub tokens: usize,
}

/// Fills `budget` tokens with candidates in order: each whole if it fits,
/// skipping ones that do not; the first candidate is cut rather than
/// dropped when even it does not fit, so a package is never empty.
pub fn pack(candidates: &[Candidate], budget: usize) -> Packing {
    let bpe = crate::cl100k::counter();
    // Pieces are counted one by one; token boundaries can merge across them,
    // so the whole is counted once at the end and trimmed if it overshoots.
    let mut pieces: Vec<(usize, String)> = Vec::new();
    let mut used = 0;
    let mut outcome = Vec::with_capacity(candidates.len());
    for (i, c) in candidates.iter().enumerate() {
        // A cl100k token covers at most a few dozen bytes of code: when even
        // that bound cannot fit, skip the (costly) exact count.
        if i > 0 && used + c.text.len() / 32 > budget {
            outcome.push(Packed::Omitted);
            continue;
        }
        let tokens = bpe.encode_ordinary(&c.text);
        if used + tokens.len() <= budget {
            used += tokens.len();
            pieces.push((i, c.text.clone()));
            outcome.push(Packed::Whole);
        } else if i == 0 && budget > used + 16 {
            let marker = "\n… [truncated to fit the token budget]\n";
            let room = budget - used - count_tokens(marker);
            // Decoding a token prefix can re-encode to a few more tokens:
            // shrink until it really fits.
            let mut take = room.min(tokens.len());
            let cut = loop {
                let cut = bpe.decode(&tokens[..take]).unwrap_or_default();
                if count_tokens(&cut) <= room || take == 0 {
                    break cut;
                }
                take -= 1;
            };
            let text = format!("{cut}{marker}");
            used += count_tokens(&text);
            pieces.push((i, text));
            outcome.push(Packed::Truncated);
        } else {
            outcome.push(Packed::Omitted);
        }
    }
    loop {
        let body: String = pieces.iter().map(|(_, t)| t.as_str()).collect();
        let tokens = bpe.encode_ordinary(&body).len();
        if tokens <= budget || pieces.len() <= 1 {
            return Packing {
                body,
                outcome,
                tokens,
            };
        }
        let (i, _) = pieces.pop().expect("more than one piece");
        outcome[i] = Packed::Omitted;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(n: usize) -> Candidate {
        Candidate {
            text: "word ".repeat(n),
        }
    }

    #[test]
    fn whole_items_first_and_nothing_dropped_silently() {
        let p = pack(&[c(10), c(100), c(5)], 30);
        assert_eq!(p.outcome, [Packed::Whole, Packed::Omitted, Packed::Whole]);
        assert!(p.tokens <= 30);
        assert_eq!(p.tokens, count_tokens(&p.body));
    }

    #[test]
    fn an_oversized_first_item_is_cut_and_says_so() {
        let p = pack(&[c(500)], 50);
        assert_eq!(p.outcome, [Packed::Truncated]);
        assert!(p.body.contains("truncated"));
        assert!(p.tokens <= 50, "{}", p.tokens);
    }
}
