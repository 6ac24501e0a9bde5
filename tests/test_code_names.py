"""Routing on the code an agent writes: the names a card gives as code (`useTranslation`,
`react-i18next`) and the modules the written code imports (`../auth/policy`), taken from what
a Write, Edit, MultiEdit, replace or apply_patch carries; never what is only read."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hookkit import call, context, make_workspace, payload, sent_ids
from hypothesis import given, settings
from hypothesis import strategies as st

from engram import code_names, index, router, text
from engram.query import route_request

CARDS = {
    "i18n": "---\nid: i18n\ntitle: Translations\ncard: Every string goes through t() from "
            "react-i18next.\ntags: [i18n]\napplies_to: [\"web/src/locales/**\"]\n---\n"
            "No literal UI text: `const { t } = useTranslation(\"tasks\")`.\n",
    "forms": "---\nid: forms\ntitle: Forms\ntags: [forms]\n---\nForms use `react-hook-form` "
             "with `zodResolver`; server errors go through `setError`.\n",
    "permissions": "---\nid: permissions\ntitle: Roles and permissions\n"
                   "applies_to: [\"api/src/auth/policy.ts\"]\ndepends_on: [auth]\n---\n"
                   "Check with assertCan in services.\n",
    "auth": "---\nid: auth\ntitle: Sessions\napplies_to: [\"api/src/auth/session.ts\"]\n---\n"
            "Cookie sessions.\n",
    "transactions": "---\nid: transactions\ntitle: Transactions\n---\nWrap multi-writes in "
                    "`prisma.$transaction`; side effects go in `afterCommit`.\n",
    # `taskId` is named by three cards: it says nothing about any one of them.
    **{f"shared{i}": f"---\nid: shared{i}\ntitle: Shared {i}\n---\nEvery row has a `taskId`.\n"
       for i in range(3)},
}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path / "proj", cards=CARDS,
                          config={"hooks": {"path_rules": "hook"}})
    return root


def write(ws: Path, relative: str, text: str) -> str:
    path = ws / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def touched(ws: Path, path: str, tool: str = "Edit", host_event: str = "PostToolUse",
            **tool_input: object) -> str:
    return context(call("claude", payload("claude", f"{host_event}.json", ws, tool_name=tool,
                                          tool_input={"file_path": path, **tool_input},
                                          tool_response={"type": "text"})))


def patched(root: Path, patch: str) -> str:
    """What Codex's PreToolUse answers (the injected text) for an apply_patch of `patch`."""
    return context(call("codex", payload("codex", "PreToolUse.json", root, tool_name="apply_patch",
                                         tool_input={"command": patch})))


# --- the names, pure --------------------------------------------------------------------

@pytest.mark.parametrize(("token", "shaped"), [
    ("useTranslation", True), ("TaskCard", True), ("$transaction", True), ("task_one", True),
    ("http2Server", True), ("tasks", False), ("Never", False), ("URL", False), ("use", False),
    ("__init__", False), ("a_b", False), ("____", False)])
def test_only_identifiers_no_word_looks_like_are_code_names(token: str, shaped: bool) -> None:
    assert code_names.code_shaped(token) is shaped


@pytest.mark.parametrize(("specifier", "python", "name"), [
    ("date-fns/locale", False, "date-fns"), ("@tanstack/react-query/devtools", False,
                                              "@tanstack/react-query"),
    ("node:fs", False, "fs"), ("react", False, "react"), ("./x", False, ""),
    ("../auth/policy", False, ""), ("socket.io", False, "socket.io"),
    ("sqlalchemy.orm", True, "sqlalchemy"), ("..models", True, ""), ("@scope", False, "")])
def test_an_import_names_its_package(specifier: str, python: bool, name: str) -> None:
    assert code_names.package_name(specifier, python) == name


