"""Host definitions: registry, aliases, the JSON cache the hook path reads, the schema."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from engram import host_registry
from engram.resources import data_dir

SCHEMA = data_dir("schemas") / "host.schema.json"


def test_every_host_yaml_validates_against_the_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    files = sorted(data_dir("hosts").glob("*.yaml"))
    assert len(files) >= 8
    for path in files:
        errors = [f"{'/'.join(map(str, e.path))}: {e.message}"
                  for e in validator.iter_errors(yaml.safe_load(path.read_text()))]
        assert not errors, f"{path.name}: {errors}"


def test_schema_rejects_a_timeout_on_a_host_without_one() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    cursor = yaml.safe_load((data_dir("hosts") / "cursor.yaml").read_text())
    cursor["install"]["timeout_seconds"] = 10
    assert list(validator.iter_errors(cursor))
    claude = yaml.safe_load((data_dir("hosts") / "claude.yaml").read_text())
    claude["install"]["events"][0]["when"] = "sometimes"
    assert list(validator.iter_errors(claude))


@pytest.mark.parametrize("name, canonical", [("claude", "claude"), ("cascade", "windsurf"),
                                             ("antigravity", "gemini"), ("Codex", "codex")])
def test_load_host_by_name_or_alias(name: str, canonical: str) -> None:
    assert host_registry.load_host(name)["name"] == canonical
    assert host_registry.get(name).name == canonical


def test_hosts_dir_is_the_bundled_data_dir() -> None:
    assert host_registry.hosts_dir() == data_dir("hosts")


def test_unknown_host() -> None:
    with pytest.raises(host_registry.UnknownHost):
        host_registry.load_host("emacs")


def test_registry_lists_supported_hosts_first() -> None:
    names = [h.name for h in host_registry.registry()]
    assert names[-2:] == ["cline", "copilot"]
    assert set(names) >= {"claude", "codex", "gemini", "cursor", "windsurf", "opencode"}
    assert host_registry.get("windsurf").names == ("windsurf", "cascade")


@pytest.fixture
def private_hosts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "hosts"
    shutil.copytree(data_dir("hosts"), folder)
    monkeypatch.setattr(host_registry, "_hosts_folder", lambda: str(folder))
    host_registry._memo.clear()
    yield folder
    host_registry._memo.clear()


def test_cache_is_written_and_invalidated_by_a_changed_yaml(private_hosts: Path, tmp_path: Path) -> None:
    assert host_registry.load_host("codex")["display_name"] == "Codex CLI"
    cache = tmp_path / "state" / "cache" / f"hosts-{host_registry.__version__}.json"
    assert json.loads(cache.read_text())["hosts"]["codex"]["name"] == "codex"
    path = private_hosts / "codex.yaml"
    path.write_text(path.read_text().replace("display_name: Codex CLI", "display_name: Codex"))
    os.utime(path, ns=(1, 1))  # a different mtime even on coarse clocks
    host_registry._memo.clear()
    assert host_registry.load_host("codex")["display_name"] == "Codex"


def test_unwritable_cache_still_loads(private_hosts: Path, monkeypatch: pytest.MonkeyPatch,
                                      tmp_path: Path) -> None:
    blocker = tmp_path / "blocked"
    blocker.write_text("a file where the state dir should be")
    monkeypatch.setenv("ENGRAM_STATE_DIR", str(blocker))
    assert host_registry.load_host("claude")["name"] == "claude"


def test_corrupt_cache_is_rebuilt(private_hosts: Path, tmp_path: Path) -> None:
    cache = tmp_path / "state" / "cache" / f"hosts-{host_registry.__version__}.json"
    cache.parent.mkdir(parents=True)
    cache.write_text("{not json")
    assert host_registry.load_host("gemini")["name"] == "gemini"
    assert json.loads(cache.read_text())["format"] == host_registry.CACHE_FORMAT


def test_import_is_light_and_a_warm_cache_needs_no_yaml() -> None:
    code = ("import sys, engram.host_registry as h\n"
            "heavy = [m for m in ('yaml', 'typer', 'portalocker', 'dataclasses', 'typing')"
            " if m in sys.modules]\n"
            "h.load_host('claude')\n"
            "print(heavy, 'yaml' in sys.modules)")
    env = dict(os.environ)
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert second.stdout.strip() == "[] False"


def test_native_rules_import_is_light() -> None:
    code = "import sys, engram.native_rules; print(sorted({'yaml', 'typer', 'portalocker'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stderr


def test_opencode_template_is_a_valid_es_module() -> None:
    if not Path("/usr/bin/node").exists():
        pytest.skip("node not installed")
    subprocess.run(["/usr/bin/node", "--input-type=module", "--check"],
                   input=(data_dir("hosts") / "opencode-plugin.js").read_bytes(), check=True)


def test_docs_parity_table_is_current() -> None:
    from engram.installer import docs_table

    path = docs_table.docs_path()
    if not path.exists():
        pytest.skip("docs/ not in this installation")
    assert docs_table.render(path.read_text(encoding="utf-8")) == path.read_text(encoding="utf-8"), \
        "docs/hosts.md is stale: run python -m engram.installer.docs_table --write"


# What each host's answer looked like when the envelopes were a switch in hook.py: the data
# in hosts/*.yaml must keep every byte.
ENVELOPES = {
    "claude": ('{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "mé"}}', "{}"),
    "codex": ('{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "mé"}}', "{}"),
    "gemini": ('{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "mé"}}', "{}"),
    "cursor": ('{"additional_context": "mé"}', "{}"),
    "windsurf": ("mé", ""),
    "opencode": ('{"action": "replace", "text": "mé", "slot": ""}', '{"action": "retain", "text": ""}'),
}


@pytest.mark.parametrize("name", sorted(ENVELOPES))
def test_answer_envelopes_come_from_the_host_definition(name: str) -> None:
    from engram import hook

    spec = hook.answer_spec(host_registry.load_host(name)["runtime"])
    full, empty = ENVELOPES[name]
    assert hook.encode(spec, "UserPromptSubmit", "mé") == full
    assert hook.encode(spec, "UserPromptSubmit", "") == empty
    assert hook.empty_answer(spec) == empty
    if name == "opencode":  # the single slot is also told to keep or clear what it holds
        assert hook.encode(spec, "x", "mé", action="retain") == empty
        assert hook.encode(spec, "x", "", action="clear") == '{"action": "clear", "text": ""}'
        assert hook.encode(spec, "x", "mé", slot="k1") == \
            '{"action": "replace", "text": "mé", "slot": "k1"}'
    else:
        assert hook.encode(spec, "x", "", action="clear") == empty


def test_a_new_host_is_a_yaml_file(private_hosts: Path, tmp_path: Path) -> None:
    """Everything the hook needs to serve a host comes from its definition: event names,
    payload fields, budget, answer envelope, aliases. Adding one needs no code."""
    from engram import hook

    (private_hosts / "acme.yaml").write_text(
        "name: acme\ndisplay_name: Acme Agent\naliases: [roadrunner]\nsupported: true\n"
        "runtime:\n"
        "  fields: {event: kind, session: conversation.id, cwd: workdir, prompt: message.text}\n"
        "  events:\n    ask: {kind: prompt}\n"
        "  budget: {unit: chars, limit: 4000}\n"
        "  answer:\n    envelope: {inject: {where: $event, body: $text}}\n    empty: 'null'\n"
        "install: {project_file: .acme/hooks.json, global_file: ~/.acme/agent/hooks.json,\n"
        "          global_folder: ~/.acme/agent,\n"
        "          format: matcher_groups, timeout_unit: seconds, timeout_seconds: 10,\n"
        "          events: [{event: ask}]}\n",
        encoding="utf-8")
    schema = json.loads((data_dir("schemas") / "host.schema.json").read_text())
    import jsonschema

    jsonschema.validate(yaml.safe_load((private_hosts / "acme.yaml").read_text()), schema)
    ws = tmp_path / "proj"
    (ws / ".git").mkdir(parents=True)
    (ws / ".agents" / ".engram").mkdir(parents=True)
    (ws / ".agents" / ".engram" / "release.md").write_text(
        "---\nid: release\ntags: [release]\n---\nCut releases from main.\n", encoding="utf-8")
    payload = {"kind": "ask", "conversation": {"id": "c1"}, "workdir": str(ws),
               "message": {"text": "how do we release?"}}
    answer = json.loads(hook.handle("roadrunner", json.dumps(payload).encode()))
    assert answer["inject"]["where"] == "ask"
    assert "Cut releases from main." in answer["inject"]["body"]
    payload["message"]["text"] = "nothing relevant here"
    payload["conversation"]["id"] = "c2"
    assert hook.handle("acme", json.dumps(payload).encode()) == "null"
    from engram.installer import plan

    assert plan.host_folder(host_registry.get("acme")) == Path.home() / ".acme" / "agent"


# The folder a --global link may write in, per host, as the installer derived it from
# global_file before the folder was data (two levels under ~/.config, else one).
GLOBAL_FOLDERS = {"claude": ".claude", "codex": ".codex", "cursor": ".cursor", "gemini": ".gemini",
                  "opencode": ".config/opencode", "windsurf": ".codeium"}


def test_every_hosts_global_file_lies_in_its_global_folder() -> None:
    from engram.installer import plan

    home = Path.home()
    supported = {h.name: h for h in host_registry.registry() if h.supported}
    assert sorted(supported) == sorted(GLOBAL_FOLDERS)
    for name, host in supported.items():
        folder = plan.host_folder(host)
        assert folder == home / GLOBAL_FOLDERS[name], name
        assert Path(os.path.expanduser(host.install["global_file"])).is_relative_to(folder), name


def test_a_new_hosts_rule_folder_is_a_yaml_file(private_hosts: Path, tmp_path: Path) -> None:
    """The rules folder of a host, the one kind of file it loads from there, and the folder of
    engram's generated copies come from the definition: a memory scan honours a new host's."""
    from engram import store

    (private_hosts / "acme.yaml").write_text(
        "name: acme\ndisplay_name: Acme Agent\naliases: []\nsupported: false\nreason: not yet\n"
        "rules: {folder: .acme/rules, suffix: .rule.md}\n", encoding="utf-8")
    (private_hosts / "claude.yaml").write_text(
        (private_hosts / "claude.yaml").read_text(encoding="utf-8").replace(
            "native_rules: .claude/rules/engram", "native_rules: .acme/rules/made"),
        encoding="utf-8")
    schema = json.loads((data_dir("schemas") / "host.schema.json").read_text())
    import jsonschema

    jsonschema.validate(yaml.safe_load((private_hosts / "acme.yaml").read_text()), schema)
    (tmp_path / "proj" / ".git").mkdir(parents=True)  # the workspace root
    root = tmp_path / "proj" / ".acme" / "rules"
    for name in ("api.rule.md", "notes.md", "made/api.rule.md", "team/db.rule.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("---\ndescription: api\n---\nThe API rule.\n", encoding="utf-8")
    found, problems = store.scan([(str(root), "workspace")])
    assert sorted(os.path.relpath(f.path, root) for f in found) == \
        ["api.rule.md", os.path.join("team", "db.rule.md")]
    assert [(p.code, os.path.basename(p.path)) for p in problems] == [("not-a-rule", "notes.md")]
    assert "Acme Agent loads only *.rule.md" in problems[0].message


def test_a_one_folder_native_rules_value_skips_only_that_folder(private_hosts: Path,
                                                                  tmp_path: Path) -> None:
    """`install.native_rules` names a folder relative to the workspace root. A host defined
    only in YAML whose value is one folder with no parent (`engram-rules`): the scan skips
    `<workspace>/engram-rules`, and a folder of the same name anywhere else is the user's."""
    from engram import index, store, workspace

    # A host like Claude Code, defined only by this file, whose generated copies go to
    # `<workspace>/engram-rules`.
    claude = (private_hosts / "claude.yaml").read_text(encoding="utf-8")
    (private_hosts / "acme.yaml").write_text(
        claude.replace("name: claude", "name: acme").replace("Claude Code", "Acme Agent")
        .replace("native_rules: .claude/rules/engram", "native_rules: engram-rules"),
        encoding="utf-8")
    assert "native_rules: engram-rules" in (private_hosts / "acme.yaml").read_text()
    schema = json.loads((data_dir("schemas") / "host.schema.json").read_text())
    import jsonschema

    jsonschema.validate(yaml.safe_load((private_hosts / "acme.yaml").read_text()), schema)
    ws = tmp_path / "proj"
    card = "---\nid: {}\ntitle: {}\n---\nThe {} rule.\n"
    for name in ("engram-rules/copy.md", "notes/engram-rules/mine.md",
                 "docs/engram-rules/theirs.md", "plain.md"):
        stem = Path(name).stem
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(card.format(stem, stem, stem), encoding="utf-8")
    (ws / ".git").mkdir()
    # The workspace root itself is the memory root, so its generated folder lies inside one.
    (ws / ".agents").mkdir()
    (ws / ".agents" / "engram.json").write_text('{"roots": ["."]}', encoding="utf-8")
    expected = ["docs/engram-rules/theirs.md", "notes/engram-rules/mine.md", "plain.md"]
    for given in (None, str(ws)):  # the workspace found upward from the root, or named
        found, _ = store.scan([(str(ws), "config")], workspace=given)
        assert sorted(os.path.relpath(f.path, ws) for f in found) == expected
    found, _ = store.scan([(str(ws / "notes"), "config")])
    assert [os.path.relpath(f.path, ws) for f in found] == ["notes/engram-rules/mine.md"]
    loaded = workspace.load(ws)
    assert loaded is not None
    assert sorted(card.id for card in index.load_cards(loaded)[0]) == ["mine", "plain", "theirs"]


