"""Batches of cases written after the first 345 (cases_fresh_*.py), each a `Batch`.

build.py numbers a batch's cases after the earlier cases of each category (batch files in
the order of their names) and splits each batch as it split the first cases: 40% of each
category to holdout, evenly spaced within each language (and kind of multi_turn decision). So
adding a batch moves no earlier case, and grows dev and holdout in the same mix. A batch is
run once as it was written, before any tuning on it (docs/bench/README.md says what that run
gave); then its dev part joins the cases to tune on and its holdout part is only reported.

The helpers take the arguments of cases_a.py / cases_b.py / cases_multi.py: an argument given
as a list is the list of accepted values, anything else the one accepted value (an array
param is written [[...]]); optional params a case leaves out are filled in by build.py as
"may be left out". Conversations are written with `user`, `ran`, `said` and `Failed` of
cases_multi.py.
"""

CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple", "irrelevance", "multi_turn")


class Batch:
    def __init__(self):
        self.cases = {c: [] for c in CATEGORIES}

    def _add(self, category, **case):
        self.cases[category].append(case)

    def simple(self, question, name, args):
        self._add("simple", question=question, functions=[name], calls=[(name, args)])

    def multiple(self, question, functions, name, args):
        assert name in functions, name
        self._add("multiple", question=question, functions=functions, calls=[(name, args)])

    def parallel(self, question, name, *calls):
        assert 2 <= len(calls) <= 4
        self._add("parallel", question=question, functions=[name], calls=[(name, c) for c in calls])

    def parallel_multiple(self, question, functions, *calls):
        assert 2 <= len(calls) <= 4 and len({n for n, _ in calls}) >= 2
        assert all(n in functions for n, _ in calls)
        self._add("parallel_multiple", question=question, functions=functions, calls=list(calls))

    def irrelevance(self, question, functions):
        self._add("irrelevance", question=question, functions=functions, calls=None)

    def answer(self, functions, messages, must_contain, example, no_tool=False):
        """The results (or, with `no_tool`, no offered function) answer it: no call, and a
        text holding every group of `must_contain`."""
        self._add("multi_turn", functions=functions, messages=messages, calls=None,
                  final={"must_contain": must_contain, "example": example}, no_tool=no_tool)

    def next_call(self, functions, messages, *calls):
        self._add("multi_turn", functions=functions, messages=messages, calls=list(calls), final=None)
