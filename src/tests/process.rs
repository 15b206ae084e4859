//! The event-agnostic process runner (`crate::process`) on real processes: merged output and its
//! counts, the caller's kill grace, a watch moving the deadline, what happens to descendants
//! that hold the pipes, and failures as data. Hook- and Bash-specific behaviour is pinned in
//! the sibling modules `hook_runner` and `tools::bash`.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::process::{
    self, AfterLinger, Ending, Job, Limits, Output, Program, Stdin, StdoutWatch, kill_group,
};

fn sh<'a>(dir: &'a Path, script: &'a str) -> Program<'a> {
    Program::new("/bin/sh", dir).arg("-c").arg(script)
}

fn limits(timeout: Duration) -> Limits {
    Limits {
        timeout,
        kill_grace: Duration::from_millis(100),
        linger: Duration::from_millis(100),
        after_linger: AfterLinger::KillGroup,
    }
}

fn separate() -> Output<'static> {
    Output::Separate {
        stdout_cap: 1024,
        stderr_cap: 1024,
    }
}

async fn run(job: Job<'_>) -> process::Run {
    process::run(job, std::future::pending(), None).await
}

/// Whether `pid` no longer runs (absent, or a zombie).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

async fn wait_gone(pid: u32, within: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < within && !gone(pid) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    gone(pid)
}

#[tokio::test]
async fn merged_output_interleaves_and_counts_what_it_drops() {
    let dir = tempfile::tempdir().expect("tempdir");
    let program = sh(
        dir.path(),
        "echo a; echo b >&2; echo c; for i in 1 2 3 4 5; do echo 123456789; done; exit 3",
    );
    let got = run(Job {
        program: program.clone(),
        stdin: Stdin::Null,
        output: Output::Merged { cap: 6 },
        limits: limits(Duration::from_secs(20)),
    })
    .await;
    assert_eq!(got.ending, Ending::Exited(3));
    assert_eq!(got.stdout.bytes, b"a\nb\nc\n");
    assert_eq!(got.stdout.total, 6 + 5 * 10);
    assert_eq!(got.stdout.dropped_newlines, 5);
    assert!(got.stdout.capped());
    assert_eq!(got.stderr, process::Captured::default());
}

#[tokio::test]
async fn a_tee_gets_the_stream_up_to_its_limit_while_memory_keeps_the_cap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let program = sh(
        dir.path(),
        "for i in $(seq 1 100); do echo 123456789; done >&2",
    );
    let path = dir.path().join("whole.txt");
    let tee = process::Tee {
        file: std::fs::File::create(&path).expect("create"),
        limit: 250,
    };
    let got = run(Job {
        program,
        stdin: Stdin::Null,
        output: Output::MergedTee { cap: 20, tee: &tee },
        limits: limits(Duration::from_secs(20)),
    })
    .await;
    assert_eq!(got.ending, Ending::Exited(0));
    assert_eq!(got.stdout.bytes, b"123456789\n123456789\n");
    assert_eq!(got.stdout.total, 1000);
    assert_eq!(got.stdout.teed, 250);
    assert_eq!(got.stdout.tee_error, None);
    let on_disk = std::fs::read(&path).expect("read");
    assert_eq!(on_disk.len(), 250);
    assert!(on_disk.starts_with(b"123456789\n"));
}

#[tokio::test]
async fn stdin_bytes_are_read_and_null_is_eof() {
    let dir = tempfile::tempdir().expect("tempdir");
    let program = sh(dir.path(), "cat; echo done >&2");
    let fed = run(Job {
        program: program.clone(),
        stdin: Stdin::Bytes(b"payload"),
        output: separate(),
        limits: limits(Duration::from_secs(20)),
    })
    .await;
    assert_eq!(
        (fed.stdout.bytes.as_slice(), fed.stderr.bytes.as_slice()),
        (&b"payload"[..], &b"done\n"[..])
    );
    let null = run(Job {
        program: program.clone(),
        stdin: Stdin::Null,
        output: separate(),
        limits: limits(Duration::from_secs(20)),
    })
    .await;
    assert_eq!(null.stdout.bytes, b"");
    assert_eq!(null.stdin_error, None);
}

/// Moves the deadline to `after` from the moment `ready` appears on stdout.
struct DeadlineOnReady {
    after: Duration,
    pid: Option<u32>,
}

impl StdoutWatch for DeadlineOnReady {
    fn spawned(&mut self, pid: Option<u32>) {
        self.pid = pid;
    }

    fn chunk(&mut self, kept: &[u8], _chunk: &[u8]) -> Option<Duration> {
        kept.ends_with(b"ready\n").then_some(self.after)
    }
}

/// A group that ignores SIGTERM, stopped through a watch-moved deadline with `grace`.
async fn stop_term_ignoring_group(grace: Duration) -> (process::Run, Duration, Option<u32>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let program = sh(dir.path(), "trap '' TERM; echo ready; sleep 30");
    let mut watch = DeadlineOnReady {
        after: Duration::from_millis(50),
        pid: None,
    };
    let mut limits = limits(Duration::from_secs(30));
    limits.kill_grace = grace;
    let started = Instant::now();
    let got = process::run(
        Job {
            program: program.clone(),
            stdin: Stdin::Null,
            output: separate(),
            limits,
        },
        std::future::pending(),
        Some(&mut watch),
    )
    .await;
    (got, started.elapsed(), watch.pid)
}

