"""Personal data in free text: phones, national ids, identity documents, payment cards, IBANs, e-mail and
street addresses. Pure (no I/O). Every detector reads the personal-data forms of `canonical.personal_forms`:
`text` (NFKC, invisible characters removed) and, for the number and e-mail checks, `joined` (separators
between digits collapsed, bracketed [at] / [dot] restored), so "4111.1111.1111.1111", "123 45 6789" and
"mia [at] example [dot] org" are found as what they are.

Checksums and phone plans come from maintained libraries: `phonenumbers` (Google's libphonenumber data)
and `python-stdnum` (IBAN, Luhn). The regexes here only find *candidates*; a library decides.
Short numbers games are made of ("0427", "table 12 at 7pm", "房间号是 302", dates, times) stay allowed.
"""

from __future__ import annotations

import re

import phonenumbers
from stdnum import iban as stdnum_iban
from stdnum import luhn

from bureau.scope.canonical import PersonalForms

PHONE = "phone_number"
NATIONAL_ID = "national_id"
ID_DOCUMENT = "id_document"
PAYMENT_CARD = "payment_card"
BANK_ACCOUNT = "bank_account"
EMAIL = "email_address"
STREET_ADDRESS = "street_address"

# -- phones ----------------------------------------------------------------------------------------
# Regions whose national formats are recognised without a "+": the game's two languages and common
# neighbours. International numbers ("+CC …") are recognised for every country.
_PHONE_REGIONS = ("US", "CN", "GB", "DE", "FR", "AU", "HK", "TW", "SG", "JP")
_PHONE_KEYWORD = re.compile(
    r"(?:\b(?:call|ring|phone|tel|telephone|mobile|cell|fax|whatsapp|text\s+me|number|contact)\b|电话|手机|座机|联系|号码|传真)",
    re.IGNORECASE,
)
# A grouped number looks like a phone; a bare run of digits could be an order or invoice number.
_GROUPED = re.compile(r"[\s().-]")
# Where a grouped number could be: two digits with a grouping character between them (and nothing but
# punctuation), or an opening parenthesis before a digit. Without it (and without "+" or a phone word) no
# match of the loop in `has_phone` can be accepted, so the loop is skipped.
_MAYBE_GROUPED = re.compile(r"\d[^\w+]*[\s().-][^\w+]*\d|\(\s*\d")
_CN_MOBILE = re.compile(r"(?<![\d])1[3-9]\d(?:[ -]?\d{4}){2}(?!\d)")
_CN_LANDLINE = re.compile(r"(?<![\d-])0\d{2,3}-\d{7,8}(?![\d-])")
_NANP = re.compile(r"(?<![\w-])(?:\(\d{3}\)\s?|\d{3}[.\- ])\d{3}[.\- ]\d{4}(?![\w-])")


def has_phone(forms: PersonalForms) -> bool:
    text = forms.text
    if _CN_MOBILE.search(text) or _CN_LANDLINE.search(text) or _NANP.search(text):
        return True
    keyword = _PHONE_KEYWORD.search(text) is not None
    if not keyword and "+" not in text and not _MAYBE_GROUPED.search(text):
        return False  # no match could be accepted below: skip libphonenumber's ten passes
    for region in _PHONE_REGIONS:
        for match in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID):
            raw = match.raw_string
            if raw.startswith("+") or keyword or _GROUPED.search(raw.strip()):
                return True
    return False


# -- national ids and identity documents -----------------------------------------------------------
_CN_ID = re.compile(
    r"(?<![\dA-Za-z])\d{6}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx](?![\dA-Za-z])"
)
# 3-2-4 digits with one separator used twice (dash, space, dot, slash): "123-45-6789", "123 45 6789".
_SSN = re.compile(r"(?<![\w./-])(?!000|666|9\d\d)\d{3}([- ./])(?!00)\d{2}\1(?!0000)\d{4}(?![\w-]|[./]\d)")
_SSN_KEYWORD = re.compile(r"\b(?:ssn|social security(?: number| no\.?)?)\s*[:#]?\s*\d{9}\b", re.IGNORECASE)

# A document keyword, a few filler words ("number", "is", ":"), then an id of 6-18 letters/digits with
# at least five digits. "My passport is in the safe" and "licence plate" without a number stay allowed.
_DOC_NUMBER = r"([A-Z]{0,3}[ -]?\d[\dA-Z -]{4,20}[\dX])"
_DOCUMENT_EN = re.compile(
    r"\b(?:passport|driv(?:er'?s|ing)\s+licen[cs]e|licen[cs]e|id\s+card|identity\s+card|national\s+id)"
    r"(?:\s+(?:number|no\.?|num|#|id))?(?:\s+(?:is|was|reads|of|:))?\s*[:#]?\s*" + _DOC_NUMBER,
    re.IGNORECASE,
)
_DOCUMENT_ZH = re.compile(
    r"(?:护照|驾照|驾驶证|驾驶执照|身份证|通行证)(?:号码|号|编号)?(?:是|为|[:：])?\s*" + _DOC_NUMBER, re.IGNORECASE
)


