"""Canonical forms of a text, one per screening family, computed once per text. Pure (no I/O of ours: the two
data packages read their own tables once, at import). Only the screening decision uses them; a card is
stored as the game normalised it (`content_policy.normalise_whisper`).

- **Instructions** (`instruction_forms`): NFKC; invisible and format characters removed (U+2063, U+180E,
  U+034F, zero-width …); case-folded; confusable letters folded to their Latin or CJK skeleton (the Unicode
  confusables table shipped by `confusable-homoglyphs`); separators between single letters collapsed
  (`i.g.n.o.r.e`, `i g n o r e`); digit-for-letter substitutions folded inside words that hold a letter
  (`1gn0re` → `ignore`; `table 12` stays); traditional Chinese converted to simplified (OpenCC `t2s`,
  shipped with its dictionaries by `opencc`). Decoded layers are screened too: the reversed text, and every
  run of base64 or hex that decodes to readable text (one level; binary such as an image tag is skipped).
- **Personal data** (`personal_forms`): NFKC and invisible characters removed (the detectors' own text), and
  a second form with the separators between digits collapsed (`4111.1111/1111 1111`) and the bracketed
  `[at]` / `(dot)` of an obfuscated e-mail restored. No confusable or leet folding here: it would turn 0
  into O and 1 into l, and break the number checks.
"""

from __future__ import annotations

import base64
import binascii
import re
import threading
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import opencc
from confusable_homoglyphs.confusables import confusables_data

from bureau.scope.limits import BLANK_LETTERS, CONTROL_CHARACTERS

# -- invisible characters --------------------------------------------------------------------------
# The letters that draw nothing (`scope/limits.py`: Braille blank, Hangul fillers, Khmer inherent vowels),
# beside every format (Cf) character and combining mark (Mn, Me) left over after NFKC.


@lru_cache(maxsize=4096)
def _invisible(char: str) -> bool:
    return char in BLANK_LETTERS or unicodedata.category(char) in ("Cf", "Mn", "Me")


def strip_invisible(text: str) -> str:
    """NFKC, then control, format, combining and blank characters removed. Pure ASCII text is returned as is."""
    text = unicodedata.normalize("NFKC", text)
    if text.isascii():
        return CONTROL_CHARACTERS.sub("", text)
    return CONTROL_CHARACTERS.sub("", "".join(char for char in text if not _invisible(char)))


# -- confusables -----------------------------------------------------------------------------------
def _is_cjk(char: str) -> bool:
    return "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff"


def _skeleton_table() -> dict[int, str]:
    """Every non-ASCII character that the Unicode confusables table says looks like one ASCII letter (its
    lower-case), or like one CJK ideograph when it is not one itself. Digits and ASCII never change here."""
    table: dict[int, str] = {}
    for char, glyphs in confusables_data.items():
        if len(char) != 1 or char.isascii() or _is_cjk(char):
            continue
        latin = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii() and g["c"].isalpha()]
        cjk = [g["c"] for g in glyphs if len(g["c"]) == 1 and _is_cjk(g["c"])]
        if latin:
            table[ord(char)] = latin[0].lower()
        elif cjk:
            table[ord(char)] = cjk[0]
    # Letters the table pairs with a digit or a symbol only, which attackers use for Latin letters.
    table.update({ord("ı"): "i", ord("ɪ"): "i", ord("ʟ"): "l", ord("ᴏ"): "o"})
    return table


_SKELETON = _skeleton_table()

# -- digits and symbols for letters ----------------------------------------------------------------
# What each stands for. "1" is "i" or "l", "@" is "a" or "o", "|" is "l" or "i": a word takes the reading
# that the screening's vocabulary knows ("ru1es" → "rules", "1gn0re" → "ignore"), else the first.
_LEET: dict[str, tuple[str, ...]] = {
    "0": ("o",),
    "1": ("i", "l"),
    "3": ("e",),
    "4": ("a",),
    "5": ("s",),
    "7": ("t",),
    "8": ("b",),
    "9": ("g",),
    "@": ("a", "o"),
    "$": ("s",),
    "!": ("i", "l"),
    "|": ("l", "i"),
}
# A word that mixes letters with digits or @ $ ! | ("1gn0re", "1nstruct10ns", "previou$"); a bare number
# ("0427", "12") is never such a word.
_LEET_WORD = re.compile(r"(?<![\w@$!|])(?=[\w@$!|]*[a-z])(?=[\w@$!|]*[\d@$!|])[\w@$!|]*[\w@$]")
_MAX_READINGS = 64


_COUNT = re.compile(
    r"\d+(?:st|nd|rd|th|am|pm|kg|km|cm|mm|ml|b|h)"
)  # "7pm", "2nd", "3b": a number with its unit, not a disguised word


_FIRST_READING = str.maketrans({char: options[0] for char, options in _LEET.items()})
_LONGEST_WORD = 24  # a longer token is no word of the patterns: its first reading, without trying others


def _unleet(word: str, vocabulary: frozenset[str]) -> str:
    if _COUNT.fullmatch(word):
        return word
    if len(word) > _LONGEST_WORD:
        return word.translate(_FIRST_READING)
    readings = [""]
    for char in word:
        options = _LEET.get(char, (char,))
        readings = [reading + option for reading in readings for option in options][:_MAX_READINGS]
    return next((reading for reading in readings if reading in vocabulary), readings[0])


# -- separators between single letters ---------------------------------------------------------------
# Three or more single letters, each followed by the same short run of separators: "i.g.n.o.r.e",
# "i g n o r e", "i-g-n-o-r-e", "i_g_n_o_r_e". Two letters ("i.e.", "e.g.", "U.S.") are left alone.
_SPACED_LETTERS = re.compile(r"(?<![^\W\d_])[^\W\d_](?P<sep>[^\w\n]{1,3}|_)(?:[^\W\d_](?P=sep))+[^\W\d_](?![^\W\d_])")
_NON_LETTER = re.compile(r"[\W\d_]+")

