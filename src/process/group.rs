//! Signalling a process group: TERM, a grace, KILL, and the lingering descendants that left the
//! group (found through /proc).

use super::*;

/// Sends `signal` to every process of the group `pgid`. Returns false if no process got it
/// (e.g. the group is already gone).
pub fn signal_group(pgid: u32, signal: i32) -> bool {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return false;
    };
    // Why the guard: killpg(0) / negative ids would signal our own group or every process.
    if pgid <= 1 {
        return false;
    }
    // SAFETY: killpg has no memory-safety preconditions; it only sends a signal.
    unsafe { libc::killpg(pgid, signal) == 0 }
}

/// Kills a whole process group: SIGTERM, `grace`, SIGKILL. Returns at once if the group is
/// already gone. For a process that outlived its run (a background hook at shutdown); [`run`]
/// does this itself on a timeout or a cancel.
pub async fn kill_group(pgid: u32, grace: Duration) {
    terminate_group(pgid, pgid, grace, std::future::pending()).await;
}

/// [`kill_group`] for a group whose leader the caller is reaping: SIGTERM, then SIGKILL as soon
/// as `ended` completes (the leader is gone; members that ignored SIGTERM are not waited for)
/// or `grace` passes, whichever is first.
pub async fn kill_group_until(pgid: u32, grace: Duration, ended: impl Future<Output = ()>) {
    terminate_group(pgid, pgid, grace, ended).await;
}

/// The one TERM → grace → KILL routine, as Claude Code 2.1.328 ends a hook (fixture
/// `tests/fixtures/cc-2.1.328/hook_kill`): SIGTERM to the group and to every descendant of its
/// leader, including ones that left the group or the session (`setsid`); then wait until all
/// of them are gone or `grace` passes — `ended` (the caller reaping the leader) is driven
/// meanwhile but does not cut the wait short while others still run, so their TERM traps get
/// their time; then SIGKILL to whatever is left, unconditionally (members may have ignored
/// SIGTERM). Nothing is waited for when no process got the SIGTERM.
///
/// `root` is the process whose descendants are looked for: the group's leader, or (a warm
/// python call, whose leader has exited) the call's own process.
pub(super) async fn terminate_group(
    pgid: u32,
    root: u32,
    grace: Duration,
    ended: impl Future<Output = ()>,
) {
    let (Ok(leader), Ok(root)) = (libc::pid_t::try_from(pgid), libc::pid_t::try_from(root)) else {
        return;
    };
    // Why before the TERM: once a process exits its children are re-parented, and the tree
    // that names them as descendants is gone.
    // Members of the group get the group's signal; the others (a child that called `setsid` or
    // `setpgid`) one of their own. Nobody gets two.
    let tree: Vec<tree::Member> = tree::descendants(root)
        .into_iter()
        .filter(|m| m.pgrp != leader)
        .collect();
    let mut signalled = signal_group(pgid, libc::SIGTERM);
    for member in &tree {
        signalled |= member.signal(libc::SIGTERM);
    }
    if !signalled {
        return;
    }
    let deadline = tokio::time::Instant::now() + grace;
    tokio::pin!(ended);
    let mut reaped = false;
    loop {
        // Zombies count as gone: a leader nobody reaps yet (see `kill_group`) must not hold
        // the wait open.
        if !tree::group_alive(leader) && tree.iter().all(|m| !m.alive()) {
            break;
        }
        tokio::select! {
            () = &mut ended, if !reaped => reaped = true,
            () = tokio::time::sleep(tree::POLL) => {}
            () = tokio::time::sleep_until(deadline) => break,
        }
    }
    // Processes started during the grace under a survivor are found now.
    let mut last: Vec<tree::Member> = tree::descendants(root);
    for member in &tree {
        if member.alive() {
            last.extend(tree::descendants(member.pid));
        }
    }
    last.retain(|m| m.pgrp != leader);
    signal_group(pgid, libc::SIGKILL);
    for member in tree.iter().chain(&last) {
        member.signal(libc::SIGKILL);
    }
}

/// The process tree under a leader, read from `/proc`. A process is known by its pid and its
/// start time, so a pid reused after the process exited is never signalled.
pub(super) mod tree {
    use std::collections::HashMap;
    use std::time::Duration;

    /// How often a terminated tree is checked for survivors.
    pub const POLL: Duration = Duration::from_millis(20);

    /// One process: its pid and start time (`/proc/<pid>/stat` field 22).
    #[derive(Debug, Clone, Copy)]
    pub struct Member {
        pub pid: libc::pid_t,
        /// Its process group when it was found.
        pub pgrp: libc::pid_t,
        start: u64,
    }

    struct Stat {
        state: char,
        ppid: libc::pid_t,
        pgrp: libc::pid_t,
        start: u64,
    }

    fn stat(pid: libc::pid_t) -> Option<Stat> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name may hold spaces and parentheses: the fields start after the last ')'.
        let rest = &text[text.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        Some(Stat {
            state: fields.first()?.chars().next()?,
            ppid: fields.get(1)?.parse().ok()?,
            pgrp: fields.get(2)?.parse().ok()?,
            start: fields.get(19)?.parse().ok()?,
        })
    }

    fn all() -> Vec<(libc::pid_t, Stat)> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
            .filter_map(|pid| Some((pid, stat(pid)?)))
            .collect()
    }

    /// Every living descendant of `root` (not `root` itself), wherever its group or session.
    pub fn descendants(root: libc::pid_t) -> Vec<Member> {
        let procs = all();
        let mut children: HashMap<libc::pid_t, Vec<(libc::pid_t, libc::pid_t, u64)>> =
            HashMap::new();
        for (pid, st) in &procs {
            if st.state != 'Z' {
                children
                    .entry(st.ppid)
                    .or_default()
                    .push((*pid, st.pgrp, st.start));
            }
        }
        let mut out = Vec::new();
        let mut todo = vec![root];
        while let Some(parent) = todo.pop() {
            for &(pid, pgrp, start) in children.get(&parent).map(Vec::as_slice).unwrap_or(&[]) {
                if pid > 1 && !out.iter().any(|m: &Member| m.pid == pid) {
                    out.push(Member { pid, pgrp, start });
                    todo.push(pid);
                }
            }
        }
        out
    }

    /// Whether a process of group `pgid` is still running (zombies do not count).
    pub fn group_alive(pgid: libc::pid_t) -> bool {
        all()
            .iter()
            .any(|(_, st)| st.pgrp == pgid && st.state != 'Z')
    }

    impl Member {
        /// Whether this very process still runs (same pid and start time, not a zombie).
        pub fn alive(&self) -> bool {
            stat(self.pid).is_some_and(|st| st.start == self.start && st.state != 'Z')
        }

        /// Sends `signal` if this very process still runs; whether it was sent.
        pub fn signal(&self, signal: i32) -> bool {
            // SAFETY: kill has no memory-safety preconditions; pid > 1 (see `descendants`).
            self.alive() && unsafe { libc::kill(self.pid, signal) == 0 }
        }
    }
}
