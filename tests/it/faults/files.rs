//! Files nobody plans for, through Read, Write, Edit and Grep (issue 19): named pipes and
//! devices are refused before they are opened (and a signal still ends the session at once), a
//! ranged read of a 2 GB sparse file and a Grep over 100 MB of matches cost memory by the
//! request, writing over a 200k-line file costs a small multiple of writing it fresh, and a disk
//! that fills up in the middle of a write leaves the user's file byte for byte.
//!
//! Measured figures are printed (`cargo test --test it faults::files -- --nocapture`) and
//! recorded in `docs/reliability.md`.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Env, Run, env, on, run, run_with};

/// Peak RSS allowed for the memory cases: the issue's bound.
const RSS_LIMIT_KIB: i64 = 50 * 1024;

/// Every built-in tool a case calls, approved up front so the permission step (headless: deny)
/// does not mask what the tool does.
const TOOLS: &str = "Bash,Read,Write,Edit,Grep";

fn call(name: &str, input: Value) -> Value {
    json!({"tool_use": [{"name": name, "input": input}]})
}

fn say(text: &str) -> Value {
    json!({"text": text})
}

/// `rein -p go --mock-script <turns>` with [`TOOLS`] allowed.
fn files_cmd(e: &Env, turns: Value) -> Command {
    let script = e.mock(turns);
    let mut c = e.cmd();
    c.args(["-p", "go", "--allowedTools", TOOLS, "--mock-script"])
        .arg(&script);
    c
}

/// The `toolUseResult` of every tool result in the transcript, in order (a string for an error,
/// the structured response for a success).
fn tool_use_results(e: &Env) -> Vec<Value> {
    e.transcript()
        .into_iter()
        .filter(|l| l["type"] == "user")
        .filter_map(|l| l.get("toolUseResult").cloned())
        .collect()
}

