#!/usr/bin/env python3
"""Writes a program's manual page (roff, section 1) from its own command tree.

    scripts/dist/manpage.py BINARY VERSION DATE > NAME.1

BINARY --experimental-dump-help (swift-argument-parser) gives every command, option and text the
program's --help shows; this lays them out as one page: NAME, SYNOPSIS, DESCRIPTION, OPTIONS, then
one COMMANDS subsection a subcommand (nested ones by their full path). Text is escaped for roff
where it is written, so a help text can never become a request.
"""
import json
import subprocess
import sys


def roff(text):
    """Text as roff shows it literally: backslashes and hyphens escaped, no line starting a request."""
    lines = []
    for line in text.replace("\\", "\\e").replace("-", "\\-").split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def paragraphs(text):
    """Help text (paragraphs separated by blank lines) as roff paragraphs."""
    out = []
    for block in text.strip().split("\n\n"):
        block = " ".join(line.strip() for line in block.split("\n") if line.strip())
        if block:
            out += [".PP", roff(block)]
    return out


def name_of(argument):
    names = argument.get("names") or []
    shown = []
    for name in names:
        prefix = {"long": "--", "short": "-", "longWithSingleDash": "-"}.get(name["kind"], "")
        shown.append(prefix + name["name"])
    return shown


def term(argument):
    """The `.TP` term of an argument: its names in bold, its value in italics."""
    value = argument.get("valueName")
    if argument["kind"] == "positional":
        return "\\fI" + roff("<" + (value or "value") + ">") + "\\fR"
    names = ", ".join("\\fB" + roff(n) + "\\fR" for n in name_of(argument))
    if argument["kind"] == "option":
        names += " \\fI" + roff("<" + (value or "value") + ">") + "\\fR"
    return names


def usage(path, command):
    parts = []
    for argument in command.get("arguments") or []:
        if not argument.get("shouldDisplay", True) or argument["kind"] == "flag" and name_of(argument) in (
            ["-h", "--help"], ["--version"]):
            continue
        if argument["kind"] == "positional":
            piece = "<" + (argument.get("valueName") or "value") + ">"
        else:
            preferred = argument.get("preferredName") or argument["names"][0]
            prefix = {"long": "--", "short": "-", "longWithSingleDash": "-"}.get(preferred["kind"], "")
            piece = prefix + preferred["name"]
            if argument["kind"] == "option":
                piece += " <" + (argument.get("valueName") or "value") + ">"
        if argument.get("isRepeating"):
            piece += " ..."
        if argument.get("isOptional"):
            piece = "[" + piece + "]"
        parts.append(piece)
    if any(s.get("shouldDisplay", True) and s["commandName"] != "help" for s in command.get("subcommands") or []):
        parts.append("<subcommand>")
    return [".PP", "\\fB" + roff(path) + "\\fR" + (" " + roff(" ".join(parts)) if parts else "")]


def arguments(command):
    out = []
    for argument in command.get("arguments") or []:
        if not argument.get("shouldDisplay", True):
            continue
        text = argument.get("abstract") or ""
        if argument.get("defaultValue"):
            text += " (default: " + argument["defaultValue"] + ")"
        if argument.get("discussion"):
            text += " " + " ".join(argument["discussion"].split())
        out += [".TP", term(argument), roff(text.strip())]
    return out


def commands(path, command):
    """Every subcommand below `command`, depth first, as a subsection each."""
    out = []
    for sub in command.get("subcommands") or []:
        if not sub.get("shouldDisplay", True) or sub["commandName"] == "help":
            continue
        full = path + " " + sub["commandName"]
        out += [".SS " + roff(full)]
        out += paragraphs(sub.get("abstract") or "")
        out += paragraphs(sub.get("discussion") or "")
        out += usage(full, sub)
        listed = arguments(sub)
        if listed:
            out += [".PP", "Options:", ".RS"] + listed + [".RE"]
        out += commands(full, sub)
    return out


def page(binary, version, date):
    dump = subprocess.run([binary, "--experimental-dump-help"], check=True, capture_output=True, text=True).stdout
    command = json.loads(dump)["command"]
    name = command["commandName"]
    out = [
        '.TH "%s" "1" "%s" "ScanTrack %s" "ScanTrack Manual"' % (name.upper(), date, version),
        ".SH NAME",
        roff(name) + " \\- " + roff(command.get("abstract") or ""),
        ".SH SYNOPSIS",
    ]
    out += usage(name, command) + [".SH DESCRIPTION"]
    out += paragraphs((command.get("abstract") or "") + "\n\n" + (command.get("discussion") or ""))
    out += [".SH OPTIONS"] + arguments(command)
    subcommands = commands(name, command)
    if subcommands:
        out += [".SH COMMANDS"] + subcommands
    others = [p for p in ("scan-agent", "scan-aggregator", "scanadmin") if p != name]
    out += [
        ".SH ENVIRONMENT",
        ".PP",
        roff("SCANTRACK_NATS, SCANTRACK_PG, SCANTRACK_LOG_LEVEL, SCANTRACK_LOG_FORMAT and the others each "
             "option names above; a flag wins over its variable."),
        ".SH FILES",
        ".TP",
        roff("/etc/scantrack/"),
        roff("Configuration: agents/<camera>.json, aggregator.env, dashboard.env."),
        ".TP",
        roff("/var/lib/scantrack/"),
        roff("State: each agent's spool and no-read pictures."),
        ".SH SEE ALSO",
        ".PP",
        ", ".join("\\fB" + roff(p) + "\\fR(1)" for p in others) + ", \\fBsystemctl\\fR(1); "
        + roff("the guides in /usr/share/doc/" + name + "/."),
    ]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: manpage.py BINARY VERSION DATE")
    sys.stdout.write(page(sys.argv[1], sys.argv[2], sys.argv[3]))