def _document_id_like(candidate: str) -> bool:
    compact = re.sub(r"[ -]", "", candidate)
    return 6 <= len(compact) <= 18 and sum(ch.isdigit() for ch in compact) >= 5


def has_national_id(forms: PersonalForms) -> bool:
    text = forms.text
    if _SSN.search(text) or _SSN_KEYWORD.search(forms.joined):
        return True
    # An 18-character run with a plausible birth date is treated as an id; a valid checksum is not required
    # (a mistyped id is still someone's id), but the date shape keeps random long numbers out.
    return _CN_ID.search(text) is not None or _CN_ID.search(forms.joined) is not None


def has_id_document(forms: PersonalForms) -> bool:
    text = forms.text
    for pattern in (_DOCUMENT_EN, _DOCUMENT_ZH):
        for match in pattern.finditer(text):
            if _document_id_like(match.group(1).upper()):
                return True
    return False


# -- money -----------------------------------------------------------------------------------------
# 13-19 digits, either contiguous or in groups of 2-6 separated by one space or dash.
_CARD = re.compile(r"(?<![\d+-])(?:\d{13,19}|\d{2,6}(?:[ -]\d{2,6}){2,6})(?![\d-])")
# Country code, check digits, then 11-30 capitals/digits, optionally in groups of four (written in capitals,
# so a following lower-case word is never swallowed).
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{1,4}){3,8}(?![A-Za-z0-9])")


def has_payment_card(forms: PersonalForms) -> bool:
    """13-19 digits that pass Luhn: grouped as printed, or split by any one separator between digits (dots,
    slashes, single spaces, invisible characters), read on the joined form."""
    for text in (forms.text, forms.joined) if forms.joined != forms.text else (forms.text,):
        for match in _CARD.finditer(text):
            digits = re.sub(r"\D", "", match.group())
            if 13 <= len(digits) <= 19 and len(set(digits)) > 1 and luhn.is_valid(digits):
                return True
    return False


def has_iban(forms: PersonalForms) -> bool:
    """An IBAN whose mod-97 check digits are right (a random code rarely passes: 1 in 97)."""
    return any(stdnum_iban.is_valid(match.group().upper()) for match in _IBAN.finditer(forms.text))


# -- e-mail and street addresses -------------------------------------------------------------------
# Any script in the local part and the domain (an IDN address such as 张三@例子.中国 is someone's address too).
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,}(?![\w-])")
# Spelt out without brackets: "mia at example dot org" (a known top-level domain keeps prose out).
_EMAIL_SPELT = re.compile(
    r"\b[\w.+-]+\s+(?:at|AT)\s+[\w-]+(?:\s+(?:dot|DOT)\s+[\w-]+)*\s+(?:dot|DOT)\s+"
    r"(?:com|org|net|edu|gov|io|co|cn|uk|de|fr|jp|info|biz|me)\b",
    re.IGNORECASE,
)

# "221B Baker Street", "1600 Pennsylvania Ave", "12 rue de Rivoli": a house number, 1-4 capitalised
# words, a street word. "the bakery on Elm Street" (no number) is a place, not someone's address.
_STREET_WORDS = (
    r"street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|way|place|pl|terrace|close|"
    r"crescent|square|sq|parkway|pkwy|highway|hwy|alley|row"
)
_ADDRESS_EN = re.compile(
    r"(?<![\w#-])\d{1,5}[A-Za-z]?,?\s+(?:[A-Z][A-Za-z'-]+\s+){1,4}(?i:" + _STREET_WORDS + r")\b\.?",
)
_ADDRESS_EU = re.compile(r"(?<![\w#-])\d{1,5}[a-z]?,?\s+(?:rue|avenue|boulevard|via|calle|place)\s+\w+", re.IGNORECASE)
_ADDRESS_DE = re.compile(r"\b[A-ZÄÖÜ][a-zäöüß]+(?:straße|strasse|weg|gasse|platz|allee)\s+\d{1,4}[a-z]?\b")
# "南京西路1266号", "长安街10号院", "和平里小区3栋2单元501"
_ADDRESS_ZH = re.compile(
    r"[\u4e00-\u9fff]{1,8}(?:路|街|大道|大街|巷|弄|胡同)\s*\d{1,5}\s*(?:号|弄)"
    r"|[\u4e00-\u9fff]{2,10}(?:小区|公寓|花园|大厦)\s*\d{1,3}\s*(?:栋|号楼|幢)"
)


def has_email(forms: PersonalForms) -> bool:
    return _EMAIL.search(forms.joined) is not None or _EMAIL_SPELT.search(forms.text) is not None


def has_street_address(forms: PersonalForms) -> bool:
    return any(p.search(forms.text) for p in (_ADDRESS_EN, _ADDRESS_EU, _ADDRESS_DE, _ADDRESS_ZH))


DETECTORS = (
    (PHONE, has_phone),
    (NATIONAL_ID, has_national_id),
    (ID_DOCUMENT, has_id_document),
    (PAYMENT_CARD, has_payment_card),
    (BANK_ACCOUNT, has_iban),
    (EMAIL, has_email),
    (STREET_ADDRESS, has_street_address),
)
