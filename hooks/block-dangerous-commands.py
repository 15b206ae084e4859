#!/usr/bin/env python3
# block-dangerous-commands: refuse destructive shell commands before the Bash tool runs them.
#
# Event:    PreToolUse (also works on PermissionRequest)
# Matcher:  Bash
# Wire:     {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/hooks/block-dangerous-commands.py"}
#
# The command is parsed like bash would (quotes, $'…', escapes, comments), split into simple
# commands on `&&`, `||`, `;`, `|`, `&`, newlines, `( … )` and `{ … }`, and the bodies of
# `$( … )`, backticks, `<( … )`, `sh -c "…"` / `bash -c "…"`, `eval …`, `env -S "…"` and
# `find -exec … ;` are checked recursively. Leading `NAME=value` assignments and the wrappers sudo,
# doas, env, timeout, nice, nohup, ionice, stdbuf, xargs, time, command, builtin, exec are skipped,
# so the rules see the program that really runs. Only command words are matched:
# `echo "rm -rf /"` is allowed, `rm  -rf x` and `sudo rm -fr ~` are not.
#
# Rules (each denial names the rule that matched):
#   rm with -r / -R / --recursive in any form (-rf, -fr, -Rv, …)   recursive delete
#   mkfs, mkfs.*, mke2fs, mkswap, wipefs                           filesystem formatting
#   format                                                         disk format
#   dd with an if= operand                                         raw disk copy
#   shutdown, reboot, halt, poweroff; init 0/6; systemctl poweroff|reboot|halt|kexec
#   chmod/chown/chgrp -R on / (or /*)                              recursive permission change of /
#   output redirection to a disk device (> /dev/sda, /dev/nvme0n1, …)
#   fork bombs: a function that pipes into itself (`:(){ :|:& };:`)
# Deliberately allowed: rmdir (refuses non-empty directories), `git rm -r` (only tracked files,
# recoverable from git), `grep -r`, `cp -r` and anything that merely mentions a rule in an argument.
# A command that cannot be parsed (unbalanced quotes, unterminated `$(`) is denied: fail closed.
# Not seen (a guard rail, not a sandbox): command names known only at run time (`$RM -rf /`,
# `$(echo rm) -rf /`) and what scripts run by the command do (`sh cleanup.sh`, `curl … | sh`).
#
# Config (environment):
#   BLOCK_DANGEROUS_EXTRA  extra denied command prefixes, separated by commas or newlines; each is
#                          a sequence of words matched against the start of every parsed simple
#                          command, e.g. "git push --force, terraform destroy, kubectl delete".
#
# Output: on a match, stdout {"hookSpecificOutput": {"hookEventName": "PreToolUse",
#   "permissionDecision": "deny", "permissionDecisionReason": "Blocked dangerous command: …"}};
#   otherwise nothing (the permission decision is left to the other hooks and the rules).
# Exit codes: always 0 (the decision travels in the JSON, which is honoured on any exit code).

import json
import os
import re
import sys

ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# Reserved words that may start a simple command without being the program run.
RESERVED = {"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until",
            "time", "command", "builtin", "exec", "nohup"}
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"}
DISK_DEVICE = re.compile(r"^/dev/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|md\d|dm-\d|mapper/|loop\d)")


class ParseError(Exception):
    """The command is not valid shell syntax (for our purposes)."""


class SimpleCommand:
    """Words of one simple command, its redirections and how it joins the previous one."""

    def __init__(self, joined_by):
        self.words = []
        self.redirects = []  # (operator, target word)
        self.joined_by = joined_by


