//! `latkit completions` and `latkit man`: what the argument definitions generate, on stdout.

use super::Env;
use crate::error::Result;

pub fn print(bytes: &[u8], env: &Env) -> Result<()> {
    crate::report::sink::print_whole(&env.console, bytes)
}
