"""The board and the CLI read a card's diff in bounded time and memory,
whatever the repository holds, and say what they left out (#38 item 6).

The route from the issue, smaller: eight paths to one repetitive blob (30 MB
here, 200 MB there; a few hundred kB on disk). Before, ``patch()`` read git's
whole output (3.2 GB at 200 MB) and the summary diffed every line. The reads
run in a child process that reports the peak memory of the git it ran, so a
whole-blob diff would show."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from tests.conftest import GIT_ID, git, make_repo

BLOB_MB = 30
PATHS = 8


def _repo_with_a_big_blob(root):
    make_repo(root)
    git(root, "checkout", "-q", "-b", "loopx/LX-1")
    env = dict(os.environ, **GIT_ID)
    line = b"the same line again, and again, and again\n"
    proc = subprocess.Popen(
        ["git", "hash-object", "-w", "--stdin"], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    assert proc.stdin is not None
    chunk = line * (1024 * 1024 // len(line))
    for _ in range(BLOB_MB):
        proc.stdin.write(chunk)
    out, _ = proc.communicate()
    blob = out.decode().strip()
    index = "".join(f"100644 {blob}\tdata/copy{n}.txt\n" for n in range(PATHS))
    subprocess.run(["git", "update-index", "--index-info"], cwd=root, input=index.encode(), check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "eight copies"], cwd=root, check=True, env=env)
    git(root, "checkout", "-q", "main")


READ = textwrap.dedent("""
    import json, resource, sys, time
    from loopx_core.workspace import merge
    root, limit = sys.argv[1], int(sys.argv[2])
    started = time.monotonic()
    summary = merge.summary(root, "main", "loopx/LX-1")
    text, cut = merge.patch(root, "main", "loopx/LX-1", limit=limit)
    print(json.dumps({
        "files": [[f.path, f.added, f.removed] for f in summary.files],
        "patch_bytes": len(text.encode()), "cut": cut, "tail": text[-300:],
        "seconds": time.monotonic() - started,
        "git_peak_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
        # (VmHWM, not RUSAGE_SELF's ru_maxrss: that one keeps the high-water mark
        # from before exec — the long-lived pytest worker this was forked from)
        "own_peak_kb": int(next(l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:"))),
    }))
""")


def _read(root, limit):
    done = subprocess.run(
        [sys.executable, "-c", READ, str(root), str(limit)], capture_output=True, text=True, timeout=300, check=True
    )
    return json.loads(done.stdout)


def test_a_huge_repetitive_blob_is_read_as_binary_in_bounded_memory(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    _repo_with_a_big_blob(root)
    got = _read(root, 200_000)
    assert sorted(f[0] for f in got["files"]) == [f"data/copy{n}.txt" for n in range(PATHS)]
    assert all(f[1] is None and f[2] is None for f in got["files"])  # counted as binary: no line was diffed
    assert "Binary files" in got["tail"] and got["patch_bytes"] < 10_000
    assert got["git_peak_kb"] < 64 * 1024, got  # git never held a blob's diff (30 MB each, 240 MB of patch)
    assert got["own_peak_kb"] < 200 * 1024, got


def test_a_long_patch_is_cut_and_says_what_it_left_out(tmp_path):
    """Many text files under the big-file threshold: the patch is streamed
    and git stopped at the cap; the cut says so, and how to read the rest."""
    root = tmp_path / "repo"
    root.mkdir()
    make_repo(root)
    git(root, "checkout", "-q", "-b", "loopx/LX-1")
    (root / "many").mkdir()
    for n in range(40):
        (root / "many" / f"f{n}.txt").write_text("".join(f"line {i} of file {n}\n" for i in range(20_000)))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "many")
    git(root, "checkout", "-q", "main")
    got = _read(root, 100_000)
    assert got["cut"] is True
    assert got["patch_bytes"] < 100_000 + 500
    assert "the rest is left out here" in got["tail"] and "git diff" in got["tail"]
    assert len(got["files"]) == 40 and got["files"][0][1] == 20_000
