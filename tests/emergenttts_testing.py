"""Shared by the EmergentTTS-Eval serve tests: its judge request as its own client sends it, its
reply validator and parser (reproduced from boson-ai/EmergentTTS-Eval-public), and the fetched
checkout of that repository when this machine has one (never committed: read at test time)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path

#: a judge model name as its runner needs one for a local judge: without "gemini" (else it ignores
#: --judger_base_url) and without "gpt" (else it would call OpenAI's own service)
MODEL = "omnijudge-local"
FAMILY = "emergenttts-win-rate"
#: inference.py's judge generation config (GENERATION_CONFIG with temperature 0, max_new_tokens 16384)
GENERATION = {"temperature": 0, "top_p": 0.9, "max_tokens": 16384}
#: where the fetched repository may be: a work tree (holding api_clients.py) or a bare git directory
CHECKOUT_ENV = "OMNIJUDGE_EMERGENTTTS_CHECKOUT"
DEFAULT_CHECKOUT = "/work/.mirror/boson-ai+EmergentTTS-Eval-public/repo"


def validate_win_rate_response(resp_json: dict, raw_response: str) -> None:
    """``prompts.EmergentTextSpeech.validate_win_rate_response``, verbatim in its checks."""
    assert "reasoning_system_1" in resp_json and "reasoning_system_2" in resp_json \
        and "system_comparison" in resp_json and "score_1" in resp_json and "score_2" in resp_json \
        and "winner" in resp_json and resp_json["winner"] in [0, 1, 2], \
        f"Invalid response from Judge Model: {resp_json} parsed from {raw_response}"


def parse_reply(raw: str) -> dict:
    """How ``inference.py`` reads the reply: ``json_repair.loads`` (plain ``json.loads`` where the
    package is not installed: stricter, so a reply it reads ``json_repair`` reads too)."""
    try:
        import json_repair
    except ImportError:
        return json.loads(raw)
    return json_repair.loads(raw)


def comparison_messages(system: str, user: str, post: str, wav_1: bytes, wav_2: bytes) -> list[dict]:
    """``api_clients.OpenAIClient.generate_w_audio_comparison``'s ``messages``: one user message of
    text, audio 1, text, audio 2 (base64 WAV, format "wav")."""
    audio = [{"type": "input_audio", "input_audio": {"data": base64.b64encode(w).decode("utf-8"), "format": "wav"}}
             for w in (wav_1, wav_2)]
    return [{"role": "system", "content": system},
            {"role": "user", "content": [{"type": "text", "text": user}, audio[0], {"type": "text", "text": post},
                                         audio[1]]}]


def compare_with_openai(base: str, system: str, user: str, post: str, wav_1: bytes, wav_2: bytes,
                        model: str = MODEL) -> str:
    """The reply text through the ``openai`` package, called exactly as ``OpenAIClient`` calls it."""
    from openai import OpenAI

    client = OpenAI(api_key=os.environ.get("JUDGER_API_KEY", "local"), base_url=base + "v1")
    completion = client.chat.completions.create(model=model, messages=comparison_messages(system, user, post, wav_1,
                                                                                          wav_2), **GENERATION)
    return completion.choices[0].message.content


def public_checkout(into: Path) -> Path | None:
    """A work tree of the fetched repository (``$OMNIJUDGE_EMERGENTTTS_CHECKOUT``, else the fetch
    tool's mirror): the given tree itself, or the files a bare git directory holds at HEAD extracted
    under ``into``; None when neither exists."""
    source = Path(os.environ.get(CHECKOUT_ENV, DEFAULT_CHECKOUT))
    if (source / "api_clients.py").is_file():
        return source
    if not (source / "HEAD").is_file():
        return None
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "--git-dir", str(source), "archive", "HEAD"], capture_output=True, check=False)
    if archive.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into if (into / "api_clients.py").is_file() else None
