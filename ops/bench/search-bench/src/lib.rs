//! What the search benchmarks share.

/// The `p` quantile of sorted figures.
pub fn pct(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

/// The command line, or the usage and exit 2 when it has fewer than
/// `needed` arguments.
pub fn args_or_usage(needed: usize, usage: &str) -> Vec<String> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < needed + 1 {
        eprintln!("usage: {usage}");
        std::process::exit(2);
    }
    args
}
