"""Relevance: how well a card answers a question (signals.py lists the signals), and the verdict's policy.

- `language`      the words of a text, English and Chinese (shared by every module here);
- `lexical`       terms, content words and names of a text, and BM25;
- `answer_types`  the kind of answer a question asks for, and whether a card gives one;
- `times`         clock times and dates a text states, normalised (another time is a contradiction);
- `words`         the word lists, word forms, and how a question word is matched or contradicted by a card;
- `coverage`      the coverage rule: a card is `known` only when it covers what the question is about;
- `features`      what the signals read of a card and a question, and the per-pair measures;
- `scorer`        `RelevanceScorer`: the signals of every candidate, with the per-process caches;
- `model`         the fitted model and the policy that judges the signals.
"""

from bureau.memory.relevance.answer_types import answer_types, gives_type, persons
from bureau.memory.relevance.coverage import RULE_SIGNALS
from bureau.memory.relevance.language import question_language
from bureau.memory.relevance.lexical import TextFeatures, analyse
from bureau.memory.relevance.model import load_policy, policy_for
from bureau.memory.relevance.scorer import RelevanceScorer
from bureau.memory.relevance.signals import SIGNALS

__all__ = [
    "RULE_SIGNALS",
    "SIGNALS",
    "RelevanceScorer",
    "TextFeatures",
    "analyse",
    "answer_types",
    "gives_type",
    "load_policy",
    "persons",
    "policy_for",
    "question_language",
]