/// The model-facing content of every tool result, in order.
fn result_texts(e: &Env) -> Vec<String> {
    super::tool_results(&e.transcript())
        .iter()
        .map(|r| r["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

/// A SessionEnd hook that copies its stdin to `<project>/end.json`.
fn session_end_marker(e: &Env) -> String {
    e.script(
        "end.sh",
        &format!("cat > '{}'", e.path("end.json").display()),
    )
}

fn print_figures(case: &str, run: &Run) {
    println!(
        "{case}: peak RSS {:.1} MiB, {:.2} s",
        run.max_rss_kib as f64 / 1024.0,
        run.elapsed.as_secs_f64()
    );
}

/// A Read, an Edit, a Write and a Grep of a named pipe are refused with Claude Code's texts,
/// and a Grep walks past it, without rein ever opening the pipe (a writer polling it never sees
/// a reader); the session goes on, and a SIGTERM during the next call ends it within 3 s with
/// SessionEnd run.
#[test]
fn a_fifo_is_refused_unopened_by_every_file_tool_and_sigterm_still_ends_the_session_at_once() {
    let e = env();
    let fifo = e.path("pipe");
    mkfifo(&fifo);
    let end = session_end_marker(&e);
    e.hooks(json!({"SessionEnd": on("", &end, 5)}));
    let fifo_text = fifo.display().to_string();
    let c = files_cmd(
        &e,
        json!([
            call("Read", json!({"file_path": fifo_text})),
            call(
                "Edit",
                json!({"file_path": fifo_text, "old_string": "a", "new_string": "b"})
            ),
            call("Write", json!({"file_path": fifo_text, "content": "x"})),
            call("Grep", json!({"pattern": "x", "path": fifo_text})),
            call("Grep", json!({"pattern": "never[-]there"})),
            super::bash("touch started.flag; sleep 30"),
            say("never"),
        ]),
    );
    // A writer blocked in open(2) until the pipe has a reader: it wakes the moment rein opens
    // the pipe, however briefly (a poll would miss an open-then-refuse).
    let opened = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (opened, done, fifo) = (Arc::clone(&opened), Arc::clone(&done), fifo.clone());
        std::thread::spawn(move || {
            let _end = std::fs::OpenOptions::new().write(true).open(&fifo);
            if !done.load(Ordering::SeqCst) {
                opened.store(true, Ordering::SeqCst);
            }
        })
    };
    let flag = e.path("started.flag");
    let sent_at = Arc::new(std::sync::Mutex::new(None::<Instant>));
    let sent = Arc::clone(&sent_at);
    let run = run_with(c, move |pid| {
        let waiting = Instant::now();
        while !flag.exists() {
            assert!(
                waiting.elapsed() < Duration::from_secs(60),
                "the Bash call never started"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        *sent.lock().unwrap() = Some(Instant::now());
        // SAFETY: kill(2) on the pid of the rein child this test spawned.
        unsafe {
            libc::kill(pid as i32, libc::SIGTERM);
        }
    });
    let sent = sent_at.lock().unwrap().expect("SIGTERM sent");
    let after_signal = sent.elapsed();
    println!(
        "FIFO through Read, Edit, Write, Grep, then SIGTERM: exit {after_signal:.2?} after the signal"
    );
    assert_eq!(run.code, Some(143), "stderr: {}", run.stderr);
    assert!(
        after_signal < Duration::from_secs(3),
        "exit took {after_signal:?} after SIGTERM"
    );
    // Let the writer go: the test itself is the reader now.
    done.store(true, Ordering::SeqCst);
    let _reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo);
    writer.join().unwrap();
    assert!(!opened.load(Ordering::SeqCst), "rein opened the FIFO");
    let ended: Value = serde_json::from_str(&e.read("end.json")).expect("SessionEnd ran");
    assert_eq!(ended["hook_event_name"], "SessionEnd");
    let texts = result_texts(&e);
    assert_eq!(
        texts[0],
        format!(
            "Cannot read '{fifo_text}': this path names a device or process file that this tool \
             does not read."
        )
    );
    assert_eq!(
        texts[1],
        format!(
            "<tool_use_error>{fifo_text} exists but is not a regular file (a device, FIFO or \
             socket). Edit only changes regular files.</tool_use_error>"
        )
    );
    assert_eq!(
        texts[2],
        format!(
            "{fifo_text} exists but is not a regular file (a device, FIFO or socket). Write only \
             creates or overwrites regular files."
        )
    );
    assert_eq!(
        texts[3],
        format!(
            "Refusing to search {fifo_text}: it is a pipe or a device, not a file or a folder."
        )
    );
    // A walk past the pipe does not open it either.
    assert_eq!(texts[4], "No files found");
}

/// `/dev/zero` (and a link to it) is refused by Read, Write, Edit and Grep before anything reads it,
/// with Claude Code's texts; it used to fill memory until the limit.
#[test]
fn dev_zero_is_refused_by_read_write_and_edit() {
    let e = env();
    let link = e.path("zero-link");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let link = link.display().to_string();
    let c = files_cmd(
        &e,
        json!([
            call("Read", json!({"file_path": "/dev/zero"})),
            call(
                "Read",
                json!({"file_path": "/dev/zero", "offset": 1, "limit": 3})
            ),
            call("Read", json!({"file_path": link})),
            call("Write", json!({"file_path": "/dev/zero", "content": "x"})),
            call(
                "Edit",
                json!({"file_path": "/dev/zero", "old_string": "", "new_string": "x"})
            ),
            call("Grep", json!({"pattern": "x", "path": "/dev/zero"})),
            say("done"),
        ]),
    );
    let run = run(c);
    print_figures("/dev/zero through Read, Write, Edit, Grep", &run);
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "done\n");
    let device = "this path names a device or process file that this tool does not read.";
    assert_eq!(
        result_texts(&e),
        vec![
            format!("Cannot read '/dev/zero': {device}"),
            format!("Cannot read '/dev/zero': {device}"),
            format!("Cannot read '{link}': {device}"),
            "/dev/zero exists but is not a regular file (a device, FIFO or socket). Write only \
             creates or overwrites regular files."
                .to_string(),
            "<tool_use_error>/dev/zero exists but is not a regular file (a device, FIFO or \
             socket). Edit only changes regular files.</tool_use_error>"
                .to_string(),
            format!("Cannot read '/dev/zero': {device}"),
        ]
    );
    assert!(
        run.max_rss_kib < RSS_LIMIT_KIB,
        "peak {} KiB",
        run.max_rss_kib
    );
}

/// A 2 GB sparse file: 20,000 text lines, then holes. A ranged read keeps only the lines asked
/// for and counts the rest; a read without a limit is refused by size (Claude Code's 256 KB).
#[test]
fn a_ranged_read_of_a_2_gb_sparse_file_stays_under_50_mib() {
    let e = env();
    let path = e.path("sparse.log");
    let mut text = String::new();
    for i in 1..=20_000 {
        text.push_str(&format!("line {i}\n"));
    }
    std::fs::write(&path, &text).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(2 << 30).unwrap();
    drop(f);
    let file = path.display().to_string();
    let c = files_cmd(
        &e,
        json!([
            call(
                "Read",
                json!({"file_path": file, "offset": 10_000, "limit": 5})
            ),
            call("Read", json!({"file_path": file})),
            say("done"),
        ]),
    );
    let run = run(c);
    print_figures("2 GB sparse file, Read offset/limit", &run);
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let results = tool_use_results(&e);
    let window = &results[0]["file"];
    assert_eq!(
        window["content"],
        "line 10000\nline 10001\nline 10002\nline 10003\nline 10004"
    );
    assert_eq!(window["numLines"], 5);
    assert_eq!(window["startLine"], 10_000);
    // 20,000 newlines; the holes after the last one are one more (NUL-filled) line.
    assert_eq!(window["totalLines"], 20_001);
    assert_eq!(
        result_texts(&e)[1],
        "File content (2GB) exceeds maximum allowed size (256KB). Use offset and limit \
         parameters to read specific portions of the file, or search for specific content \
         instead of reading the whole file."
    );
    assert!(
        run.max_rss_kib < RSS_LIMIT_KIB,
        "peak RSS {} KiB (limit {RSS_LIMIT_KIB})",
        run.max_rss_kib
    );
}

/// 100 MB of matching lines in ten files: `content` and `count` with `head_limit` stop once the
/// page is full, `files_with_matches` keeps only the page; with a ranged Read of one 10 MB file
/// in the same run, peak RSS stays under 50 MiB.
#[test]
fn grep_with_head_limit_over_100_mb_of_matches_stays_under_50_mib() {
    let e = env();
    let dir = e.path("logs");
    std::fs::create_dir_all(&dir).unwrap();
    let line = "match: the same needle on every line of this file\n";
    let per_file = 10 * 1024 * 1024 / line.len();
    let chunk = line.repeat(per_file);
    for i in 0..10 {
        std::fs::write(dir.join(format!("f{i}.log")), &chunk).unwrap();
    }
    let logs = dir.display().to_string();
    let c = files_cmd(
        &e,
        json!([
            call(
                "Grep",
                json!({"pattern": "needle", "path": logs, "output_mode": "content", "head_limit": 10})
            ),
            call(
                "Grep",
                json!({"pattern": "needle", "path": logs, "output_mode": "count", "head_limit": 2})
            ),
            call(
                "Grep",
                json!({"pattern": "needle", "path": logs, "head_limit": 3})
            ),
            call(
                "Read",
                json!({"file_path": format!("{logs}/f9.log"), "offset": 200_000, "limit": 2})
            ),
            say("done"),
        ]),
    );
    let run = run(c);
    print_figures("Grep head_limit over 100 MB of matches", &run);
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let results = tool_use_results(&e);
    assert_eq!(results[0]["numLines"], 10);
    assert_eq!(results[0]["appliedLimit"], 10);
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("logs/f0.log:1:match: the same needle")
    );
    assert_eq!(
        results[1]["content"],
        format!("logs/f0.log:{per_file}\nlogs/f1.log:{per_file}")
    );
    assert_eq!(results[1]["appliedLimit"], 2);
    assert_eq!(results[2]["numFiles"], 3);
    assert_eq!(results[2]["appliedLimit"], 3);
    // A ranged Read of a dense 10 MB file counts its lines without keeping them.
    assert_eq!(results[3]["file"]["numLines"], 2);
    assert_eq!(results[3]["file"]["totalLines"], per_file + 1);
    assert!(
        run.max_rss_kib < RSS_LIMIT_KIB,
        "peak RSS {} KiB (limit {RSS_LIMIT_KIB})",
        run.max_rss_kib
    );
}

/// `n` lines `<word> line <i>`.
fn numbered_lines(word: &str, n: usize) -> String {
    (0..n).map(|i| format!("{word} line {i}\n")).collect()
}

/// Runs one Write of `content` to `<project>/big.txt`, over `old` if given; returns the run
/// and the tool's response.
fn write_big(old: Option<&str>, content: &str) -> (Run, Value) {
    let e = env();
    let target = e.path("big.txt");
    if let Some(old) = old {
        std::fs::write(&target, old).unwrap();
    }
    let turns = json!([
        call(
            "Write",
            json!({"file_path": target.display().to_string(), "content": content})
        ),
        say("done"),
    ]);
    let run = run(files_cmd(&e, turns));
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), content);
    let response = tool_use_results(&e).remove(0);
    (run, response)
}

