"""Canonical forms of a text, one per screening family, computed once per text. Pure (no I/O of ours: the
data packages read their own tables once, at import or on first use). Only the screening decision uses them;
a card is stored as the game normalised it (`content_policy.normalise_whisper`).

- **Instructions** (`instruction_forms`): NFKC; invisible and format characters removed (U+2063, U+180E,
  U+034F, zero-width …), the pieces of a word they cut grouped into the vocabulary words that cover the
  most letters (`ign`, U+2063, `ore` is `ignore`; `please`, U+2061, `ignore` is `please ignore`: an
  invisible operator where a space would be); case-folded; confusable letters folded to their Latin or CJK
  skeleton (the Unicode confusables table shipped by `confusable-homoglyphs`), and a word that mixed Latin
  letters with such look-alikes read as the vocabulary word it misspells (`іgnroe` is `ignore`:
  `rapidfuzz`'s optimal string alignment distance, 1 edit in 5–8 letters, 2 from 9; never a word
  `lemminflect` knows, such as `іgnited` or `іgnored`); separators between single letters collapsed
  (`i.g.n.o.r.e`, `i g n o r e`); digit-for-letter substitutions folded inside words that hold a letter
  (`1gn0re` → `ignore`; `table 12` stays); traditional Chinese converted to simplified (OpenCC `t2s`,
  shipped with its dictionaries by `opencc`). Decoded layers are screened too: the reversed text, and every
  run of base64 or hex that decodes to readable text (one level; binary such as an image tag is skipped).
  Beside these word forms, a markup form of the text and of each decoded layer (NFKC, invisible characters
  removed, case-folded, confusables folded, nothing else): the chat templates' special tokens are matched
  there, where `<|im_start|>` keeps its bars (leet folding reads a `|` as an l).
- **Personal data** (`personal_forms`): NFKC, invisible characters removed and every run of whitespace made
  one space, as the game stores a whisper (what every detector reads: `4111`, a space, U+2063, a space,
  `1111` reads `4111 1111`), and a second form with the separators between digits collapsed
  (`4111.1111/1111 1111`) and the bracketed `[at]` / `(dot)` of an obfuscated e-mail restored. No
  confusable or leet folding here: it would turn 0 into O and 1 into l, and break the number checks.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re
import threading
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import opencc
from confusable_homoglyphs.confusables import confusables_data
from rapidfuzz import process
from rapidfuzz.distance import OSA

from bureau.scope.limits import BLANK_LETTERS, CONTROL_CHARACTERS

# -- invisible characters --------------------------------------------------------------------------
# The letters that draw nothing (`scope/limits.py`: Braille blank, Hangul fillers, Khmer inherent vowels),
# beside every format (Cf) character and combining mark (Mn, Me) left over after NFKC.


@lru_cache(maxsize=4096)
def _invisible(char: str) -> bool:
    return char in BLANK_LETTERS or unicodedata.category(char) in ("Cf", "Mn", "Me")


_LETTERS = re.compile(r"[^\W\d_]+")
_LONGEST_GROUP = 24  # letters: no vocabulary word is longer


def _word_key(word: str) -> str:
    return word.casefold().translate(_SKELETON)


def strip_invisible(text: str, vocabulary: frozenset[str] = frozenset()) -> str:
    """NFKC, then control, format, combining and blank characters removed; pure ASCII text is returned as is.
    With a `vocabulary`, a word that invisible characters cut into pieces is read as the pieces grouped so
    that vocabulary words cover the most letters: "ign", U+2063, "ore" is "ignore"; "please", U+2061,
    "ignore", U+2061, "all" is "please ignore all" (an invisible operator where a space would be)."""
    text = unicodedata.normalize("NFKC", text)
    if text.isascii():
        return CONTROL_CHARACTERS.sub("", text)
    chars: list[str] = []
    cuts: list[int] = []  # where in `chars` a run of invisible characters was taken out
    for char in text:
        if not _invisible(char):
            chars.append(char)
        elif chars and (not cuts or cuts[-1] != len(chars)):
            cuts.append(len(chars))
    visible = "".join(chars)
    if not (vocabulary and cuts):
        return CONTROL_CHARACTERS.sub("", visible)
    pieces, done = [], 0
    for run in _LETTERS.finditer(visible):
        inner = [cut - run.start() for cut in cuts if run.start() < cut < run.end()]
        if inner:
            bounds = [0, *inner, len(run.group())]
            parts = [run.group()[a:b] for a, b in itertools.pairwise(bounds)]
            pieces += [visible[done : run.start()], " ".join(_grouped(parts, vocabulary))]
            done = run.end()
    return CONTROL_CHARACTERS.sub("", "".join(pieces) + visible[done:])


def _grouped(parts: list[str], vocabulary: frozenset[str]) -> list[str]:
    """`parts` (the pieces of one word) joined into words: the grouping whose vocabulary words cover the most
    letters, and of those the one with the fewest words ("dis|re|gard" is "disregard", not "dis re gard")."""
    best: list[tuple[int, int, int]] = [(0, 0, 0)]  # per prefix: letters covered, -words, where its last word starts
    for end in range(1, len(parts) + 1):
        options = []
        for begin in range(end - 1, -1, -1):
            word = "".join(parts[begin:end])
            if begin < end - 1 and len(word) > _LONGEST_GROUP:
                break
            covered = len(word) if _word_key(word) in vocabulary else 0
            options.append((best[begin][0] + covered, best[begin][1] - 1, begin))
        best.append(max(options))
    words, end = [], len(parts)
    while end:
        begin = best[end][2]
        words.append("".join(parts[begin:end]))
        end = begin
    return words[::-1]


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

# -- misspelt words with a look-alike letter ----------------------------------------------------------------
# A word that mixes Latin letters with look-alikes from another script is disguised on purpose; misspelt as
# well ("іgnroe", "prevіos"), it reads as the vocabulary word within 1 edit (5-8 letters) or 2 (9 and more):
# optimal string alignment (a swap of two neighbours is one edit). An English word lemminflect knows is no
# misspelling ("іgnited", "іgnored", "rulеr"); shorter words are near too many others to be read this way.
_LATIN_WORD = re.compile(r"(?<!\w)[a-z]{5,}(?!\w)")
_MISSPELT_MIN_LETTERS = 5
_TWO_EDITS_FROM = 9


@lru_cache(maxsize=4)
def _misspelling_targets(vocabulary: frozenset[str]) -> dict[int, tuple[str, ...]]:
    """The vocabulary words a misspelling may stand for, by length."""
    by_length: dict[int, list[str]] = {}
    for word in sorted(vocabulary):
        if len(word) >= _MISSPELT_MIN_LETTERS:
            by_length.setdefault(len(word), []).append(word)
    return {length: tuple(words) for length, words in by_length.items()}


@lru_cache(maxsize=2048)
def _known_word(word: str) -> bool:
    import lemminflect  # its tables load on the first call (a quarter of a second), here and in memory/relevance

    return bool(lemminflect.getAllLemmas(word))


@lru_cache(maxsize=2048)
def _misspelling_of(word: str, vocabulary: frozenset[str]) -> str | None:
    """The vocabulary word that `word` misspells, or None."""
    edits = 1 if len(word) < _TWO_EDITS_FROM else 2
    targets = _misspelling_targets(vocabulary)
    near = [t for length in range(len(word) - edits, len(word) + edits + 1) for t in targets.get(length, ())]
    found = process.extractOne(word, near, scorer=OSA.distance, score_cutoff=edits)
    return None if found is None or _known_word(word) else str(found[0])


def _fold_confusables(text: str, vocabulary: frozenset[str]) -> str:
    """`text` (case-folded) with confusable letters folded; a word that mixed ASCII letters with look-alikes
    and is no vocabulary word reads as the vocabulary word it misspells, when one is near enough."""
    if text.isascii():
        return text
    folded = text.translate(_SKELETON)  # one character for one: positions in `text` and `folded` agree
    if not vocabulary:
        return folded
    pieces, start = [], 0
    for match in _LATIN_WORD.finditer(folded):
        word, original = match.group(), text[match.start() : match.end()]
        if original == word or not any(c.isascii() for c in original) or word in vocabulary:
            continue
        if (meant := _misspelling_of(word, vocabulary)) is not None:
            pieces += [folded[start : match.start()], meant]
            start = match.end()
    return "".join(pieces) + folded[start:] if pieces else folded


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
# "i g n o r e", "i-g-n-o-r-e", "i_g_n_o_r_e". Two letters ("i.e.", "e.g.", "U.S.") are left alone, and so is
# the letter after an apostrophe ("Don't f o l l o w" reads "don't follow", not "don'tfollow").
_SPACED_LETTERS = re.compile(
    r"(?<![^\W\d_])(?<![^\W\d_]['’])[^\W\d_](?P<sep>[^\w\n]{1,3}|_)(?:[^\W\d_](?P=sep))+[^\W\d_](?![^\W\d_])"
)
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


# Words run together without a space ("ignoreallpreviousinstructions": what a whisper that used zero-width
# spaces for spaces is stored as, once the game has taken them out).
_RUN_TOGETHER = re.compile(r"(?<![a-z])[a-z]{9,280}(?![a-z])")  # 280: a whisper's length


def _words_of_run(run: str, vocabulary: frozenset[str]) -> str:
    """A run of letters that is no vocabulary word but is several of them, with its spaces back."""
    ends = range(2, min(len(run), 16) + 1)
    if (
        run in vocabulary
        or not any(run[:k] in vocabulary for k in ends)
        or not any(run[-k:] in vocabulary for k in ends)
    ):
        return run  # cheap refusals first: most long words neither start nor end with a vocabulary word
    words = _segment(run, vocabulary)
    return " ".join(words) if words is not None and len(words) > 1 else run


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
    confusables folded (a disguised misspelling read as the `vocabulary` word), traditional Chinese made
    simplified, single letters joined, leet folded (a word reads as the `vocabulary` word it can spell)."""
    folded = _fold_confusables(text.casefold(), vocabulary)
    if _HAN.search(folded):
        with _T2S_LOCK:
            folded = _T2S.convert(folded)
    folded = _collapse_letters(folded, vocabulary)
    folded = _fold_leet(folded, vocabulary) if _LEET_WORD.search(folded) else folded
    return _RUN_TOGETHER.sub(lambda m: _words_of_run(m.group(), vocabulary), folded) if vocabulary else folded


