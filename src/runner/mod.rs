//! Runners: start a harness, stream its output into the model.

pub mod exec;
pub mod executor;
pub mod gbench;
pub mod go;
pub mod harness;
pub mod output;
pub mod plan;
mod shell_syntax;
pub mod worktree;