/// Writing a 200k-line file over one where every line differs (the diff's worst case: 62 s
/// before the deadline) against writing the same bytes fresh (no diff) and over a file that
/// differs in one line (a trivial diff, the same response size). The ratios are bounded; the
/// worst case says its patch is coarse.
#[test]
fn writing_over_a_200k_line_file_costs_a_small_multiple_of_writing_it_fresh() {
    const LINES: usize = 200_000;
    let new_text = numbered_lines("new", LINES);
    let bare = {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        std::fs::write(dir.path().join("bare.txt"), &new_text).unwrap();
        started.elapsed()
    };
    let (fresh, created) = write_big(None, &new_text);
    assert_eq!(created["type"], "create");
    let one_line_off = new_text.replacen("new line 100000\n", "old line 100000\n", 1);
    let (trivial, small) = write_big(Some(&one_line_off), &new_text);
    assert_eq!(small["structuredPatch"].as_array().unwrap().len(), 1);
    assert!(small.get("structuredPatchIsCoarse").is_none());
    let (worst, response) = write_big(Some(&numbered_lines("old", LINES)), &new_text);

    let secs = |r: &Run| r.elapsed.as_secs_f64();
    let vs_fresh = secs(&worst) / secs(&fresh);
    let vs_trivial = secs(&worst) / secs(&trivial);
    println!(
        "200k-line Write (debug build): every line changed {:.2} s, one line changed {:.2} s, \
         fresh {:.2} s, the bytes written bare {:.3} s; worst/fresh {vs_fresh:.2}, \
         worst/one-line {vs_trivial:.2}; peak RSS {:.1} / {:.1} / {:.1} MiB",
        secs(&worst),
        secs(&trivial),
        secs(&fresh),
        bare.as_secs_f64(),
        worst.max_rss_kib as f64 / 1024.0,
        trivial.max_rss_kib as f64 / 1024.0,
        fresh.max_rss_kib as f64 / 1024.0,
    );
    assert_eq!(response["type"], "update");
    assert_eq!(response["structuredPatchIsCoarse"], true);
    let lines = response["structuredPatch"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|h| h["lines"].as_array().unwrap())
        .map(|l| l.as_str().unwrap())
        .collect::<Vec<_>>();
    assert_eq!(lines.iter().filter(|l| l.starts_with('-')).count(), LINES);
    assert_eq!(lines.iter().filter(|l| l.starts_with('+')).count(), LINES);
    // Generous for a loaded 2-core machine; before the deadline the worst case took ~60× fresh.
    // Against fresh the response itself is four times the bytes (old text, new text, and both
    // again in the patch), so part of that ratio is the shape Claude Code sends, not the diff.
    // Why 15× and 20×: the suite runs this beside the other tests on two cores, which swings
    // single runs by 2×–3× (5.06× seen at load 12); the unbounded diff was ~60×.
    assert!(
        vs_trivial < 15.0,
        "worst case took {vs_trivial:.2}× a one-line change"
    );
    assert!(
        vs_fresh < 20.0,
        "worst case took {vs_fresh:.2}× writing fresh"
    );
}

