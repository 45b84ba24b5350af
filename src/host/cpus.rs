//! The CPUs this machine has online, as the kernel lists them: the kernel timer modes measure
//! per-CPU kernel threads and interrupts, whatever latkit's own affinity (`taskset`) allows it.

/// `0`, `0,2`, `1-3`, `0,2-3`: the kernel's CPU-list syntax, sorted and without repeats; the
/// error says what is wrong with it.
pub fn parse_list(list: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for part in list.trim().split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let parse = |s: &str| {
            s.trim()
                .parse::<usize>()
                .map_err(|_| format!("`{part}` is not a CPU number or range"))
        };
        let (a, b) = (parse(a)?, parse(b)?);
        if a > b {
            return Err(format!("range `{part}` is backwards"));
        }
        // A range as long as a typo makes it is no list of CPUs.
        if b >= MAX_CPUS {
            return Err(format!(
                "CPU {b} is beyond any machine ({MAX_CPUS} at most)"
            ));
        }
        cpus.extend(a..=b);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Linux's own ceiling (`CONFIG_NR_CPUS` is at most 8192).
const MAX_CPUS: usize = 8192;

/// The CPUs online now (`/sys/devices/system/cpu/online`); where that cannot be read, the first
/// `available_parallelism` of them.
pub fn online() -> Vec<usize> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|text| parse_list(&text).ok())
        .filter(|cpus| !cpus.is_empty())
        .unwrap_or_else(|| {
            (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()
        })
}

/// `0,2-3` for [0, 2, 3]: a list as the kernel writes it.
pub fn format_list(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(match j > i {
            true => format!("{}-{}", cpus[i], cpus[j]),
            false => cpus[i].to_string(),
        });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_and_write_as_the_kernel_does() {
        assert_eq!(parse_list("0,2-3\n").unwrap(), [0, 2, 3]);
        assert_eq!(parse_list("3,1-2,2").unwrap(), [1, 2, 3]);
        assert!(parse_list("1-0").unwrap_err().contains("backwards"));
        assert!(parse_list("x").is_err());
        assert!(parse_list("0-99999999999").unwrap_err().contains("beyond"));
        assert_eq!(format_list(&[0, 2, 3]), "0,2-3");
        assert_eq!(format_list(&[0, 1, 2, 3]), "0-3");
        assert_eq!(format_list(&[1]), "1");
        assert!(!online().is_empty());
    }
}