def test_a_hosts_rule_format_is_a_yaml_fact(private_hosts: Path, tmp_path: Path) -> None:
    """Which rule format plain files in a host's rules folder are written in is part of the
    host's definition (`rules.format`): Claude's rules (`paths:` globs, loaded at launch
    without them) in `.claude/rules/`, and a new host's in its own folder. The file types
    that name their format wherever they lie (`.mdc`, `.instructions.md`) stay formats'."""
    from engram import store

    (private_hosts / "acme.yaml").write_text(
        "name: acme\ndisplay_name: Acme Agent\naliases: []\nsupported: false\nreason: not yet\n"
        "rules: {folder: .acme/rules, suffix: .md, format: claude}\n", encoding="utf-8")
    ws = tmp_path / "proj"
    (ws / ".git").mkdir(parents=True)
    files = {".acme/rules/launch.md": "---\ndescription: launch\n---\nRead at launch.\n",
             ".acme/rules/api.md": "---\npaths: [\"src/api/**\"]\n---\nThe API rule.\n",
             ".claude/rules/style.md": "---\ndescription: style\n---\nThe house style.\n",
             "memory/plain.md": "---\ndescription: plain\n---\nA plain card.\n"}
    for name, text in files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text, encoding="utf-8")
    found, _ = store.scan([(str(ws), "config")], workspace=str(ws))
    cards = {}
    for entry in found:
        card, problems, _ = store.load_file(entry)
        assert card is not None, problems
        cards[card.id] = card
    assert {k: (c.format, c.always, c.applies_to) for k, c in cards.items()} == {
        "launch": ("claude", True, ()), "api": ("claude", False, ("src/api/**",)),
        "style": ("claude", True, ()), "plain": ("engram", False, ())}
    schema = json.loads((data_dir("schemas") / "host.schema.json").read_text())
    import jsonschema

    jsonschema.validate(yaml.safe_load((private_hosts / "acme.yaml").read_text()), schema)


