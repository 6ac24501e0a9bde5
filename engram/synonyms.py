"""Software-development abbreviations and synonyms, so that a prompt saying "open a PR" finds
the card about pull requests and "screen readers" the one about accessibility.

Each group is one *concept*: a card whose head (title, id, tags, description) names any member
gets the concept's term ("~" + name) in that field when the index is compiled; a prompt naming
any member gets the same term added to its query. A match on the concept counts as one
headline word, weighted by how rare the concept is among the cards' heads, like any other:
the hook looks up one more term, and nothing else changes. Members are one word or two
adjacent words (stopwords do not count: "sign in" would be just "sign"), compared after the
same stemming as every routing term. Bodies are not expanded: what a card is about is said in
its head.

The table is general knowledge, not tuned to any store: add a group when people routinely
call one thing by several names; never add a word that usually means something else in code
("session", "token", "pipeline", "release")."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

CONCEPT_PREFIX: Final = "~"

# name: members (comma-separated; a name may take several lines). The name is the concept's
# term, never shown to a user.
TABLE: Final = """
pull-request: pull request, pr, prs, merge request, mr, mrs
accessibility: accessibility, a11y, screen reader, wcag, aria, alt text, keyboard navigation
accessibility: color contrast, colour contrast
performance: performance, perf, slow, slowness, sluggish, laggy, latency
i18n: i18n, internationalization, internationalisation, localization, localisation, l10n
i18n: translation, translations, locale
authentication: auth, authentication, authn, login, logins, signin, current user, sso, oauth
authorization: authorization, authorisation, authz, permission, rbac, acl, access control
database: db, database, databases
kubernetes: k8s, kubernetes, kubectl
continuous-integration: ci, continuous integration, github actions, gitlab ci
environment: env, environment variable, environment variables, env var, env vars, dotenv
repository: repo, repos, repository, monorepo
dependencies: deps, dependency, dependencies
configuration: config, configuration, cfg
documentation: docs, documentation, readme
javascript: js, javascript
typescript: ts, typescript
production: prod, production
end-to-end: e2e, playwright, cypress
user-interface: ui, user interface, frontend, front-end
backend: backend, back-end, server side, server-side
feature-flag: feature flag, feature flags, feature toggle, feature switch
rate-limit: rate limit, rate limiting, throttle, throttling
realtime: websocket, websockets, ws, realtime, real-time, socket.io
secret: secret, secrets, credential, credentials, api key, api keys
observability: observability, o11y, telemetry, monitoring, tracing
regex: regex, regexp, regular expression
dark-mode: dark mode, dark theme, light mode
message: msg, message, messages
"""


def _member_keys(member: str) -> str | None:
    """A member as the index keys it: a term, or a head phrase of two terms."""
    from engram import text

    found = text.terms(member)
    if len(found) == 1:
        return found[0]
    phrases = text.phrases(found)
    return phrases[0] if len(found) == 2 and phrases else None


_LOOKUP: dict[str, tuple[str, ...]] | None = None


def lookup() -> dict[str, tuple[str, ...]]:
    """Term or head phrase -> the concept terms it names (built once per process)."""
    global _LOOKUP
    if _LOOKUP is None:
        found: dict[str, list[str]] = {}
        for line in TABLE.strip().splitlines():
            name, _, members = line.partition(":")
            concept = CONCEPT_PREFIX + name.strip()
            for member in members.split(","):
                key = _member_keys(member.strip())
                if key is not None:
                    entry = found.setdefault(key, [])
                    if concept not in entry:
                        entry.append(concept)
        _LOOKUP = {key: tuple(concepts) for key, concepts in found.items()}
    return _LOOKUP


def concepts(keys: list[str]) -> list[str]:
    """The concept terms that terms and phrases `keys` name, in order, without repeats."""
    table = lookup()
    out: list[str] = []
    for key in keys:
        for concept in table.get(key, ()):
            if concept not in out:
                out.append(concept)
    return out


def is_concept(term: str) -> bool:
    return term.startswith(CONCEPT_PREFIX)