def test_a_cards_names_are_its_code_not_its_words() -> None:
    names = code_names.card_names(
        "Translations", "Every string goes through t() from react-i18next.",
        "Use `useTranslation`; keys by feature (`tasks`, `billing`). Put `aria-label` on icons. "
        "The user-facing text lives in web/src/locales. No `React.FC`.", ("i18n", "date-fns"))
    code = {n[1:] for n in names if not n.startswith(code_names.PACKAGE_PREFIX)}
    packages = {n[2:] for n in names if n.startswith(code_names.PACKAGE_PREFIX)}
    assert {"usetranslation", "aria-label"} <= code
    assert not {"tasks", "billing", "user-facing", "translations", "string"} & code
    # Plain words count only as what a file imports; a path is not a package.
    assert {"react-i18next", "tasks", "billing", "i18n", "date-fns"} <= packages
    assert not any("/" in p and not p.startswith("@") for p in packages)
    assert "react" not in packages  # `React.FC` is a member, not an npm name (lowercase)


def test_a_files_names_are_its_imports_identifiers_and_hyphenated_tokens() -> None:
    code = ('import { useTranslation } from "react-i18next";\n'
            "import { cn } from '../lib/cn';\nconst s = require('node:path');\n"
            'export function Badge() { return <span aria-label="due" className="bg-surface">'
            "{t('x')}</span> }\nfrom app.models import task\n")
    names = code_names.file_names(code)
    assert code_names.PACKAGE_PREFIX + "react-i18next" in names
    assert code_names.PACKAGE_PREFIX + "path" in names
    assert code_names.PACKAGE_PREFIX + "app" in names  # Python's top-level package
    for name in ("usetranslation", "aria-label", "bg-surface", "classname"):
        assert code_names.KEY_PREFIX + name in names
    assert code_names.KEY_PREFIX + "badge" not in names and code_names.KEY_PREFIX + "span" not in names
    assert len(code_names.file_names("aB_" * 100_000)) <= code_names.MAX_NAMES


def test_relative_imports_resolve_inside_the_workspace_only() -> None:
    code = ('import { assertCan } from "../auth/policy";\nimport x from "./util.js";\n'
            'import y from "../../../../etc/passwd";\nimport z from "zod";\n'
            "from ..models import task\nfrom . import helpers\n")
    groups = code_names.imported_paths(code, "api/src/services/tasks.ts")
    firsts = [group[0] for group in groups]
    assert firsts[:2] == ["api/src/auth/policy", "api/src/services/util.js"]
    assert "api/src/auth/policy.ts" in groups[0] and "api/src/auth/policy/index.ts" in groups[0]
    assert not any(".." in path or path.startswith("/") for group in groups for path in group)
    py = code_names.imported_paths("from ..models import task\nfrom .util import x\n",
                                   "app/api/views.py")
    assert py == [["app/models.py", "app/models/__init__.py"],
                  ["app/api/util.py", "app/api/util/__init__.py"]]


# --- the router -------------------------------------------------------------------------

def test_a_name_few_cards_give_selects_them_and_says_why(ws: Path) -> None:
    compiled = index.load_roots([ws / ".agents" / ".engram"])
    result = router.route(compiled, router.Query(
        code_names=tuple(code_names.file_names(
            'import { useForm } from "react-hook-form";\nimport { zodResolver } from "x";\n'
            'import { useTranslation } from "react-i18next";\nconst { t } = useTranslation();\n'
            "await prisma.$transaction([a, b]); afterCommit(send); row.taskId\n")),
        include_always=False))
    assert sorted(result.ids) == ["forms", "i18n", "transactions"]
    reasons = {s.id: [r for r in s.reasons if r.kind == "code"] for s in result.selected}
    assert reasons["i18n"][0].detail == ("the touched files use `react-i18next`, `usetranslation`, "
                                         "which it names")
    assert "`react-hook-form`" in reasons["forms"][0].detail
    # A prompt never reaches a code name's key: no term the tokenizer makes has a backtick.
    assert not any("`" in term for term in text.terms("`usetranslation` `!react` a`b"))


