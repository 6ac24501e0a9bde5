"""Synthetic memory-card stores for the benchmarks.

`generate(folder, n, seed)` writes `n` engram cards (Markdown + YAML frontmatter) that look like
a real team's store: titles and bodies drawn from a software-engineering vocabulary with a
Zipf-like word distribution (a few words everywhere, most words rare), the vocabulary growing
with the store (Heaps' law, so 10,000 cards have far more distinct terms than 100), 1-5 tags
from a shared pool, `applies_to` globs on about 40% of the cards (brace groups, globstars,
single files), a few `always` cards, `depends_on` on about 5%, priorities, sub-folders of about
100 cards each. Bodies are 80-600 words in paragraphs, bullet lists and code spans, so the
files are 0.6-4 KiB like real cards. Deterministic for a given seed.

`queries(n, seed)` gives prompts (and touched paths) drawn from the same vocabulary, plus some
off-topic prompts, for routing benchmarks.

Run directly to write a store: `python bench/synthetic.py OUT_DIR --cards 1000`.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from pathlib import Path

CORE_WORDS = ["api", "route", "handler", "request", "response", "client", "server", "cache", "session", "token", "auth", "login", "user", "account", "email", "label", "thread", "message", "inbox", "queue", "job", "worker", "cron", "schedule", "retry", "timeout", "error", "exception", "log", "logger", "trace", "metric", "alert", "deploy", "release", "build", "pipeline", "test", "fixture", "mock", "snapshot", "migration", "schema", "table", "column", "index", "query", "transaction", "database", "postgres", "redis", "prisma", "model", "field", "record", "config", "setting", "flag", "feature", "toggle", "environment", "variable", "secret", "key", "permission", "role", "policy", "component", "page", "layout", "form", "input", "button", "dialog", "modal", "style", "theme", "color", "font", "icon", "accessibility", "hook", "state", "effect", "context", "store", "reducer", "action", "mutation", "fetch", "swr", "loader", "render", "template", "webhook", "event", "payload", "parser", "serializer", "validator", "validation", "schema", "zod", "type", "interface", "enum", "module", "package", "dependency", "install", "version", "lint", "format", "compile", "bundle", "import", "export", "path", "file", "folder", "directory", "glob", "pattern", "script", "command", "cli", "flag", "option", "argument", "output", "stream", "buffer", "upload", "download", "storage", "bucket", "image", "video", "pdf", "csv", "json", "yaml", "markdown", "document", "docs", "guide", "review", "commit", "branch", "merge", "rebase", "conflict", "changelog", "hotfix", "rollback", "incident", "outage", "latency", "throughput", "performance", "memory", "cpu", "profiling", "benchmark", "limit", "budget", "quota", "rate", "throttle", "backoff", "security", "audit", "encryption", "signature", "certificate", "tls", "cors", "csrf", "xss", "injection", "sanitize", "escape", "i18n", "locale", "translation", "currency", "timezone", "date", "calendar", "reminder", "notification", "digest", "summary", "search", "ranking", "filter", "sort", "pagination", "cursor", "offset", "batch", "bulk", "import", "sync", "replication", "backup", "analytics", "tracking", "posthog", "sentry", "monitoring", "dashboard", "chart", "report", "invoice", "billing", "stripe", "subscription", "plan", "trial", "coupon", "refund", "payment", "checkout", "cart", "order", "product", "catalog", "inventory"]  # noqa: E501 - one data table

# Real-looking prefixes and suffixes for the long tail of rare, project-specific words.
_SYLLABLES = ("ka", "ro", "mi", "zen", "tor", "lex", "vo", "dri", "pan", "sol", "qua", "nix",
              "bel", "cor", "dax", "fen", "gil", "hal", "jun", "mar", "nor", "pel", "rix", "tal")

TAG_POOL = sorted(set(CORE_WORDS[:160:2])) + ["frontend", "backend", "infra", "ci", "testing",
                                              "observability", "onboarding", "mobile", "ios",
                                              "android", "web", "data", "ml", "llm", "ai"]

GLOB_TEMPLATES = (
    "src/{area}/**/*.{{ts,tsx}}",
    "apps/{area}/**",
    "packages/{area}/src/**/*.ts",
    "**/*.{ext}",
    "{area}/**/*.py",
    "docs/{area}/**/*.{{md,mdx}}",
    "services/{area}/*.go",
    "src/{area}/{word}.ts",
    "**/__tests__/{area}/**",
    ".github/workflows/{area}.yml",
)
EXTENSIONS = ("py", "ts", "tsx", "go", "rs", "md", "sql", "yml", "css", "kt")
OFF_TOPIC = ("hello there", "thanks!", "what's the weather like", "good morning",
             "tell me a joke", "ok cool", "who won the game last night?", "how are you today?")


def vocabulary(n_cards: int, seed: int = 7) -> list[str]:
    """Core words first (frequent), then invented project words; size grows like n^0.6."""
    rng = random.Random(seed)
    extra = int(40 * n_cards ** 0.6)
    words = list(CORE_WORDS)
    seen = set(words)
    while len(words) < len(CORE_WORDS) + extra:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


class _Zipf:
    """Draw words with probability ~ 1/(rank + q)^s (Zipf-Mandelbrot; cumulative table +
    bisect). The vocabulary holds content words only (function words are added as glue and
    are stopwords), and in natural text content words start around rank 50, hence q = 50:
    the most common word is about 0.5% of the tokens, and still appears in most cards."""

    def __init__(self, words: list[str], rng: random.Random, s: float = 1.0,
                 q: float = 50.0) -> None:
        import bisect
        import itertools

        self.words = words
        self.rng = rng
        weights = [1.0 / (rank + 1 + q) ** s for rank in range(len(words))]
        self.cumulative = list(itertools.accumulate(weights))
        self._bisect = bisect.bisect_left

    def word(self) -> str:
        target = self.rng.random() * self.cumulative[-1]
        return self.words[min(self._bisect(self.cumulative, target), len(self.words) - 1)]

    def words_n(self, n: int) -> list[str]:
        return [self.word() for _ in range(n)]


def _sentence(zipf: _Zipf, rng: random.Random) -> str:
    words = zipf.words_n(rng.randint(6, 16))
    glue = ("the", "a", "when", "for", "with", "before", "after", "in", "and", "must", "never")
    out: list[str] = []
    for word in words:
        if rng.random() < 0.3:
            out.append(rng.choice(glue))
        out.append(word)
    if rng.random() < 0.15:
        out.insert(rng.randint(0, len(out)), f"`{zipf.word()}_{zipf.word()}()`")
    text = " ".join(out)
    return text[0].upper() + text[1:] + "."


def _body(zipf: _Zipf, rng: random.Random, title: str) -> str:
    target = rng.randint(80, 600)
    parts = [f"# {title}", ""]
    count = 0
    while count < target:
        if rng.random() < 0.25:
            items = [f"- {_sentence(zipf, rng)}" for _ in range(rng.randint(2, 5))]
            parts.extend(items)
            count += sum(len(i.split()) for i in items)
        else:
            paragraph = " ".join(_sentence(zipf, rng) for _ in range(rng.randint(2, 5)))
            parts.append(paragraph)
            count += len(paragraph.split())
        parts.append("")
        if rng.random() < 0.1:
            parts.append(f"## {' '.join(zipf.words_n(rng.randint(1, 3))).capitalize()}")
            parts.append("")
    return "\n".join(parts).rstrip() + "\n"


def _glob(rng: random.Random, zipf: _Zipf) -> str:
    template = rng.choice(GLOB_TEMPLATES)
    return template.format(area=zipf.word(), word=zipf.word(), ext=rng.choice(EXTENSIONS))


def _yaml_list(items: list[str]) -> str:
    return "[" + ", ".join(f'"{item}"' for item in items) + "]"


def card_text(i: int, rng: random.Random, zipf: _Zipf, ids: list[str]) -> tuple[str, str]:
    """(card id, file text) for card number i."""
    title_words = zipf.words_n(rng.randint(2, 5))
    title = " ".join(title_words).capitalize()
    card_id = f"{'-'.join(title_words[:3])}-{i}"
    tags = sorted(set(rng.sample(TAG_POOL, rng.randint(1, 5))))
    lines = ["---", f"id: {card_id}", f'title: "{title}"',
             f'card: "{_sentence(zipf, rng)}"',
             f"type: {rng.choice(('rule', 'rule', 'workflow', 'reference'))}",
             f"tags: {_yaml_list(tags)}"]
    if rng.random() < 0.4:
        lines.append(f"applies_to: {_yaml_list([_glob(rng, zipf) for _ in range(rng.randint(1, 3))])}")
    if rng.random() < 0.01:
        lines.append("always: true")
    if rng.random() < 0.5:
        lines.append(f"priority: {rng.randint(0, 100)}")
    if ids and rng.random() < 0.05:
        lines.append(f"depends_on: {_yaml_list(rng.sample(ids, min(len(ids), rng.randint(1, 2))))}")
    lines.append("---")
    return card_id, "\n".join(lines) + "\n" + _body(zipf, rng, title)


# The cards are dated this long ago, as the files of a store in use are: the index reads a
# file saved within its timestamps' tick of the read again at every freshness check until a
# refresh stores its stamp (engram.index_rows.RACY_NS), which a benchmark that compiles right
# after generating would otherwise measure for every card.
AGE_SECONDS = 3600


def generate(folder: Path, n: int, seed: int = 7) -> list[Path]:
    """Write n cards under folder (sub-folders of 100), dated AGE_SECONDS ago. Returns the
    written paths."""
    rng = random.Random(seed * 1_000_003 + n)
    zipf = _Zipf(vocabulary(n, seed), rng)
    folder.mkdir(parents=True, exist_ok=True)
    ids: list[str] = []
    written: list[Path] = []
    for i in range(n):
        card_id, content = card_text(i, rng, zipf, ids[-200:])
        ids.append(card_id)
        sub = folder / f"area-{i // 100:03d}"
        sub.mkdir(exist_ok=True)
        path = sub / f"{card_id}.md"
        path.write_text(content, encoding="utf-8")
        written.append(path)
    dated = time.time() - AGE_SECONDS
    for path in written:
        os.utime(path, (dated, dated))
    return written


def queries(n_cards: int, count: int, seed: int = 11) -> list[tuple[str, tuple[str, ...]]]:
    """Prompts and touched paths drawn from the store's vocabulary; one in eight is off-topic,
    one in three touches 1-3 paths."""
    rng = random.Random(seed)
    zipf = _Zipf(vocabulary(n_cards, 7), rng)
    out: list[tuple[str, tuple[str, ...]]] = []
    for i in range(count):
        if i % 8 == 7:
            out.append((rng.choice(OFF_TOPIC), ()))
            continue
        prompt = "please " + " ".join(zipf.words_n(rng.randint(4, 14)))
        paths: tuple[str, ...] = ()
        if rng.random() < 0.33:
            paths = tuple(
                rng.choice((f"src/{zipf.word()}/{zipf.word()}.ts", f"apps/{zipf.word()}/page.tsx",
                            f"{zipf.word()}/{zipf.word()}.py", f"docs/{zipf.word()}/index.md"))
                for _ in range(rng.randint(1, 3)))
        out.append((prompt, paths))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--cards", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    paths = generate(args.out, args.cards, args.seed)
    total = sum(p.stat().st_size for p in paths)
    print(f"wrote {len(paths)} cards ({total / 1024:.0f} KiB) under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
