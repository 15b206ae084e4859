//! The terminal's [`PersonDialog`]: AskUserQuestion's questions asked on `/dev/tty`, one at a
//! time, each with its options numbered and a last entry to type an answer of one's own.
//!
//! rein's rule (Claude Code draws a menu moved with the arrow keys; rein asks for a line, which
//! also works over a plain serial terminal and in `script` captures):
//! - a number picks that option; for a multiSelect question, numbers separated by commas or
//!   spaces pick several (their labels are joined by `, `, as Claude Code joins them);
//! - the last number ("Type your own answer") asks for the text on the next line; a line that
//!   is not a list of option numbers is taken as the typed answer itself;
//! - an empty line, Esc, or end of input cancels: the turn stops as Ctrl+C stops it, and the
//!   model is told the user declined (Claude Code's Esc).

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::sync::Arc;

use tokio::sync::Notify;

use crate::tools::ask_user::{Answer, PersonDialog, PlanReview, Question};

/// Asks on the controlling terminal; a cancel wakes `stop`, which the terminal's loop waits on
/// beside the turn and then drops the turn.
pub struct TerminalDialog {
    stop: Arc<Notify>,
    color: bool,
}

impl TerminalDialog {
    /// A dialog that signals a cancel on `stop`.
    pub fn new(stop: Arc<Notify>, color: bool) -> TerminalDialog {
        TerminalDialog { stop, color }
    }
}

/// What one line answered for `question`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineAnswer {
    Picked(Answer),
    /// The "type your own" entry: the answer is on the next line.
    TypeOwn,
    Cancel,
    /// A number out of range, or several for a single-select question: ask again.
    Again(String),
}

/// Reads `line` (without its newline) as an answer to `question`.
pub fn read_line_answer(question: &Question, line: &str) -> LineAnswer {
    let text = line.trim();
    if text.is_empty() || text.contains('\x1b') {
        return LineAnswer::Cancel;
    }
    let own = question.options.len() + 1;
    let parts: Vec<&str> = text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .collect();
    let numbers: Option<Vec<usize>> = parts.iter().map(|p| p.parse::<usize>().ok()).collect();
    let Some(numbers) = numbers else {
        return LineAnswer::Picked(Answer {
            text: text.to_string(),
            typed: true,
        });
    };
    if numbers.iter().any(|&n| n == 0 || n > own) {
        return LineAnswer::Again(format!("Pick a number from 1 to {own}."));
    }
    if numbers.contains(&own) {
        return if numbers.len() == 1 {
            LineAnswer::TypeOwn
        } else {
            LineAnswer::Again(format!(
                "{own} (your own answer) cannot be combined with options."
            ))
        };
    }
    if numbers.len() > 1 && !question.multi_select {
        return LineAnswer::Again("Pick one option.".to_string());
    }
    let mut picked: Vec<usize> = numbers;
    picked.sort_unstable();
    picked.dedup();
    let labels: Vec<&str> = picked
        .iter()
        .filter_map(|&n| question.options.get(n - 1))
        .map(|o| o.label.as_str())
        .collect();
    LineAnswer::Picked(Answer {
        text: labels.join(", "),
        typed: false,
    })
}

/// The lines that show `question` (`index` of `count`).
pub fn question_text(question: &Question, index: usize, count: usize, color: bool) -> String {
    let paint = |code: &str, text: &str| super::paint(color, code, text);
    let mut out = String::new();
    let step = if count > 1 {
        format!(" ({}/{count})", index + 1)
    } else {
        String::new()
    };
    out.push_str(&format!(
        "{}{step}\n",
        paint("1;36", &format!("[{}]", question.header))
    ));
    out.push_str(&format!("{}\n", paint("1", &question.question)));
    for (i, option) in question.options.iter().enumerate() {
        out.push_str(&format!("  {}. {}", i + 1, option.label));
        if !option.description.is_empty() {
            out.push_str(&format!(
                " {}",
                paint("2", &format!("- {}", option.description))
            ));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "  {}. Type your own answer\n",
        question.options.len() + 1
    ));
    let how = if question.multi_select {
        "numbers, e.g. 1,3"
    } else {
        "a number"
    };
    out.push_str(&format!(
        "{} ",
        paint(
            "2",
            &format!("Answer with {how}, or type it; Enter alone cancels >")
        )
    ));
    out
}

impl PersonDialog for TerminalDialog {
    fn ask_questions(&self, questions: &[Question]) -> Option<Vec<Answer>> {
        let answers = {
            let _terminal = crate::permissions::prompt::terminal_lock().lock();
            ask_on_tty(questions, self.color)
        };
        if answers.is_none() {
            self.stop.notify_one();
        }
        answers
    }

    fn review_plan(&self, plan: Option<&str>, path: &std::path::Path) -> PlanReview {
        let review = {
            let _terminal = crate::permissions::prompt::terminal_lock().lock();
            review_on_tty(plan, path, self.color).unwrap_or(PlanReview::Stop)
        };
        if review == PlanReview::Stop {
            self.stop.notify_one();
        }
        review
    }
}

/// Reads a plan review from `line`: `1` approve and accept edits, `2` approve and ask for each
/// edit, `3` keep planning (the feedback on the next line); a line of other text is the
/// feedback itself; an empty line (or Esc) is a no.
pub fn read_plan_line(line: &str) -> Option<PlanReview> {
    let text = line.trim();
    if text.is_empty() || text.contains('\x1b') {
        return Some(PlanReview::Stop);
    }
    match text {
        "1" => Some(PlanReview::Approve {
            mode: "acceptEdits".to_string(),
        }),
        "2" => Some(PlanReview::Approve {
            mode: "default".to_string(),
        }),
        "3" => None,
        other => Some(PlanReview::Revise(other.to_string())),
    }
}