def test_one_name_alone_is_not_enough(ws: Path) -> None:
    """A single shared name is often incidental (a `createdAt` column in any file)."""
    compiled = index.load_roots([ws / ".agents" / ".engram"])
    for code in ("await prisma.$transaction([a]);\n", 'import x from "react-hook-form";\n'):
        result = router.route(compiled, router.Query(
            code_names=tuple(code_names.file_names(code)), include_always=False))
        assert result.ids == [], code


def test_an_imported_module_a_card_claims_selects_it_with_its_prerequisites(ws: Path) -> None:
    write(ws, "api/src/auth/policy.ts", "export function assertCan() {}\n")
    service = write(ws, "api/src/services/tasks.ts",
                    'import { assertCan } from "../auth/policy";\nexport const list = 1;\n')
    compiled = index.load_roots([ws / ".agents" / ".engram"])
    code = (ws / "api/src/services/tasks.ts").read_text()
    result = route_request(compiled, ws, ws, "", [service], 50, include_always=False, code=code)
    assert result.ids == ["auth", "permissions"]
    detail = [r.detail for r in result.selected[1].reasons if r.kind == "import"]
    assert detail == ["api/src/auth/policy.ts matches api/src/auth/policy.ts, imported by "
                      "api/src/services/tasks.ts"]
    # Without code reading (a prompt event) the import is not seen.
    assert route_request(compiled, ws, ws, "", [service], 50, include_always=False).ids == []


def test_an_import_a_card_claims_is_one_piece_of_evidence_of_two(ws: Path) -> None:
    """An import of a module a card's `applies_to` claims counts once, like one name it gives
    as code (CODE_MIN): alone, or with a second module the card claims, it selects nothing;
    with a name the card gives as code it does."""
    write(ws, ".agents/.engram/rbac.md", "---\nid: rbac\ntitle: Role checks\n"
          "applies_to: [\"api/src/rbac/**\"]\n---\nCheck with assertRole.\n")
    write(ws, "api/src/rbac/roles.ts", "export const roles = [];\n")
    write(ws, "api/src/rbac/grants.ts", "export const grants = [];\n")
    code = ('import { roles } from "../rbac/roles";\nimport { grants } from "../rbac/grants";\n'
            "export const list = () => [roles, grants];\n")
    service = write(ws, "api/src/services/tasks.ts", code)
    compiled = index.load_roots([ws / ".agents" / ".engram"])
    assert route_request(compiled, ws, ws, "", [service], 50, include_always=False,
                         code=code).ids == []
    assert route_request(compiled, ws, ws, "", [service], 50, include_always=False,
                         code=code + "assertRole(user);\n").ids == ["rbac"]


def test_an_import_of_a_missing_module_matches_nothing(ws: Path) -> None:
    service = write(ws, "api/src/services/tasks.ts", 'import { a } from "../auth/policy";\n')
    compiled = index.load_roots([ws / ".agents" / ".engram"])
    assert route_request(compiled, ws, ws, "", [service], 50, include_always=False,
                         code='import { a } from "../auth/policy";\n').ids == []


# --- the hook ---------------------------------------------------------------------------

I18N_CODE = ('import { useTranslation } from "react-i18next";\n'
             "export function Badge() { const { t } = useTranslation(); }\n")
FORM_CODE = ('import { useForm } from "react-hook-form";\n'
             "const form = useForm({ resolver: zodResolver(schema) });\n")


def test_written_code_brings_the_cards_it_uses_once(ws: Path) -> None:
    component = write(ws, "web/src/components/Badge.tsx", I18N_CODE)
    assert sent_ids(touched(ws, component, "Write", content=I18N_CODE)) == ["i18n"]
    assert touched(ws, component, "Edit", old_string="x", new_string=I18N_CODE).strip() == ""
    form = write(ws, "web/src/components/Settings.tsx", FORM_CODE)
    assert sent_ids(touched(ws, form, "Edit", old_string="", new_string=FORM_CODE)) == ["forms"]