class Lexer:
    """A small POSIX-shell lexer: enough structure to find every command that would run."""

    def __init__(self, text):
        self.s = text
        self.i = 0
        self.commands = []  # SimpleCommand, in order
        self.nested = []  # bodies of $( ), backticks: parsed recursively by the caller
        self.functions = set()
        self.heredocs = []  # pending (delimiter, strip_tabs, expand)

    def peek(self, k=0):
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def parse(self, until=None):
        """Parse until end of input or an unmatched `until` char (`)` for `$(`); returns index."""
        depth = 0
        cur = SimpleCommand(None)
        word = None  # None = no word started; str = word being built
        pending_redirect = None

        def finish_word():
            nonlocal word, pending_redirect
            if word is None:
                return
            if pending_redirect is not None:
                cur.redirects.append((pending_redirect, word))
                if pending_redirect in ("<<", "<<-"):
                    self.heredocs.append((word, pending_redirect == "<<-", self._delim_unquoted))
                pending_redirect = None
            else:
                cur.words.append(word)
            word = None

        def finish_command(joiner):
            nonlocal cur
            finish_word()
            if cur.words or cur.redirects:
                self.commands.append(cur)
            cur = SimpleCommand(joiner)

        self._delim_unquoted = True
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in " \t":
                finish_word()
                self.i += 1
            elif c == "\n":
                finish_command("\n")
                self.i += 1
                self.read_heredoc_bodies()
            elif c == "#" and word is None:
                while self.i < len(self.s) and self.s[self.i] != "\n":
                    self.i += 1
            elif c == "\\":
                nxt = self.peek(1)
                if nxt == "\n":
                    self.i += 2
                    continue
                word = (word or "") + nxt
                self._delim_unquoted = False
                self.i += 2
            elif c == "'":
                end = self.s.find("'", self.i + 1)
                if end < 0:
                    raise ParseError("unbalanced single quote")
                word = (word or "") + self.s[self.i + 1:end]
                self._delim_unquoted = False
                self.i = end + 1
            elif c == '"':
                word = (word or "") + self.double_quoted()
                self._delim_unquoted = False
            elif c == "`":
                word = (word or "") + self.backtick()
            elif c == "$" and self.peek(1) == "(":
                self.i += 2
                self.substitution()
                word = (word or "") + "$(…)"
            elif c == "$" and self.peek(1) == "{":
                word = (word or "") + self.braced_parameter()
            elif c == "$" and self.peek(1) == "'":
                word = (word or "") + self.ansi_c_quoted()
                self._delim_unquoted = False
            elif c in ";&|":
                two = self.s[self.i:self.i + 2]
                if two in ("&&", "||", ";;", "|&"):
                    op = two
                elif c == "&" and self.peek(1) == ">":
                    finish_word()
                    self.i += 3 if self.peek(2) == ">" else 2
                    pending_redirect = ">"
                    continue
                else:
                    op = c
                finish_command(op)
                self.i += len(op)
            elif c == "(":
                finish_word()
                if (len(cur.words) == 1 and not cur.redirects
                        and self.s[self.i + 1:].lstrip(" \t").startswith(")")):
                    # `name() { …; }`: a function definition, not a call.
                    self.functions.add(cur.words[0])
                    cur.words = []
                    self.i = self.s.index(")", self.i) + 1
                    continue
                finish_word()
                finish_command("(")
                depth += 1
                self.i += 1
            elif c == ")":
                if depth == 0 and until == ")":
                    finish_command(")")
                    return self.i + 1
                finish_command(")")
                depth = max(0, depth - 1)
                self.i += 1
            elif c in "<>":
                if word is not None and word.isdigit():
                    word = None  # file-descriptor number of `2>`
                finish_word()
                j = self.i + 1
                while j < len(self.s) and self.s[j] in "<>&|-":
                    j += 1
                if j == self.i + 1 and self.peek(1) == "(":
                    # bash process substitution <( … ) / >( … ): its body runs.
                    self.i += 2
                    self.substitution()
                    word = (word or "") + c + "(…)"
                    continue
                pending_redirect = self.s[self.i:j]
                self._delim_unquoted = True
                self.i = j
            else:
                word = (word or "") + c
                self.i += 1
        if until == ")":
            raise ParseError("unterminated $( … )")
        finish_command(None)
        return self.i

    def double_quoted(self):
        """Consume a "…" string starting at self.i; returns its literal value."""
        self.i += 1
        out = []
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == '"':
                self.i += 1
                return "".join(out)
            if c == "\\" and self.peek(1) in '$`"\\\n':
                out.append(self.peek(1))
                self.i += 2
            elif c == "`":
                out.append(self.backtick())
            elif c == "$" and self.peek(1) == "(":
                self.i += 2
                self.substitution()
                out.append("$(…)")
            elif c == "$" and self.peek(1) == "{":
                out.append(self.braced_parameter())
            else:
                out.append(c)
                self.i += 1
        raise ParseError("unbalanced double quote")

    def ansi_c_quoted(self):
        """Consume bash's $'…' starting at self.i; returns its value with escapes decoded."""
        j = self.i + 2
        raw = []
        while j < len(self.s):
            c = self.s[j]
            if c == "\\" and j + 1 < len(self.s):
                raw.append(self.s[j:j + 2])
                j += 2
                continue
            if c == "'":
                self.i = j + 1
                text = "".join(raw)
                try:
                    return text.encode("latin-1", "backslashreplace").decode("unicode_escape")
                except UnicodeDecodeError:
                    return text
            raw.append(c)
            j += 1
        raise ParseError("unbalanced $' quote")

    def backtick(self):
        """Consume `…` starting at self.i; queue its body for checking."""
        j = self.i + 1
        body = []
        while j < len(self.s):
            c = self.s[j]
            if c == "\\" and j + 1 < len(self.s) and self.s[j + 1] in "`\\$":
                body.append(self.s[j + 1])
                j += 2
                continue
            if c == "`":
                self.nested.append("".join(body))
                self.i = j + 1
                return "`…`"
            body.append(c)
            j += 1
        raise ParseError("unbalanced backtick")

    def substitution(self):
        """Parse the body of `$(` (self.i is just past it) with a sub-lexer sharing our state."""
        sub = Lexer(self.s)
        sub.i = self.i
        self.i = sub.parse(until=")")
        self.commands.extend(sub.commands)
        self.nested.extend(sub.nested)
        self.functions |= sub.functions

    def braced_parameter(self):
        """Consume ${…} (nesting-aware, quotes inside honoured loosely)."""
        depth = 0
        j = self.i
        while j < len(self.s):
            c = self.s[j]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    text = self.s[self.i:j + 1]
                    self.i = j + 1
                    return text
            elif c == "\\":
                j += 1
            j += 1
        raise ParseError("unterminated ${ … }")

    def read_heredoc_bodies(self):
        """After a newline, skip the bodies of pending here-documents (checking $( ) in them)."""
        while self.heredocs:
            delim, strip_tabs, expand = self.heredocs.pop(0)
            lines = []
            while self.i < len(self.s):
                end = self.s.find("\n", self.i)
                if end < 0:
                    end = len(self.s)
                line = self.s[self.i:end]
                self.i = end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delim:
                    break
                lines.append(line)
            if expand:
                # An unquoted delimiter expands $( ) and backticks in the body: they run.
                body = "\n".join(lines).replace('"', "'")
                probe = Lexer('"' + body + '"')
                try:
                    probe.double_quoted()
                except ParseError:
                    pass
                self.commands.extend(probe.commands)
                self.nested.extend(probe.nested)


