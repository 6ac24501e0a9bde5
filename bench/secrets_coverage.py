"""How well the secret detector does: kinds caught out of kinds tried (tests/secret_corpus.py,
fake values in the providers' formats), false positives on real rule corpora (every card a
real repository wrote, none of which holds a real secret: each hit there is a card engram
would wrongly refuse to inject), and the cost of a scan.

    python bench/secrets_coverage.py [--data ../shared/data] [--json out.json]

The figures are quoted in docs/reliability.md."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from secret_corpus import corpus, split_ghp  # noqa: E402

from engram import secrets  # noqa: E402


def coverage() -> dict:
    tried, missed = [], []
    for kind, text, secret in corpus():
        if secret is None:
            text, secret = split_ghp()
        tried.append(kind)
        redacted = secrets.redact(text)
        if secret in redacted or secret in redacted.replace("\u200b", ""):
            missed.append(kind)
    return {"kinds_tried": len(tried), "kinds_caught": len(tried) - len(missed), "missed": missed}


def card_files(data: Path) -> list[Path]:
    return sorted(p for p in data.rglob("*") if p.is_file() and p.suffix in (".md", ".mdc"))


def false_positives(data: Path) -> dict:
    """Every hit on the real corpora, with the kind and the line, the value redacted."""
    by_corpus: dict[str, dict] = {}
    started = time.perf_counter()
    total_bytes = 0
    for path in card_files(data):
        text = path.read_text(encoding="utf-8", errors="replace")
        total_bytes += len(text)
        corpus_name = path.relative_to(data).parts[0]
        entry = by_corpus.setdefault(corpus_name, {"files": 0, "flagged": 0, "hits": []})
        entry["files"] += 1
        hits = secrets.find_secrets(text)
        if hits:
            entry["flagged"] += 1
            for hit in hits:
                line = text.split("\n")[hit.line - 1]
                entry["hits"].append({"file": str(path.relative_to(data)), "line": hit.line,
                                      "kind": hit.kind, "text": secrets.redact(line).strip()[:160]})
    elapsed = time.perf_counter() - started
    return {"corpora": by_corpus, "seconds": round(elapsed, 3), "bytes": total_bytes}


def compile_cost(data: Path) -> dict:
    """What the gate adds to compiling a card (it runs when a changed card is compiled, which
    a hook may do): parsing every corpus file, then the gate over each parsed card."""
    from engram import index_compile, store

    files = card_files(data)
    started = time.perf_counter()
    cards = []
    for path in files:
        stat = path.stat()
        card, _, _ = store.load_file(store.FoundFile(str(path), str(path.parent), stat.st_mtime_ns,
                                                     stat.st_size))
        cards.append(card)
    parse = time.perf_counter() - started
    started = time.perf_counter()
    for card in cards:
        index_compile._holds_secret(card)
    gate = time.perf_counter() - started
    return {"files": len(files), "parse_seconds": round(parse, 3), "gate_seconds": round(gate, 3),
            "gate_ms_per_card": round(gate * 1000 / max(len(files), 1), 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = {"coverage": coverage()}
    cov = result["coverage"]
    print(f"kinds caught: {cov['kinds_caught']} / {cov['kinds_tried']}"
          + (f" (missed: {', '.join(cov['missed'])})" if cov["missed"] else ""))
    if args.data.is_dir():
        result["false_positives"] = fp = false_positives(args.data)
        files = sum(c["files"] for c in fp["corpora"].values())
        flagged = sum(c["flagged"] for c in fp["corpora"].values())
        print(f"real cards: {files} files, {flagged} flagged; scan {fp['seconds']} s for "
              f"{fp['bytes'] // 1024} KiB")
        for name, entry in sorted(fp["corpora"].items()):
            print(f"  {name}: {entry['flagged']} of {entry['files']} files")
            for hit in entry["hits"]:
                print(f"    {hit['file']}:{hit['line']} {hit['kind']}: {hit['text']}")
        result["compile"] = cost = compile_cost(args.data)
        print(f"compile: parsing {cost['files']} files {cost['parse_seconds']} s (the name check "
              f"included), the gate over their cards {cost['gate_seconds']} s "
              f"({cost['gate_ms_per_card']} ms a card)")
    else:
        print(f"no corpora at {args.data}; false positives not measured")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
