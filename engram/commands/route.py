"""`engram route`: which cards a prompt selects, and why."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from engram import index as index_module
from engram import native_loads, output, router
from engram import workspace as workspace_module
from engram.card import Card
from engram.errors import EngramError
from engram.query import route_request
from engram.router import DEFAULT_LIMIT, RouteResult


def open_index(cwd: Path, roots: list[Path]) -> tuple[index_module.CompiledIndex, Path, dict[str, Any]]:
    """(index, workspace root, settings) for explicit roots or the workspace around cwd."""
    if roots:
        missing = [str(r) for r in roots if not r.is_dir()]
        if missing:
            raise EngramError(f"memory root not found: {', '.join(missing)}")
        ws = workspace_module.load(cwd, explicit_roots=roots)
        assert ws is not None
        return index_module.load_roots(roots, bool(ws.settings["security.follow_symlinks"])), ws.root, ws.settings
    ws = workspace_module.load(cwd)
    if ws is None:
        raise EngramError(f"no workspace found at or above {cwd}",
                          "run engram inside a Git repository or a folder holding .agents/.engram/, "
                          "or pass --root DIR")
    if not ws.roots:
        raise EngramError(f"workspace {ws.root} has no memory roots",
                          "create .agents/.engram/ with cards, or list folders under `roots` in "
                          ".agents/engram.json (engram config set roots memories)")
    return index_module.load_or_build(ws), ws.root, ws.settings


def result_json(index: index_module.CompiledIndex, result: RouteResult) -> dict[str, Any]:
    """`counted`: whether the card took one of the `limit` places (always-on cards and the
    dependencies of ranked cards come on top of the limit)."""
    ranked = set(result.ranked)

    def reason(r: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": r.kind, "detail": r.detail}
        if r.words:
            out["words"] = [{"word": word, "field": field} for word, field in r.words]
        return out

    return output.envelope("route", {
        "limit": result.limit,
        "selected": [
            {"id": s.id, "score": s.score, "path": index.row(s.slot).path,
             "counted": s.id in ranked, "reasons": [reason(r) for r in s.reasons]}
            for s in result.selected
        ],
        "warnings": list(result.warnings),
    })


def _render(index: index_module.CompiledIndex, result: RouteResult, explain: bool,
            root: Path) -> str:
    if not result.selected:
        lines = ["no cards selected (nothing in the memory is relevant to this prompt)"]
    else:
        lines = []
        ranked = set(result.ranked)
        for rank, selection in enumerate(result.selected, 1):
            card = index.card(selection.slot)
            try:
                shown = str(Path(card.path).relative_to(root))
            except ValueError:
                shown = card.path
            extra = ""
            if selection.id not in ranked:
                kinds = {r.kind for r in selection.reasons}
                extra = "; always on" if "always" in kinds else "; " + next(
                    (r.detail for r in selection.reasons if r.kind == "dependency"),
                    "on top of the limit")
                extra += ", not counted in the limit"
            if index.holds_secret(selection.slot):
                extra += "; holds a secret: no hook injects it"
                card = shown_card(card)
            lines.append(f"{rank:>2}. {card.id}  {card.title}  ({shown}{extra})")
            native = native_loads.for_workspace(str(root), card.path, card.provenance)
            if native and explain:
                lines.append(f"      {native}: not injected into it, only into the other hosts")
            if explain:
                lines.extend(_explain_lines(index, result, selection))
    beyond = result.beyond_limit
    if beyond:
        lines.append(f"note: the limit ({result.limit}) counts the {len(result.ranked)} ranked "
                     f"card(s); {len(beyond)} more shown on top of it "
                     f"(always-on cards and the cards they depend on): {', '.join(beyond)}")
    if result.over_limit:
        over = [index.row(slot).id for slot in result.over_limit]
        lines.append(f"note: {len(over)} more card(s) qualified but fell below the limit of "
                     f"{result.limit}: {', '.join(over)}")
    if explain:
        lines.append(f"how cards are chosen: {router.CUT_RULE}")
        for card_id in result.near_misses(index):
            verdict = result.why(index, card_id)
            details = "; ".join(r.detail for r in verdict)
            lines.append(f"  not selected: {card_id}: {details}")
    for warning in result.warnings:
        lines.append(f"warning: {warning}")
    return "\n".join(lines)


def _explain_lines(index: index_module.CompiledIndex, result: RouteResult,
                   selection: Any) -> list[str]:
    out: list[str] = []
    has_text = False
    for reason in selection.reasons:
        if reason.kind == "text":
            has_text = True
        elif reason.kind == "tag":
            out.append(f"      tag: the prompt names its tag {reason.detail!r}")
        else:
            out.append(f"      {reason.kind}: {reason.detail}")
    if has_text or any(r.kind == "tag" for r in selection.reasons):
        why = result.why(index, selection.id)
        for reason in reversed(why):
            if reason.kind == "text":
                out.insert(0, f"      words: {reason.detail}")
            elif reason.kind == "selected":
                out.insert(0, f"      why: {reason.detail}")
    return out


def run(*, prompt: str | None, paths: list[str], roots: list[Path], cwd: Path,
        limit: int | None, explain: bool, as_json: bool, batch: Path | None,
        why_not: str | None = None, written: Path | None = None) -> int:
    compiled, root, settings = open_index(cwd, roots)
    effective_limit = limit if limit is not None else int(settings.get("load.limit", DEFAULT_LIMIT))
    if effective_limit < 1:
        raise EngramError("--limit must be at least 1")
    if batch is not None:
        return _run_batch(compiled, root, cwd, batch, effective_limit)
    code = None
    if written is not None:
        code = _written_code(written)
        if not paths:
            paths = [str(written)]
    if prompt is None and not paths:
        raise EngramError("give a prompt, --path, or --batch FILE")
    prompt = without_secrets(prompt or "")
    result = route_request(compiled, root, cwd, prompt, list(paths), effective_limit, code=code)
    if why_not is not None:
        from engram import why_not as why_not_module

        sentences = why_not_module.explain(compiled, result, prompt, list(paths), why_not,
                                           effective_limit)
        slot = compiled.slot_of(why_not)
        if slot is not None:
            card = compiled.card(slot)
            native = native_loads.for_workspace(str(root), card.path, card.provenance)
            if native:
                sentences.append(f"It is {native}: that host's hook never injects it (the host "
                                 "already has it); the other hosts get it from engram.")
        if as_json:
            output.emit_json("route", {"id": why_not, "selected": why_not in result.ids,
                                       "explanation": sentences})
        else:
            output.write("\n".join(sentences) + "\n")
        return 0
    if as_json:
        payload = result_json(compiled, result)
        payload["warnings"] = _card_warnings(compiled) + payload["warnings"]
        output.write_json(payload)
    else:
        output.write(_render(compiled, result, explain, root) + "\n")
        errors = compiled.error_count
        if errors:
            output.write(f"note: {errors} card file(s) skipped with errors; run "
                             "`engram lint` for details\n")
    return 0


def shown_card(card: Card) -> Card:
    """A card the gate blocked, as `show` and `route` may print it: each field redacted with
    the secrets of the card read as the gate reads it, so a token cut between two fields (the
    title and the card line or body) is hidden in both, not shown half by half."""
    from engram import secrets

    # Each field alone first, as the output layer would; what is left is a token only the
    # fields read together show (the detector's span of a hit may run over the lines after
    # a token: read together from the start, the title after it would go too).
    parts = [secrets.redact(part) for part in secrets.card_parts(card)]
    if secrets.has_secrets("\n".join(parts)):
        parts = secrets.redact_parts(parts)
    # A token the frontmatter wraps over two lines is two words in a parsed field; a piece of
    # one at an edge of the card is what another card's answer could complete.
    pieces = secrets.fragments(secrets.frontmatter(card)) + sorted(
        {piece for _kind, piece in secrets.edge_fragments(card)}, key=len, reverse=True)
    if pieces:
        parts = [secrets.scrub(part, pieces) for part in parts]
    lists, at = [], 2
    for values in (card.tags, card.applies_to, card.depends_on):
        lists.append(tuple(parts[at:at + len(values)]))
        at += len(values)
    # The title is read twice: before the card line and before the body.
    first, again = parts[0], parts[-2]
    title = first if first == again else again if first == card.title else \
        first if again == card.title else \
        secrets.marker("cut between fields")
    return card.replace(title=title, card=parts[1], tags=lists[0], applies_to=lists[1],
                        depends_on=lists[2], body=parts[-1])


def without_secrets(prompt: str) -> str:
    """`prompt` with each value-shaped secret blanked out: the explanation lists the prompt's
    words (lowercased, cut at case changes), where no redaction of the output would
    recognise the pieces of a token, and a secret is no topic to route on."""
    from engram import secrets

    for hit in reversed(secrets.find_secrets(prompt)):
        prompt = prompt[:hit.start] + " " + prompt[hit.end:]
    return prompt


def _card_warnings(compiled: index_module.CompiledIndex) -> list[str]:
    return [p.render() for p in compiled.problems if p.severity == "error"]


def _run_batch(compiled: index_module.CompiledIndex, root: Path, cwd: Path, batch: Path,
               limit: int) -> int:
    try:
        handle = sys.stdin if str(batch) == "-" else open(batch, encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise EngramError(f"cannot read {batch}: {exc.strerror}") from None
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                request = json.loads(line)
                prompt = request.get("prompt") or ""
                raw_paths = request.get("paths") or []
                if not isinstance(prompt, str) or not isinstance(raw_paths, list):
                    raise ValueError("prompt must be a string and paths a list")
            except (ValueError, AttributeError) as exc:
                output.write_json(output.envelope("route", {
                    "limit": limit, "selected": [], "warnings": [f"line {number}: {exc}"]}),
                    one_line=True)
                continue
            result = route_request(compiled, root, cwd, without_secrets(prompt),
                                   [str(p) for p in raw_paths], limit)
            output.write_json(result_json(compiled, result), one_line=True)
    return 0


def _written_code(written: Path) -> str:
    """The code of `--written FILE` (`-`: standard input), as a hook reads what a tool call
    writes: its first MAX_CODE_CHARS."""
    import sys

    from engram.code_names import MAX_CODE_CHARS

    try:
        if str(written) == "-":
            return sys.stdin.read(MAX_CODE_CHARS)
        with open(written, encoding="utf-8", errors="replace") as handle:
            return handle.read(MAX_CODE_CHARS)
    except OSError as exc:
        raise EngramError(f"cannot read {written}: {exc.strerror or exc}") from None