/// A tmpfs mounted for one test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `size` at `dir`; `None` (after saying why) when that is not possible.
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            println!("skipped: not root, cannot mount a tmpfs");
            return None;
        }
        std::fs::create_dir_all(dir).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status();
        match status {
            Ok(s) if s.success() => Some(Tmpfs(dir.to_path_buf())),
            other => {
                println!("skipped: mount -t tmpfs failed: {other:?}");
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Fills the file system of `dir` with `dir/filler`, then frees `leave` bytes of it.
fn fill_leaving(dir: &Path, leave: u64) {
    use std::io::Write;
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    let block = vec![b'f'; 4096];
    let mut written = 0u64;
    while f.write_all(&block).is_ok() {
        written += 4096;
    }
    drop(f);
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(written.saturating_sub(leave)).unwrap();
}

/// The disk fills up in the middle of a Write and of an Edit: both fail with "disk full", the
/// original is byte-identical, no temp file is left, and PostToolUseFailure hears the error.
#[test]
fn enospc_in_the_middle_of_a_write_leaves_the_original_byte_identical() {
    let e = env();
    let Some(mount) = Tmpfs::mount(&e.path("small"), "1m") else {
        return;
    };
    let target = mount.0.join("orig.txt");
    let original: String = (0..4000)
        .map(|i| format!("original line {i:05}\n"))
        .collect();
    std::fs::write(&target, &original).unwrap();
    fill_leaving(&mount.0, 128 * 1024);
    let failure_log = e.path("failures.jsonl");
    let hook = e.script(
        "failure.sh",
        &format!(
            "cat >> '{}'; echo >> '{}'",
            failure_log.display(),
            failure_log.display()
        ),
    );
    e.hooks(json!({"PostToolUseFailure": on("Write|Edit", &hook, 5)}));
    let file = target.display().to_string();
    let big = "x".repeat(600 * 1024);
    let c = files_cmd(
        &e,
        json!([
            call("Write", json!({"file_path": file, "content": big})),
            call(
                "Edit",
                json!({"file_path": file, "old_string": "original line 00000", "new_string": big})
            ),
            say("done"),
        ]),
    );
    let run = run(c);
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        original,
        "the original changed"
    );
    let left: Vec<String> = std::fs::read_dir(&mount.0)
        .unwrap()
        .flatten()
        .map(|d| d.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "filler" && n != "orig.txt")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let texts = result_texts(&e);
    assert_eq!(
        texts[0],
        format!(
            "Error writing {file}: disk full (no space left on device); the file was left as it \
             was."
        )
    );
    assert_eq!(
        texts[1],
        format!(
            "Error editing {file}: disk full (no space left on device); the file was left as it \
             was."
        )
    );
    let failures: Vec<Value> = std::fs::read_to_string(&failure_log)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(failures.len(), 2);
    assert_eq!(failures[0]["error"], texts[0].as_str());
    assert_eq!(failures[1]["error"], texts[1].as_str());
    println!("ENOSPC mid-write: original byte-identical, no temp file left");
    drop(mount);
}

/// The saved file named in a `<persisted-output>` notice.
fn persisted_path(text: &str) -> PathBuf {
    let after = text
        .split(" saved to: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no saved file in {text:.300}"));
    PathBuf::from(after.lines().next().unwrap())
}

