"""Routing quality on real rule sets, read from `../shared/data/` at run time (nothing from it
is copied into this repository; inbox-zero is AGPL-3.0).

(1) Glob triggers, continue (`continue/.continue/rules`, 300 real commits in `tasks.jsonl`):
    prompt = commit subject, touched paths = the commit's files. The cards engram selects with
    a `path` reason must equal, for every task, the rules whose globs match a touched file.
    The ground truth is computed here, independently of engram's parser and glob code, as the
    data README describes: frontmatter by `yaml.safe_load` with a line-wise fallback, every
    glob value normalised to a list with a brace-aware comma split (commas at brace depth 0),
    matched with `wcmatch.glob.globmatch(path, globs, flags=GLOBSTAR | BRACE | DOTGLOB)`.
    engram runs with a large `--limit` (1000) so that the card cap never cuts a glob match.
    Run twice: with the subject as written, and with the Conventional-Commit scope stripped
    (`fix(gui): x` -> `x`), which leaks the path into the prompt.

(2) Description routing, inbox-zero (`inbox-zero/.cursor/rules`, 33 `.mdc` rules + 4
    wireframes, routed by description): the human-labelled prompts in
    `bench/labels/inbox-zero.jsonl` (expected rule ids, plus ids that are acceptable but not
    required; off-topic prompts expect nothing). engram (default limit 8, abstention) against a
    plain BM25 top-3 baseline written here: classic Okapi BM25 (k1 1.2, b 0.75) over each
    file's whole text, Lucene-standard tokens (lowercased `\\w+`, the 33 Lucene English
    stopwords, no stemming), top 3 with a positive score, no abstention. Always-on rules
    (`alwaysApply: true`, i.e. `notes.mdc`) are delivered by any Cursor-compatible system and
    are left out of both sides. Metrics:
      recall     = required ids selected / required ids, over on-topic prompts
      precision  = selected ids that are required or acceptable / selected ids, over all
                   prompts (anything selected for an off-topic prompt is a false positive)
      abstention = off-topic prompts with nothing selected / off-topic prompts
    Also shown: strict precision (required ids only), on-topic prompts with nothing selected,
    and the same baseline with engram's own tokenizer (to separate tokenising from ranking).

    /work/venv/bin/python bench/routing_quality.py              # everything
    /work/venv/bin/python bench/routing_quality.py --verbose    # per-task / per-prompt rows
    /work/venv/bin/python bench/routing_quality.py --quick      # smoke: 25 tasks, 12 prompts
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DEFAULT_DATA = Path(os.environ.get("ENGRAM_BENCH_DATA", REPO.parent / "shared" / "data"))
LABELS = BENCH / "labels" / "inbox-zero.jsonl"
BIG_LIMIT = 1000
_SCOPE = re.compile(r"^\s*[A-Za-z]+(\([^)]*\))?!?:\s*")


# --- independent ground truth for glob rules (data README, "Ground-truth method") ----------

_KNOWN_KEYS = ("globs", "paths", "applyTo", "alwaysApply", "description", "name")


def frontmatter(text: str) -> dict[str, Any]:
    """The block between the first two `---` lines: YAML, else the line-wise fallback."""
    import yaml

    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or lines[0].strip() != "---":
        return {}
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        return {}
    block = "\n".join(lines[1:end])
    try:
        data = yaml.safe_load(block)
        if isinstance(data, dict):
            return data
    except yaml.YAMLError:
        pass
    data: dict[str, Any] = {}
    current = None
    for line in lines[1:end]:
        stripped = line.strip()
        if stripped.startswith("- ") and current is not None:
            if not isinstance(data.get(current), list):
                data[current] = [] if data.get(current) in (None, "") else [data[current]]
            data[current].append(stripped[2:].strip())
            continue
        key, sep, value = line.partition(":")
        if sep and key.strip() in _KNOWN_KEYS and not line[:1].isspace():
            current = key.strip()
            data[current] = value.strip() or None
    return data


def split_braces(value: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in value:
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [p.strip().strip("'\"").strip() for p in parts if p.strip().strip("'\"").strip()]


def glob_list(value: Any) -> list[str]:
    if value is None or value is False or value == "":
        return []
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in items:
        text = str(item).strip().strip("'\"")
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1]
        out.extend(split_braces(text))
    return out


def truth_rules(folder: Path) -> tuple[dict[str, list[str]], set[str]]:
    """(file name -> globs for glob-scoped rules, file names of alwaysApply: true rules)."""
    scoped: dict[str, list[str]] = {}
    always: set[str] = set()
    for path in sorted(folder.rglob("*")):
        if path.suffix not in (".md", ".mdc") or not path.is_file():
            continue
        data = frontmatter(path.read_text(encoding="utf-8"))
        globs = glob_list(data.get("globs", data.get("paths", data.get("applyTo"))))
        name = str(path.relative_to(folder))
        if globs:
            scoped[name] = globs
        if data.get("alwaysApply") is True:
            always.add(name)
    return scoped, always


def expected_by_glob(scoped: dict[str, list[str]], files: list[str]) -> set[str]:
    from wcmatch import glob as wglob

    flags = wglob.GLOBSTAR | wglob.BRACE | wglob.DOTGLOB
    return {name for name, globs in scoped.items()
            if any(wglob.globmatch(f, globs, flags=flags) for f in files)}


# --- engram --------------------------------------------------------------------------------

def engram_index(root: Path) -> Any:
    from engram import index

    return index.load_roots([root])


def engram_route(compiled: Any, workspace: Path, prompt: str, paths: list[str],
                 limit: int) -> list[tuple[str, str, set[str]]]:
    """[(card id, file path, reason kinds)] in rank order."""
    from engram import query

    result = query.route_request(compiled, str(workspace), str(workspace), prompt, paths, limit)
    return [(s.id, compiled.row(s.slot).path, {r.kind for r in s.reasons})
            for s in result.selected]


def _prf(tp: int, fp: int, fn: int) -> tuple[float, float]:
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return precision, recall


def continue_glob(data: Path, quick: bool, verbose: bool) -> dict[str, Any]:
    folder = data / "continue"
    rules = folder / ".continue" / "rules"
    scoped, always = truth_rules(rules)
    tasks = [json.loads(line) for line in (folder / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
             if line.strip()]
    if quick:
        tasks = tasks[:25]
    compiled = engram_index(rules)
    report: dict[str, Any] = {"tasks": len(tasks), "glob_rules": len(scoped),
                              "always_rules": sorted(always), "limit": BIG_LIMIT}
    triggered = sum(1 for t in tasks if expected_by_glob(scoped, t["files"]))
    mean_rules = sum(len(expected_by_glob(scoped, t["files"]) | always) for t in tasks) / len(tasks)
    report["truth"] = {"tasks_triggering": triggered, "mean_rules_per_task": round(mean_rules, 2)}
    for variant in ("subject", "scope stripped"):
        tp = fp = fn = exact = 0
        always_ok = 0
        text_selected = 0
        mismatches: list[str] = []
        for task in tasks:
            prompt = task["subject"] if variant == "subject" else _SCOPE.sub("", task["subject"], 1)
            expected = expected_by_glob(scoped, task["files"])
            selected = engram_route(compiled, folder, prompt, task["files"], BIG_LIMIT)
            by_path = {os.path.relpath(path, rules) for _, path, kinds in selected if "path" in kinds}
            always_sel = {os.path.relpath(path, rules) for _, path, kinds in selected if "always" in kinds}
            text_selected += sum(1 for _, _, kinds in selected if kinds & {"text", "tag"}
                                 and "path" not in kinds)
            tp += len(by_path & expected)
            fp += len(by_path - expected)
            fn += len(expected - by_path)
            exact += by_path == expected
            always_ok += always_sel == always
            if by_path != expected:
                mismatches.append(f"  {task['commit'][:10]} {prompt[:60]!r}: extra "
                                  f"{sorted(by_path - expected)}, missing {sorted(expected - by_path)}")
            if verbose:
                print(f"  [{variant}] {prompt[:70]!r}: path {sorted(by_path)}", file=sys.stderr)
        precision, recall = _prf(tp, fp, fn)
        report[variant] = {"precision": round(precision, 4), "recall": round(recall, 4),
                           "tp": tp, "fp": fp, "fn": fn, "exact_tasks": exact,
                           "always_correct_tasks": always_ok,
                           "mean_text_only_cards": round(text_selected / len(tasks), 2),
                           "mismatches": mismatches[:20]}
    return report


# --- the labelled description-routing set --------------------------------------------------

LUCENE_STOP = frozenset(["a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with"])  # noqa: E501 - one data table
_WORDS = re.compile(r"\w+", re.UNICODE)


def lucene_tokens(text: str) -> list[str]:
    return [w for w in _WORDS.findall(text.lower()) if w not in LUCENE_STOP]


class BM25:
    """Classic Okapi BM25 over whole documents."""

    def __init__(self, docs: dict[str, str], tokenize: Any, k1: float = 1.2, b: float = 0.75) -> None:
        self.tokenize = tokenize
        self.k1, self.b = k1, b
        self.tf = {name: Counter(tokenize(body)) for name, body in docs.items()}
        self.length = {name: sum(c.values()) for name, c in self.tf.items()}
        self.avg = sum(self.length.values()) / max(len(self.length), 1)
        df: Counter[str] = Counter()
        for counts in self.tf.values():
            df.update(counts.keys())
        n = len(self.tf)
        self.idf = {term: math.log(1 + (n - d + 0.5) / (d + 0.5)) for term, d in df.items()}

    def top(self, query: str, k: int = 3) -> list[str]:
        terms = set(self.tokenize(query))
        scores = []
        for name, counts in self.tf.items():
            score = 0.0
            norm = self.k1 * (1 - self.b + self.b * self.length[name] / self.avg)
            for term in terms:
                tf = counts.get(term)
                if tf:
                    score += self.idf[term] * tf * (self.k1 + 1) / (tf + norm)
            if score > 0:
                scores.append((-score, name))
        return [name for _, name in sorted(scores)[:k]]


def _score(runs: list[tuple[dict[str, Any], list[str]]]) -> dict[str, Any]:
    hit = required = selected = good = strict = 0
    off = off_quiet = on = on_quiet = any_hit = 0
    for label, chosen in runs:
        expected = set(label.get("expected") or [])
        fine = expected | set(label.get("acceptable") or [])
        chosen_set = set(chosen)
        selected += len(chosen_set)
        good += len(chosen_set & fine)
        strict += len(chosen_set & expected)
        if expected:
            on += 1
            required += len(expected)
            hit += len(chosen_set & expected)
            any_hit += bool(chosen_set & expected)
            on_quiet += not chosen_set
        else:
            off += 1
            off_quiet += not chosen_set
    return {"recall": round(hit / required, 4) if required else 1.0,
            "precision": round(good / selected, 4) if selected else 1.0,
            "strict_precision": round(strict / selected, 4) if selected else 1.0,
            "abstention": round(off_quiet / off, 4) if off else 1.0,
            "on_topic_silent": on_quiet, "on_topic_with_a_hit": any_hit,
            "mean_selected": round(selected / len(runs), 2), "on_topic": on, "off_topic": off}


LABELLED_SETS = {
    # name: (repository folder in the data dir, rules folder inside it, labels, role)
    "inbox-zero": ("inbox-zero", ".cursor/rules", LABELS, "test"),
    "awesome-copilot": ("awesome-copilot", "instructions", BENCH / "labels" / "awesome-copilot.jsonl",
                        "test"),
    "continue-dev": ("continue", ".continue/rules", BENCH / "labels" / "continue-dev.jsonl", "dev"),
}
# The sets the goal applies to: labels written before the ranking they measure was changed.
GATED_SETS = ("inbox-zero", "awesome-copilot")
GOAL = {"precision": 0.80, "recall": 0.90, "abstention": 0.90}


def labelled(data: Path, name: str, quick: bool, verbose: bool) -> dict[str, Any]:
    from engram import text as engram_text

    repo, rules_rel, labels_file, role = LABELLED_SETS[name]
    root = data / repo
    rules = root / rules_rel
    labels = [json.loads(line) for line in labels_file.read_text(encoding="utf-8").splitlines()
              if line.strip()]
    # A row whose expected cards the host itself would never load (say, a `.md` note in
    # `.cursor/rules/`) is kept in the file with its reason and left out of the scores.
    excluded = [label for label in labels if label.get("excluded")]
    labels = [label for label in labels if not label.get("excluded")]
    if quick:
        labels = labels[:8] + [label for label in labels if not label.get("expected")][:4]
    compiled = engram_index(rules)
    _, always_files = truth_rules(rules)
    always_ids = {compiled.row(slot).id for slot in compiled.data["always"]}
    # The baseline ranks the same files engram loaded (by path), minus the always-on ones.

    docs = {}
    for slot in compiled.active:
        row = compiled.row(slot)
        if row.id in always_ids:
            continue
        docs[row.id] = Path(row.path).read_text(encoding="utf-8")
    plain = BM25(docs, lucene_tokens)
    stemmed = BM25(docs, engram_text.terms)
    runs: dict[str, list[tuple[dict[str, Any], list[str]]]] = {
        "engram": [], "bm25-top3": [], "bm25-top3 (engram tokens)": []}
    for label in labels:
        prompt = label["prompt"]
        chosen = [cid for cid, _, kinds in engram_route(compiled, root, prompt, [], 8)
                  if kinds != {"always"} and cid not in always_ids]
        runs["engram"].append((label, chosen))
        runs["bm25-top3"].append((label, plain.top(prompt)))
        runs["bm25-top3 (engram tokens)"].append((label, stemmed.top(prompt)))
        if verbose:
            print(f"  {prompt[:64]!r}\n      expected {label.get('expected', [])} "
                  f"+ok {label.get('acceptable', [])}\n      engram {chosen}\n"
                  f"      bm25   {runs['bm25-top3'][-1][1]}", file=sys.stderr)
    return {"name": name, "role": role, "prompts": len(labels), "cards": len(compiled.active),
            "excluded": [(label["prompt"], label["excluded"]) for label in excluded],
            "always_excluded": sorted(always_ids), "always_files": sorted(always_files),
            "systems": {name: _score(rows) for name, rows in runs.items()}}


def render(glob: dict[str, Any] | None, sets: list[dict[str, Any]]) -> str:
    lines: list[str] = []
    if glob:
        t = glob["truth"]
        lines.append(f"(1) continue glob triggers: {glob['tasks']} tasks, {glob['glob_rules']} glob-scoped "
                     f"rules, always-on {glob['always_rules'] or 'none'}; engram --limit {glob['limit']}")
        lines.append(f"    ground truth (wcmatch): {t['tasks_triggering']} tasks trigger a glob rule; "
                     f"mean {t['mean_rules_per_task']} rules per task (globs + alwaysApply)")
        for variant in ("subject", "scope stripped"):
            r = glob[variant]
            lines.append(f"    prompt = {variant:<14}: path-reason precision {r['precision']:.4f}, recall "
                         f"{r['recall']:.4f} (tp {r['tp']}, fp {r['fp']}, fn {r['fn']}); exact on "
                         f"{r['exact_tasks']}/{glob['tasks']} tasks; always-on right on "
                         f"{r['always_correct_tasks']}/{glob['tasks']}; text-only cards per task "
                         f"{r['mean_text_only_cards']}")
            lines.extend(r["mismatches"])
    for labelled in sets:
        role = ("held-out test set: labels written before any tuning" if labelled["role"] == "test"
                else "dev set: the constants were tuned on this one")
        lines.append(f"(2) {labelled['name']} description routing ({role}): {labelled['prompts']} "
                     f"labelled prompts over {labelled['cards']} cards; always-on excluded from "
                     f"scoring: {', '.join(labelled['always_excluded']) or 'none'}")
        for prompt, reason in labelled.get("excluded", ()):
            lines.append(f"    not scored: {prompt!r}: {reason}")
        lines.append(f"    {'system':<27} {'recall':>7} {'precision':>9} {'abstention':>10} "
                     f"{'strict P':>8} {'silent on-topic':>15} {'mean sel':>8}")
        for name, s in labelled["systems"].items():
            lines.append(f"    {name:<27} {s['recall']:>7.3f} {s['precision']:>9.3f} {s['abstention']:>10.3f} "
                         f"{s['strict_precision']:>8.3f} {s['on_topic_silent']:>9}/{s['on_topic']:<5} "
                         f"{s['mean_selected']:>8}")
        e, b = labelled["systems"]["engram"], labelled["systems"]["bm25-top3"]
        wins = [m for m in ("recall", "precision", "abstention") if e[m] > b[m]]
        lines.append(f"    engram beats bm25-top3 on {', '.join(wins) or 'nothing'}"
                     + ("" if len(wins) == 3 else
                        f"; NOT on {', '.join(m for m in ('recall', 'precision', 'abstention') if m not in wins)}"))
    if sets:
        lines.extend(side_by_side(sets))
    return "\n".join(lines)


def goal_failures(labelled: dict[str, Any]) -> list[str]:
    engram = labelled["systems"]["engram"]
    return [f"{metric} {engram[metric]:.3f} < {floor:.2f}" for metric, floor in GOAL.items()
            if engram[metric] < floor]


def side_by_side(sets: list[dict[str, Any]]) -> list[str]:
    goal = ", ".join(f"{m} >= {v:.2f}" for m, v in GOAL.items())
    lines = [f"(3) side by side: recall / precision / abstention (goal on {', '.join(GATED_SETS)}: {goal})"]
    header = f"    {'system':<27}" + "".join(f" {s['name'] + ' (' + str(s['prompts']) + ')':>24}" for s in sets)
    lines.append(header)
    for system in sets[0]["systems"]:
        cells = []
        for labelled in sets:
            r = labelled["systems"][system]
            cells.append(f" {r['recall']:.3f} / {r['precision']:.3f} / {r['abstention']:.3f}".rjust(25))
        lines.append(f"    {system:<27}" + "".join(cells))
    for labelled in sets:
        if labelled["name"] in GATED_SETS:
            failures = goal_failures(labelled)
            lines.append(f"    {labelled['name']}: goal {'met' if not failures else 'NOT met: ' + '; '.join(failures)}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="engram routing quality on real rule sets")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="the shared data folder (default ../shared/data)")
    parser.add_argument("--only", choices=("glob", "labelled"))
    parser.add_argument("--sets", nargs="+", choices=sorted(LABELLED_SETS),
                        help="labelled sets to run (default: all)")
    parser.add_argument("--quick", action="store_true", help="smoke run on a few tasks and prompts")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"shared data not found at {args.data}; nothing to measure", file=sys.stderr)
        return 2
    saved = os.environ.get("ENGRAM_STATE_DIR")
    with tempfile.TemporaryDirectory(prefix="engram-quality-") as tmp:
        os.environ["ENGRAM_STATE_DIR"] = tmp  # never touch the user's state dir
        try:
            glob = None if args.only == "labelled" else continue_glob(args.data, args.quick, args.verbose)
            sets = [] if args.only == "glob" else [
                labelled(args.data, name, args.quick, args.verbose)
                for name in (args.sets or ("inbox-zero", "awesome-copilot", "continue-dev"))]
        finally:
            if saved is None:
                os.environ.pop("ENGRAM_STATE_DIR", None)
            else:
                os.environ["ENGRAM_STATE_DIR"] = saved
    print(render(glob, sets))
    if args.json:
        args.json.write_text(json.dumps({"glob": glob, "labelled": sets}, indent=2) + "\n",
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
