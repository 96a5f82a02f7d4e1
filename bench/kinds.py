"""The query kinds the corpus-scale benches draw from a home's records, so
that bench/index.sh and bench/nodaemon.sh ask the same kinds of terms:
identifiers (camelCase / snake_case words of 8 bytes or more), paths
(`src/store/event.py`) and error-like phrases (`KeyError: 'store'`), each
with the sessions that hold it. Imported by the benches' inline Python.
"""

import re
from collections import defaultdict

IDENTIFIER = re.compile(r"\b[a-z]+[A-Z][A-Za-z]+\b|\b[a-z]+_[a-z_]+\b")
PATH = re.compile(r"\b[\w-]+/[\w./-]+\.[a-z]+\b")
ERROR = re.compile(r"AssertionError: assert \d+ == \d+|KeyError: '\w+'|ECONNREFUSED 127\.0\.0\.1:\d+"
                   r"|Cannot read properties of undefined \(reading '\w+'\)")


class Held:
    """Per kind, each term seen and the session keys whose records hold it."""

    def __init__(self):
        self.identifier = defaultdict(set)
        self.path = defaultdict(set)
        self.error = defaultdict(set)

    def add(self, key, text):
        """Notes the terms of one record of session `key`."""
        for w in IDENTIFIER.findall(text):
            if len(w) >= 8:
                self.identifier[w].add(key)
        for w in ERROR.findall(text):
            self.error[w].add(key)
        for w in PATH.findall(text):
            self.path[w].add(key)

    def pick(self, kind, rng, n, lo, hi):
        """At most `n` terms of `kind` held by `lo`–`hi` sessions, sampled by `rng`."""
        terms = sorted(t for t, s in getattr(self, kind).items() if lo <= len(s) <= hi)
        return rng.sample(terms, min(n, len(terms)))