#[test]
fn bash_output_is_saved_whole_up_to_claude_codes_64_mb_in_bounded_memory() {
    use std::os::unix::fs::PermissionsExt;
    let e = env();
    let mut c = e.cmd();
    c.args(["-p", "go", "--allowedTools", "Bash", "--mock-script"])
        .arg(e.mock(json!([
            {"tool_use": [{"name": "Bash", "input": {"command": "yes 0123456789abcdefghi | head -c 20000000"}}]},
            {"tool_use": [{"name": "Bash", "input": {"command": "yes 0123456789abcdefghi | head -c 100000000"}}]},
            super::say("done")
        ])));
    let run = run(c);
    print_figures("Bash printing 20 MB, then 100 MB", &run);
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let texts = result_texts(&e);
    assert!(
        texts[0]
            .starts_with("<persisted-output>\nOutput too large (19.1MB). Full output saved to: "),
        "{:.300}",
        texts[0]
    );
    let whole = persisted_path(&texts[0]);
    let meta = std::fs::metadata(&whole).unwrap();
    assert_eq!(meta.len(), 20_000_000, "the whole output");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert!(
        texts[1].starts_with(
            "<persisted-output>\nOutput exceeded the 64MB persist limit; only the first 64MB \
             were saved to: "
        ),
        "{:.300}",
        texts[1]
    );
    let start = persisted_path(&texts[1]);
    assert_eq!(std::fs::metadata(&start).unwrap().len(), 64 * 1024 * 1024);
    let head = std::fs::read(&start).unwrap();
    assert!(head.starts_with(b"0123456789abcdefghi\n0123456789abcdefghi\n"));
    // Memory holds 128 KiB of each output, not the output.
    assert!(
        run.max_rss_kib < RSS_LIMIT_KIB,
        "peak {} KiB",
        run.max_rss_kib
    );
}