def parse(text):
    """Return (commands, function names) for `text` and, recursively, every nested body."""
    lexer = Lexer(text)
    lexer.parse()
    commands = list(lexer.commands)
    functions = set(lexer.functions)
    for body in lexer.nested:
        sub_commands, sub_functions = parse(body)
        commands.extend(sub_commands)
        functions |= sub_functions
    return commands, functions


def skip_options(words, with_arg, long_with_arg=()):
    """Drop leading options of a wrapper; `with_arg` short flags take the next word."""
    i = 0
    while i < len(words):
        w = words[i]
        if w == "--":
            return words[i + 1:]
        if not w.startswith("-") or w == "-":
            break
        if w.startswith("--"):
            if "=" not in w and w[2:] in long_with_arg:
                i += 1
        elif w[-1] in with_arg:
            i += 1
        i += 1
    return words[i:]


def unwrap(words):
    """Strip assignments, reserved words and wrapper programs; return the words really run,
    plus any extra command strings (sh -c bodies, eval text) to check recursively."""
    extra = []
    while words:
        w = words[0]
        name = os.path.basename(w)
        if ASSIGNMENT.match(w) or w in RESERVED:
            words = words[1:]
        elif name in ("sudo", "doas"):
            words = skip_options(words[1:], "ugCDhprtUT", ("user", "group", "chdir", "prompt"))
        elif name == "env":
            rest = words[1:]
            while rest and rest[0].startswith("-") and rest[0] != "--":
                flag = rest[0]
                if flag in ("-S", "--split-string") and len(rest) > 1:
                    extra.append(rest[1])
                    rest = rest[2:]
                    continue
                if flag.startswith("-S") and len(flag) > 2:
                    extra.append(flag[2:])
                elif flag in ("-u", "-C", "--unset", "--chdir"):
                    rest = rest[1:]
                rest = rest[1:]
            if rest and rest[0] == "--":
                rest = rest[1:]
            words = rest
        elif name == "timeout":
            rest = skip_options(words[1:], "sk", ("signal", "kill-after"))
            words = rest[1:]  # the duration
        elif name == "nice":
            rest = words[1:]
            if rest and rest[0] == "-n":
                rest = rest[2:]
            elif rest and (rest[0].startswith("-") and rest[0] != "--"):
                rest = rest[1:]
            words = skip_options(rest, "", ())
        elif name == "ionice":
            words = skip_options(words[1:], "cnp", ("class", "classdata"))
        elif name == "stdbuf":
            words = skip_options(words[1:], "ioe", ("input", "output", "error"))
        elif name == "xargs":
            words = skip_options(words[1:], "IiLlnPsdEa",
                                 ("max-args", "max-procs", "max-chars", "delimiter", "arg-file",
                                  "replace", "max-lines", "eof"))
        elif name == "eval":
            extra.append(" ".join(words[1:]))
            return [], extra
        elif name in SHELLS:
            rest = words[1:]
            if name == "busybox" and rest and rest[0] in SHELLS:
                rest = rest[1:]
            while rest and rest[0].startswith("-") and rest[0] not in ("-", "--"):
                flag = rest[0]
                rest = rest[1:]
                if "c" in flag[1:] and not flag.startswith("--"):
                    if rest:
                        extra.append(rest[0])
                    return [], extra
            if name == "busybox" and words[1:] and words[1] not in SHELLS:
                words = words[1:]
                continue
            return words, extra
        else:
            break
    return words, extra


