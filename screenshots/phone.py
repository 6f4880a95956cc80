"""The phone's page as a phone shows it (screenshots/phone.png, in the README):
``loopx serve`` on the seeded demo board (loopx_core.demo.seed), its clock
frozen at the seed's, photographed by Debian's chromium headless at a phone's
size (tests/phone/cdp.py). Usage: python screenshots/phone.py"""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from loopx_core.demo.seed import seed_board  # noqa: E402
from tests.phone import cdp  # noqa: E402


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="loopx-phone-shot-") as tmp:
        config = Path(tmp) / "config"
        os.environ["XDG_CONFIG_HOME"] = str(config)
        seeded = seed_board(Path(tmp) / "project")
        env = dict(os.environ, LOOPX_DB=str(Path(tmp) / "project" / ".loopx" / "board.db"), LOOPX_NOW=repr(seeded.now))
        env.pop("LOOPX_AGENT", None)
        serve = subprocess.Popen(
            [sys.executable, "-m", "loopx_core", "serve", "--port", "0"],
            cwd=Path(tmp) / "project",
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert serve.stderr is not None
            url = next(m.group(1) for line in serve.stderr if (m := re.search(r"(http://localhost:\d+/)", line)))
            with cdp.browser() as page:
                page.send(
                    "Emulation.setDeviceMetricsOverride",
                    {"width": 390, "height": 400, "deviceScaleFactor": 2, "mobile": True},
                )
                page.goto(url)
                shot = page.send("Page.captureScreenshot", {"format": "png"})
            (HERE / "phone.png").write_bytes(base64.b64decode(shot["data"]))
        finally:
            serve.terminate()
            serve.wait(30)
    print("wrote screenshots/phone.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
