"""Training rows that ask for another type: the verifier learns to compare the heard type with the asked one.

A corpus item whose target was rendered says "the target is here" at one boundary. The same clip
asked for a *different* type is a wrong-type item by construction: the asked type is absent, and
the rendered target is a non-target event at its boundary. The real-speech corpus renders such
items (case ``wrong_type``, 12% by default: 41 of 378 training items at seed 0), but against about
290 training items where the event at the asked place *is* the target, a head learns "an event is
here" and not "the asked event is here" (measured: on held-out wrong-type items it reports the
target 8-9 times in 10, while a linear probe on the same LLM states tells the rendered type from
the asked one 97-100% of the time; ``scripts/probe_nvv_tower.py``). The type logits take the same
shortcut: the asked type is given (prompt label and condition embedding) and is the event's type at
almost every training event, so they name the asked type where another one was rendered (top-1 on
15 of 18 held-out wrong-type items). With these copies the type logits hear the type, and the
verifier's presence gate (``nvv.type_gate``) uses them.

:func:`asked_other_rows` adds, for every training row with a rendered target, ``copies`` rows of
the same clip asked for other types (drawn in turn from a shuffled cycle over the taxonomy, seeded,
never the target or a type already rendered in the clip). Only training rows are copied; val and
test are untouched. The audio is the same clip, so the frozen tower's cached outputs serve both.
"""

from __future__ import annotations

import numpy as np

ASKED_OTHER_SEP = "#asked:"  # row id of a copy: <item id>#asked:<type>


def asked_other_rows(rows: list[dict], types: list[str], copies: int, seed: int = 0) -> list[dict]:
    """``copies`` copies of each training row with a rendered target (``position`` not None), each
    asked for another type: ``target_type`` that type, ``position`` None, the rendered target moved
    to ``spurious_types`` / ``spurious_positions``, ``case`` ``wrong_type``; the id ends in
    ``#asked:<type>``."""
    rng = np.random.default_rng([seed, 41])
    cycle: list[str] = []
    out = []
    for r in rows:
        if r["split"] != "train" or r["position"] is None:
            continue
        taken = {r["target_type"], *r["spurious_types"]}
        for _ in range(copies):
            if not any(t not in taken for t in types):
                break
            if all(t in taken for t in cycle):
                cycle += [types[j] for j in rng.permutation(len(types))]
            other = cycle.pop(next(j for j, t in enumerate(cycle) if t not in taken))
            taken.add(other)
            out.append(dict(r, id=f"{r['id']}{ASKED_OTHER_SEP}{other}", target_type=other, position=None,
                            spurious_types=[*r["spurious_types"], r["target_type"]],
                            spurious_positions=[*r["spurious_positions"], r["position"]],
                            case="wrong_type"))
    return out
