"""PII redaction (pure): e-mail addresses, IP addresses and phone numbers -> replacement tokens.

E-mail and IPv4 patterns are datatrove's PIIFormatter regexes (IPs checked with `ipaddress`, public
ones only by default, as datatrove does), with word-boundary guards so version strings such as
1.2.3.4-1 or 10.0.0.1.2 are left alone. Phone numbers come from `phonenumbers` (Google's
libphonenumber): its matcher validates numbers per region and already refuses dates, ISBNs and
timestamps. Redaction returns the count per kind, so the cleaning job can report them.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from marin_assets.data.curate.step_outcome import StepOutcome

EMAIL = re.compile(
    r"\b[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:(?:[A-Za-z0-9](?:["
    r"A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?|\[(?:(?:25[0-5]|2[0-4][0-9]|["
    r"01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?|[A-Za-z0-9-]*[A-Za-z0-9]:)])"
)
# datatrove's octet pattern; not inside a longer dotted/dashed token (versions, OIDs, 1.2.3.4-1)
IPV4 = re.compile(
    r"(?<![\w.\-])(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)"
    r"(?![\w\-]|\.\w)"
)
_MAY_HAVE_PHONE = re.compile(r"\d(?:[\s().\-]*\d){6}")  # seven digits close together: worth asking phonenumbers
# Inside every IPV4 match: texts without it skip IPV4, whose leading lookbehind is tried at every character.
_MAY_HAVE_IPV4 = re.compile(r"[0-9]\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]")
_EMAIL_LOCAL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+/=?^_`{|}~.-")
_SPACE = re.compile(r"\s")


def _public_ip(candidate: str, public_only: bool) -> bool:
    try:
        address = ipaddress.ip_address(candidate)
    except ValueError:
        return False
    return address.is_global or not public_only


@dataclass(frozen=True)
class PiiSettingsView:
    """What redact() needs: replacement token per kind (a kind absent is not redacted)."""

    replacements: Mapping[str, str]
    public_ips_only: bool = True
    phone_region: str = "US"


def _regex_spans(text: str, pattern: re.Pattern, keep: Callable[[str], bool] | None = None) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text) if keep is None or keep(m.group())]


def _email_spans(text: str) -> list[tuple[int, int]]:
    """_regex_spans(text, EMAIL), with EMAIL tried only around each "@".

    Tried at every word start, EMAIL reads each word to its end looking for an "@" (most of redaction's
    time). A match holds one "@", within one run of non-space characters, and starts in the run of
    local-part characters before it: EMAIL.finditer over [that run's start, the next space) finds the
    same matches as over the whole text, and `done` keeps the scan's left-to-right order.
    """
    spans, done, at = [], 0, text.find("@")
    while at >= 0:
        if at >= done:
            start = at
            while start > done and text[start - 1] in _EMAIL_LOCAL:
                start -= 1
            space = _SPACE.search(text, at)
            done = space.start() if space else len(text)
            spans.extend(m.span() for m in EMAIL.finditer(text, start, done))
        at = text.find("@", at + 1)
    return spans


def _ip_spans(text: str, public_only: bool) -> list[tuple[int, int]]:
    if not _MAY_HAVE_IPV4.search(text):
        return []
    return _regex_spans(text, IPV4, lambda ip: _public_ip(ip, public_only))


def _phone_spans(text: str, region: str) -> list[tuple[int, int]]:
    if not _MAY_HAVE_PHONE.search(text):
        return []
    import phonenumbers

    return [(m.start, m.end) for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID)]


def find_pii(text: str, settings: PiiSettingsView) -> list[tuple[int, int, str]]:
    """Non-overlapping (start, end, kind) spans, earlier kinds winning ties (e-mail, then IP, then phone)."""
    finders = {
        "email": lambda: _email_spans(text),
        "ip": lambda: _ip_spans(text, settings.public_ips_only),
        "phone": lambda: _phone_spans(text, settings.phone_region),
    }
    spans: list[tuple[int, int, str]] = []
    for kind, find in finders.items():
        if kind not in settings.replacements:
            continue
        for start, end in find():
            if all(end <= s or start >= e for s, e, _ in spans):
                spans.append((start, end, kind))
    return sorted(spans)


def redact(text: str, settings: PiiSettingsView) -> tuple[str, dict[str, int]]:
    """text with each PII span replaced by its kind's token, and how many spans of each kind."""
    spans = find_pii(text, settings)
    if not spans:
        return text, {}
    pieces, pos, counts = [], 0, {}
    for start, end, kind in spans:
        pieces += [text[pos:start], settings.replacements[kind]]
        pos = end
        counts[kind] = counts.get(kind, 0) + 1
    pieces.append(text[pos:])
    return "".join(pieces), counts


class PiiStep:
    name = "pii"

    def __init__(self, settings: PiiSettingsView):
        self.settings = settings

    def apply(self, text: str) -> StepOutcome:
        redacted, counts = redact(text, self.settings)
        return StepOutcome(redacted, {f"pii:{kind}": n for kind, n in counts.items()})