def test_a_multiedit_routes_on_the_new_text_of_all_its_edits(ws: Path) -> None:
    path = write(ws, "web/src/components/Settings.tsx", FORM_CODE + I18N_CODE)
    edits = [{"old_string": "a", "new_string": 'import { useForm } from "react-hook-form";'},
             {"old_string": "b", "new_string": "useForm({ resolver: zodResolver(s) })"},
             {"old_string": "c", "new_string": 7}]
    assert sent_ids(touched(ws, path, "MultiEdit", edits=edits)) == ["forms"]


def test_what_is_only_read_or_removed_does_not_route_by_code(ws: Path) -> None:
    """A file uses many conventions; the ones that matter are those of the code being
    written. A read, and the old text an edit replaces, route by path and name only."""
    component = write(ws, "web/src/components/Badge.tsx", I18N_CODE + FORM_CODE)
    assert touched(ws, component, "Read").strip() == ""
    assert touched(ws, component, "Edit", old_string=I18N_CODE, new_string="x").strip() == ""


# A file a patch adds whose code uses two of the transactions card's names.
COMMENTS_ADDED = ("*** Add File: api/src/services/comments.ts\n"
                  "+export async function remove(id: string) {\n"
                  "+  await prisma.$transaction([a(id), b(id)]);\n+  afterCommit(() => notify(id));\n"
                  "+}\n")


def test_the_lines_a_codex_patch_adds_route_before_the_file_exists(ws: Path) -> None:
    patch = "*** Begin Patch\n" + COMMENTS_ADDED + "*** End Patch\n"
    assert sent_ids(patched(ws, patch)) == ["transactions"]
    removed = ("*** Begin Patch\n*** Update File: api/src/services/tasks.ts\n@@\n"
               "-  await prisma.$transaction([a(id), b(id)]);\n-  afterCommit(() => x);\n"
               "+  await run(id);\n*** End Patch\n")
    ws2 = make_workspace(ws.parent / "other", cards=CARDS)
    assert patched(ws2, removed) == ""


def test_claudes_legacy_pretooluse_routes_on_what_the_write_carries(ws: Path) -> None:
    assert sent_ids(touched(ws, str(ws / "web/src/New.tsx"), "Write", "PreToolUse",
                            content=I18N_CODE)) == ["i18n"]


def test_geminis_write_file_and_replace_route_on_their_code(ws: Path) -> None:
    for tool, field in (("write_file", "content"), ("replace", "new_string")):
        root = make_workspace(ws.parent / tool, cards=CARDS)
        document = payload("gemini", "AfterTool.json", root, tool_name=tool, session_id=tool,
                           tool_input={"file_path": str(root / "web/src/New.tsx"),
                                       field: FORM_CODE})
        assert sent_ids(context(call("gemini", document))) == ["forms"], tool


def test_a_written_import_of_an_existing_module_routes_its_card(ws: Path) -> None:
    write(ws, "api/src/auth/policy.ts", "export function assertCan() {}\n")
    code = 'import { assertCan } from "../auth/policy";\nassertCan(user, "task:edit");\n'
    service = write(ws, "api/src/services/tasks.ts", code)
    assert sent_ids(touched(ws, service, "Write", content=code)) == ["auth", "permissions"]


def test_load_code_off_routes_path_events_by_path_and_name_only(ws: Path) -> None:
    (ws / ".agents" / "engram.json").write_text(json.dumps(
        {"hooks": {"path_rules": "hook"}, "load": {"code": False}}))
    component = write(ws, "web/src/components/Badge.tsx", I18N_CODE)
    assert touched(ws, component, "Write", content=I18N_CODE).strip() == ""
    locale = write(ws, "web/src/locales/de/tasks.json", "{}")
    assert sent_ids(touched(ws, locale, "Write", content="{}")) == ["i18n"]


