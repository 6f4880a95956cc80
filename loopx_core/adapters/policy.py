"""Which authority scopes a tool call needs: the hooks' policy.

Pure functions over the runtime's tool call, no board access, standard library
only (it runs before every tool call). The built-in rules:

- shell commands (Claude Code ``Bash``; Codex ``Bash`` — its shell tool — with
  ``tool_input.command``): ``git push`` → ``git:push``; deploys
  (``kubectl apply``, ``helm upgrade``, ``terraform apply``, ``pulumi up``,
  ``cdk deploy``, ``gcloud … deploy``, ``fly deploy``, ``vercel --prod`` …) →
  ``deploy:<tool>``; publishing (``npm publish``, ``twine upload``,
  ``poetry publish``, ``cargo publish``, ``gem push``, ``docker push``,
  ``gh release create`` …) → ``publish:<registry>``; a recursive ``rm`` of
  anything outside the project → ``fs:delete-outside``; an output redirection
  into a file outside the project → ``fs:write-outside``;
- file tools (Claude Code ``Write``/``Edit``/``MultiEdit``/``NotebookEdit``,
  whose ``file_path`` is absolute; Codex ``apply_patch``, whose
  ``tool_input.command`` is the patch text with ``*** Add/Update/Delete File:``
  headers) writing outside the project → ``fs:write-outside`` (deleting:
  ``fs:delete-outside``).

Tool payload shapes: Claude Code hooks reference, "PreToolUse input"
(https://code.claude.com/docs/en/hooks); Codex
``codex-rs/hooks/schema/generated/pre-tool-use.command.input.schema.json`` and
``codex-rs/core/src/tools/handlers/apply_patch.rs`` (``pre_tool_use_payload``
sends ``{"command": <patch>}``) in github.com/openai/codex.

The board's own rules live in ``.loopx/policy.json`` next to the board::

    {
      "rules": [
        {"command": "^make release\\\\b", "scope": "publish:release"},
        {"tool": "mcp__github__create_release", "scope": "publish:github"},
        {"tool": "mcp__db__.*", "input": "DROP TABLE", "scope": "db:drop"}
      ],
      "allow": ["^git push origin agent/"],
      "outside_ok": ["/tmp"]
    }

``rules`` add scopes (``command``: a regex searched in each simple shell
command; ``tool``: a regex the tool name must match in full; ``input``: a regex
searched in the tool input's JSON). ``allow`` regexes exempt a simple shell
command from the built-in rules (board rules still apply). ``outside_ok`` lists
folders that count as inside the project for the file rules.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections import namedtuple

from .. import limits

POLICY_FILE = "policy.json"
SHELL_TOOLS = frozenset({"Bash", "shell", "shell_command", "exec_command", "local_shell"})
FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
PATCH_TOOLS = frozenset({"apply_patch"})
MAX_DEPTH = 4
_OPS = ";&|()<>\n"
_HOME = os.path.expanduser("~")
_DEV_OK = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/")


# collections.namedtuple, not typing.NamedTuple: importing typing costs a few
# milliseconds this path does not need.
Need = namedtuple("Need", "scope what")  # what: the part of the call that needs it
Rule = namedtuple("Rule", "scope tool command input")  # compiled regexes or None
Policy = namedtuple("Policy", "rules allow outside_ok problems", defaults=((), (), (), ()))


DEFAULT = Policy()


# -- the board's policy file ---------------------------------------------------

def load(root: str | None) -> Policy:
    """The board's rules from ``<root>/.loopx/policy.json`` (defaults when absent).
    A malformed file never raises: its problems are reported and the built-in
    rules still apply."""
    if not root:
        return DEFAULT
    path = os.path.join(root, ".loopx", POLICY_FILE)
    try:
        with open(path, encoding="utf-8") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return DEFAULT
    except OSError as exc:
        return Policy(problems=(f"cannot read {path}: {exc.strerror}",))
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        return Policy(problems=(f"{path} is not valid JSON ({exc}); only the built-in rules apply",))
    return parse(doc, path)


def parse(doc, where: str = "policy") -> Policy:
    problems: list[str] = []
    if not isinstance(doc, dict):
        return Policy(problems=(f"{where} must be a JSON object",))
    rules: list[Rule] = []
    for i, item in enumerate(doc.get("rules") or []):
        if not isinstance(item, dict) or not isinstance(item.get("scope"), str) or not limits.SCOPE.fullmatch(item["scope"]):
            problems.append(f"{where}: rules[{i}] needs a valid \"scope\" (e.g. deploy:prod); skipped")
            continue
        compiled = {}
        for key in ("tool", "command", "input"):
            value = item.get(key)
            if value is None:
                compiled[key] = None
                continue
            try:
                compiled[key] = re.compile(value) if isinstance(value, str) else None
            except re.error as exc:
                problems.append(f"{where}: rules[{i}].{key} is not a valid regex ({exc}); skipped")
                compiled = None
                break
        if compiled is None:
            continue
        if compiled["tool"] is None and compiled["command"] is None and compiled["input"] is None:
            problems.append(f"{where}: rules[{i}] matches nothing (give tool, command or input); skipped")
            continue
        rules.append(Rule(item["scope"], compiled["tool"], compiled["command"], compiled["input"]))
    allow: list[re.Pattern] = []
    for i, pattern in enumerate(doc.get("allow") or []):
        try:
            allow.append(re.compile(pattern))
        except (re.error, TypeError) as exc:
            problems.append(f"{where}: allow[{i}] is not a valid regex ({exc}); skipped")
    outside_ok = tuple(_real(os.path.expanduser(p)) for p in (doc.get("outside_ok") or []) if isinstance(p, str) and os.path.isabs(os.path.expanduser(p)))
    return Policy(tuple(rules), tuple(allow), outside_ok, tuple(problems))


# -- classification ------------------------------------------------------------

def classify(tool: str, tool_input, cwd: str, root: str, policy: Policy = DEFAULT) -> list[Need]:
    """The scopes this tool call needs (empty: nothing LoopX guards)."""
    cwd = cwd or root
    found: list[Need] = []
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    if tool in SHELL_TOOLS:
        command = tool_input.get("command")
        if isinstance(command, list):
            command = shlex.join(str(c) for c in command)
        if isinstance(command, str):
            found += shell_needs(command, cwd, root, policy)
    elif tool in FILE_TOOLS:
        path = tool_input.get(FILE_TOOLS[tool]) or tool_input.get("file_path")
        if isinstance(path, str) and path:
            target = _resolve_literal(path, cwd)
            if not _inside(target, root, policy, strict=False):
                found.append(Need("fs:write-outside", f"{tool} {path}"))
    elif tool in PATCH_TOOLS:
        patch = tool_input.get("command") or tool_input.get("input") or tool_input.get("patch")
        if isinstance(patch, str):
            found += patch_needs(patch, cwd, root, policy)
    for rule in policy.rules:
        if rule.command is not None and (rule.tool is None or rule.tool.fullmatch(tool)):
            continue  # shell-command rules are applied per simple command in shell_needs
        if rule.tool is None or not rule.tool.fullmatch(tool):
            continue
        if rule.input is not None and not rule.input.search(json.dumps(tool_input, sort_keys=True, ensure_ascii=False)):
            continue
        found.append(Need(rule.scope, tool))
    return _dedupe(found)


def _dedupe(needs: list[Need]) -> list[Need]:
    seen: dict[str, Need] = {}
    for need in needs:
        seen.setdefault(need.scope, need)
    return list(seen.values())


def shell_needs(command: str, cwd: str | None, root: str, policy: Policy = DEFAULT, depth: int = 0) -> list[Need]:
    found: list[Need] = []
    if depth > MAX_DEPTH:
        return found
    # Command substitutions run wherever they appear (even inside double quotes).
    for inner in _substitutions(command):
        found += shell_needs(inner, cwd, root, policy, depth + 1)
    here = cwd
    for words, writes in _segments(_lex(command)):
        here, needs = _segment_needs(words, writes, here, root, policy, depth)
        found += needs
    return found


def _segment_needs(words: list[str], writes: list[str], cwd: str | None, root: str, policy: Policy, depth: int) -> tuple[str | None, list[Need]]:
    found: list[Need] = []
    for target in writes:
        if target.startswith(_DEV_OK) or target.isdigit() or target == "-":
            continue
        path = _resolve_word(target, cwd)
        if not _inside(path, root, policy, strict=False):
            found.append(Need("fs:write-outside", f"> {target}"))
    name, args = _unwrap(words)
    if name is None:
        return cwd, found
    text = " ".join([name, *args])
    for rule in policy.rules:
        if rule.command is not None and rule.command.search(text):
            found.append(Need(rule.scope, _clip(text)))
    base = os.path.basename(name)
    if base in ("cd", "pushd"):
        target = args[0] if args else "~"
        if target == "-" or target.startswith("-"):
            return None, found
        return _resolve_word(target, cwd), found
    if base in ("bash", "sh", "zsh", "dash", "ksh", "fish") and "-c" in args:
        i = args.index("-c")
        if i + 1 < len(args):
            found += shell_needs(args[i + 1], cwd, root, policy, depth + 1)
        return cwd, found
    if base == "eval":
        found += shell_needs(" ".join(args), cwd, root, policy, depth + 1)
        return cwd, found
    if any(p.search(text) for p in policy.allow):
        return cwd, found
    scope = builtin_scope(base, args)
    if scope:
        found.append(Need(scope, _clip(text)))
    if base == "rm" and _recursive(args):
        for target in _operands(args):
            path = _resolve_word(target, cwd)
            if not _inside(path, root, policy, strict=True):
                found.append(Need("fs:delete-outside", _clip(f"rm {' '.join(args)}")))
                break
    return cwd, found


def patch_needs(patch: str, cwd: str, root: str, policy: Policy = DEFAULT) -> list[Need]:
    found: list[Need] = []
    for line in patch.splitlines():
        for prefix, scope in (("*** Add File: ", "fs:write-outside"), ("*** Update File: ", "fs:write-outside"), ("*** Move to: ", "fs:write-outside"), ("*** Delete File: ", "fs:delete-outside")):
            if line.startswith(prefix):
                path = line[len(prefix):].strip()
                if path and not _inside(_resolve_literal(path, cwd), root, policy, strict=scope == "fs:delete-outside"):
                    found.append(Need(scope, f"apply_patch {line[4:].strip()}"))
    return found


# -- built-in command rules ------------------------------------------------------

_GIT_OPTS_WITH_ARG = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"}
_DEPLOY = {
    "kubectl": ({"apply", "create", "delete", "replace", "patch", "rollout", "scale", "set", "edit", "annotate", "label", "drain", "cordon", "taint", "expose", "run"}, "deploy:kubernetes"),
    "oc": ({"apply", "create", "delete", "replace", "patch", "rollout", "scale", "set", "edit"}, "deploy:kubernetes"),
    "helm": ({"install", "upgrade", "uninstall", "delete", "rollback"}, "deploy:helm"),
    "helmfile": ({"apply", "sync", "destroy", "delete"}, "deploy:helm"),
    "terraform": ({"apply", "destroy", "import"}, "deploy:terraform"),
    "tofu": ({"apply", "destroy", "import"}, "deploy:terraform"),
    "terragrunt": ({"apply", "destroy", "run-all", "import"}, "deploy:terraform"),
    "pulumi": ({"up", "update", "destroy"}, "deploy:pulumi"),
    "cdk": ({"deploy", "destroy"}, "deploy:cdk"),
    "serverless": ({"deploy", "remove"}, "deploy:serverless"),
    "sls": ({"deploy", "remove"}, "deploy:serverless"),
    "fly": ({"deploy"}, "deploy:fly"),
    "flyctl": ({"deploy"}, "deploy:fly"),
    "netlify": ({"deploy"}, "deploy:netlify"),
    "firebase": ({"deploy"}, "deploy:firebase"),
    "railway": ({"up", "deploy"}, "deploy:railway"),
    "wrangler": ({"deploy", "publish"}, "deploy:cloudflare"),
    "ansible-playbook": (None, "deploy:ansible"),
    "kamal": ({"deploy", "rollback"}, "deploy:kamal"),
    "eb": ({"deploy"}, "deploy:aws"),
    "copilot": ({"deploy"}, "deploy:aws"),
}
_PUBLISH = {
    "npm": ({"publish", "unpublish", "deprecate"}, "publish:npm"),
    "pnpm": ({"publish"}, "publish:npm"),
    "bun": ({"publish"}, "publish:npm"),
    "twine": ({"upload"}, "publish:pypi"),
    "poetry": ({"publish"}, "publish:pypi"),
    "flit": ({"publish"}, "publish:pypi"),
    "hatch": ({"publish"}, "publish:pypi"),
    "uv": ({"publish"}, "publish:pypi"),
    "pdm": ({"publish"}, "publish:pypi"),
    "cargo": ({"publish", "yank"}, "publish:crates"),
    "gem": ({"push", "yank"}, "publish:rubygems"),
    "docker": ({"push"}, "publish:docker"),
    "podman": ({"push"}, "publish:docker"),
    "mvn": ({"deploy", "release:perform"}, "publish:maven"),
    "gradle": ({"publish"}, "publish:maven"),
    "gradlew": ({"publish"}, "publish:maven"),
    "goreleaser": ({"release"}, "publish:release"),
}


def builtin_scope(base: str, args: list[str]) -> str | None:
    """The scope a simple command needs under the built-in rules, or None."""
    sub = _first_word(args)
    if base == "git":
        return "git:push" if _git_subcommand(args) == "push" else None
    if base in _DEPLOY:
        subs, scope = _DEPLOY[base]
        return scope if subs is None or sub in subs else None
    if base in _PUBLISH:
        subs, scope = _PUBLISH[base]
        if base == "docker" and sub == "buildx" and "--push" in args:
            return scope
        if base == "gradle" or base == "gradlew":
            return scope if any(a == "publish" or a.startswith("publish") for a in args if not a.startswith("-")) else None
        return scope if sub in subs else None
    if base == "yarn":
        words = [a for a in args if not a.startswith("-")]
        return "publish:npm" if words[:1] == ["publish"] or words[:2] == ["npm", "publish"] else None
    if base == "gh":
        words = [a for a in args if not a.startswith("-")]
        return "publish:github" if words[:1] == ["release"] and words[1:2] and words[1] in ("create", "upload", "edit", "delete") else None
    if base == "vercel":
        return "deploy:vercel" if "--prod" in args or sub in ("deploy", "promote", "rollback") else None
    if base == "gcloud":
        return "deploy:gcloud" if "deploy" in args else None
    if base == "aws":
        words = [a for a in args if not a.startswith("-")]
        if words[:1] == ["cloudformation"] and words[1:2] and words[1] in ("deploy", "create-stack", "update-stack", "delete-stack"):
            return "deploy:aws"
        if words[:2] in (["ecs", "update-service"], ["lambda", "update-function-code"], ["deploy", "create-deployment"]):
            return "deploy:aws"
        return None
    if base == "heroku":
        return "deploy:heroku" if sub and (sub.startswith("releases:rollback") or sub.startswith("container:release")) else None
    if base == "dotnet":
        words = [a for a in args if not a.startswith("-")]
        return "publish:nuget" if words[:2] == ["nuget", "push"] else None
    return None


def _first_word(args: list[str]) -> str | None:
    for a in args:
        if not a.startswith("-"):
            return a
    return None


def _git_subcommand(args: list[str]) -> str | None:
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in _GIT_OPTS_WITH_ARG:
            skip = True
            continue
        if a.startswith("-"):
            continue
        return a
    return None


def _recursive(args: list[str]) -> bool:
    for a in args:
        if a == "--":
            return False
        if a == "--recursive":
            return True
        if a.startswith("-") and not a.startswith("--") and ("r" in a or "R" in a):
            return True
    return False


def _operands(args: list[str]) -> list[str]:
    out, options = [], True
    for a in args:
        if options and a == "--":
            options = False
            continue
        if options and a.startswith("-") and a != "-":
            continue
        out.append(a)
    return out


# -- shell tokens ----------------------------------------------------------------

_WRAPPERS_ARG = {
    "sudo": {"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"},
    "doas": {"-u", "-C"},
    "env": {"-u", "-C", "-S", "--unset", "--chdir"},
    "nice": {"-n", "--adjustment"},
    "ionice": {"-c", "-n", "-p"},
    "stdbuf": {"-i", "-o", "-e"},
    "xargs": {"-I", "-n", "-P", "-L", "-s", "-d", "-E", "-a", "--max-args", "--max-procs", "--delimiter", "--arg-file"},
    "watch": {"-n", "--interval", "-d"},
    "nohup": set(), "time": set(), "command": set(), "exec": set(), "builtin": set(), "unbuffer": set(),
    "chronic": set(), "caffeinate": set(), "npx": {"-p", "--package"}, "bunx": set(), "pnpx": set(), "uvx": {"--from", "--with"},
}
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")


def _unwrap(words: list[str]) -> tuple[str | None, list[str]]:
    """The command actually run: assignments, ``sudo``/``env``/``nohup``/``npx``…
    wrappers and ``python -m`` peeled off."""
    i, n = 0, len(words)
    for _ in range(8):
        while i < n and _ASSIGN.match(words[i]):
            i += 1
        if i >= n:
            return None, []
        base = os.path.basename(words[i])
        if base == "timeout":
            i += 1
            while i < n and words[i].startswith("-"):
                i += 1
            i += 1  # the duration
            continue
        if base in ("pnpm", "yarn") and i + 1 < n and words[i + 1] == "dlx":
            i += 2
            continue
        if _PYTHON.match(base) and i + 2 < n and words[i + 1] == "-m":
            return words[i + 2], words[i + 3 :]
        if base not in _WRAPPERS_ARG:
            return words[i], words[i + 1 :]
        with_arg = _WRAPPERS_ARG[base]
        i += 1
        while i < n and (words[i].startswith("-") or (base == "env" and _ASSIGN.match(words[i]))):
            if words[i] in with_arg:
                i += 1
            i += 1
    return (words[i], words[i + 1 :]) if i < n else (None, [])


def _lex(command: str) -> list[str]:
    try:
        lex = shlex.shlex(command, posix=True, punctuation_chars=_OPS)
        lex.whitespace = " \t\r"
        lex.whitespace_split = True
        lex.commenters = "#"
        return list(lex)
    except ValueError:  # unbalanced quotes: read it leniently rather than not at all
        return lenient_tokens(command)


def lenient_tokens(text: str) -> list[str]:
    spaced = re.sub(r"(&&|\|\||[;&|()<>\n])", r" \1 ", text.replace("`", " ; "))
    return [t.strip("'\"") for t in spaced.replace("\t", " ").split(" ") if t.strip("'\"")]


def _is_op(token: str) -> bool:
    return bool(token) and all(c in _OPS for c in token)


def _segments(tokens: list[str]):
    """Simple commands: (words, output-redirect targets). Heredoc bodies are skipped."""
    words: list[str] = []
    writes: list[str] = []
    heredocs: list[str] = []
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        if _is_op(tok):
            if "<" in tok or ">" in tok:
                if words and words[-1].isdigit():
                    words.pop()  # 2> file: the fd number is not an argument
                target = tokens[i + 1] if i + 1 < n and not _is_op(tokens[i + 1]) else None
                if target is not None:
                    if tok.startswith("<<") and tok != "<<<":
                        heredocs.append(target.lstrip("-"))
                    elif ">" in tok and not (tok.endswith("&") and (target.isdigit() or target == "-")):
                        writes.append(target)
                    i += 2
                    continue
                i += 1
                continue
            if tok == "\n" and heredocs:
                i = _skip_heredocs(tokens, i, heredocs)
                heredocs = []
            if words or writes:
                yield words, writes
            words, writes = [], []
            i += 1
            continue
        words.append(tok)
        i += 1
    if words or writes:
        yield words, writes


def _skip_heredocs(tokens: list[str], i: int, delimiters: list[str]) -> int:
    """From the newline ending a command line, past each heredoc body; returns
    the index of the newline that ends the last delimiter line."""
    n = len(tokens)
    for delimiter in delimiters:
        while i < n and not (tokens[i] == "\n" and i + 1 < n and tokens[i + 1] == delimiter):
            i += 1
        i += 2
    return min(i, n)


def _substitutions(text: str) -> list[str]:
    """The insides of ``$( … )`` and backticks, wherever they appear."""
    found: list[str] = []
    i = text.find("$(")
    while i != -1:
        depth, j = 1, i + 2
        while j < len(text) and depth:
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                depth -= 1
            j += 1
        found.append(text[i + 2 : j - 1] if depth == 0 else text[i + 2 :])
        i = text.find("$(", j)
    parts = text.split("`")
    found += [parts[k] for k in range(1, len(parts) - 1, 2)]
    return [f for f in found if f.strip()]


# -- paths -----------------------------------------------------------------------

def _real(path: str) -> str:
    return os.path.realpath(path)


def _resolve_literal(path: str, cwd: str | None) -> str | None:
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        if cwd is None:
            return None
        path = os.path.join(cwd, path)
    path = os.path.normpath(path)
    head, tail = os.path.split(path)
    return os.path.join(_real(head), tail) if tail else _real(head)


def _resolve_word(word: str, cwd: str | None) -> str | None:
    """A shell word as a path, or None when it cannot be known (variables…)."""
    if not word:
        return None
    if word.startswith("~"):
        if word == "~" or word.startswith("~/"):
            word = _HOME + word[1:]
        else:
            return None  # another user's home
    word = word.replace("${HOME}", _HOME)
    word = re.sub(r"\$HOME(?![A-Za-z0-9_])", _HOME, word)
    if "$" in word or "`" in word:
        return None
    cut = min((word.find(c) for c in "*?[" if c in word), default=-1)
    if cut != -1:
        word = word[:cut]
        word = word[: word.rfind("/") + 1] if "/" in word else ""
        if not word:
            return cwd
    return _resolve_literal(word, cwd)


def _inside(path: str | None, root: str, policy: Policy, *, strict: bool) -> bool:
    """Is ``path`` inside the project? Unknown paths are not (fail closed).
    ``strict``: the project folder itself does not count (deleting it)."""
    if path is None:
        return False
    for base in (root, *policy.outside_ok):
        if not base:
            continue
        if path.startswith(base.rstrip(os.sep) + os.sep):
            return True
        if path == base and not (strict and base == root):
            return True
    return False


def _clip(text: str, n: int = 200) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


# -- malformed input -----------------------------------------------------------

_RAW_DANGER = (  # (pattern, scope), compiled on first use
    (r"\bgit\b[^\n;&|\"]{0,80}?\bpush\b", "git:push"),
    (r"\b(npm|pnpm|yarn|bun)\s+publish\b", "publish:npm"),
    (r"\btwine\s+upload\b|\b(poetry|flit|hatch|uv|pdm)\s+publish\b", "publish:pypi"),
    (r"\bcargo\s+publish\b", "publish:crates"),
    (r"\b(docker|podman)\s+push\b", "publish:docker"),
    (r"\bgh\s+release\s+(create|upload|edit|delete)\b", "publish:github"),
    (r"\bkubectl\s+(apply|create|delete|replace|patch|rollout|scale)\b", "deploy:kubernetes"),
    (r"\bhelm\s+(install|upgrade|uninstall|rollback)\b", "deploy:helm"),
    (r"\b(terraform|tofu)\s+(apply|destroy)\b", "deploy:terraform"),
    (r"\b(pulumi\s+up|cdk\s+deploy|fly(ctl)?\s+deploy|firebase\s+deploy|netlify\s+deploy)\b", "deploy:other"),
    (r"\brm\s+(-[a-zA-Z]*[rR]|--recursive)", "fs:delete-outside"),
)


def raw_needs(raw: str) -> list[Need]:
    """For a payload that is not valid JSON: a coarse scan of the raw text, so a
    garbled dangerous call is still denied (DESIGN §8: deny what the policy marks
    dangerous, allow the rest)."""
    return _dedupe([Need(scope, "the tool call") for pattern, scope in _RAW_DANGER if re.search(pattern, raw)])
