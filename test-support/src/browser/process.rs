//! The process table, read from `/proc`: the children of a process, and whether one of
//! them still runs (told apart from a later process with the same id by its start time).
//! It only reads: it must never signal or kill a process ([`super::driver`] decides that).

/// A process, told apart from a later one with the same id by its start time.
pub(super) struct Process {
    pub(super) pid: u32,
    started: u64,
}

impl Process {
    pub(super) fn is_running(&self) -> bool {
        matches!(stat(self.pid), Some((state, _, started)) if started == self.started && state != 'Z')
    }
}

/// The running children of process `parent` (none where there is no `/proc`).
pub(super) fn children_of(parent: u32) -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| match stat(pid)? {
            (state, ppid, started) if ppid == parent && state != 'Z' => {
                Some(Process { pid, started })
            }
            _ => None,
        })
        .collect()
}

/// State, parent and start time of process `pid`, from `/proc/<pid>/stat`.
fn stat(pid: u32) -> Option<(char, u32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (command) state ppid ...": the command may hold spaces and parentheses.
    let fields: Vec<&str> = text
        .get(text.rfind(')')? + 1..)?
        .split_whitespace()
        .collect();
    let state = fields.first()?.chars().next()?;
    let ppid = fields.get(1)?.parse().ok()?;
    let started = fields.get(19)?.parse().ok()?;
    Some((state, ppid, started))
}
