"""The router's signals, asserted by behaviour (ranking, selection, reasons), never by exact
scores: the scoring constants are tuned elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_card
from hypothesis import given, settings
from hypothesis import strategies as st

from engram import index, router, workspace
from engram.query import route_request

MEM = ".agents/.engram"
FILLER_WORDS = ["amber", "basalt", "cobalt", "dune", "ember", "fjord", "glacier", "harbor",
                "iris", "juniper", "kelp", "lichen", "moss", "nectar", "opal", "pumice",
                "quartz", "reef", "sable", "tundra"]


def fillers(mem: Path, words: list[str] = FILLER_WORDS) -> None:
    """Unrelated cards, so IDF means something."""
    for word in words:
        write_card(mem, f"filler/filler-{word}.md",
                   f"---\ntitle: {word.title()} notes\n---\nAbout {word} and {word} things.\n")


def route(ws: Path, prompt: str = "", paths: list[str] | None = None, cwd: Path | None = None,
          limit: int = 8, include_always: bool = True) -> router.RouteResult:
    loaded = workspace.load(ws)
    assert loaded is not None
    compiled = index.load_or_build(loaded)
    return route_request(compiled, ws, cwd or ws, prompt, paths or [], limit, include_always)


def reasons(result: router.RouteResult, card_id: str) -> dict[str, list[str]]:
    selection = next(s for s in result.selected if s.id == card_id)
    found: dict[str, list[str]] = {}
    for reason in selection.reasons:
        found.setdefault(reason.kind, []).append(reason.detail)
    return found


@pytest.fixture
def store(workspace: Path) -> Path:
    mem = workspace / MEM
    fillers(mem)
    write_card(mem, "migrations.md", "---\ntitle: Database migrations\ntags: [database]\n---\n"
               "Write reversible migrations; never edit an applied migration.\n")
    write_card(mem, "style.md", "---\ntitle: Code style\n---\n" + "Keep functions short. " * 20
               + "Database access goes through the repository layer.\n")
    write_card(mem, "sessions.md", "---\ntitle: Login sessions\ntags: [session]\n---\n"
               "Sessions expire after 30 minutes of inactivity.\n")
    write_card(mem, "python.md", "---\ntitle: Python files\napplies_to: [\"src/**/*.py\"]\n---\n"
               "Type hints everywhere.\n")
    write_card(mem, "docs.md", "---\ntitle: Writing docs\napplies_to: \"docs/**/*.{md,mdx}\"\n---\n"
               "One sentence per line.\n")
    write_card(mem, "start.md", "---\ntitle: Project overview\nalways: true\n---\n"
               "What this project is.\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print(1)\n", encoding="utf-8")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "guide.md").write_text("# Guide\n", encoding="utf-8")
    return workspace


# --- abstention and always cards ------------------------------------------------------------

@pytest.mark.parametrize("prompt", ["hello there", "thanks!", "ok", "Thanks, that's great!", "",
                                    "thanks, looks good!", "sounds fine, cheers"])
def test_small_talk_selects_only_always_cards(store: Path, prompt: str) -> None:
    result = route(store, prompt)
    assert result.ids == ["start"]
    assert reasons(result, "start") == {"always": ["delivered at session start"]}


def test_clearly_off_topic_prompt_selects_only_always_cards(store: Path) -> None:
    assert route(store, "what is the capital of mongolia").ids == ["start"]


def test_always_cards_can_be_left_out(store: Path) -> None:
    assert route(store, "hello there", include_always=False).ids == []
    assert "start" not in route(store, "database migrations", include_always=False).ids


# --- text -----------------------------------------------------------------------------------

def test_title_and_tag_outrank_a_body_mention(store: Path) -> None:
    result = route(store, "database migrations")
    ids = result.ids
    assert "migrations" in ids
    if "style" in ids:
        assert ids.index("migrations") < ids.index("style")
    assert "database" in reasons(result, "migrations")["tag"]
    assert any("migration" in detail for detail in reasons(result, "migrations")["text"])


def test_text_selection_carries_scores_in_rank_order(store: Path) -> None:
    result = route(store, "database migrations", include_always=False)
    scores = [s.score for s in result.selected]
    assert scores == sorted(scores, reverse=True)
    assert all(score > 0 for score in scores)


def test_a_tag_shared_by_most_cards_still_counts(workspace: Path) -> None:
    """No negative IDF: a tag on 12 of 20 cards (df > N/2) still selects its cards."""
    mem = workspace / MEM
    fillers(mem, FILLER_WORDS[:8])
    for n in range(12):
        write_card(mem, f"py{n}.md", f"---\ntitle: Module {FILLER_WORDS[n]} rules\n"
                   "tags: [python]\n---\nSomething specific.\n")
    result = route(workspace, "python", limit=20)
    assert len(result.ids) == 12
    assert all(card_id.startswith("py") for card_id in result.ids)
    assert all(reasons(result, card_id)["tag"] == ["python"] for card_id in result.ids)


def test_a_tag_on_every_card_still_counts(workspace: Path) -> None:
    mem = workspace / MEM
    for n in range(10):
        write_card(mem, f"c{n}.md", f"---\ntitle: Card {FILLER_WORDS[n]}\ntags: [deploy]\n---\n"
                   "Body.\n")
    assert len(route(workspace, "deploy", limit=20).ids) == 10


def test_a_rare_tag_selects_its_card(store: Path) -> None:
    result = route(store, "session", include_always=False)
    assert result.ids == ["sessions"]
    assert reasons(result, "sessions")["tag"] == ["session"]


@pytest.mark.parametrize("prompt", ["obsession", "my obsessions", "obsessive session-less"])
def test_word_boundaries_no_substring_matches(store: Path, prompt: str) -> None:
    ids = route(store, prompt, include_always=False).ids
    if prompt == "obsessive session-less":
        assert ids == ["sessions"]  # `session` is a word here: `-` is a boundary
    else:
        assert ids == []


def test_inflections_match(store: Path) -> None:
    assert route(store, "session timeout", include_always=False).ids == ["sessions"]
    assert route(store, "Sessions", include_always=False).ids == ["sessions"]


def test_unicode_words(workspace: Path) -> None:
    mem = workspace / MEM
    fillers(mem)
    write_card(mem, "strasse.md", "---\ntitle: Straßenbahn Fahrplan\n---\nÜber die Straßenbahn.\n")
    write_card(mem, "cafe.md", "---\ntitle: Café menü\n---\nDas Menü im Café.\n")
    write_card(mem, "tokyo.md", "---\ntitle: 東京 ガイド\ntags: [東京]\n---\n東京の案内。\n")
    assert route(workspace, "straßenbahn fahrplan").ids == ["strasse"]
    assert route(workspace, "café menü").ids == ["cafe"]
    assert route(workspace, "東京").ids == ["tokyo"]
    assert route(workspace, "caf men").ids == []  # no prefix matching across letters


# --- paths ----------------------------------------------------------------------------------

def test_touched_path_matches_globs_relative_to_the_root(store: Path) -> None:
    result = route(store, "", ["src/app.py"], include_always=False)
    assert result.ids == ["python"]
    assert reasons(result, "python")["path"] == ["src/**/*.py matches src/app.py"]
    assert route(store, "", [str(store / "docs" / "x" / "y.mdx")], include_always=False).ids == [
        "docs"]
    assert route(store, "", ["src/app.js"], include_always=False).ids == []


def test_relative_paths_resolve_against_the_given_cwd(store: Path) -> None:
    result = route(store, "", ["app.py"], cwd=store / "src", include_always=False)
    assert result.ids == ["python"]
    # The same relative path from the root is `app.py`, which `src/**/*.py` does not match.
    assert route(store, "", ["app.py"], include_always=False).ids == []


def test_paths_outside_the_workspace_never_match(store: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "src" / "app.py"  # its tail would match src/**/*.py
    result = route(store, "", [str(outside), "../elsewhere/src/app.py"], include_always=False)
    assert result.ids == []
    assert result.warnings and all("outside the workspace" in w for w in result.warnings)


def test_a_path_match_outranks_text(store: Path) -> None:
    result = route(store, "database migrations", ["src/app.py"], include_always=False)
    assert result.ids[0] == "python"
    assert "migrations" in result.ids


def test_prompt_named_existing_files_anchor_their_cards(store: Path) -> None:
    result = route(store, "please tidy `src/app.py` and docs/guide.md", include_always=False)
    assert set(result.ids) == {"python", "docs"}
    assert reasons(result, "python")["path"] == ["src/**/*.py matches prompt path src/app.py"]


def test_prompt_named_missing_files_do_not_anchor(store: Path) -> None:
    assert route(store, "create src/new_module.py", include_always=False).ids == []


def test_prompt_named_file_outside_the_workspace_does_not_anchor(store: Path,
                                                                  tmp_path: Path) -> None:
    outside = tmp_path / "other" / "src" / "app.py"
    outside.parent.mkdir(parents=True)
    outside.write_text("x", encoding="utf-8")
    assert route(store, f"look at {outside}", include_always=False).ids == []


def test_too_many_touched_paths_are_capped_with_a_warning(store: Path) -> None:
    paths = [f"src/m{n}.py" for n in range(router.MAX_PATHS + 10)]
    result = route(store, "", paths, include_always=False)
    assert result.ids == ["python"]
    assert any(str(router.MAX_PATHS) in warning for warning in result.warnings)


# --- dependencies and limit -----------------------------------------------------------------

def test_prerequisites_come_first(workspace: Path) -> None:
    mem = workspace / MEM
    fillers(mem)
    write_card(mem, "base.md", "---\ntitle: Base conventions\n---\nBase.\n")
    write_card(mem, "middle.md", "---\ntitle: Middle layer\ndepends_on: [base]\n---\nMiddle.\n")
    write_card(mem, "top.md", "---\ntitle: Deploy pipeline\ndepends_on: [middle]\n"
               "applies_to: [deploy/**]\n---\nDeploy.\n")
    result = route(workspace, "", ["deploy/run.sh"])
    assert result.ids == ["base", "middle", "top"]
    assert reasons(result, "base")["dependency"] == ["required by middle"]
    assert reasons(result, "middle")["dependency"] == ["required by top"]


def test_a_prerequisite_selected_on_its_own_still_comes_first(workspace: Path) -> None:
    mem = workspace / MEM
    fillers(mem)
    write_card(mem, "base.md", "---\ntitle: Deploy basics\n---\nBasics.\n")
    write_card(mem, "top.md", "---\ntitle: Deploy pipeline\ndepends_on: [base]\n---\nPipeline.\n")
    ids = route(workspace, "deploy pipeline basics").ids
    assert ids.index("base") < ids.index("top")
    assert ids.count("base") == 1


def test_limit_caps_the_ranked_cards(workspace: Path) -> None:
    mem = workspace / MEM
    fillers(mem)
    for n in range(12):
        write_card(mem, f"p{n:02}.md", f"---\napplies_to: [src/**]\npriority: {n}\n---\nP{n}.\n")
    result = route(workspace, "", ["src/x.py"], limit=3)
    assert len(result.ids) == 3
    # Equal scores: higher priority first.
    assert result.ids == ["p11", "p10", "p09"]
    assert len(route(workspace, "", ["src/x.py"]).ids) == router.DEFAULT_LIMIT


def test_an_always_card_survives_the_limit(workspace: Path) -> None:
    mem = workspace / MEM
    fillers(mem)
    write_card(mem, "start.md", "---\ntitle: Project overview\nalways: true\npriority: 0\n---\n"
               "Overview of src.\n")
    for n in range(3):
        write_card(mem, f"p{n}.md", f"---\napplies_to: [src/**]\npriority: 90\n---\nP{n}.\n")
    assert "start" in route(workspace, "hello", ["src/x.py"]).ids
    # Now the always card also matches the path, ranks last, and falls outside limit=2.
    write_card(mem, "start.md", "---\ntitle: Project overview\nalways: true\npriority: 0\n"
               "applies_to: [src/**]\n---\nOverview.\n")
    assert "start" in route(workspace, "", ["src/x.py"], limit=2).ids


def test_a_small_store_routes_an_exact_title(workspace: Path) -> None:
    mem = workspace / MEM
    write_card(mem, "kites.md", "---\ntitle: Kite flying\n---\nHow we fly kites.\n")
    write_card(mem, "boats.md", "---\ntitle: Boat repair\n---\nHow we fix boats.\n")
    assert route(workspace, "kite flying").ids == ["kites"]


def test_routing_is_deterministic(store: Path) -> None:
    first = route(store, "database migrations session", ["src/app.py"])
    second = route(store, "database migrations session", ["src/app.py"])
    assert first == second


def test_explicit_roots(tmp_path: Path) -> None:
    root = tmp_path / "cards"
    fillers(root)
    write_card(root, "rust.md", "---\ntitle: Rust crates\napplies_to: [\"**/*.rs\"]\n---\nR.\n")
    compiled = index.load_roots([root])
    result = route_request(compiled, tmp_path, tmp_path, "", ["lib/a.rs"], 8)
    assert result.ids == ["rust"]


# --- selection by what a card says it is about (its head) -------------------------------------

def _generic_store(mem: Path) -> None:
    """Cards whose long bodies share everyday words, so body evidence is everywhere."""
    fillers(mem)
    common = ("Add the user to the list, update the api and test the email flow. " * 6)
    for name, title, card in [
            ("logging", "Logging", "How we log on the backend"),
            ("billing", "Billing with Stripe", "Subscriptions, invoices and the webhook"),
            ("layout", "Project structure", "Where files and folders go"),
            ("email-sending", "Transactional email", "Templates and the send job"),
            ("testing", "Testing guidelines", "Unit tests with Vitest")]:
        body = ("Use structlog for every log line; structlog binds the request id. Levels: "
                "error for what needs a human, info for business events.\n"
                if name == "logging" else common)
        write_card(mem, f"{name}.md", f"---\ntitle: {title}\ncard: {card}\n---\n{body}\n")


def test_a_word_only_in_a_body_selects_its_card_when_it_is_the_best_hit(workspace: Path) -> None:
    _generic_store(workspace / MEM)
    result = route(workspace, "use structlog", include_always=False)
    assert result.ids == ["logging"]
    assert result.why(index.load_or_build(workspace_of(workspace)), "logging")[0].kind == "selected"


def test_body_only_evidence_selects_only_the_best_hit(workspace: Path) -> None:
    """Generic words summed over long bodies used to select every long card; now only the
    single best text hit can come in on body words alone."""
    _generic_store(workspace / MEM)
    result = route(workspace, "add the user to the list and update the api", include_always=False)
    assert len(result.ids) <= 1


def test_a_headline_match_selects_and_a_generic_body_match_does_not(workspace: Path) -> None:
    _generic_store(workspace / MEM)
    result = route(workspace, "add a Stripe webhook for the user's invoices", include_always=False)
    assert result.ids == ["billing"]


def test_a_phrase_in_a_title_is_named_in_the_explanation(workspace: Path) -> None:
    mem = workspace / MEM
    fillers(mem)
    write_card(mem, "server-actions.md", "---\ntitle: Server actions\ncard: Guidelines for "
               "implementing Next.js server actions\n---\nUse next-safe-action.\n")
    write_card(mem, "knowledge.md", "---\ntitle: Knowledge base\ncard: How the knowledge base "
               "feature works\n---\nEntries are stored per account; the server action "
               "deletes an entry.\n")

    result = route(workspace, "write a server action to delete a knowledge base entry",
                   include_always=False)
    assert set(result.ids) == {"server-actions", "knowledge"}
    loaded = index.load_or_build(workspace_of(workspace))
    assert '"server action"' in result.why(loaded, "server-actions")[0].detail


def test_a_short_rule_is_selected_by_its_few_headline_words(workspace: Path) -> None:
    """A rule with a tiny head ("Prisma usage") is fully named by a Prisma question, even
    though "prisma" appears in the bodies of many longer cards."""
    mem = workspace / MEM
    fillers(mem)
    write_card(mem, "prisma.md", "---\ntitle: Prisma usage\ndescription: How to use Prisma\n"
               "globs:\n---\nImport the client from @/utils/prisma.\n")
    for n in range(6):
        write_card(mem, f"feature-{n}.md", f"---\ntitle: Feature {FILLER_WORDS[n]} guide\n"
                   f"card: How the {FILLER_WORDS[n]} feature works\n---\n"
                   + "The prisma model and the prisma query for this feature. " * 4)
    result = route(workspace, "query the database with Prisma for all rules", include_always=False)
    assert "prisma" in result.ids


def test_explanations_name_prompt_words_and_fields_never_stems(workspace: Path) -> None:
    _generic_store(workspace / MEM)
    result = route(workspace, "add a Stripe webhook for the user's invoices", include_always=False)
    loaded = index.load_or_build(workspace_of(workspace))
    verdict, words = result.why(loaded, "billing")[:2]
    assert verdict.kind == "selected" and "title, tags and description" in verdict.detail
    assert ("Stripe", "title") in words.words and ("invoices", "description") in words.words
    assert "invoic " not in words.detail and '"invoices" in the description' in words.detail
    cut = result.why(loaded, "layout")
    assert cut[0].kind == "cut" and cut[0].detail.startswith("not selected")
    assert result.why(loaded, "no-such-card") == []


def test_the_limit_counts_ranked_cards_and_says_what_came_on_top(workspace: Path) -> None:
    mem = workspace / MEM
    fillers(mem)
    write_card(mem, "base.md", "---\ntitle: Base setup\n---\nBase.\n")
    for name in ("deploy-api", "deploy-web", "deploy-docs"):
        write_card(mem, f"{name}.md", f"---\ntitle: Deploy {name[7:]}\ntags: [deploy]\n"
                   "depends_on: [base]\n---\nDeploy steps.\n")
    result = route(workspace, "deploy", limit=2, include_always=False)
    assert len(result.ranked) == 2 and result.beyond_limit == ["base"]
    assert len(result.over_limit) == 1


def workspace_of(ws: Path):  # noqa: ANN201
    loaded = workspace.load(ws)
    assert loaded is not None
    return loaded


def test_touched_file_names_become_query_words() -> None:
    from engram import anchors

    assert anchors.name_words(["web/src/locales/de/tasks.json"]) == "de tasks"
    assert anchors.name_words(["api/prisma/migrations/2026_init/migration.sql"]) == \
        "2026 init migration"
    assert anchors.name_words(["src/app.py", ".env.example"]) == "app env example"


def test_a_card_without_globs_routes_for_a_file_its_headline_names(workspace: Path) -> None:
    """A path event has no prompt: with `name_words` the touched file's name is the query, so a
    "Migrations" card with no globs still reaches an agent editing a migration file."""
    mem = workspace / MEM
    fillers(mem)
    write_card(mem, "migrations.md", "---\ntitle: Database migrations\n---\nNever edit an "
               "applied migration.\n")
    loaded = workspace_of(workspace)
    compiled = index.load_or_build(loaded)
    path = "db/migrations/0042_add_index/migration.sql"
    assert route_request(compiled, workspace, workspace, "", [path], 8).ids == []
    assert route_request(compiled, workspace, workspace, "", [path], 8, name_words=True).ids == [
        "migrations"]


@settings(max_examples=300, deadline=None)
@given(st.text() | st.text(alphabet=st.characters(max_codepoint=127)))
def test_fast_ascii_tokens_are_the_regex_tokens(value: str) -> None:
    """`text.tokens` splits ASCII text with a byte table instead of the `\\w+` regex: the same
    tokens, in order, for any text."""
    import re

    from engram import text

    assert text.tokens(value) == re.findall(r"\w+", value)


def test_a_tag_many_cards_share_selects_them_only_when_the_prompt_names_nothing_else(
        workspace: Path) -> None:
    """`api` on five cards is a category: "api" alone selects all five, but a prompt about an
    API endpoint selects the endpoint card, not the rate-limit and cache cards."""
    mem = workspace / MEM
    fillers(mem)
    for name, title in [("api-endpoints", "API endpoint conventions"),
                        ("api-errors", "API errors"), ("api-caching", "API caching with Redis"),
                        ("rate-limiting", "Rate limiting"), ("api-tests", "API integration tests")]:
        write_card(mem, f"{name}.md", f"---\ntitle: {title}\ntags: [api]\n---\nDetails.\n")
    assert len(route(workspace, "api", include_always=False).ids) == 5
    assert route(workspace, "add an API endpoint that lists overdue tasks",
                 include_always=False).ids == ["api-endpoints"]
    write_card(mem, "payments.md", "---\ntitle: Payments\ntags: [stripe]\n---\nDetails.\n")
    assert route(workspace, "stripe webhook retries", include_always=False).ids == ["payments"]


def test_a_card_naming_fewer_of_the_prompt_words_than_a_better_one_is_dropped(
        workspace: Path) -> None:
    """Eight "<language> MCP server" cards: a Rust MCP question wants the Rust one, not the
    seven whose headlines name only "MCP server"; two cards naming the same words both stay."""
    mem = workspace / MEM
    fillers(mem)
    for language in ("rust", "java", "go", "python"):
        write_card(mem, f"{language}-mcp-server.md", f"---\ntitle: {language.title()} MCP server"
                   f"\ncard: Building MCP servers in {language.title()}\n---\nDetails.\n")
    result = route(workspace, "build an MCP server in Rust", include_always=False)
    assert result.ids == ["rust-mcp-server"]
    loaded = index.load_or_build(workspace_of(workspace))
    assert result.why(loaded, "java-mcp-server")[0].kind == "cut"
    text_hits = router._TextHits(loaded, "build an MCP server in Rust")
    slots = {loaded.slot_of(f"{lang}-mcp-server"): 1.0 for lang in ("rust", "java", "go")}
    slots[loaded.slot_of("rust-mcp-server")] = 2.0  # the better match
    assert router._undominated(text_hits, slots, list(slots)) == {loaded.slot_of("rust-mcp-server")}
    assert len(route(workspace, "build an MCP server", include_always=False).ids) == 4
