"""The hooks' policy: which tool calls need which scopes (pure, no board)."""

from __future__ import annotations

import json

import pytest

from loopx_core.adapters import policy

ROOT = "/srv/project"


def scopes(command: str, cwd: str = ROOT, pol: policy.Policy = policy.DEFAULT) -> list[str]:
    """The scopes a Bash command needs; "refused" for what no scope allows."""
    return [n.scope or "refused" for n in policy.classify("Bash", {"command": command}, cwd, ROOT, pol)]


@pytest.mark.parametrize(
    "command, expected",
    [
        ("ls -la", []),
        ("git status && git diff", []),
        ("echo 'git push'", []),
        ("grep -r 'npm publish' docs/", []),
        ("git push origin main", ["git:push"]),
        ("git -C sub --no-pager push --force", ["git:push"]),
        ("cd app && git push", ["git:push"]),
        ("x=$(git push 2>&1); echo $x", ["git:push"]),
        ('echo "`git push`"', ["git:push"]),
        ('bash -c "git push"', ["git:push"]),
        ("sudo -u deploy env A=1 kubectl apply -f k8s/", ["deploy:kubernetes"]),
        ("kubectl get pods", []),
        ("helm upgrade --install web ./chart", ["deploy:helm"]),
        ("terraform plan", []),
        ("FOO=1 terraform apply -auto-approve", ["deploy:terraform"]),
        ("npx vercel --prod", ["deploy:vercel"]),
        ("gcloud run deploy api --source .", ["deploy:gcloud"]),
        ("npm publish --access public", ["publish:npm"]),
        ("npm test", []),
        ("yarn npm publish", ["publish:npm"]),
        ("python -m twine upload dist/*", ["publish:pypi"]),
        ("uv publish", ["publish:pypi"]),
        ("cargo publish --dry-run", ["publish:crates"]),
        ("docker push ghcr.io/acme/app:1", ["publish:docker"]),
        ("docker build -t app .", []),
        ("gh release create v1.2.0 dist/*", ["publish:github"]),
        ("gh pr create --fill", []),
        ("rm -rf build node_modules", []),
        ("rm -rf /", ["refused"]),  # it holds the person's LoopX folder
        ("rm -rf ~/.cache/x", ["fs:delete-outside"]),
        ("rm -rf ../other-project", ["fs:delete-outside"]),
        ("rm -rf /tmp/scratch/*", ["fs:delete-outside"]),
        ("rm -rf $TARGET", ["fs:delete-outside"]),
        ("cd /tmp && rm -rf work", ["fs:delete-outside"]),
        ("rm /tmp/one-file.log", []),
        ("rm -rf .", ["refused"]),  # it holds the board
        ("echo done > /etc/motd", ["fs:write-outside"]),
        ("pytest -q > out.txt 2>&1", []),
        ("make 2>/dev/null", []),
        ("git push && npm publish", ["git:push", "publish:npm"]),
    ],
)
def test_shell_commands(command, expected):
    assert scopes(command) == expected


def test_heredoc_bodies_are_not_commands():
    commit = "git commit -m \"$(cat <<'EOF'\nFix the parser\n\ngit push follows later\nEOF\n)\""
    assert scopes(commit) == []
    assert scopes("cat <<EOF > /tmp/notes\nhello\nEOF") == ["fs:write-outside"]
    assert scopes("cat <<EOF\ngit push\nEOF\ngit push") == ["git:push"]


def test_unbalanced_quotes_are_read_leniently():
    assert scopes("git push 'oops") == ["git:push"]


def test_file_tools():
    def need(tool, path):
        return [n.scope for n in policy.classify(tool, {"file_path": path, "content": "x"}, ROOT, ROOT)]

    assert need("Write", "/srv/project/src/a.py") == []
    assert need("Edit", "/etc/hosts") == ["fs:write-outside"]
    assert need("Edit", "/srv/project/../elsewhere/a.py") == ["fs:write-outside"]
    assert need("MultiEdit", "/etc/hosts") == []  # not a tool of Claude Code 2.1 (sdk-tools.d.ts)
    assert need("Write", "notes/a.md") == []  # relative to the cwd
    assert [n.scope for n in policy.classify("NotebookEdit", {"notebook_path": "/tmp/a.ipynb"}, ROOT, ROOT)] == [
        "fs:write-outside"
    ]
    assert policy.classify("Read", {"file_path": "/etc/passwd"}, ROOT, ROOT) == []
    assert policy.classify("Grep", {"pattern": "git push"}, ROOT, ROOT) == []


