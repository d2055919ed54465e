"""``nvv-group-compare``: NVV-SuperBench's group-compare rater request (``GROUP_COMPARE=1``)
answered by ``omnijudge serve`` (``docs/serve.md``).

The request (lmxue/nvbench ``evaluation/llm_evaluation/llm_eval.py``,
``evaluate_groupcompare_once``): the comparative prompt (``build_group_compare_prompt``: the task
type, the anonymous labels A, B, ..., a simulated rater's id and profile, the metrics' definitions
and rubrics, a schema example, ranking instructions) followed by the item's source text, then for
each label a text part ``"\\nAUDIO <label>:\\n"`` and its audio; ``generation_config`` carries
``response_mime_type: application/json`` and the ``response_schema`` of
``build_group_compare_json_schema`` (per label: ``heard_summary``, ``issues``, ``<metric>_score``,
``<metric>_reason``; ``ranking``: per metric the labels best to worst; ``notes``).

The judges: one per-clip judgement per system and metric, by the same Likert raters as the
per-sample family (``nvv-likert``: slot = criterion, default preset ``likert-<criterion>``), with the
source text as each rater's ``{text}``. So a label's score is what that clip gets when scored alone:
the set it is shown in and its place in it change nothing. ``<metric>_score`` is the rater's argmax
label; ``ranking.<metric>`` sorts the labels by the rater's expected score, best first (equal scores
in label order). The reply fills the request's ``response_schema`` (the keys it requires, of its
types; text the raters do not produce is the empty string); without one, the schema the public
script sends for these labels.
"""

from __future__ import annotations

import json
from functools import lru_cache

from evaluators.benchmarks.nvv.presets import JSON_KEYS, RUBRICS
from evaluators.serve.family_base import FamilyError, Job, Layout, PromptFamily, Template, reply_json

#: ``llm_eval.py`` ALLOWED_ISSUES (the issue labels the prompt allows), in its order
ALLOWED_ISSUES = ["clipping", "distortion", "background_noise", "codec_artifacts", "harsh_sibilance",
                  "metallic_timbre", "robotic_prosody", "glitches_breaks", "unnatural_phonemes"]
#: the placeholders a prompt of the family is read back through
PLACEHOLDERS = ("rater_id", "profile_name", "profile_inst", "source")


def criteria(task: str) -> list[str]:
    """The task's criteria in the script's metric order (``PROMPT_METRICS`` / ``TAG_METRICS``)."""
    return RUBRICS[f"{task}_based_metrics"]


def label_sequence(n: int) -> list[str]:
    """``llm_eval.py::_label_sequence``: A, B, ... (past 26: A1, B1, ...)."""
    letters = [chr(ord("A") + i) for i in range(26)]
    return letters[:n] if n <= 26 else [f"{letters[i % 26]}{i // 26 + 1}" for i in range(n)]


def _example(labels: list[str], task: str) -> str:
    """``build_group_compare_schema``: the schema example the prompt shows."""
    item = {"heard_summary": "", "issues": []}
    for c in criteria(task):
        item[f"{JSON_KEYS[c]}_score"] = 0 if c.startswith("nvv") else 1
        item[f"{JSON_KEYS[c]}_reason"] = ""
    schema = {"results": {lb: dict(item) for lb in labels}, "ranking": {JSON_KEYS[c]: labels for c in criteria(task)},
              "notes": ""}
    return json.dumps(schema, ensure_ascii=False, indent=2)


def _task_lines(labels: list[str], task: str) -> str:
    out = f"TASK:\nFor EACH candidate (labelled {', '.join(labels)}), listen fully and rate on ALL of the following metrics:\n"
    for idx, c in enumerate(criteria(task), 1):
        metric = RUBRICS["criteria"][c]["metric"]
        if c == "naturalness":
            out += f"{idx}) {metric} (1–5): human-likeness (prosody/pronunciation/flow). Ignore mild background noise (Quality covers it).\n"
        elif c == "quality":
            out += (f"{idx}) {metric} (1–5): signal fidelity/cleanliness (noise, compression artifacts, distortion, "
                    "clipping, harsh sibilance). Ignore robotic prosody (Naturalness covers it).\n")
        else:
            low = "0" if c.startswith("nvv") else "1"
            out += f"{idx}) {metric} ({low}–5): {RUBRICS['criteria'][c]['definition']}\n"
    return out


