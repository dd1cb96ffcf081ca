"""Check the relative links and the code references of the Markdown files.

    python scripts/check_doc_links.py [--allow-missing PREFIX ...]

For every ``*.md`` outside ``.venv``/``.git``: each relative link ``[text](target)`` must name
an existing file or folder, and its ``#anchor`` (if any) a heading of the target, by GitHub's
slug rule. In the same files, every backticked dotted name ``oracledp.x.y`` must import (a
module, or an attribute of one), and every backticked repository path (``tests/...py``,
``benchmarks/...py``, ``src/...``, ``docs/...``) must exist (except in CHANGELOG.md, which names
removed modules, and docs/specs/, which cite other projects' files). ``--allow-missing lab/`` reports
links into a folder that another branch adds, without failing on them. Exit code 1 on any
failure.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\n]+)`")
DOTTED = re.compile(r"^oracledp(\.[A-Za-z_][A-Za-z0-9_]*)+$")
PATH = re.compile(r"^(tests|benchmarks|src|docs|scripts)/[\w./-]+$")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(md: Path) -> set[str]:
    out: set[str] = set()
    seen: dict[str, int] = {}
    in_code = False
    for line in md.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        s = slug(line.lstrip("#"))
        n = seen.get(s, 0)
        out.add(s if n == 0 else f"{s}-{n}")
        seen[s] = n + 1
    return out


def resolves(name: str) -> bool:
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--allow-missing", nargs="*", default=[])
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    bad: list[str] = []
    allowed: list[str] = []
    files = [p for p in ROOT.rglob("*.md") if not {".venv", ".git"} & set(p.parts)]
    for md in sorted(files):
        text = md.read_text(encoding="utf-8")
        rel = md.relative_to(ROOT)
        for target in LINK.findall(text):
            if re.match(r"^[a-z]+:", target):
                continue  # http:, https:, mailto:
            path_part, _, anchor = target.partition("#")
            dest = (md.parent / path_part).resolve() if path_part else md
            where = f"{rel}: ({target})"
            inside = str(dest.relative_to(ROOT)) if dest.is_relative_to(ROOT) else str(dest)
            if not dest.exists():
                if any(inside.startswith(a) for a in args.allow_missing):
                    allowed.append(where)
                else:
                    bad.append(f"{where} missing")
                continue
            if anchor and dest.is_file() and dest.suffix == ".md" and anchor not in anchors(dest):
                bad.append(f"{where} no heading for #{anchor}")
        if rel.parts[0] == "CHANGELOG.md" or rel.parts[:2] == ("docs", "specs"):
            continue  # names removed on purpose; other projects' files cited by the specs
        for code in CODE.findall(text):
            code = code.strip()
            if DOTTED.match(code) and not resolves(code):
                bad.append(f"{rel}: `{code}` does not import")
            elif PATH.match(code) and not (ROOT / code.split("::")[0]).exists():
                bad.append(f"{rel}: `{code}` does not exist")
    for line in allowed:
        print(f"allowed (--allow-missing): {line}")
    for line in bad:
        print(f"FAIL {line}")
    print(f"{len(files)} files, {len(bad)} failures, {len(allowed)} allowed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