# -- traditional Chinese -------------------------------------------------------------------------------
_T2S = opencc.OpenCC("t2s")
_T2S_LOCK = threading.Lock()  # screened on the event loop and on the memory worker: one conversion at a time
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

# -- decoded layers ------------------------------------------------------------------------------------
_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX_RUN = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}[\s:]?){8,}")
_MAX_LAYERS = 4  # decoded runs screened per text (a long text of base64 noise cannot make screening slow)


def _fold_leet(text: str, vocabulary: frozenset[str]) -> str:
    return _LEET_WORD.sub(lambda m: _unleet(m.group(), vocabulary), text)


_MIN_SEGMENTED = 6  # a joined run this long that is several vocabulary words gets its spaces back


def _segment(letters: str, vocabulary: frozenset[str]) -> list[str] | None:
    """`letters` as a sequence of vocabulary words ("youarenow" → you are now), or None."""
    ways: list[list[str] | None] = [[]] + [None] * len(letters)
    for end in range(1, len(letters) + 1):
        for start in range(max(0, end - 16), end):
            prefix = ways[start]
            if prefix is not None and letters[start:end] in vocabulary:
                ways[end] = [*prefix, letters[start:end]]
                break
    return ways[-1]


def _collapse_letters(text: str, vocabulary: frozenset[str]) -> str:
    """Single letters joined ("i.g.n.o.r.e" → ignore). A run that spelt several words letter by letter
    ("y o u a r e n o w") is split back into them when it is all words the screening knows."""

    def join(match: re.Match[str]) -> str:
        letters = _NON_LETTER.sub("", match.group())
        if len(letters) >= _MIN_SEGMENTED and letters not in vocabulary:
            words = _segment(letters, vocabulary)
            if words is not None and len(words) > 1:
                return " ".join(words)
        return letters

    return _SPACED_LETTERS.sub(join, text)


def _readable(raw: bytes) -> str | None:
    """The text a decoded run holds, or None when it is not mostly printable UTF-8 (an image, noise)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(char.isprintable() or char.isspace() for char in text)
    return text if text and printable >= 0.95 * len(text) and any(char.isalpha() for char in text) else None


def decoded_layers(text: str) -> list[str]:
    """What base64 and hex runs in `text` decode to, when that is readable text."""
    layers: list[str] = []
    for match in _HEX_RUN.finditer(text):
        digits = re.sub(r"[\s:]", "", match.group())
        if len(digits) % 2 == 0 and (decoded := _readable(bytes.fromhex(digits))):
            layers.append(decoded)
    for match in _BASE64_RUN.finditer(text):
        run = match.group()
        if len(layers) >= _MAX_LAYERS:
            break
        if run.isdigit() or re.fullmatch(r"[0-9A-Fa-f]+", run):
            continue  # a number or a hex run, not base64
        padded = run + "=" * (-len(run.rstrip("=")) % 4)
        try:
            raw = base64.urlsafe_b64decode(padded) if ("-" in run or "_" in run) else base64.b64decode(padded)
        except (binascii.Error, ValueError):
            continue
        if decoded := _readable(raw):
            layers.append(decoded)
    return layers[:_MAX_LAYERS]


def instruction_form(text: str, vocabulary: frozenset[str] = frozenset()) -> str:
    """The instruction family's canonical form of one (already NFKC, invisible-free) text: case-folded,
    confusables folded, traditional Chinese made simplified, single letters joined, leet folded (a word
    reads as the `vocabulary` word it can spell, if any)."""
    folded = text.casefold().translate(_SKELETON)
    if _HAN.search(folded):
        with _T2S_LOCK:
            folded = _T2S.convert(folded)
    folded = _collapse_letters(folded, vocabulary)
    return _fold_leet(folded, vocabulary) if _LEET_WORD.search(folded) else folded


def instruction_forms(text: str, vocabulary: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """Every text the instruction family screens for one input: its canonical form, the canonical form of
    the reversed text, and those of every decoded base64 / hex layer and its reverse."""
    base = strip_invisible(text)
    forms = [instruction_form(base, vocabulary), instruction_form(base[::-1], vocabulary)]
    for layer in decoded_layers(base):
        plain = strip_invisible(layer)
        forms += [instruction_form(plain, vocabulary), instruction_form(plain[::-1], vocabulary)]
    return tuple(forms)


# -- personal data ------------------------------------------------------------------------------------
# One separator between two digits: space, dot, slash, dash, underscore, middle dot, no-break space.
_DIGIT_SEPARATOR = re.compile(r"(?<=\d)[ ./\-_·\u00a0\u202f](?=\d)")
_AT = re.compile(r"\s*[\[({<]\s*(?:at|@|艾特)\s*[\])}>]\s*", re.IGNORECASE)
_DOT = re.compile(r"\s*[\[({<]\s*(?:dot|\.|点)\s*[\])}>]\s*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class PersonalForms:
    """`text`: NFKC, invisible characters removed (what every personal-data detector reads). `joined`: the
    same with separators between digits collapsed and bracketed [at] / [dot] restored (what the number and
    e-mail checks read again)."""

    text: str
    joined: str


def personal_forms(text: str) -> PersonalForms:
    base = strip_invisible(text)
    joined = _DIGIT_SEPARATOR.sub("", base)
    if "[" in joined or "(" in joined or "{" in joined or "<" in joined:
        joined = _DOT.sub(".", _AT.sub("@", joined))
    return PersonalForms(base, joined)
