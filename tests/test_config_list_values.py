"""A list setting set from the command line: `engram config set roots a,b` and the JSON list
`engram config set roots '["a", "b"]'` store the same list; a value that looks like a JSON
list but is not one (or holds anything but strings) is refused with a way to write it, never
stored as one root named `["docs/mem"]`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from installer_helpers import engram

from engram import config
from engram.errors import EngramError


@pytest.mark.parametrize("raw, expected", [
    ('["docs/mem"]', ["docs/mem"]),
    ('["a", "b, c"]', ["a", "b, c"]),
    (' [ "a" ] ', ["a"]),
    ("[]", []),
    ("docs/mem, notes", ["docs/mem", "notes"]),
])
def test_a_list_setting_takes_a_json_list_or_commas(raw: str, expected: list[str]) -> None:
    assert config.coerce("roots", raw) == expected


@pytest.mark.parametrize("raw", ['["docs/mem"', "['docs/mem']", '["a", 1]', '[["a"]]',
                                 '[null]'])
def test_a_broken_json_list_is_refused_with_the_way_to_write_it(raw: str) -> None:
    with pytest.raises(EngramError) as caught:
        config.coerce("roots", raw)
    assert "JSON list" in str(caught.value) and "comma" in (caught.value.hint or "")


def test_config_set_stores_the_list_a_json_value_names(workspace: Path) -> None:
    assert engram("config", "set", "roots", '["docs/mem", "notes"]', cwd=workspace) == 0
    stored = json.loads((workspace / ".agents" / "engram.json").read_text())
    assert stored["roots"] == ["docs/mem", "notes"]
    assert engram("config", "set", "roots", "['docs/mem']", cwd=workspace) != 0
    stored = json.loads((workspace / ".agents" / "engram.json").read_text())
    assert stored["roots"] == ["docs/mem", "notes"]  # refused: nothing written