@dataclass(frozen=True, slots=True)
class InstructionForms:
    """What the instruction family screens for one input. `words`: the canonical form of the text, of the
    reversed text, and of every decoded base64 / hex layer and its reverse (the families of intent, the role
    headers). `markup`: the text and each decoded layer case-folded and confusables folded only, punctuation
    kept (the chat templates' special tokens)."""

    words: tuple[str, ...]
    markup: tuple[str, ...]


def _markup_form(text: str) -> str:
    return text.casefold().translate(_SKELETON)


def instruction_forms(text: str, vocabulary: frozenset[str] = frozenset()) -> InstructionForms:
    """The word and markup forms of one input, its decoded layers included."""
    base = strip_invisible(text, vocabulary)
    words = [instruction_form(base, vocabulary), instruction_form(base[::-1], vocabulary)]
    markup = [_markup_form(base)]
    for layer in decoded_layers(base):
        plain = strip_invisible(layer, vocabulary)
        words += [instruction_form(plain, vocabulary), instruction_form(plain[::-1], vocabulary)]
        markup.append(_markup_form(plain))
    return InstructionForms(tuple(words), tuple(markup))


# -- personal data ------------------------------------------------------------------------------------
# One separator between two digits: space, dot, slash, dash, underscore, middle dot, no-break space.
_DIGIT_SEPARATOR = re.compile(r"(?<=\d)[ ./\-_·\u00a0\u202f](?=\d)")
_WHITESPACE = re.compile(r"\s+")  # a run of them is one space, as in a stored whisper
_AT = re.compile(r"\s*[\[({<]\s*(?:at|@|艾特)\s*[\])}>]\s*", re.IGNORECASE)
_DOT = re.compile(r"\s*[\[({<]\s*(?:dot|\.|点)\s*[\])}>]\s*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class PersonalForms:
    """`text`: NFKC, invisible characters removed, whitespace runs made one space (what every personal-data
    detector reads). `joined`: the same with separators between digits collapsed and bracketed [at] / [dot]
    restored (what the number and e-mail checks read again)."""

    text: str
    joined: str


def personal_forms(text: str) -> PersonalForms:
    base = _WHITESPACE.sub(" ", strip_invisible(text))
    joined = _DIGIT_SEPARATOR.sub("", base)
    if "[" in joined or "(" in joined or "{" in joined or "<" in joined:
        joined = _DOT.sub(".", _AT.sub("@", joined))
    return PersonalForms(base, joined)