def short_flags(args):
    """Set of single-letter flags and set of long flags among args (before `--`)."""
    short, long_ = set(), set()
    for a in args:
        if a == "--":
            break
        if a.startswith("--"):
            long_.add(a[2:].split("=", 1)[0])
        elif a.startswith("-") and len(a) > 1:
            short.update(a[1:])
    return short, long_


def check_words(words):
    """Return the name of the rule `words` (one unwrapped simple command) breaks, or None."""
    if not words:
        return None
    name = os.path.basename(words[0])
    args = words[1:]
    short, long_ = short_flags(args)
    if name == "rm" and ("r" in short or "R" in short or "recursive" in long_):
        if "f" in short or "force" in long_:
            return "rm -rf (recursive delete)"
        return "rm -r (recursive delete)"
    if name in ("mkfs", "mke2fs", "mkswap", "wipefs") or name.startswith("mkfs."):
        return f"{name} (format a filesystem)"
    if name == "format":
        return "format (format a disk)"
    if name == "dd" and any(a.startswith("if=") for a in args):
        return "dd if= (raw disk copy)"
    if name == "dd" and any(a.startswith("of=") and DISK_DEVICE.match(a[3:]) for a in args):
        return "dd of=/dev/… (overwrite a disk device)"
    if name in ("shutdown", "reboot", "halt", "poweroff"):
        return f"{name} (power off or restart the machine)"
    if name in ("init", "telinit") and args[:1] in (["0"], ["6"]):
        return f"{name} {args[0]} (power off or restart the machine)"
    if name == "systemctl" and any(a in ("poweroff", "reboot", "halt", "kexec") for a in args):
        return "systemctl poweroff/reboot/halt (power off or restart the machine)"
    if name in ("chmod", "chown", "chgrp") and ("R" in short or "recursive" in long_):
        if any(a in ("/", "/*") for a in args):
            return f"{name} -R / (recursive permission change of the root filesystem)"
    return None