def test_a_hosts_rule_files_are_files_it_loads_natively() -> None:
    """The two facts about a host's rules folder agree: a file engram routes from there
    (`rules`) is one the host loads by itself (`runtime.loads_natively`)."""
    from engram import native_loads

    checked = 0
    for definition in host_registry.all_definitions().values():
        rules, patterns = definition.get("rules"), native_loads.patterns_of(definition)
        if rules and patterns:
            assert native_loads.matches(patterns, f"{rules['folder']}/a/x{rules['suffix']}"), \
                definition["name"]
            # ... and the host loads nothing else from there: a note beside the rules (a `.md`
            # in `.cursor/rules/`, which Cursor ignores) is neither routed nor loaded.
            other = ".txt" if rules["suffix"].endswith(".md") else ".md"
            assert not native_loads.matches(patterns, f"{rules['folder']}/a/notes{other}"), \
                definition["name"]
            checked += 1
    assert checked >= 2


def test_transcript_folders_come_from_the_host_definitions(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    from engram import observe

    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    home = Path(os.environ["HOME"])
    found = set(observe.allowed_dirs())
    assert {home / ".claude" / "projects", home / ".codex" / "sessions", home / ".gemini" / "tmp",
            tmp_path / "codex-home" / "sessions"} <= found
    monkeypatch.delenv("CODEX_HOME")
    assert all(p.is_absolute() for p in observe.allowed_dirs())  # "$CODEX_HOME/..." skipped


def test_the_memory_scan_reads_host_facts_the_hook_already_loaded(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """store.scan runs on every hook call, after load_host: it takes the rules folders from
    the definitions already in memory (no stamp of the hosts folder, no cache read, no YAML)."""
    from engram import store

    host_registry._memo.clear()
    host_registry.load_host("claude")

    def refuse(*_args: object) -> None:
        raise AssertionError("host definitions read again")

    for name in ("_stamp", "_parse_all", "_cache_path"):
        monkeypatch.setattr(host_registry, name, refuse)
    root = tmp_path / ".cursor" / "rules"
    root.mkdir(parents=True)
    (root / "api.mdc").write_text("---\ndescription: api\n---\nAPI.\n", encoding="utf-8")
    (root / "notes.md").write_text("notes\n", encoding="utf-8")
    found, problems = store.scan([(str(root), "workspace")])
    assert [os.path.basename(f.path) for f in found] == ["api.mdc"]
    assert [p.code for p in problems] == ["not-a-rule"]


def test_the_personal_file_hint_names_every_host_with_a_local_file(private_hosts: Path) -> None:
    """doctor's fixes offer `--local` for the hosts whose definition has a local file, and
    only those: a new host with one is named without code."""
    from engram.installer import health

    assert health._local_links() == ["`engram link claude --local`"]
    path = private_hosts / "codex.yaml"
    path.write_text(path.read_text().replace("  project_file: .codex/hooks.json\n",
                                             "  project_file: .codex/hooks.json\n"
                                             "  local_file: .codex/hooks.local.json\n"))
    host_registry._memo.clear()
    assert health._local_links() == ["`engram link claude --local`", "`engram link codex --local`"]


def test_load_host_stamps_the_hosts_folder_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook loads its host once per payload: one listing of the hosts folder, not one for
    the alias lookup and another for the definition."""
    stamps: list[str] = []
    real = host_registry._stamp
    monkeypatch.setattr(host_registry, "_stamp", lambda folder: stamps.append(folder) or real(folder))
    assert host_registry.load_host("cascade")["name"] == "windsurf"
    assert len(stamps) == 1


ACME_SUPPORTED = (
    "name: acme\ndisplay_name: Acme Agent\naliases: []\nsupported: true\n"
    "instruction_files: [ACME.md]\nmarkers: [.acme]\n"
    "rules: {folder: .acme/rules, suffix: .rule.md}\n"
    "runtime:\n  fields: {event: kind, session: sid, cwd: workdir, prompt: text}\n"
    "  events:\n    ask: {kind: prompt}\n"
    "install: {project_file: .acme/hooks.json, global_file: ~/.acme/hooks.json,\n"
    "          global_folder: ~/.acme, format: matcher_groups, timeout_unit: none,\n"
    "          events: [{event: ask}]}\n")


def _init(capsys: pytest.CaptureFixture[str], root: Path) -> str:
    from engram.cli import run

    capsys.readouterr()
    code = run(["init", "--no-input", "--cwd", str(root)])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    return out + err


def test_init_finds_a_new_host_from_its_yaml_file(private_hosts: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """`engram init` knows a host by its definition alone: its rules folder becomes a memory
    root, its instruction file is offered to `engram import`, and `engram link` is suggested
    for it, but only for a host engram can link."""
    import jsonschema

    (private_hosts / "acme.yaml").write_text(ACME_SUPPORTED, encoding="utf-8")
    (private_hosts / "zeta.yaml").write_text(
        "name: zeta\ndisplay_name: Zeta\naliases: []\nsupported: false\nreason: no hooks\n"
        "instruction_files: [docs/ZETA.md]\nrules: {folder: .zeta/rules, suffix: .md, "
        "label: Zeta notes}\n", encoding="utf-8")
    schema = json.loads((data_dir("schemas") / "host.schema.json").read_text())
    for name in ("acme.yaml", "zeta.yaml"):
        jsonschema.validate(yaml.safe_load((private_hosts / name).read_text()), schema)
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    for name in (".acme/rules/api.rule.md", ".acme/rules/team/db.rule.md", ".zeta/rules/z.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("---\ndescription: api\n---\nThe API rule.\n", encoding="utf-8")
    (root / "docs").mkdir()
    (root / "docs" / "ZETA.md").write_text("# Zeta\n\n## A\n\nx\n", encoding="utf-8")
    out = _init(capsys, root)
    assert "ROUTED   .acme/rules/ (Acme Agent rules, 2 files)" in out
    assert "ROUTED   .zeta/rules/ (Zeta notes, 1 files)" in out
    assert "each host still loads its own (Acme Agent .acme/rules/, Zeta .zeta/rules/)" in out
    assert "FOUND    docs/ZETA.md" in out and "engram link zeta" not in out
    assert "engram link acme\n" in out  # its marker: the .acme folder
    roots = json.loads((root / ".agents" / "engram.json").read_text())["roots"]
    assert roots == [".acme/rules", ".zeta/rules"]
    out = _init(capsys, root)
    assert "ok       .acme/rules/ (Acme Agent rules, 2 files) is routed" in out
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    (other / "ACME.md").write_text("# Acme\n\n## A\n\nx\n", encoding="utf-8")
    out = _init(capsys, other)  # its instruction file alone shows the repository uses it
    assert "engram import ACME.md   #" in out and "engram link acme\n" in out


def test_init_and_the_scan_read_a_hosts_rules_alike(private_hosts: Path) -> None:
    """One reader of `rules`: the folders `engram init` adopts as a host's are the folders
    where a scan applies that host's suffix, for every definition, one made only in YAML
    included. A `rules` without a suffix (which the schema refuses) is neither."""
    from engram import formats
    from engram.commands import init

    (private_hosts / "zeta.yaml").write_text(
        "name: zeta\ndisplay_name: Zeta\naliases: []\nsupported: false\nreason: no hooks\n"
        "rules: {folder: .zeta/rules, suffix: .z.md}\n", encoding="utf-8")
    (private_hosts / "half.yaml").write_text(
        "name: half\ndisplay_name: Half\naliases: []\nsupported: false\nreason: no hooks\n"
        "rules: {folder: .half/rules}\n", encoding="utf-8")
    host_registry._memo.clear()
    others = {(folder, owner) for folder, _, _, owner in formats.OTHER_RULE_FOLDERS}
    adopted = {(folder, owner) for folder, _label, owner
               in init.rule_folders(host_registry.ordered_definitions())} - others
    scanned = {(marker.strip(os.sep).replace(os.sep, "/"), owner)
               for marker, _suffix, owner in host_registry.rule_folders()}
    assert adopted == scanned and (".zeta/rules", "Zeta") in adopted
    assert not any(owner == "Half" for _folder, owner in adopted)


def test_init_adopts_continue_rules_without_a_continue_host(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Continue's rules are a format engram reads, not a host it links: init makes their
    folder a memory root and never suggests `engram link continue`."""
    with pytest.raises(host_registry.UnknownHost):
        host_registry.load_host("continue")
    root = tmp_path / "repo"
    (root / ".continue" / "rules").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".continue" / "rules" / "style.md").write_text(
        "---\nname: style\nglobs: \"*.py\"\n---\nFour spaces.\n", encoding="utf-8")
    out = _init(capsys, root)
    assert "ROUTED   .continue/rules/ (Continue rules, 1 files)" in out
    assert "each host still loads its own (Continue .continue/rules/)" in out
    assert "engram link continue" not in out
    supported = sorted(h.name for h in host_registry.registry() if h.supported)
    assert f"engram link {supported[0]}   # or {', '.join(supported[1:])}\n" in out
