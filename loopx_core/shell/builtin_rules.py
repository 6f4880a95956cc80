"""The built-in rules: which scope a command needs, by its name and arguments.

``git push`` (and ``send-pack``, ``http-push``, ``subtree push``, ``svn
dcommit``, ``p4 submit``) → ``git:push``; deploys (``kubectl apply``, ``helm
upgrade``, ``terraform apply``, ``pulumi up``, ``cdk deploy``, ``gcloud …
deploy``, ``fly deploy``, ``vercel --prod`` …) → ``deploy:<tool>``;
publishing (``npm publish``, ``twine upload``, ``poetry publish``, ``cargo
publish``, ``gem push``, ``docker push``, ``gh release create`` …) →
``publish:<registry>``. Pure functions over plain strings, standard library only.
"""

from __future__ import annotations

GIT_OPTS_WITH_ARG = frozenset(
    {
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--exec-path",
        "--config-env",
        "--super-prefix",
        "--list-cmds",
        "--attr-source",
    }
)
GIT_PUSHES = {"push": None, "send-pack": None, "http-push": None, "subtree": "push", "svn": "dcommit", "p4": "submit"}

# git's own commands (git help -a): any other word is an alias or a git-<name>
# program, which LoopX looks up before it decides.
GIT_COMMANDS = frozenset(
    """
add am annotate apply archive bisect blame branch bugreport bundle cat-file check-attr check-ignore check-mailmap
check-ref-format checkout checkout-index cherry cherry-pick citool clean clone column commit commit-graph commit-tree
config count-objects credential credential-cache credential-store daemon describe diagnose diff diff-files diff-index
diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg for-each-ref for-each-repo
format-patch fsck fsmonitor--daemon gc get-tar-commit-id grep gui hash-object help hook http-backend http-fetch
http-push imap-send index-pack init instaweb interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit
maintenance merge merge-base merge-file merge-index merge-one-file merge-tree mergetool mktag mktree multi-pack-index
mv name-rev notes p4 pack-objects pack-redundant pack-refs patch-id prune prune-packed pull push quiltimport
range-diff read-tree rebase receive-pack reflog refs remote repack replace replay request-pull rerere reset restore
rev-list rev-parse revert rm scalar send-email send-pack sh-i18n sh-setup shortlog show show-branch show-index
show-ref sparse-checkout stage stash status stripspace submodule subtree svn switch symbolic-ref tag unpack-file
unpack-objects update-index update-ref update-server-info upload-archive upload-pack var verify-commit verify-pack
verify-tag version whatchanged worktree write-tree lfs
""".split()
)

DEPLOY = {
    "kubectl": (
        {
            "apply",
            "create",
            "delete",
            "replace",
            "patch",
            "rollout",
            "scale",
            "set",
            "edit",
            "annotate",
            "label",
            "drain",
            "cordon",
            "taint",
            "expose",
            "run",
        },
        "deploy:kubernetes",
    ),
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
PUBLISH = {
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
# Commands some rule looks at: their arguments decide, so an argument that is
# only known when the shell runs ($x, input from xargs) decides nothing here.
RULED = frozenset({"git", "rm", "yarn", "gh", "vercel", "gcloud", "aws", "heroku", "dotnet", *DEPLOY, *PUBLISH})


def builtin_scope(base: str, args: list[str]) -> str | None:
    """The scope a simple command needs under the built-in rules, or None."""
    sub = first_word(args)
    if base == "git":
        return "git:push" if git_pushes(args) else None
    if base in DEPLOY:
        subs, scope = DEPLOY[base]
        return scope if subs is None or sub in subs else None
    if base in PUBLISH:
        subs, scope = PUBLISH[base]
        if base == "docker" and sub == "buildx" and "--push" in args:
            return scope
        if base == "gradle" or base == "gradlew":
            return scope if any(a.startswith("publish") for a in args if not a.startswith("-")) else None
        return scope if sub in subs else None
    words = [a for a in args if not a.startswith("-")]
    if base == "yarn":
        return "publish:npm" if words[:1] == ["publish"] or words[:2] == ["npm", "publish"] else None
    if base == "gh":
        return (
            "publish:github"
            if words[:1] == ["release"] and words[1:2] and words[1] in ("create", "upload", "edit", "delete")
            else None
        )
    if base == "vercel":
        return "deploy:vercel" if "--prod" in args or sub in ("deploy", "promote", "rollback") else None
    if base == "gcloud":
        return "deploy:gcloud" if "deploy" in args else None
    if base == "aws":
        if (
            words[:1] == ["cloudformation"]
            and words[1:2]
            and words[1] in ("deploy", "create-stack", "update-stack", "delete-stack")
        ):
            return "deploy:aws"
        if words[:2] in (
            ["ecs", "update-service"],
            ["lambda", "update-function-code"],
            ["deploy", "create-deployment"],
        ):
            return "deploy:aws"
        return None
    if base == "heroku":
        return (
            "deploy:heroku"
            if sub and (sub.startswith("releases:rollback") or sub.startswith("container:release"))
            else None
        )
    if base == "dotnet":
        return "publish:nuget" if words[:2] == ["nuget", "push"] else None
    return None


def first_word(args: list[str]) -> str | None:
    for a in args:
        if not a.startswith("-"):
            return a
    return None


def git_subcommand_index(args: list[str]) -> int | None:
    """Where git's subcommand is in its arguments (after its own options)."""
    skip = False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a in GIT_OPTS_WITH_ARG:
            skip = True
            continue
        if a.startswith("-"):
            continue
        return i
    return None


def git_pushes(args: list[str]) -> bool:
    i = git_subcommand_index(args)
    if i is None or args[i] not in GIT_PUSHES:
        return False
    second = GIT_PUSHES[args[i]]
    return second is None or first_word(args[i + 1 :]) == second


def recursive(args: list[str]) -> bool:
    """Does ``rm`` get -r / -R / --recursive?"""
    for a in args:
        if a == "--":
            return False
        if a == "--recursive":
            return True
        if a.startswith("-") and not a.startswith("--") and ("r" in a or "R" in a):
            return True
    return False


def operands(args: list[str]) -> list[str]:
    out, options = [], True
    for a in args:
        if options and a == "--":
            options = False
            continue
        if options and a.startswith("-") and a != "-":
            continue
        out.append(a)
    return out