#[test]
fn multiline_grep_skips_and_names_files_it_would_have_to_hold_whole() {
    let e = env();
    std::fs::create_dir(e.path("logs")).unwrap();
    e.write("logs/small.txt", "begin\nmiddle\nend\n");
    // 100 MB, sparse: text first, then a hole.
    let big = e.path("logs/big.log");
    std::fs::write(&big, "begin\nmiddle\nend\n").unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(100_000_000)
        .unwrap();
    let mut c = e.cmd();
    c.args(["-p", "go", "--mock-script"]).arg(e.mock(json!([
        {"tool_use": [{"name": "Grep", "input": {
            "pattern": "begin.*end", "multiline": true, "path": "logs",
            "output_mode": "files_with_matches"}}]},
        super::say("done")
    ])));
    let run = run(c);
    print_figures("multiline Grep beside a 100 MB file", &run);
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let texts = result_texts(&e);
    assert_eq!(
        texts[0],
        "Found 1 file\nlogs/small.txt\n\nNot searched, over 64MB for a multiline search (it reads \
         a whole file into memory): logs/big.log. Search them without `multiline`, or narrow `path`."
    );
    assert!(
        run.max_rss_kib < RSS_LIMIT_KIB,
        "peak {} KiB",
        run.max_rss_kib
    );
}

/// `saved to: <path>` with the path replaced, so Claude Code's and rein's texts compare.
fn without_saved_path(text: &str) -> String {
    let re = regex::Regex::new(r"saved to: \S+").unwrap();
    re.replace_all(text, "saved to: <PATH>").into_owned()
}

#[test]
fn read_and_bash_limits_answer_as_claude_code_did_on_the_same_session() {
    let e = env();
    let scenario: Value = serde_json::from_str(include_str!(
        "../../fixtures/cc-2.1.328/tool-limits/scenario.json"
    ))
    .unwrap();
    let recorded: Value = serde_json::from_str(include_str!(
        "../../fixtures/cc-2.1.328/tool-limits/tool-results.json"
    ))
    .unwrap();
    for (name, text) in scenario["files"].as_object().unwrap() {
        e.write(name, text.as_str().unwrap());
    }
    let project = super::path_str(&e.project);
    let turns = serde_json::to_string(&scenario["turns"])
        .unwrap()
        .replace("$PROJECT", &project);
    let mut c = e.cmd();
    c.args(["-p", "go", "--allowedTools", "Bash,Read", "--mock-script"])
        .arg(e.mock(serde_json::from_str(&turns).unwrap()));
    let run = run(c);
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let results = super::tool_results(&e.transcript());
    let expected = recorded["tool_results"].as_array().unwrap();
    assert_eq!(results.len(), expected.len());
    for (i, (got, want)) in results.iter().zip(expected).enumerate() {
        let text = got["content"].as_str().unwrap();
        // rein's transcript leaves out `is_error: false`; the request carries it.
        let is_error = got["is_error"].as_bool().unwrap_or(false);
        assert_eq!(json!(is_error), want["is_error"], "result {i}: {text:.300}");
        let want_head = want["head"].as_str().unwrap();
        if i < 2 {
            // Up to the sentence about `allow_large`, a parameter rein's Read does not have.
            let cut = want_head.find(" To read it anyway").unwrap();
            assert_eq!(text, &want_head[..cut], "result {i}");
            continue;
        }
        let (got_text, want_start) = (without_saved_path(text), without_saved_path(want_head));
        assert_eq!(
            &got_text[..want_start.len().min(got_text.len())],
            want_start,
            "result {i}"
        );
        assert!(
            text.ends_with(want["tail"].as_str().unwrap()),
            "result {i} ends {:?}",
            &text[text.len().saturating_sub(120)..]
        );
        let path_len = want_head.len() - without_saved_path(want_head).len();
        assert_eq!(
            without_saved_path(text).len(),
            want["length"].as_u64().unwrap() as usize - path_len,
            "result {i}: the preview's length"
        );
    }
}