def group_prompt(task: str, labels: list[str], rater_id: str, profile_name: str, profile_inst: str) -> str:
    """``build_group_compare_prompt(task, labels, profile_name, profile_inst, rater_id)``, rebuilt
    from the rubrics omnijudge ships (``likert_rubrics.json``, the script's definitions verbatim)."""
    defs = "--- METRIC DEFINITIONS ---\n"
    rules = "\n--- SCORING RUBRIC ---\n"
    ranking = ""
    for c in criteria(task):
        spec = RUBRICS["criteria"][c]
        defs += f"\n### {spec['metric']}\n{spec['definition']}\n"
        rules += f"\n#### {spec['metric']}\n" + "".join(f"- Score {s}: {d}\n" for s, d in spec["rubric"].items())
        ranking += (f"- ranking.{JSON_KEYS[c]}: labels sorted from best to worst (ties allowed by placing adjacent; "
                    "do not repeat labels)\n")
    prompt = f"""
You are an expert evaluator for {task}-based text-to-speech.

You will be given ONE source text and MULTIPLE candidate audios that all attempt to synthesize the SAME content.
The system identity is UNKNOWN and MUST NOT be inferred.
Treat each candidate independently but calibrate scores RELATIVELY within this set (like a real listening test).

RATER SIMULATION:
- You are simulated rater #{rater_id} with profile: {profile_name}.
- {profile_inst}

{defs}

{rules}

{_task_lines(labels, task)}

KEY CONSISTENCY RULES:
- Use the full scale. Most fall in 2–4; 5 is rare and ONLY if you notice no artifacts AND no synthetic cues.
- If you notice ANY artifact that affects Quality, do NOT give Quality=5.
- If you notice ANY synthetic cue that affects Naturalness, do NOT give Naturalness=5.
- If issues are only slight/non-intrusive, prefer 4 over 3.
- Reserve 3 for noticeable/distracting problems; 2 for heavy/serious problems.

ISSUES LIST:
For each candidate, output "issues" as a list using ONLY these labels:
{ALLOWED_ISSUES}
If no issues, output [].

OUTPUT:
Return ONLY one JSON object matching this schema (same keys). No extra text.

Schema example:
{_example(labels, task)}

You must also fill rankings for all metrics:
{ranking}

SOURCE TEXT:
"""
    return prompt.strip()


def audio_marker(label: str) -> str:
    """The text part before each candidate's audio."""
    return f"\nAUDIO {label}:\n"


@lru_cache(maxsize=64)
def request_template(task: str, labels: tuple[str, ...]) -> Template:
    """The joined user text of a request (prompt, source text, the audio markers)."""
    head = group_prompt(task, list(labels), "{rater_id}", "{profile_name}", "{profile_inst}")
    return Template(head + "\n{source}\n" + "".join("\n" + audio_marker(lb) for lb in labels), PLACEHOLDERS)


def _labels_in(prompt: str) -> list[str] | None:
    start = prompt.find("For EACH candidate (labelled ")
    end = prompt.find("), listen fully", start)
    if start < 0 or end < 0 or end - start > 4096:
        return None
    return prompt[start + len("For EACH candidate (labelled "):end].split(", ")


def default_schema(labels: list[str], task: str) -> dict:
    """``build_group_compare_json_schema(labels, task)``: what the public script sends."""
    item = {"heard_summary": {"type": "string"}, "issues": {"type": "array", "items": {"type": "string"}}}
    for c in criteria(task):
        item[f"{JSON_KEYS[c]}_score"] = {"type": "integer"}
        item[f"{JSON_KEYS[c]}_reason"] = {"type": "string"}
    keys = [JSON_KEYS[c] for c in criteria(task)]
    return {"type": "object", "required": ["results", "ranking", "notes"], "properties": {
        "results": {"type": "object", "required": labels, "properties": {
            lb: {"type": "object", "properties": item, "required": list(item)} for lb in labels}},
        "ranking": {"type": "object", "required": keys, "properties": {
            k: {"type": "array", "items": {"type": "string", "enum": labels}} for k in keys}},
        "notes": {"type": "string"}}}


