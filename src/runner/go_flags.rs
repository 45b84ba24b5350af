//! The arguments a user gives `go test` after the package, split as go splits them: build
//! flags (`-tags`, `-gcflags`, `-race`) shape the test binary, and the rest are the binary's
//! own. A binary built for counting, or for a bisect's checkout, gets the build flags, so
//! that what is counted is the program the timed run ran (with `-tags=fast`, the count was of
//! the other loop); its runs get the binary's flags.

/// `go help build`'s flags that take a value (`-tags x` or `-tags=x`).
const BUILD_VALUED: [&str; 19] = [
    "C",
    "p",
    "covermode",
    "coverpkg",
    "asmflags",
    "buildmode",
    "buildvcs",
    "compiler",
    "gccgoflags",
    "gcflags",
    "installsuffix",
    "ldflags",
    "mod",
    "modfile",
    "overlay",
    "pgo",
    "pkgdir",
    "tags",
    "toolexec",
];
/// Its flags that stand alone.
const BUILD_ALONE: [&str; 9] = [
    "a",
    "race",
    "msan",
    "asan",
    "cover",
    "linkshared",
    "modcacherw",
    "trimpath",
    "work",
];

/// `go test`'s flags that a counted run sets itself: which benchmarks, how many iterations,
/// how many times and on how many CPUs.
const SET_BY_COUNTING: [&str; 5] = ["bench", "benchtime", "count", "run", "cpu"];

/// `go test`'s flags that stand alone (so that no value follows them).
const BOOLEAN: [&str; 4] = ["benchmem", "short", "failfast", "v"];

/// `go test`'s flags for the binary, which the binary takes as `-test.NAME`.
const TEST_FLAGS: [&str; 12] = [
    "benchmem",
    "short",
    "timeout",
    "failfast",
    "shuffle",
    "parallel",
    "v",
    "cpuprofile",
    "memprofile",
    "blockprofile",
    "mutexprofile",
    "trace",
];

/// The flags split: for `go test -c`, and for the binary's runs.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Split {
    pub build: Vec<String>,
    pub binary: Vec<String>,
}

/// `extra` (what follows the package on `go test`'s line) split into build flags and the
/// binary's own, as the binary takes them (`-short` → `-test.short`); the flags a counted run
/// sets itself are left out of the binary's when `counting`. After `-args` all is the binary's.
pub fn split(extra: &[String], counting: bool) -> Split {
    let mut split = Split::default();
    let mut args = extra.iter();
    while let Some(arg) = args.next() {
        if arg == "-args" {
            split.binary.extend(args.by_ref().cloned());
            break;
        }
        let Some(flag) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) else {
            split.binary.push(arg.clone());
            continue;
        };
        let (name, joined) = match flag.split_once('=') {
            Some((name, _)) => (name, true),
            None => (flag, false),
        };
        let valued = BUILD_VALUED.contains(&name);
        if valued || BUILD_ALONE.contains(&name) {
            split.build.push(arg.clone());
            if valued && !joined {
                split.build.extend(args.next().cloned());
            }
            continue;
        }
        let own = name.strip_prefix("test.").unwrap_or(name);
        let set_by_counting = SET_BY_COUNTING.contains(&own);
        if counting && set_by_counting {
            if !joined && !BOOLEAN.contains(&own) {
                args.next();
            }
            continue;
        }
        match set_by_counting || TEST_FLAGS.contains(&own) {
            // A value apart (`-timeout 5m`) follows as an argument of its own.
            true => split
                .binary
                .push(format!("-test.{own}{}", &flag[name.len()..])),
            false => split.binary.push(arg.clone()),
        }
    }
    split
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn build_flags_build_the_binary_and_the_rest_run_it() {
        let given = words("-tags fast -gcflags=-N -race -short -timeout 5m -size 64 -cpu 1,2");
        let counted = split(&given, true);
        assert_eq!(counted.build, words("-tags fast -gcflags=-N -race"));
        // -cpu is the counted run's own (GOMAXPROCS=1); a package's own flag passes as given.
        assert_eq!(
            counted.binary,
            words("-test.short -test.timeout 5m -size 64")
        );
        let timed = split(&given, false);
        assert_eq!(
            timed.binary,
            words("-test.short -test.timeout 5m -size 64 -test.cpu 1,2")
        );
        assert_eq!(
            split(&words("-benchtime=2s -args -tags x"), true),
            Split {
                build: vec![],
                binary: words("-tags x"),
            }
        );
    }
}