def test_codex_apply_patch():
    patch = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-a\n+b\n*** Add File: /tmp/out.txt\n+hi\n*** Delete File: ../x.py\n*** End Patch\n"
    found = policy.classify("apply_patch", {"command": patch}, ROOT, ROOT)
    assert [n.scope for n in found] == ["fs:write-outside", "fs:delete-outside"]
    inside = "*** Begin Patch\n*** Add File: docs/new.md\n+hi\n*** End Patch\n"
    assert policy.classify("apply_patch", {"command": inside}, ROOT, ROOT) == []


def test_symlinked_folder_pointing_outside(tmp_path):
    root = tmp_path / "proj"
    (root / ".loopx").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "link").symlink_to(outside)
    found = policy.classify("Write", {"file_path": str(root / "link" / "a.txt")}, str(root), str(root))
    assert [n.scope for n in found] == ["fs:write-outside"]


def _board_policy(tmp_path):
    (tmp_path / ".loopx").mkdir()
    (tmp_path / ".loopx" / "policy.json").write_text(
        json.dumps(
            {
                "rules": [
                    {"command": r"^make release\b", "scope": "publish:release"},
                    {"tool": "mcp__github__create_release", "scope": "publish:github"},
                    {"tool": "mcp__db__query", "input": "DROP TABLE", "scope": "db:drop"},
                    {"command": "x", "scope": "Not A Scope"},
                    {"command": "(", "scope": "ok:scope"},
                ],
                "allow": [r"^git push origin agent/"],
                "outside_ok": ["/tmp"],
            }
        )
    )


def test_board_rules(tmp_path):
    """`rules` only add scopes and always apply; an unsigned file's `allow` and
    `outside_ok` would loosen the rules, so they are ignored, with a note."""
    _board_policy(tmp_path)
    pol = policy.load(str(tmp_path))
    assert len(pol.rules) == 3 and pol.allow == () and pol.outside_ok == ()
    assert [p for p in pol.problems if "were ignored" in p and "loopx policy sign" in p]
    assert len(pol.problems) == 3
    root = str(tmp_path)

    def need(tool, tool_input):
        return [n.scope for n in policy.classify(tool, tool_input, root, root, pol)]

    assert need("Bash", {"command": "make release VERSION=2"}) == ["publish:release"]
    assert need("Bash", {"command": "make test"}) == []
    assert need("Bash", {"command": "git push origin agent/fix-1"}) == ["git:push"]
    assert need("Bash", {"command": "rm -rf /tmp/scratch"}) == ["fs:delete-outside"]
    assert need("Write", {"file_path": "/tmp/x.txt"}) == ["fs:write-outside"]
    assert need("mcp__github__create_release", {"tag": "v1"}) == ["publish:github"]
    assert need("mcp__db__query", {"sql": "select 1"}) == []
    assert need("mcp__db__query", {"sql": "DROP TABLE users"}) == ["db:drop"]


def test_a_signed_policy_file_may_loosen(tmp_path, monkeypatch):
    """Once a person's signature can be verified (`loosening_allowed`), `allow`
    and `outside_ok` apply again — but never to LoopX's own ground."""
    _board_policy(tmp_path)
    monkeypatch.setattr(policy, "loosening_allowed", lambda path, doc: True)
    pol = policy.load(str(tmp_path))
    root = str(tmp_path)

    def need(tool, tool_input):
        return [n.scope or "refused" for n in policy.classify(tool, tool_input, root, root, pol)]

    assert need("Bash", {"command": "git push origin agent/fix-1"}) == []
    assert need("Bash", {"command": "git push origin main"}) == ["git:push"]
    assert need("Bash", {"command": "rm -rf /tmp/scratch"}) == []
    assert need("Write", {"file_path": "/tmp/x.txt"}) == []
    assert need("Write", {"file_path": "/var/x.txt"}) == ["fs:write-outside"]
    assert need("Bash", {"command": "git push origin agent/x; sqlite3 .loopx/board.db 'delete from gate'"}) == [
        "refused"
    ]


def test_a_broken_policy_file_keeps_the_builtin_rules(tmp_path):
    (tmp_path / ".loopx").mkdir()
    (tmp_path / ".loopx" / "policy.json").write_text("{not json")
    pol = policy.load(str(tmp_path))
    assert pol.problems and "not valid JSON" in pol.problems[0]
    assert [n.scope for n in policy.classify("Bash", {"command": "git push"}, str(tmp_path), str(tmp_path), pol)] == [
        "git:push"
    ]
