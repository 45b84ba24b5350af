//! The outside world's parts as runners, probes and sinks reach them: the console, the clock,
//! the interrupt and the host. `commands::Env` holds them with the processes commands start (built
//! once in `main`, or scripted in a test); engines never see them.

mod clock;
mod console;
pub mod git;

pub use clock::{Clock, CpuReading, SystemClock};
pub use console::{Console, Reader, Said, Stdin, Stream};

/// Ctrl-C and SIGTERM, as the work in progress asks about them.
pub trait Interrupt: Send + Sync {
    /// Starts listening (once per process; later calls do nothing).
    fn install(&self);
    /// Whether an interrupt came: the work stops, reports what finished and exits 130.
    fn requested(&self) -> bool;
}

/// The signals this process receives ([`crate::interrupt`]).
pub struct Signals;

impl Interrupt for Signals {
    fn install(&self) {
        crate::interrupt::install();
    }

    fn requested(&self) -> bool {
        crate::interrupt::requested()
    }
}

/// The machine the work runs on, as every run records it.
pub trait Host: Send + Sync {
    /// Its facts and the doctor's checks.
    fn capture(&self) -> crate::model::Environment;
    /// Its name, as a calibration records where it was made.
    fn name(&self) -> Option<String>;
}

/// This machine ([`crate::host::capture`]).
pub struct ThisHost;

impl Host for ThisHost {
    fn capture(&self) -> crate::model::Environment {
        crate::host::capture()
    }

    fn name(&self) -> Option<String> {
        crate::host::capture_basic().hostname
    }
}

/// The environment variables a command reads (`LATKIT_DB`, `LATKIT_TOKEN`,
/// `SOURCE_DATE_EPOCH`, `HOME`), taken once when it starts; processes it starts inherit the
/// real environment as usual.
#[derive(Clone, Debug, Default)]
pub struct Vars(std::collections::BTreeMap<std::ffi::OsString, std::ffi::OsString>);

impl Vars {
    /// This process's environment.
    pub fn process() -> Vars {
        Vars(std::env::vars_os().collect())
    }

    /// Exactly these variables (a test's world).
    pub fn of<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vars {
        Vars(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }

    /// `name`'s value when it is set, even to nothing: for a variable whose empty value is
    /// a mistake to refuse (`LATKIT_TOKEN=`), not the same as unset.
    pub fn set(&self, name: &str) -> Option<&std::ffi::OsStr> {
        self.0
            .get(std::ffi::OsStr::new(name))
            .map(|v| v.as_os_str())
    }

    /// `name`'s value; unset and empty are both `None`, as shells treat `NAME=`.
    pub fn get(&self, name: &str) -> Option<&std::ffi::OsStr> {
        self.0
            .get(std::ffi::OsStr::new(name))
            .map(|v| v.as_os_str())
            .filter(|v| !v.is_empty())
    }

    /// The time reports say they were made: `SOURCE_DATE_EPOCH` when it is set (the
    /// reproducible-builds convention, so that the same inputs give the same bytes), else
    /// `now`. A value that is not whole seconds since 1970 before the year 10000 (which every
    /// report's four-digit year can write) is refused, not ignored.
    pub fn report_time(&self, now: std::time::SystemTime) -> Result<std::time::SystemTime, String> {
        let Some(given) = self.get("SOURCE_DATE_EPOCH") else {
            return Ok(now);
        };
        given
            .to_str()
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|&s| s < YEAR_10000)
            .map(|s| std::time::UNIX_EPOCH + std::time::Duration::from_secs(s))
            .ok_or_else(|| {
                format!(
                    "SOURCE_DATE_EPOCH `{}` is not whole seconds since 1970 before the year \
                     10000 (e.g. 1700000000; a millisecond epoch has three digits too many)",
                    crate::error::visible(&given.to_string_lossy())
                )
            })
    }
}

/// 10000-01-01T00:00:00Z in seconds since 1970: the first time a four-digit year cannot write.
const YEAR_10000: u64 = 253_402_300_800;

/// What stamps a measured run: the clock it starts and ends by and the host it ran on.
#[derive(Clone, Copy)]
pub struct Stamp<'a> {
    pub clock: &'a dyn Clock,
    pub host: &'a dyn Host,
}