#: Gemini's ``Type`` enum by number, as the legacy SDK's REST transport sends a schema's types
TYPE_NUMBERS = {1: "string", 2: "number", 3: "integer", 4: "boolean", 5: "array", 6: "object"}


def fill(schema: dict, value, path: tuple = ()):
    """A JSON value of ``schema`` (``type`` a name in any case or Gemini's enum number;
    ``properties``, ``required``): the value ``value(path)`` gives (None: the type's empty value),
    objects filled property by property."""
    given = value(path)
    if given is not None:
        return given
    kind = schema.get("type", "object")
    kind = TYPE_NUMBERS.get(kind, "") if isinstance(kind, int) else str(kind).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        keys = list(props) + [k for k in schema.get("required") or [] if k not in props]
        return {k: fill(props.get(k, {"type": "string"}), value, path + (k,)) for k in keys}
    return {"array": [], "string": "", "integer": 0, "number": 0.0, "boolean": False}.get(kind)


class GroupCompareFamily(PromptFamily):
    name = "nvv-group-compare"
    description = "NVV-SuperBench's group-compare rater prompt (GROUP_COMPARE=1): one audio per system"
    priority = 80
    audios = 0
    slots = {c: f"likert-{c}" for c in RUBRICS["criteria"]}

    def values(self, prompt):
        for task in ("prompt", "tag"):
            if not prompt.startswith(f"You are an expert evaluator for {task}-based text-to-speech.\n"):
                continue
            labels = _labels_in(prompt)
            if not labels or labels != label_sequence(len(labels)):
                raise FamilyError(f"{self.name}: the candidates must be labelled A, B, ... in order")
            found = request_template(task, tuple(labels)).match(prompt)
            if found is None:
                return None
            return {"task": task, "labels": tuple(labels), "source": found["source"]}
        return None

    def check_layout(self, values, layout: Layout):
        labels = values["labels"]
        want_texts = tuple(audio_marker(lb) for lb in labels)
        if layout.audio_at != tuple(range(2, len(labels) + 2)) or layout.texts[1:] != want_texts:
            raise FamilyError(f"{self.name}: the request must be the prompt, then for each of the {len(labels)} "
                              "labels its 'AUDIO <label>:' text and its audio, in label order")
        schema = layout.response_schema
        if schema is not None:
            results = (schema.get("properties") or {}).get("results") or {}
            if set(results.get("required") or []) != set(labels):
                raise FamilyError(f"{self.name}: response_schema.properties.results.required must be the labels "
                                  f"{', '.join(labels)}")

    def with_request(self, values, layout: Layout):
        return {**values, "schema": layout.response_schema}

    def jobs(self, values, prompt, kinds=None):
        fields = {"text": values["source"], "task": values["task"]}
        return [Job(c, fields, audio=k) for k in range(len(values["labels"])) for c in criteria(values["task"])]

    def reply(self, values, results):
        labels, task = list(values["labels"]), values["task"]
        names = criteria(task)
        at = {(lb, c): results[k * len(names) + i] for k, lb in enumerate(labels) for i, c in enumerate(names)}
        ints = {key: int(max(r["probs"], key=r["probs"].get)) for key, r in at.items()}
        keys = {JSON_KEYS[c]: c for c in names}
        ranking = {JSON_KEYS[c]: sorted(labels, key=lambda lb: (-at[(lb, c)]["score"], labels.index(lb))) for c in names}

        def value(path):
            if len(path) == 3 and path[0] == "results" and path[2].endswith("_score"):
                criterion = keys.get(path[2][:-len("_score")])
                return ints[(path[1], criterion)] if criterion and (path[1], criterion) in ints else None
            if len(path) == 2 and path[0] == "ranking" and path[1] in ranking:
                return ranking[path[1]]
            return None

        return reply_json(fill(values.get("schema") or default_schema(labels, task), value))
