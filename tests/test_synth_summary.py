"""``omnijudge synth`` says what it wrote in words (folder, audio per sub-folder, JSONL rows), never
a Python repr (``wrote AttCorpus(root=PosixPath(...), ...)`` was printed before)."""

import dataclasses
import json
from pathlib import Path


from trainer.synth.written_summary import describe_folder, in_words


def _corpus(root: Path) -> Path:
    (root / "audio").mkdir(parents=True)
    for i in range(3):
        (root / "audio" / f"c{i}.wav").write_bytes(b"RIFF")
    (root / "clips.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in range(3)))
    (root / "corpus_config.json").write_text("{}")
    return root


@dataclasses.dataclass
class FakeCorpus:
    root: Path
    n_eval_clips: int


def test_a_folder_in_words(tmp_path):
    root = _corpus(tmp_path / "c")
    assert describe_folder(root) == f"{root}: 3 audio files in audio/; clips.jsonl (3 rows), corpus_config.json"
    systems = tmp_path / "s"
    for name, n in (("sys1", 2), ("sys2", 1)):
        (systems / name).mkdir(parents=True)
        for i in range(n):
            (systems / name / f"{i}.wav").write_bytes(b"RIFF")
    assert describe_folder(systems) == f"{systems}: 3 audio files in sys1/ 2, sys2/ 1"
    assert describe_folder(tmp_path / "none").endswith("(not written)")


def test_reprs_and_bare_folders_become_words_and_sentences_stay(tmp_path):
    root = _corpus(tmp_path / "c")
    systems = _corpus(tmp_path / "sys")
    text = f"wrote {FakeCorpus(root, 3)!r}\nsystem outputs: {systems}\npairs corpus in {root}: 3 A/B pairs"
    lines = in_words(text, root).splitlines()
    assert lines[0] == f"wrote {describe_folder(root)}" and "FakeCorpus(" not in lines[0]
    assert lines[1] == f"system outputs: {describe_folder(systems)}"
    assert lines[2] == f"pairs corpus in {root}: 3 A/B pairs"
    assert in_words(f"wrote {root}", root) == f"wrote {describe_folder(root)}"


def test_synth_prints_no_repr(tmp_path, monkeypatch, capsys):
    """Through the CLI, with the ATT task's builder replaced by one that returns what it used to print."""
    from evaluators.cli import main
    from trainer.benchmarks import COMMAND_TASKS

    task = COMMAND_TASKS["att"]

    def synth(out, seed, options):
        return f"wrote {FakeCorpus(_corpus(out), 3)!r}"

    monkeypatch.setattr(task, "commands", dataclasses.replace(task.commands, synth=synth))
    assert main(["synth", "att", "--out", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert out.strip() == f"wrote {tmp_path / 'c'}: 3 audio files in audio/; clips.jsonl (3 rows), corpus_config.json"
    assert "PosixPath" not in out


def test_synth_into_a_non_empty_out_needs_overwrite_and_replaces_only_a_corpus(tmp_path, capsys):
    """A second ``synth`` into a corpus folder used to rewrite it in place with other options and
    leave the earlier corpus's extra files behind; now it is refused, and ``--overwrite`` replaces
    an earlier corpus whole (never a folder of other files)."""
    from evaluators.cli import main

    corpus = tmp_path / "cast"
    assert main(["synth", "cast", "--out", str(corpus), "--sentences-per-language", "4"]) == 0
    before = {p: p.read_bytes() for p in corpus.rglob("*") if p.is_file()}
    assert main(["synth", "cast", "--out", str(corpus), "--sentences-per-language", "3"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in corpus.rglob("*") if p.is_file()} == before  # untouched
    (corpus / "audio" / "left_over.wav").write_bytes(b"an earlier corpus's file")
    assert main(["synth", "cast", "--out", str(corpus), "--sentences-per-language", "3", "--overwrite"]) == 0
    assert not (corpus / "audio" / "left_over.wav").exists()
    assert json.loads((corpus / "corpus_config.json").read_text())["sentences_per_language"] == 3
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("my own file")
    assert main(["synth", "cast", "--out", str(mine), "--overwrite"]) == 2
    assert "corpus_config.json" in capsys.readouterr().err and (mine / "notes.txt").read_text() == "my own file"
