"""Grounding check: every specific claim in a model's answer must be present in the evidence it cites.

A "claim" is anything a model could invent that a player would take as fact:

- numbers: digit runs ("0427", "12", "7"), after NFKC (full-width "０４２７" is "0427") and with thousands
  separators removed ("1,000" is "1000"). Numbers written as words are not checked.
- codes: alphanumeric tokens that mix letters and digits ("A7-X9", "B12", "7pm"), compared case-insensitively
  and ignoring spaces / dashes ("7 pm" grounds "7pm").
- English proper names: capitalised words (or acronyms) that do not start a sentence ("... told Marco",
  "... the FBI"). A name at the very start of a sentence is not checked (it is indistinguishable from an
  ordinary capitalised word); a few words of the game itself (I, Detective, Bureau, …) are always allowed.
- Chinese (and any) quoted names: text inside “”, 「」, 『』, 《》 or "" must appear in the evidence.

`ungrounded_claims(answer, sources)` returns the claims missing from every source (empty = grounded).
Pure functions, no I/O; the result is used to reject an answer, never logged with its content.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from bureau.scope.keys import ROLES

# Words that may be capitalised mid-sentence without being a claim about the case.
ALWAYS_ALLOWED_NAMES: frozenset[str] = frozenset(
    {
        "i",
        "i'm",
        "i've",
        "i'd",
        "i'll",
        "ok",
        "okay",
        "mr",
        "mrs",
        "ms",
        "dr",
        *ROLES,  # "Detective", "Informant", …: the roles' own names
        "chief",
        "bureau",
        "board",
        "bulletin",
    }
)

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_CODE = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]+(?:[-_/.][A-Za-z0-9]+)*(?![A-Za-z0-9])")
_HAS_DIGIT = re.compile(r"[0-9]")
_HAS_LETTER = re.compile(r"[A-Za-z]")
_DIGITS = re.compile(r"[0-9]+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_SENTENCE_END = re.compile(r"[.!?。！？:;：；…\n]")
_OPENERS = " \t\"'“”‘’([{「『《*-—–"
_QUOTED = re.compile(r"“([^”]{1,40})”|「([^」]{1,40})」|『([^』]{1,40})』|《([^》]{1,40})》|\"([^\"]{1,40})\"")
_COMPACT = re.compile(r"[\s\-_/.]+")


def normalise(text: str) -> str:
    """NFKC (full-width digits and letters become ASCII) with thousands separators dropped."""
    return _THOUSANDS.sub("", unicodedata.normalize("NFKC", text))


@dataclass(frozen=True, slots=True)
class Claims:
    numbers: frozenset[str]
    codes: frozenset[str]
    names: frozenset[str]
    quoted: frozenset[str]

    def __bool__(self) -> bool:
        return bool(self.numbers or self.codes or self.names or self.quoted)


def _at_sentence_start(text: str, pos: int) -> bool:
    i = pos - 1
    while i >= 0 and text[i] in _OPENERS:
        i -= 1
    return i < 0 or bool(_SENTENCE_END.match(text[i]))


def extract_claims(text: str) -> Claims:
    norm = normalise(text)
    codes: set[str] = set()
    for match in _CODE.finditer(norm):
        token = match.group().strip("._-/")
        if _HAS_DIGIT.search(token) and _HAS_LETTER.search(token):
            codes.add(token)
    # Numbers are every digit run, including those inside codes: a grounded code grounds its digits too,
    # because the evidence that contains the code contains those digit runs.
    numbers = set(_DIGITS.findall(norm))
    names: set[str] = set()
    for match in _WORD.finditer(norm):
        word = match.group().rstrip("'’-")
        if not word[0].isupper() or word.casefold() in ALWAYS_ALLOWED_NAMES:
            continue
        if len(word) == 1 or _at_sentence_start(norm, match.start()):
            continue
        # Preceded by a letter or digit: mid-token ("7Pm", "iPhone"), which the code check covers.
        if match.start() > 0 and norm[match.start() - 1].isalnum():
            continue
        names.add(word)
    quoted = {next(g for g in m.groups() if g is not None).strip() for m in _QUOTED.finditer(norm)}
    return Claims(
        numbers=frozenset(numbers),
        codes=frozenset(codes),
        names=frozenset(names),
        quoted=frozenset(q for q in quoted if q),
    )


def ungrounded_claims(answer: str, sources: Iterable[str]) -> list[str]:
    """Claims in `answer` found in none of `sources` (sorted, for deterministic reporting)."""
    claims = extract_claims(answer)
    if not claims:
        return []
    corpus = "\n".join(normalise(s) for s in sources)
    folded = corpus.casefold()
    compact = _COMPACT.sub("", folded)
    source_numbers = set(_DIGITS.findall(corpus))
    missing: list[str] = []
    missing.extend(n for n in claims.numbers if n not in source_numbers)
    missing.extend(c for c in claims.codes if _COMPACT.sub("", c.casefold()) not in compact)
    for name in claims.names:
        if not re.search(rf"(?<![A-Za-z]){re.escape(name.casefold())}(?![A-Za-z])", folded):
            missing.append(name)
    missing.extend(q for q in claims.quoted if q.casefold() not in folded)
    return sorted(set(missing))