def extra_rules():
    raw = os.environ.get("BLOCK_DANGEROUS_EXTRA", "")
    return [entry.split() for entry in re.split(r"[,\n]", raw) if entry.strip()]


def find_violation(command, depth=0):
    """Return (rule, offending words) for the first rule broken anywhere in `command`, or None."""
    if depth > 8:
        return ("nesting deeper than 8 levels (cannot check)", [])
    commands, functions = parse(command)
    extras = extra_rules()
    previous = None
    for cmd in commands:
        for op, target in cmd.redirects:
            if ">" in op and DISK_DEVICE.match(target):
                return (f"> {target} (overwrite a disk device)", cmd.words + [op, target])
        words, nested = unwrap(cmd.words)
        for body in nested:
            hit = find_violation(body, depth + 1)
            if hit:
                return hit
        while words and os.path.basename(words[0]) == "find":
            # find … -exec CMD … ; — check CMD as a command of its own.
            starts = [i for i, w in enumerate(words) if w in ("-exec", "-execdir", "-ok", "-okdir")]
            if not starts:
                break
            inner = words[starts[0] + 1:]
            for end, w in enumerate(inner):
                if w in (";", "+"):
                    inner = inner[:end]
                    break
            words, nested = unwrap(inner)
            for body in nested:
                hit = find_violation(body, depth + 1)
                if hit:
                    return hit
        rule = check_words(words)
        if rule:
            return (rule, words)
        for prefix in extras:
            if words[:len(prefix)] == prefix:
                return (f"{' '.join(prefix)} (BLOCK_DANGEROUS_EXTRA)", words)
        if (cmd.joined_by in ("|", "|&") and previous and words and words[0] in functions
                and previous[:1] == words[:1]):
            return ("fork bomb (a function piping into itself)", previous + ["|"] + words)
        previous = words
    return None


def emit(event, reason):
    if event == "PermissionRequest":
        out = {"hookSpecificOutput": {"hookEventName": event,
                                      "decision": {"behavior": "deny", "message": reason}}}
    else:
        out = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                      "permissionDecision": "deny",
                                      "permissionDecisionReason": reason}}
    sys.stdout.write(json.dumps(out) + "\n")


def main():
    try:
        data = json.loads(sys.stdin.read())
    except ValueError as err:
        emit("PreToolUse", f"Blocked: block-dangerous-commands could not parse its input ({err})")
        return 0
    event = data.get("hook_event_name", "PreToolUse")
    command = (data.get("tool_input") or {}).get("command")
    if not isinstance(command, str):
        return 0
    try:
        hit = find_violation(command)
    except ParseError as err:
        emit(event, f"Blocked: the command could not be parsed ({err}); refusing to run what "
                    "cannot be checked")
        return 0
    if hit:
        rule, words = hit
        shown = " ".join(words)
        if len(shown) > 200:
            shown = shown[:200] + "…"
        emit(event, f"Blocked dangerous command: {rule}. Matched: `{shown}`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
