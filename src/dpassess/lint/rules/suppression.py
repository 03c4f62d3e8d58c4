"""Suppression rules (SP): a suppression that suppresses nothing is itself a finding."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from dpassess.lint.registry import RULES, Hit, suppression_rule
from dpassess.runtime.records import SuppressionRecord


@suppression_rule(
    "SP001", "unused-suppression", "warning",
    key_risk="No: it reports a suppression that does nothing.",
    fix="Remove the `suppress` entry: the rule no longer fires on this item (or never did).",
)
def unused_suppression(suppress: Sequence[SuppressionRecord], used: set[int], ran: set[str]
                       ) -> Iterator[Hit]:
    """## What it does
    Reports entries of an item's `suppress` list that suppressed nothing in this run, and
    entries naming a rule that does not exist. A suppression of a rule that was not selected
    in this run is not judged. An entry narrowed to a `field` or a glossary `term` is unused
    when no finding of its rule in that field (about that term) was silenced by it; a finding
    is silenced by the first entry that covers it.

    ## Why is this bad?
    Suppressions outlive the problem they excused: after an edit fixes the item, the stale
    entry would silently hide the next real problem of that kind.

    ## Example
    ```yaml
    suppress:
      - {rule: WR001, reason: the key must name all three factors}
      - {rule: TR005, field: text.id.stem, term: sample, reason: "'sample' is the verb here"}
    ```
    where the key is no longer the longest option, and the stem no longer says "sample".

    ## Use instead
    Remove the entry.
    """
    for i, s in enumerate(suppress):
        if s.rule not in RULES:
            yield Hit(("suppress", i, "rule"), f"suppression names an unknown rule {s.rule!r}")
        elif s.rule in ran and i not in used:
            scope = "".join(
                [f" in {s.field}" if s.field else "", f" for term {s.term!r}" if s.term else ""])
            yield Hit(
                ("suppress", i, "rule"),
                f"suppression of {s.rule} ({RULES[s.rule].name}){scope} is unused",
            )