#[tokio::test]
async fn the_kill_grace_is_the_callers_and_the_watch_moves_the_deadline() {
    let (short, short_took, pid) = stop_term_ignoring_group(Duration::from_millis(50)).await;
    assert_eq!(short.ending, Ending::TimedOut);
    assert_eq!(short.stdout.bytes, b"ready\n");
    assert_eq!(pid, short.pid);
    // Far below the 30 s timeout: the watch moved the deadline.
    assert!(short_took < Duration::from_secs(10), "{short_took:?}");

    let grace = Duration::from_millis(1500);
    let (long, long_took, _) = stop_term_ignoring_group(grace).await;
    assert_eq!(long.ending, Ending::TimedOut);
    // SIGTERM was ignored, so only the SIGKILL after the whole grace ended it.
    assert!(long_took >= grace, "{long_took:?}");
    assert!(!long.lingering);
}

#[tokio::test]
async fn cancel_ends_the_run_as_cancelled_and_kills_the_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let program = sh(dir.path(), "sleep 30 & echo $!; wait");
    let got = process::run(
        Job {
            program: program.clone(),
            stdin: Stdin::Null,
            output: separate(),
            limits: limits(Duration::from_secs(20)),
        },
        tokio::time::sleep(Duration::from_secs(1)),
        None,
    )
    .await;
    assert_eq!(got.ending, Ending::Cancelled);
    let grandchild: u32 = String::from_utf8_lossy(&got.stdout.bytes)
        .trim()
        .parse()
        .expect("pid");
    assert!(wait_gone(grandchild, Duration::from_secs(5)).await);
}

/// `sleep 30 &` keeps stdout open after the shell exits; returns the run and the sleep's pid.
async fn exit_leaving_a_pipe_holder(after_linger: AfterLinger) -> (process::Run, u32) {
    let dir = tempfile::tempdir().expect("tempdir");
    let program = sh(dir.path(), "sleep 30 & echo $!");
    let mut limits = limits(Duration::from_secs(20));
    limits.after_linger = after_linger;
    let got = run(Job {
        program: program.clone(),
        stdin: Stdin::Null,
        output: Output::Merged { cap: 1024 },
        limits,
    })
    .await;
    let pid = String::from_utf8_lossy(&got.stdout.bytes)
        .trim()
        .parse()
        .expect("pid");
    (got, pid)
}

#[tokio::test]
async fn a_pipe_holder_after_exit_is_killed_or_left_as_the_caller_chose() {
    let (killed, holder) = exit_leaving_a_pipe_holder(AfterLinger::KillGroup).await;
    assert_eq!(killed.ending, Ending::Exited(0));
    assert!(killed.lingering);
    assert!(wait_gone(holder, Duration::from_secs(5)).await);

    let (left, holder) = exit_leaving_a_pipe_holder(AfterLinger::Leave).await;
    assert_eq!(left.ending, Ending::Exited(0));
    assert!(left.lingering);
    // Give a wrongly sent SIGKILL time to land before looking.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!gone(holder), "the background descendant was killed");
    let pgid = left.pid.expect("pid");
    assert!(process::signal_group(pgid, libc::SIGKILL));
    assert!(wait_gone(holder, Duration::from_secs(5)).await);
}

#[tokio::test]
async fn spawn_failures_are_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = Program::new("/nonexistent/program", dir.path());
    let got = run(Job {
        program: missing,
        stdin: Stdin::Bytes(b"x"),
        output: separate(),
        limits: limits(Duration::from_secs(20)),
    })
    .await;
    assert!(matches!(got.ending, Ending::SpawnFailed(..)), "{got:?}");
    assert_eq!(got.pid, None);

    let gone_dir = dir.path().join("gone");
    let no_cwd = sh(&gone_dir, "true");
    let got = run(Job {
        program: no_cwd,
        stdin: Stdin::Null,
        output: Output::Merged { cap: 16 },
        limits: limits(Duration::from_secs(20)),
    })
    .await;
    assert!(matches!(got.ending, Ending::SpawnFailed(..)), "{got:?}");
}

#[tokio::test]
async fn a_detached_program_outlives_its_handle_until_kill_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = std::fs::File::create(dir.path().join("log")).expect("log");
    let program = sh(dir.path(), "trap '' TERM; echo up; sleep 30");
    let detached = process::spawn_detached(&program, None, log.try_clone().expect("clone"), log)
        .expect("spawn");
    let pid = detached.pid().expect("pid");
    while std::fs::read_to_string(dir.path().join("log")).unwrap_or_default() != "up\n" {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let grace = Duration::from_millis(300);
    let started = Instant::now();
    kill_group(pid, grace).await;
    assert!(started.elapsed() >= grace);
    assert_eq!(detached.wait().await, Ending::Signaled(libc::SIGKILL));
}
