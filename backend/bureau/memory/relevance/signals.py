"""The relevance signals: how well each candidate card answers the question, measured several ways.

A sentence cosine alone cannot tell "Who did the night porter see?" (an answer is in memory) from "Who is
allergic to shellfish?" against the peanut card (none is). Each candidate therefore gets:

- `cosine`         the store's sentence similarity (one USE vector per text);
- `coverage_mean`, `coverage_min`
                   word-level coverage: each content word of the question against every word of the card
                   (USE cosine of the single words; the best match per question word), mean and minimum;
- `content_cosine` the sentence similarity of the content words alone (stop words out), question vs card;
- `lexical_coverage` the share of the question's content words the card says literally (English stems,
                   Chinese by the share of each word's characters in the card);
- `bm25`           lexical BM25 over the searched candidates plus a fixed background corpus (lexical.py);
- (no margin to the next candidate: two tips that both answer — conflicting intel — must both stay known)
- `entity_match`, `entity_miss`
                   whether the question's names and numbers appear in the card (1/0 each);
- `type_match`, `type_miss`
                   whether the card gives the kind of answer asked (a time, a number, a person, a place, a
                   reason) in words the question does not already say (answer_types.py).

The coverage rule adds its four 0/1 signals (coverage.py, never fitted on). `scope.relevance` turns the
signals into a verdict, with the fitted model of model.py.
"""

SIGNALS: tuple[str, ...] = (
    "cosine",
    "coverage_mean",
    "coverage_min",
    "content_cosine",
    "lexical_coverage",
    "bm25",
    "entity_match",
    "entity_miss",
    "type_match",
    "type_miss",
)
