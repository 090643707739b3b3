#!/usr/bin/env python3
"""Checks a compose file against ScanTrack's deployment rules (docs/security.md, "Containers").

Prints one line per rule broken and exits 1 when any is; exits 0 and prints "compose policy: ok".
  scripts/compose_policy.py docker/compose.yaml
Rules: NATS runs a config with users (the least-privilege file) and TLS; PostgreSQL requires TLS
and SCRAM (no trust, an hba file of its own, ssl on); no service publishes 4222, 5432 or 8222 on
every interface; every ScanTrack program logs into PostgreSQL with a role of its own over
verify-full TLS (only `migrate`, the schema owner, uses the superuser) and into NATS with TLS and a
password from a file; secrets come from files, not environment values.
"""
import os
import re
import sys

import yaml

SENSITIVE_PORTS = {"4222", "5432", "8222"}


def published(port):
    """(host address or '', container port) of a ports entry in short or long form."""
    if isinstance(port, dict):
        return str(port.get("host_ip", "")), str(port.get("target", ""))
    parts = str(port).split(":")
    if len(parts) == 3:
        return parts[0], parts[2].split("/")[0]
    if len(parts) == 2:
        return "", parts[1].split("/")[0]
    return "", parts[0].split("/")[0]


def command_text(service):
    parts = []
    for key in ("entrypoint", "command"):
        value = service.get(key)
        if isinstance(value, list):
            parts += [str(v) for v in value]
        elif value:
            parts.append(str(value))
    return " ".join(parts)


def env(service):
    value = service.get("environment") or {}
    if isinstance(value, list):
        return dict(item.split("=", 1) if "=" in item else (item, "") for item in value)
    return {k: "" if v is None else str(v) for k, v in value.items()}


def check(path):
    with open(path) as f:
        doc = yaml.safe_load(f)
    base = os.path.dirname(os.path.abspath(path))
    problems = []
    services = doc.get("services", {})
    if "version" in doc:
        problems.append("the obsolete top-level 'version' key is set")
    for name, service in services.items():
        for port in service.get("ports", []) or []:
            host, target = published(port)
            if target in SENSITIVE_PORTS and host in ("", "0.0.0.0", "::", "[::]"):
                problems.append(f"{name}: port {target} is published on every interface")
    superuser = None
    for name, service in services.items():
        image = str(service.get("image", ""))
        text = command_text(service)
        variables = env(service)
        if image.startswith("nats"):
            match = re.search(r"nats-server\b[^&;]*?\s-c\s+(\S+)", text)
            if not match:
                problems.append(f"{name}: nats-server runs without a config file (no users, no TLS)")
            else:
                mounted = {}
                for volume in service.get("volumes", []) or []:
                    source, _, rest = str(volume).partition(":")
                    mounted[rest.split(":")[0]] = os.path.normpath(os.path.join(base, source))
                config = mounted.get(match.group(1))
                text_config = ""
                seen = set()
                while config and config not in seen and os.path.exists(config):
                    seen.add(config)
                    with open(config) as f:
                        body = f.read()
                    text_config += body
                    include = re.search(r'include\s+"([^"]+)"', body)
                    config = os.path.join(os.path.dirname(config), include.group(1)) if include else None
                if "tls {" not in text_config and "tls:" not in text_config:
                    problems.append(f"{name}: the NATS config has no TLS block")
                if "users" not in text_config:
                    problems.append(f"{name}: the NATS config has no users (no authentication)")
                if re.search(r"^\s*no_auth_user", text_config, re.M):
                    problems.append(f"{name}: the NATS config lets clients in without a user")
        if image.startswith("postgres"):
            superuser = variables.get("POSTGRES_USER", "postgres")
            if variables.get("POSTGRES_HOST_AUTH_METHOD", "") == "trust":
                problems.append(f"{name}: POSTGRES_HOST_AUTH_METHOD is trust")
            if "ssl=on" not in text:
                problems.append(f"{name}: PostgreSQL runs without ssl=on")
            if "hba_file=" not in text:
                problems.append(f"{name}: PostgreSQL uses the image's pg_hba.conf (it trusts the network)")
            if "scram-sha-256" not in text and "scram-sha-256" not in variables.get("POSTGRES_INITDB_ARGS", ""):
                problems.append(f"{name}: PostgreSQL does not use SCRAM passwords")
            if not variables.get("POSTGRES_PASSWORD_FILE"):
                problems.append(f"{name}: the superuser's password is not from a secret file")
        for key, value in variables.items():
            if re.search(r"PASSWORD$|TOKEN$", key) and value:
                problems.append(f"{name}: {key} holds a secret in the environment (use a *_FILE variable)")
            if key.startswith("SCANTRACK_NATS") and key in ("SCANTRACK_NATS",) and re.search(r"//[^/@]+@", value):
                problems.append(f"{name}: SCANTRACK_NATS carries credentials in the URL")
    for name, service in services.items():
        image = str(service.get("image", ""))
        if not image.startswith("scantrack/"):
            continue
        variables = env(service)
        dsn = variables.get("SCANTRACK_PG", "")
        if dsn:
            user = re.search(r"user=(\S+)", dsn)
            if not user:
                problems.append(f"{name}: SCANTRACK_PG names no user")
            elif user.group(1) == superuser and name != "migrate":
                problems.append(f"{name}: logs into PostgreSQL as the superuser {superuser}")
            if "sslmode=verify-full" not in dsn:
                problems.append(f"{name}: PostgreSQL without sslmode=verify-full")
            if "password=" in dsn:
                problems.append(f"{name}: a password in SCANTRACK_PG")
            if not variables.get("SCANTRACK_PG_PASSWORD_FILE"):
                problems.append(f"{name}: no SCANTRACK_PG_PASSWORD_FILE")
        nats = variables.get("SCANTRACK_NATS", "")
        if nats and not nats.startswith("tls://"):
            problems.append(f"{name}: NATS without TLS ({nats})")
        if (nats or name.startswith("agent")) and not (
            variables.get("SCANTRACK_NATS_PASSWORD_FILE") or variables.get("SCANTRACK_NATS_CREDS")
        ):
            problems.append(f"{name}: no NATS password file or credentials")
    return problems


def main():
    problems = check(sys.argv[1])
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("compose policy: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
