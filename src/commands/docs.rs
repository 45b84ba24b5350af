//! `latkit completions` and `latkit man`: what the argument definitions generate, on stdout.

use crate::error::Result;
use crate::report::sink::Destination;

pub fn print(bytes: &[u8]) -> Result<()> {
    Destination::Stdout.write_whole(bytes)
}
