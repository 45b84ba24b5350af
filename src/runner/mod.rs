//! Runners: start a harness, stream its output into the model.

pub mod bench;
pub mod checkout_counts;
pub mod counts;
pub mod exec;
pub mod executor;
pub mod gbench;
pub mod gbench_counts;
pub mod go;
pub mod go_counts;
pub mod go_flags;
pub mod harness;
pub mod launch;
pub mod output;
pub mod plan;
mod shell_syntax;
pub mod worktree;

/// The order the `arms` run in round `round` (from 0): in turn, and backwards every other
/// round (A B, B A, A B, ...), so that going first, after the other's work or on a cold
/// cache, falls on every arm alike and cancels from their comparison.
pub fn turn_order(round: u64, arms: usize) -> Vec<usize> {
    match round % 2 {
        0 => (0..arms).collect(),
        _ => (0..arms).rev().collect(),
    }
}

/// The order for arms that come in pairs, each with its copy beside it (A A' B B', an A/A
/// run): every other round each pair swaps (A' A B' B), so that within a pair each arm goes
/// first, and follows the other pair, as often; a whole reversal would leave B always after
/// A' and never B' after A.
pub fn turns_in_pairs(round: u64, arms: usize) -> Vec<usize> {
    (0..arms)
        .map(|i| match (round % 2, i % 2) {
            (1, 0) if i + 1 < arms => i + 1,
            (1, 1) => i - 1,
            _ => i,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_other_round_runs_backwards() {
        let orders: Vec<Vec<usize>> = (0..4).map(|r| super::turn_order(r, 3)).collect();
        assert_eq!(orders, [[0, 1, 2], [2, 1, 0], [0, 1, 2], [2, 1, 0]]);
    }

    #[test]
    fn pairs_swap_within_themselves() {
        let orders: Vec<Vec<usize>> = (0..2).map(|r| super::turns_in_pairs(r, 4)).collect();
        assert_eq!(orders, [[0, 1, 2, 3], [1, 0, 3, 2]]);
        assert_eq!(super::turns_in_pairs(1, 3), [1, 0, 2]);
    }
}