def test_data_files_are_not_routed_as_code(ws: Path) -> None:
    """A manifest lists every package the project has; it uses none of them."""
    text = '{"dependencies": {"react-i18next": "1", "react-hook-form": "7"}, "x": "useForm"}'
    manifest = write(ws, "web/package.json", text)
    assert touched(ws, manifest, "Write", content=text).strip() == ""




def test_route_written_explains_the_code_evidence(ws: Path) -> None:
    """`engram route --written FILE` shows a card author what a hook would select for code."""
    component = write(ws, "web/src/components/Badge.tsx", I18N_CODE)
    done = subprocess.run([sys.executable, "-m", "engram", "route", "--written", component,
                           "--explain"], cwd=ws, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "i18n" in done.stdout
    assert "code: the touched files use `react-i18next`, `usetranslation`" in done.stdout
    piped = subprocess.run([sys.executable, "-m", "engram", "route", "--path", component,
                            "--written", "-", "--json"], cwd=ws, input=FORM_CODE,
                           capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0, piped.stderr
    assert [card["id"] for card in json.loads(piped.stdout)["selected"]] == ["forms"]
    missing = subprocess.run([sys.executable, "-m", "engram", "route", "--written",
                              str(ws / "nope.ts")], cwd=ws, capture_output=True, text=True,
                             timeout=120)
    assert missing.returncode != 0 and "cannot read" in missing.stderr


CODE_ALPHABET = st.sampled_from(list("aZ_$-./@'\"`(){}\n \t:;=*+") + ["import ", "from ", "require(",
                                                                      "../", "./", "\u00e9", "\x00"])


@settings(max_examples=300, deadline=None)
@given(st.lists(CODE_ALPHABET, max_size=400).map("".join),
       st.lists(st.sampled_from(["a", "b", "..", ".", "src"]), min_size=1, max_size=5))
def test_any_code_gives_bounded_names_and_imports_inside_the_workspace(code: str,
                                                                       parts: list[str]) -> None:
    """Whatever an agent writes: no error, at most MAX_NAMES names, every key reachable only
    through the backtick prefix, and no imported path outside the workspace."""
    relative = "/".join(parts) + "/file.ts"
    names, groups = code_names.file_evidence(code, relative)
    assert len(names) <= code_names.MAX_NAMES + 2 * code_names.MAX_IMPORTS
    assert all(name.startswith(code_names.KEY_PREFIX) and len(name) > 1 for name in names)
    assert len(groups) <= code_names.MAX_IMPORTS
    for group in groups:
        for path in group:
            assert not path.startswith(("/", "../")) and path not in (".", "..")
            assert "/../" not in path and not path.endswith("/..")
    assert all(key.startswith(code_names.KEY_PREFIX)
               for key in code_names.card_names(code, code, code, (code,)))


# --- what the real clients send (tests/fixtures/payloads, captured by the e2e suite) -----

# The card and file of the e2e conversations that write code (tests/e2e/harness.py): src/cart.ts
# uses both of delta's code names; each capture reads it, edits it, or writes src/receipt.ts.
DELTA = ("---\nid: delta\ntitle: Currency rules\n---\nDELTA-6f1 Amounts are integers of minor "
         "units: convert with `toMinorUnits`, print with `formatMinorUnits`.\n")


def real(client: str, name: str, root: Path) -> dict:
    """A captured payload with the capture's project folder (and every path in it, Claude's
    absolute file_path included) moved to `root`."""
    raw = (Path(__file__).parent / "fixtures" / "payloads" / client / name).read_text(encoding="utf-8")
    return json.loads(raw.replace("/home/dev/proj", str(root)))


@pytest.mark.parametrize(("client", "name", "sent"), [
    ("claude", "PostToolUse.read.json", []),
    ("claude", "PostToolUse.edit.json", ["delta"]),
    ("claude", "PostToolUse.write.json", ["delta"]),
    ("codex", "PreToolUse.patch-update.json", ["delta"]),
    ("codex", "PreToolUse.patch-add.json", ["delta"]),
    ("gemini", "AfterTool.read.json", []),
    ("gemini", "AfterTool.replace.json", ["delta"]),
    ("gemini", "AfterTool.write.json", ["delta"])])
def test_real_payloads_route_on_the_code_they_write_once(tmp_path: Path, client: str, name: str,
                                                         sent: list[str]) -> None:
    """Claude's Edit carries the whole old file (`tool_response.originalFile`) and Gemini's
    read the file's text (`tool_response.llmContent`): what a tool answers is not code
    written, only `code_fields` are."""
    root = make_workspace(tmp_path / "proj", cards={"delta": DELTA},
                          config={"hooks": {"path_rules": "hook"}})
    document = real(client, name, root)
    assert sent_ids(context(call(client, document))) == sent
    assert context(call(client, document)) == ""  # once per session


def test_a_patch_codex_applies_through_the_shell_routes_like_apply_patch(tmp_path: Path) -> None:
    """A model Codex gives no apply_patch tool (any model not in its catalog) edits files with
    `apply_patch <<'EOF' … EOF` in a shell call; Codex applies it, but the hook sees tool_name
    Bash and the whole heredoc in tool_input.command (captured from 0.171.0). Its targets and
    added lines route as a patch's; a shell command that is no patch answers nothing."""
    root = make_workspace(tmp_path / "proj", cards={
        "delta": DELTA, "receipts": "---\nid: receipts\ntitle: Receipts\n"
                                    "applies_to: [\"src/receipt.ts\"]\n---\nRECEIPTS-1 Two lines.\n"})
    document = real("codex", "PreToolUse.shell-patch.json", root)
    assert document["tool_name"] == "Bash"
    assert sent_ids(context(call("codex", document))) == ["receipts", "delta"]
    assert context(call("codex", document)) == ""
    plain = real("codex", "PreToolUse.shell-patch.json", root)
    plain["tool_input"] = {"command": "cat src/cart.ts"}
    assert call("codex", plain).strip() == "{}"


def test_a_patch_routes_on_the_lines_it_adds_to_source_files_only(ws: Path) -> None:
    """One patch, several files: the lines added to a source file are code written, whichever
    file the patch names first; those added to a note or a manifest are not."""
    patch = ("*** Begin Patch\n*** Add File: notes/cleanup.md\n+Remove old comments.\n"
             + COMMENTS_ADDED + "*** End Patch\n")
    assert sent_ids(patched(ws, patch)) == ["transactions"]
    data = ("*** Begin Patch\n*** Add File: api/src/services/empty.ts\n+export {};\n"
            "*** Add File: web/package.json\n"
            '+{"dependencies": {"react-hook-form": "7"}, "x": "zodResolver"}\n*** End Patch\n')
    ws2 = make_workspace(ws.parent / "other", cards=CARDS)
    assert patched(ws2, data) == ""


def test_a_patch_s_added_lines_belong_to_the_file_they_are_added_to() -> None:
    from engram import patch_paths

    patch = ("*** Begin Patch\n*** Update File: a.ts\n@@\n-old\n+new a\n*** End of File\n"
             "*** Delete File: gone.ts\n+not a file's\n"
             "*** Update File: b.py\n*** Move to: c.py\n@@\n+moved\n"
             "*** Add File: d.md\n+note\n*** End Patch\n+after the end\n")
    assert patch_paths.added(patch) == [("a.ts", "new a"), ("c.py", "moved"), ("d.md", "note")]
    huge = "".join(f"*** Add File: f{i}.ts\n+x\n" for i in range(patch_paths.MAX_PATHS + 50))
    assert len(patch_paths.added(huge)) == patch_paths.MAX_PATHS


def test_the_event_keeps_as_much_code_as_the_names_are_read_from() -> None:
    """event.py repeats the bound so that the hook path does not import code_names."""
    from engram import event

    assert event.MAX_CODE_CHARS == code_names.MAX_CODE_CHARS