fn review_on_tty(plan: Option<&str>, path: &std::path::Path, color: bool) -> Option<PlanReview> {
    let tty = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .ok()?;
    let mut out = tty.try_clone().ok()?;
    let mut lines = BufReader::new(tty);
    let paint = |code: &str, text: &str| super::paint(color, code, text);
    let _ = out.write_all(b"\r\x1b[2K");
    let _ = writeln!(out, "{}", paint("1;36", "[Plan] Ready to leave plan mode?"));
    match plan {
        Some(plan) => {
            let _ = writeln!(out, "{}", paint("2", &format!("{}:", path.display())));
            for line in plan.lines() {
                let _ = writeln!(out, "  | {line}");
            }
        }
        None => {
            let _ = writeln!(
                out,
                "{}",
                paint("2", &format!("(no plan was written to {})", path.display()))
            );
        }
    }
    let _ = write!(
        out,
        "  1. Yes, and accept edits\n  2. Yes, and approve each edit\n  3. No, keep planning: tell rein what to change\n{} ",
        paint(
            "2",
            "Answer 1-3, or type what to change; Enter alone says no >"
        )
    );
    let _ = out.flush();
    let line = read_line(&mut lines)?;
    if let Some(review) = read_plan_line(&line) {
        return Some(review);
    }
    let _ = write!(out, "What should change? > ");
    let _ = out.flush();
    let feedback = read_line(&mut lines)?;
    match read_plan_line(&feedback) {
        Some(PlanReview::Revise(text)) => Some(PlanReview::Revise(text)),
        // "1".."3" typed as feedback are feedback too.
        Some(PlanReview::Approve { .. }) | None => {
            Some(PlanReview::Revise(feedback.trim().to_string()))
        }
        Some(PlanReview::Stop) => Some(PlanReview::Stop),
    }
}

fn ask_on_tty(questions: &[Question], color: bool) -> Option<Vec<Answer>> {
    let tty = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .ok()?;
    let mut out = tty.try_clone().ok()?;
    let mut lines = BufReader::new(tty);
    // A spinner line may be on the screen: the dialog starts on a clean line.
    let _ = out.write_all(b"\r\x1b[2K");
    let mut answers = Vec::with_capacity(questions.len());
    for (i, question) in questions.iter().enumerate() {
        let _ = out.write_all(question_text(question, i, questions.len(), color).as_bytes());
        let _ = out.flush();
        let answer = loop {
            let line = read_line(&mut lines)?;
            match read_line_answer(question, &line) {
                LineAnswer::Picked(answer) => break answer,
                LineAnswer::Cancel => return None,
                LineAnswer::Again(why) => {
                    let _ = write!(out, "{why} > ");
                    let _ = out.flush();
                }
                LineAnswer::TypeOwn => {
                    let _ = write!(out, "Your answer > ");
                    let _ = out.flush();
                    let typed = read_line(&mut lines)?;
                    let typed = typed.trim();
                    if typed.is_empty() || typed.contains('\x1b') {
                        return None;
                    }
                    break Answer {
                        text: typed.to_string(),
                        typed: true,
                    };
                }
            }
        };
        let _ = writeln!(
            out,
            "{}",
            super::paint(color, "32", &format!("  → {}", answer.text))
        );
        answers.push(answer);
    }
    Some(answers)
}

/// One line from the terminal; `None` at end of input or on a read error.
fn read_line(lines: &mut impl BufRead) -> Option<String> {
    let mut line = String::new();
    match lines.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ask_user::Choice;

    fn question(multi: bool) -> Question {
        Question {
            question: "Which sizes?".into(),
            header: "Sizes".into(),
            options: ["Small", "Large", "Huge"]
                .iter()
                .map(|l| Choice {
                    label: l.to_string(),
                    description: String::new(),
                })
                .collect(),
            multi_select: multi,
        }
    }

    fn picked(text: &str, typed: bool) -> LineAnswer {
        LineAnswer::Picked(Answer {
            text: text.into(),
            typed,
        })
    }

    #[test]
    fn a_line_picks_options_types_an_answer_or_cancels() {
        let single = question(false);
        let multi = question(true);
        assert_eq!(read_line_answer(&single, "2"), picked("Large", false));
        assert_eq!(
            read_line_answer(&multi, "3, 1"),
            picked("Small, Huge", false)
        );
        assert_eq!(
            read_line_answer(&multi, "1 3 3"),
            picked("Small, Huge", false)
        );
        assert_eq!(read_line_answer(&single, "4"), LineAnswer::TypeOwn);
        assert_eq!(
            read_line_answer(&single, "something else"),
            picked("something else", true)
        );
        assert_eq!(read_line_answer(&single, ""), LineAnswer::Cancel);
        assert_eq!(read_line_answer(&single, "\x1b"), LineAnswer::Cancel);
        assert!(matches!(
            read_line_answer(&single, "1,2"),
            LineAnswer::Again(_)
        ));
        assert!(matches!(
            read_line_answer(&single, "9"),
            LineAnswer::Again(_)
        ));
        assert!(matches!(
            read_line_answer(&multi, "1,4"),
            LineAnswer::Again(_)
        ));
    }
}
